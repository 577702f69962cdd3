// fp8_encode.cpp: kernels/quant_fp8.cu's fp8_encode on the host. stdin:
// fp32 bit patterns; stdout: per value, its e4m3 and e5m2 codes.
#include "shim.h"
#include "quant_fp8.cu"

int main()
{
	unsigned b;
	while (scanf("%u", &b) == 1) {
		const float f = __uint_as_float(b);
		printf("%u %u\n", fp8_encode(f, 0), fp8_encode(f, 1));
	}
	return 0;
}
