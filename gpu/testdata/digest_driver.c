// digest_driver.c: the row digest of gpu/kernels/digest.cuh in plain C,
// for TestDigestCMatchesGo. It reads requests from stdin, each a line
//
//	WS VEC B N    followed by N words in hex
//
// (WS the word size, 2 or 4; VEC 1 to read the row in 16-byte vectors; B
// the threads of a block) and writes the row's digest, in hex, as a block
// of B threads computes it on the device: the sum of dg_part over t < B.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digest.cuh"

int main(void)
{
	int ws, vec;
	long long b, n;
	while (scanf("%d %d %lld %lld", &ws, &vec, &b, &n) == 4) {
		// 16-byte aligned, as a device row of whole vectors is
		unsigned char *row = aligned_alloc(16, (size_t)((n * ws + 15) / 16 * 16 + 16));
		if (!row)
			return 1;
		for (long long j = 0; j < n; j++) {
			unsigned w;
			if (scanf("%x", &w) != 1)
				return 1;
			if (ws == 2) {
				unsigned short h = (unsigned short)w;
				memcpy(row + 2 * j, &h, 2);
			} else {
				memcpy(row + 4 * j, &w, 4);
			}
		}
		dg_u64 d = 0;
		for (long long t = 0; t < b; t++) {
			const DigestPowers pw = dg_powers(ws, (dg_u64)t, (dg_u64)b);
			d += dg_part(row, n, ws, vec, (dg_u64)t, (dg_u64)b, &pw);
		}
		printf("%016llx\n", d);
		free(row);
	}
	return 0;
}
