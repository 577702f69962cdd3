// rmsnorm_invariant.cu: an RMSNorm that is batch invariant by construction:
// one thread per row, the oracle schedule
//   threads=1 vec=1 warp=butterfly cross=sequential out=(x*rstd)*w
// exactly (its manifest declares it, so oracle parity is bitwise):
//   ss = fma chain over j in order from +0; mean = ss / hidden;
//   rstd = 1 / sqrt(mean + eps); y[j] = round_out((x[j] * rstd) * w[j]).
// Only correctly rounded operations (__fmaf_rn, __fdiv_rn, __fsqrt_rn,
// __fadd_rn, __fmul_rn), so nvcc's contraction cannot change it.
#include "common.cuh"

extern "C" __global__ void rmsnorm_rows(const void *x, const void *w, void *y,
		long long rows, long long hidden, float eps, long long in_dtype, long long out_dtype) {
	long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= rows) return;
	const long long base = r * hidden;
	float ss = 0.0f;
	for (long long j = 0; j < hidden; j++) {
		float v = load_val(x, base + j, in_dtype);
		ss = __fmaf_rn(v, v, ss);
	}
	float mean = __fdiv_rn(ss, (float)hidden);
	float rstd = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(mean, eps)));
	for (long long j = 0; j < hidden; j++) {
		float v = __fmul_rn(__fmul_rn(load_val(x, base + j, in_dtype), rstd), load_val(w, j, in_dtype));
		store_val(y, base + j, out_dtype, v);
	}
}
