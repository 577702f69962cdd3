// nudge.cu: the boundary nudges of generated RMSNorm and GEMM rows on the
// device. Every row is nd_rmsnorm_row or nd_gemm_row of nudge.cuh, the
// arithmetic boundary runs in Go and that its TestCMatchesGo checks
// in plain C, so the bits are the host's.
#include "nudge.cuh"

// nudge_rmsnorm nudges rows [0, rows) of x (hidden values each, dtype
// in_dt bits) in place, one warp a row (blockDim.x a multiple of 32): row
// r aims at the odd side when row_base + r is odd (fuzz's nudgeBoundary:
// odd items). w holds the weights, probes the np probe indices
// (boundary.RMSNormRows.Probes), eps is passed as fp32 bits; threads,
// vec, butterfly and order are the oracle schedule's.
extern "C" __global__ void nudge_rmsnorm(void *x, const void *w, const long long *probes, long long np,
					 long long rows, long long hidden, long long in_dt, long long out_dt,
					 unsigned long long eps_bits, long long threads, long long vec, long long butterfly,
					 long long order, long long row_base)
{
	const long long r = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
	if (r >= rows)
		return; // the whole warp: one row a warp
	const int isz = in_dt == GEN_FP32 ? 4 : 2;
	nd_rmsnorm_row((char *)x + (size_t)(r * hidden) * isz, w, hidden, probes, np,
		       __uint_as_float((unsigned)eps_bits), (int)in_dt, (int)out_dt, (int)threads, (int)vec,
		       (int)butterfly, (int)order, (int)((row_base + r) & 1));
}

// nudge_gemm nudges rows [0, rows) of x (k values each, dtype in_dt bits)
// in place, one warp a row (blockDim.x a multiple of 32): row r is the
// case's item row_base + r, and tunes output column splitmix(seed ^ item)
// mod n of W (k x n) (fuzz's nudgeBoundary), aiming at the odd side for
// odd items. wcols is scratch of rows x k floats (row r's column of W).
extern "C" __global__ void nudge_gemm(void *x, const void *w, float *wcols, long long rows, long long k, long long n,
				      long long in_dt, long long out_dt, unsigned long long seed, long long row_base)
{
	const long long r = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
	if (r >= rows)
		return; // the whole warp: one row a warp
	const int isz = in_dt == GEN_FP32 ? 4 : 2;
	const unsigned long long item = (unsigned long long)(row_base + r);
	nd_gemm_row((char *)x + (size_t)(r * k) * isz, w, wcols + r * k, k, n,
		    (long long)(gen_mix(seed ^ item) % (unsigned long long)n), (int)in_dt, (int)out_dt, (int)(item & 1));
}
