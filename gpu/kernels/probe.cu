// probe.cu: elementwise kernels that expose the building blocks of the
// exact kernels (oracle.Max32, Exp32, Log32, the dtype conversions) and
// the hardware's own fmaxf, so tests can check each one against the oracle
// over many values.
#include "common.cuh"
#include "explog.cuh"

// probe_max: hw[i] = fmaxf(a[i], b[i]) (PTX max.f32); ours[i] = omax(a[i], b[i]).
extern "C" __global__ void probe_max(const float *a, const float *b, float *hw, float *ours, i64 n)
{
	i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		hw[i] = fmaxf(a[i], b[i]);
		ours[i] = omax(a[i], b[i]);
	}
}

// probe_explog: e[i] = exp32(x[i]); l[i] = log32(x[i]).
extern "C" __global__ void probe_explog(const float *x, float *e, float *l, i64 n)
{
	i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		e[i] = exp32(x[i]);
		l[i] = log32(x[i]);
	}
}

// probe_convert: bf[i], hf[i] = the bf16 and fp16 bits of x[i]; back[i] =
// the fp32 value of fp16 bits h[i] (exact widening).
extern "C" __global__ void probe_convert(const float *x, unsigned short *bf, unsigned short *hf,
					 const unsigned short *h, float *back, i64 n)
{
	i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		bf[i] = f32_to_bf16(x[i]);
		hf[i] = f32_to_fp16(x[i]);
		back[i] = fp16_to_f32(h[i]);
	}
}
