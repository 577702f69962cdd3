// steps_driver.c: one step of the bulk check (gpu/kernels/steps.cuh) in
// plain C, for TestStepsCMatchesGo. It reads requests from stdin, each a
// line
//
//	N P W CMP REF GRID THREADS    followed by N lines of six hex words:
//	d t alone alone_taps ref ref_taps
//
// (N rows, P panel rows, W bitmap words, CMP 1 to compare the taps, REF 1
// to compare with the reference batch, the digests of row r: its own, its
// taps', and the two sides'), runs the step twice on the same panel and
// bitmaps as a device's GRID blocks of THREADS threads would, one block
// after another (rows r = b, b + GRID, ... in block b), and writes each
// run's record in hex, a line each, then "zero" when the bitmaps are zero
// again, else "dirty".
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "steps.cuh"

static void step(const StepCheck *c, long long n, long long grid, long long threads, const st_u64 *d, const st_u64 *t, char *record)
{
	st_u64 count = 0, sum = 0;
	for (long long b = 0; b < grid; b++) {
		st_u64 differ = 0, mine = 0;
		for (long long r = b; r < n; r += grid)
			differ += (st_u64)st_row(c, r, d[r], t[r], st_sides(c, r), &mine);
		count += differ;
		sum += mine;
	}
	for (long long tid = 0; tid < threads; tid++)
		st_record(c, n, count, sum, record, tid, threads);
}

int main(void)
{
	long long n, p, w, grid, threads;
	int cmp, ref;
	while (scanf("%lld %lld %lld %d %d %lld %lld", &n, &p, &w, &cmp, &ref, &grid, &threads) == 7) {
		st_u64 *in = calloc((size_t)(6 * n + 1), sizeof(st_u64));
		st_u64 *side = calloc((size_t)(4 * n + 1), sizeof(st_u64));
		st_u64 *d = calloc((size_t)(2 * n + 1), sizeof(st_u64)), *t = d + n;
		st_u64 *panel = calloc((size_t)(2 * p + 1), sizeof(st_u64));
		unsigned *bits = calloc((size_t)(2 * w + 1), sizeof(unsigned));
		const size_t size = (size_t)(16 + 16 * p + 8 * w);
		char *record = malloc(size);
		if (!in || !side || !d || !panel || !bits || !record)
			return 1;
		for (long long i = 0; i < 6 * n; i++)
			if (scanf("%llx", &in[i]) != 1)
				return 1;
		for (long long r = 0; r < n; r++) {
			d[r] = in[6 * r];
			t[r] = in[6 * r + 1];
			for (int k = 0; k < 4; k++)
				side[k * n + r] = in[6 * r + 2 + k];
		}
		StepCheck c = {side, cmp ? side + n : 0, ref ? side + 2 * n : 0, ref && cmp ? side + 3 * n : 0, p, w, panel, bits, cmp};
		for (int run = 0; run < 2; run++) {
			memset(record, 0xab, size); // what a reused slot holds
			memset(record, 0xff, 4);    // countUnset
			step(&c, n, grid, threads, d, t, record);
			for (size_t i = 0; i < size; i++)
				printf("%02x", (unsigned char)record[i]);
			printf("\n");
		}
		int zero = 1;
		for (long long i = 0; i < 2 * w; i++)
			zero = zero && bits[i] == 0;
		printf("%s\n", zero ? "zero" : "dirty");
		free(in);
		free(side);
		free(d);
		free(panel);
		free(bits);
		free(record);
	}
	return 0;
}
