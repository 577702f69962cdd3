// fault.cu: an RMSNorm-shaped kernel that faults: when rows > 8 it writes
// through a pointer far outside any allocation (an illegal address; the
// CUDA context is then unusable, a sticky error). bitparity must report a
// crash finding with the case and the error, restart its worker and go on.
#include "common.cuh"

extern "C" __global__ void rmsnorm_rows(const void *x, const void *w, void *y,
		long long rows, long long hidden, float eps, long long in_dtype, long long out_dtype) {
	long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= rows) return;
	for (long long j = 0; j < hidden; j++) store_val(y, r * hidden + j, out_dtype, load_val(x, r * hidden + j, in_dtype));
	if (rows > 8) {
		volatile float *bad = (volatile float *)((char *)y + (1ll << 40));
		*bad = 1.0f;
	}
}
