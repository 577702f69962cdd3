// spin.cu: an RMSNorm-shaped kernel that never returns when rows > 8 (it
// waits on a flag nothing sets). bitparity's watchdog (the manifest's
// timeout) must kill the worker, report a crash finding with the case, and
// go on with a fresh worker.
#include "common.cuh"

extern "C" __global__ void rmsnorm_rows(const void *x, const void *w, void *y,
		long long rows, long long hidden, float eps, long long in_dtype, long long out_dtype) {
	long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= rows) return;
	for (long long j = 0; j < hidden; j++) store_val(y, r * hidden + j, out_dtype, load_val(x, r * hidden + j, in_dtype));
	if (rows > 8) {
		volatile int *flag = (volatile int *)y;
		while (flag[0] != 0x7fc00001) { // never stored: y holds finite values only here
			__nanosleep(1000);
		}
	}
}
