// driver.c: the boundary nudges in plain C, through gpu/kernels/nudge.cuh,
// for TestCMatchesGo. It reads rows from stdin, each a request line
//
//	r IN OUT ORDER THREADS VEC BUTTERFLY ODD H EPS NP    (an RMSNorm row)
//	g IN OUT ODD K N COL                                 (a GEMM row)
//
// (EPS as the 8 hex digits of its fp32 bits, the others decimal) followed
// by, for RMSNorm, NP probe indices, H weights and H row values, and for
// GEMM, K x N weights (row-major) and K row values (dtype IN bits in hex),
// and writes the nudged row's values, dtype bits in hex, and for RMSNorm
// its Score ("score N"), one line a row.
#include <stdio.h>
#include <stdlib.h>

#include "nudge.cuh"

// readBits reads n dtype bits into a 32-bit and a 16-bit copy.
static int readBits(long long n, unsigned *w32, unsigned short *w16)
{
	for (long long i = 0; i < n; i++) {
		if (scanf("%x", &w32[i]) != 1)
			return 0;
		w16[i] = (unsigned short)w32[i];
	}
	return 1;
}

static void printRow(long long n, int wide, const unsigned *x32, const unsigned short *x16)
{
	for (long long i = 0; i < n; i++)
		printf(i ? " %x" : "%x", wide ? x32[i] : (unsigned)x16[i]);
}

int main(void)
{
	char op[2];
	while (scanf("%1s", op) == 1) {
		int in, out, odd;
		if (op[0] == 'g') {
			long long K, N, col;
			if (scanf("%d %d %d %lld %lld %lld", &in, &out, &odd, &K, &N, &col) != 6 || K < 4 || N < 1)
				return 2;
			unsigned *w32 = malloc(K * N * sizeof *w32), *x32 = malloc(K * sizeof *x32);
			unsigned short *w16 = malloc(K * N * sizeof *w16), *x16 = malloc(K * sizeof *x16);
			if (!readBits(K * N, w32, w16) || !readBits(K, x32, x16))
				return 2;
			int wide = in == GEN_FP32;
			float *wcol = malloc(K * sizeof *wcol);
			nd_gemm_row(wide ? (void *)x32 : (void *)x16, wide ? (void *)w32 : (void *)w16, wcol, K, N, col, in,
				    out, odd);
			free(wcol);
			printRow(K, wide, x32, x16);
			printf("\n");
			free(w32), free(x32), free(w16), free(x16);
			continue;
		}
		int order, threads, vec, butterfly;
		long long h, np;
		unsigned epsBits;
		if (scanf("%d %d %d %d %d %d %d %lld %x %lld", &in, &out, &order, &threads, &vec, &butterfly, &odd, &h,
			  &epsBits, &np) != 10)
			return 2;
		if (h < 8 || np < 1 || threads < 1 || threads > ND_MAX_THREADS)
			return 2;
		long long *probes = malloc(np * sizeof *probes);
		unsigned *w32 = malloc(h * sizeof *w32), *x32 = malloc(h * sizeof *x32);
		unsigned short *w16 = malloc(h * sizeof *w16), *x16 = malloc(h * sizeof *x16);
		for (long long i = 0; i < np; i++)
			if (scanf("%lld", &probes[i]) != 1)
				return 2;
		if (!readBits(h, w32, w16) || !readBits(h, x32, x16))
			return 2;
		float eps = gen_bits_f32(epsBits);
		int wide = in == GEN_FP32;
		int score = nd_rmsnorm_row(wide ? (void *)x32 : (void *)x16, wide ? (void *)w32 : (void *)w16, h, probes,
					   np, eps, in, out, threads, vec, butterfly, order, odd);
		printRow(h, wide, x32, x16);
		printf(" score %d\n", score);
		free(probes), free(w32), free(x32), free(w16), free(x16);
	}
	return 0;
}
