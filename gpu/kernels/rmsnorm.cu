// rmsnorm.cu: oracle.RMSNorm with any oracle.RMSNormSchedule.
#include "common.cuh"
#include "reduce.cuh"

// rmsnorm computes output row i (one block per selected row, blockDim.x =
// Reduce.Threads) of batch row r = rowsel ? rowsel[i] : i:
//
//	thread t: acc = +0
//	  for base = t*vec; base < H; base += T*vec
//	    for v = 0; v < vec && base+v < H; v++: acc = fma(x, x, acc)
//	ss   = block_combine(acc, warp_order, cross_order, add.rn)
//	mean = ss / (float)H                       div.rn
//	rstd = 1 / sqrt(mean + eps)                add.rn, sqrt.rn, div.rn
//	y[j] = round_out((x[j]*rstd)*w[j])         order 0
//	y[j] = round_out(x[j]*(rstd*w[j]))         order 1
//
// taps (optional) gets ss and rstd of output row i at taps[2i], taps[2i+1].
extern "C" __global__ void rmsnorm(const void *x, const void *w, void *y, float *taps, const i64 *rowsel,
				   i64 hidden, i64 in_dt, i64 out_dt, u64 eps_bits, i64 vec, i64 warp_order,
				   i64 cross_order, i64 order)
{
	__shared__ float sh[REDUCE_SHARED];
	const i64 i = blockIdx.x;
	const i64 r = rowsel ? rowsel[i] : i;
	const int T = blockDim.x;
	const int t = threadIdx.x;
	const int idt = (int)in_dt;
	const i64 n = hidden;
	const void *xr = (const char *)x + (size_t)(r * n) * (idt == DT_FP32 ? 4 : 2);
	float acc = 0.0f;
	for (i64 base = (i64)t * vec; base < n; base += (i64)T * vec)
		for (int v = 0; v < vec && base + v < n; v++) {
			float xv = load(xr, base + v, idt);
			acc = __fmaf_rn(xv, xv, acc);
		}
	float ss = block_combine(acc, (int)warp_order, (int)cross_order, AddOp(), sh);
	float eps = __uint_as_float((unsigned)eps_bits);
	float mean = __fdiv_rn(ss, (float)n);
	float rstd = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(mean, eps)));
	if (t == 0 && taps) {
		taps[2 * i] = ss;
		taps[2 * i + 1] = rstd;
	}
	for (i64 j = t; j < n; j += T) {
		float xv = load(xr, j, idt);
		float wv = load(w, j, idt);
		float v;
		if (order == 1)
			v = __fmul_rn(xv, __fmul_rn(rstd, wv));
		else
			v = __fmul_rn(__fmul_rn(xv, rstd), wv);
		store(y, i * n + j, (int)out_dt, v);
	}
}
