// driver.c: generator version 2 in plain C, through gpu/kernels/gen.cuh,
// for TestCMatchesGo. It reads requests from stdin, one a line:
//
//	n U                               -> the bits of N(U) as 16 hex digits
//	r DIST DT SIGMA SEED TENSOR KEY N  -> the N values of a row, dtype bits in hex, one a line
//
// (SIGMA as the 16 hex digits of a float64; the others decimal).
#include <stdio.h>
#include <string.h>

#include "gen.cuh"

int main(void)
{
	char op[2];
	while (scanf("%1s", op) == 1) {
		if (op[0] == 'n') {
			gen_u64 u;
			if (scanf("%llu", &u) != 1)
				return 2;
			double z = gen_normal(u);
			gen_u64 b;
			memcpy(&b, &z, sizeof b);
			printf("%016llx\n", b);
			continue;
		}
		int dist, dt;
		gen_u64 sigmaBits, seed, tensor, key, n;
		if (scanf("%d %d %llx %llu %llu %llu %llu", &dist, &dt, &sigmaBits, &seed, &tensor, &key, &n) != 7)
			return 2;
		double sigma;
		memcpy(&sigma, &sigmaBits, sizeof sigma);
		gen_u64 s = gen_state(seed, tensor, key);
		for (gen_u64 c = 0; c < n; c++)
			printf("%x\n", gen_value(dist, dt, sigma, s, c, n));
	}
	return 0;
}
