// gemm.cu: oracle.GEMM with any oracle.GEMMSchedule.
#include "common.cuh"
#include "reduce.cuh"

// gemm computes output element (i, n): blockIdx.x = i (selected row, batch
// row r = rowsel ? rowsel[i] : i), n = blockIdx.y*blockDim.x + threadIdx.x:
//
//	chunk = ceil(K / splitk)
//	for c := 0; c < splitk; c++ {
//		p[c] = +0
//		for k := c*chunk; k < min((c+1)*chunk, K); k++ { p[c] = fma(x[r][k], W[k][n], p[c]) }
//	}
//	y[i][n] = round_out(((p0+p1)+p2)+...)       combine 0 (sequential)
//	y[i][n] = round_out(butterfly(p)[0])        combine 1 (tree, splitk a power of two)
extern "C" __global__ void gemm(const void *x, const void *w, void *y, const i64 *rowsel, i64 K, i64 N, i64 in_dt,
				i64 out_dt, i64 splitk, i64 combine)
{
	const i64 i = blockIdx.x;
	const i64 n = (i64)blockIdx.y * blockDim.x + threadIdx.x;
	if (n >= N)
		return;
	const i64 r = rowsel ? rowsel[i] : i;
	const int idt = (int)in_dt;
	const i64 chunk = (K + splitk - 1) / splitk;
	float p[64], q[64];
	for (i64 c = 0; c < splitk; c++) {
		float a = 0.0f;
		i64 hi = (c + 1) * chunk < K ? (c + 1) * chunk : K;
		for (i64 k = c * chunk; k < hi; k++)
			a = __fmaf_rn(load(x, r * K + k, idt), load(w, k * N + n, idt), a);
		p[c] = a;
	}
	float s;
	if (combine == CROSS_TREE && splitk > 1) {
		for (i64 off = splitk / 2; off >= 1; off /= 2) {
			for (i64 c = 0; c < splitk; c++)
				q[c] = __fadd_rn(p[c], p[c ^ off]);
			for (i64 c = 0; c < splitk; c++)
				p[c] = q[c];
		}
		s = p[0];
	} else {
		s = p[0];
		for (i64 c = 1; c < splitk; c++)
			s = __fadd_rn(s, p[c]);
	}
	store(y, i * N + n, (int)out_dt, s);
}
