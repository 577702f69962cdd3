// quant_fp8.cu: ops/quantfp8's reference (Amax, Scale, Quantize), per token
// or per tensor, e4m3 or e5m2; one thread per row.
#include "common.cuh"

// fp8_encode is quantfp8.Encode: x rounded to the format (e5m2 = 0: e4m3,
// bias 7, 3 mantissa bits, largest 448; e5m2 = 1: bias 15, 2 bits, largest
// 57344) to nearest with ties to even, saturating, NaN -> 0x7f, zero
// keeping its sign. Every double operation below is exact (fabs, frexp,
// ldexp within range, rint in round-to-nearest-even), as in Go:
//
//	e    = floor(log2 |x|) for |x| >= 2^(1-bias), else 1-bias
//	n    = rint(|x| / 2^(e-m));  v = min(n · 2^(e-m), max)
//	bits = sign | n                                 v < 2^(1-bias)
//	bits = sign | (e'+bias)<<m | (v/2^e' - 1)·2^m   otherwise, e' = floor(log2 v)
__device__ unsigned char fp8_encode(float x, int e5m2)
{
	if (x != x)
		return 0x7f;
	const unsigned char sign = (__float_as_uint(x) >> 31) ? 0x80 : 0;
	const int m = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
	const double mx = e5m2 ? 57344.0 : 448.0;
	const double a = fabs((double)x);
	const int emin = 1 - bias;
	int e = emin, ex = 0;
	if (a >= ldexp(1.0, emin)) {
		frexp(a, &ex); // a = frac · 2^ex, frac in [0.5, 1); Go's Frexp: ex = 0 for ±Inf
		e = ex - 1;
	}
	const double n = rint(ldexp(a, m - e));
	double v = ldexp(n, e - m);
	if (v > mx)
		v = mx;
	if (v < ldexp(1.0, emin))
		return sign | (unsigned char)n;
	frexp(v, &ex);
	const int ev = ex - 1;
	const double frac = ldexp(v, -ev) - 1.0;
	return sign | (unsigned char)((ev + bias) << m) | (unsigned char)ldexp(frac, m);
}

// fp8_amax_rows writes amax[r] = quantfp8.Amax(0, row r): omax of |x| over
// the row's non-NaN values, in order, from +0.
extern "C" __global__ void fp8_amax_rows(const void *x, float *amax, i64 rows, i64 H, i64 in_dt)
{
	const i64 r = (i64)blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= rows)
		return;
	const int idt = (int)in_dt;
	const void *xr = (const char *)x + (size_t)(r * H) * (idt == DT_FP32 ? 4 : 2);
	float a = 0.0f;
	for (i64 i = 0; i < H; i++) {
		const float v = load(xr, i, idt);
		if (v == v)
			a = omax(a, fabsf(v));
	}
	amax[r] = a;
}

// fp8_amax_all writes amax[rows] = omax(... omax(+0, amax[0]) ...,
// amax[rows-1]): the batch's amax (one thread). omax over non-negative
// numbers is order-free, so it equals Amax over every value of the batch.
extern "C" __global__ void fp8_amax_all(float *amax, i64 rows)
{
	if (blockIdx.x != 0 || threadIdx.x != 0)
		return;
	float a = 0.0f;
	for (i64 r = 0; r < rows; r++)
		a = omax(a, amax[r]);
	amax[rows] = a;
}

// fp8_quantize writes row r's codes q[r][i] = fp8_encode(x[r][i] / s) and
// its scale s = quantfp8.Scale(amax): amax / fmax (div.rn), or 1 when amax
// is 0, with amax = amax[rows] (per_tensor) or amax[r] (per token).
extern "C" __global__ void fp8_quantize(const void *x, const float *amax, unsigned char *q, float *scale, i64 rows, i64 H,
					i64 in_dt, i64 per_tensor, i64 e5m2)
{
	const i64 r = (i64)blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= rows)
		return;
	const int idt = (int)in_dt;
	const void *xr = (const char *)x + (size_t)(r * H) * (idt == DT_FP32 ? 4 : 2);
	const float a = amax[per_tensor ? rows : r];
	const float s = a == 0.0f ? 1.0f : __fdiv_rn(a, e5m2 ? 57344.0f : 448.0f);
	unsigned char *qr = q + r * H;
	for (i64 i = 0; i < H; i++)
		qr[i] = fp8_encode(__fdiv_rn(load(xr, i, idt), s), (int)e5m2);
	scale[r] = s;
}
