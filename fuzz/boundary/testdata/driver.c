// driver.c: the RMSNorm boundary nudge in plain C, through
// gpu/kernels/nudge.cuh, for TestCMatchesGo. It reads rows from stdin, each
// a request line
//
//	IN OUT ORDER THREADS VEC BUTTERFLY ODD H EPS NP
//
// (EPS as the 8 hex digits of its fp32 bits, the others decimal) followed
// by NP probe indices, H weights and H row values (dtype IN bits in hex),
// and writes the nudged row's H values, dtype bits in hex, and its Score
// ("score N"), one line a row.
#include <stdio.h>
#include <stdlib.h>

#include "nudge.cuh"

int main(void)
{
	int in, out, order, threads, vec, butterfly, odd;
	long long h, np;
	unsigned epsBits;
	while (scanf("%d %d %d %d %d %d %d %lld %x %lld", &in, &out, &order, &threads, &vec, &butterfly, &odd, &h,
		     &epsBits, &np) == 10) {
		if (h < 8 || np < 1 || threads < 1 || threads > ND_MAX_THREADS)
			return 2;
		long long *probes = malloc(np * sizeof *probes);
		unsigned *w32 = malloc(h * sizeof *w32), *x32 = malloc(h * sizeof *x32);
		unsigned short *w16 = malloc(h * sizeof *w16), *x16 = malloc(h * sizeof *x16);
		for (long long i = 0; i < np; i++)
			if (scanf("%lld", &probes[i]) != 1)
				return 2;
		for (long long i = 0; i < h; i++) {
			if (scanf("%x", &w32[i]) != 1)
				return 2;
			w16[i] = (unsigned short)w32[i];
		}
		for (long long i = 0; i < h; i++) {
			if (scanf("%x", &x32[i]) != 1)
				return 2;
			x16[i] = (unsigned short)x32[i];
		}
		float eps = gen_bits_f32(epsBits);
		int wide = in == GEN_FP32;
		int score = nd_rmsnorm_row(wide ? (void *)x32 : (void *)x16, wide ? (void *)w32 : (void *)w16, h, probes, np, eps, in,
			       out, threads, vec, butterfly, order, odd);
		for (long long i = 0; i < h; i++)
			printf(i ? " %x" : "%x", wide ? x32[i] : (unsigned)x16[i]);
		printf(" score %d\n", score);
		free(probes), free(w32), free(x32), free(w16), free(x16);
	}
	return 0;
}
