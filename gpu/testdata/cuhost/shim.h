// shim.h: just enough of CUDA for a kernel file of gpu/kernels to build as
// host C++ (g++ -x c++ -ffp-contract=off): the intrinsics as correctly
// rounded host fp32 operations (SSE on x86-64, fmaf from libm), one
// "thread" per call with blockDim.x = 1 and blockIdx.x the thread. The
// host tests (cuhost_test.go) run a kernel's own source this way against
// the oracle: its loop and rounding are checked without a GPU; what only
// the device can show (its intrinsics) TestProbes checks there.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
using std::fabs;
using std::frexp;
using std::ldexp;
using std::rint;
#define __device__
#define __global__
#define __forceinline__ inline
struct host_dim3 {
	unsigned x;
};
static host_dim3 blockIdx, threadIdx, blockDim = {1};
static inline unsigned __float_as_uint(float f)
{
	unsigned u;
	memcpy(&u, &f, 4);
	return u;
}
static inline float __uint_as_float(unsigned u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}
static inline float __fadd_rn(float a, float b) { volatile float r = a + b; return r; }
static inline float __fsub_rn(float a, float b) { volatile float r = a - b; return r; }
static inline float __fmul_rn(float a, float b) { volatile float r = a * b; return r; }
static inline float __fdiv_rn(float a, float b) { volatile float r = a / b; return r; }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
