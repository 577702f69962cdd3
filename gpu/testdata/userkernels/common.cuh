// common.cuh: loads and stores of the dtype codes of the bitparity kernel
// ABI (docs/kernel-abi.md): 0 fp32, 1 bf16, 2 fp16, each value stored as
// its little-endian bits. Conversions to 16 bits round to nearest even.
#pragma once
#include <cuda_fp16.h>

__device__ __forceinline__ float load_val(const void *p, long long i, long long dt) {
	if (dt == 1) {
		unsigned int b = ((const unsigned short *)p)[i];
		return __uint_as_float(b << 16);
	}
	if (dt == 2) return __half2float(((const __half *)p)[i]);
	return ((const float *)p)[i];
}

__device__ __forceinline__ unsigned short f32_to_bf16_rn(float f) {
	unsigned int u = __float_as_uint(f);
	if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40); // quiet NaN
	u += 0x7fffu + ((u >> 16) & 1u);
	return (unsigned short)(u >> 16);
}

__device__ __forceinline__ void store_val(void *p, long long i, long long dt, float v) {
	if (dt == 1) ((unsigned short *)p)[i] = f32_to_bf16_rn(v);
	else if (dt == 2) ((__half *)p)[i] = __float2half_rn(v);
	else ((float *)p)[i] = v;
}
