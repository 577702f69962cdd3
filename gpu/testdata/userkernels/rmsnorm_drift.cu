// rmsnorm_drift.cu: a planted drift. Same as rmsnorm_invariant.cu, except
// that the sum of squares is reduced in order only when rows % 32 == 0;
// otherwise in two halves, ss = ss(0..h/2) + ss(h/2..h), the way a kernel
// that picks its reduction path by the row count does (TransformerEngine's
// RMSNorm switches on M % 32). Its manifest declares the in-order schedule:
// bitparity must find it by batch invariance, padding and oracle parity,
// with the drift map rows % 32 == 0 vs otherwise.
#include "common.cuh"

extern "C" __global__ void rmsnorm_rows(const void *x, const void *w, void *y,
		long long rows, long long hidden, float eps, long long in_dtype, long long out_dtype) {
	long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= rows) return;
	const long long base = r * hidden;
	float ss = 0.0f;
	if (rows % 32 == 0) {
		for (long long j = 0; j < hidden; j++) {
			float v = load_val(x, base + j, in_dtype);
			ss = __fmaf_rn(v, v, ss);
		}
	} else {
		long long h2 = hidden / 2;
		float a = 0.0f, b = 0.0f;
		for (long long j = 0; j < h2; j++) {
			float v = load_val(x, base + j, in_dtype);
			a = __fmaf_rn(v, v, a);
		}
		for (long long j = h2; j < hidden; j++) {
			float v = load_val(x, base + j, in_dtype);
			b = __fmaf_rn(v, v, b);
		}
		ss = __fadd_rn(a, b);
	}
	float mean = __fdiv_rn(ss, (float)hidden);
	float rstd = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(mean, eps)));
	for (long long j = 0; j < hidden; j++) {
		float v = __fmul_rn(__fmul_rn(load_val(x, base + j, in_dtype), rstd), load_val(w, j, in_dtype));
		store_val(y, base + j, out_dtype, v);
	}
}
