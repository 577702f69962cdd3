// moe_route.cpp: kernels/moe_route.cu on the host. stdin: "rows E K
// tie_high", then rows·E fp32 bit patterns; stdout: per row, K pairs of
// "id weight-bits".
#include "shim.h"
#include "moe_route.cu"

int main()
{
	long long rows, E, K, tie;
	if (scanf("%lld %lld %lld %lld", &rows, &E, &K, &tie) != 4)
		return 2;
	float *x = new float[rows * E];
	for (long long i = 0; i < rows * E; i++) {
		unsigned b;
		if (scanf("%u", &b) != 1)
			return 2;
		x[i] = __uint_as_float(b);
	}
	int *ids = new int[rows * K];
	float *w = new float[rows * K];
	for (long long r = 0; r < rows; r++) {
		blockIdx.x = (unsigned)r;
		moe_route(x, ids, w, rows, E, K, DT_FP32, tie);
	}
	for (long long r = 0; r < rows; r++) {
		for (long long j = 0; j < K; j++)
			printf("%d %u ", ids[r * K + j], __float_as_uint(w[r * K + j]));
		printf("\n");
	}
	return 0;
}
