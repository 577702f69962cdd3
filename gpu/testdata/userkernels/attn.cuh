// attn.cuh: what the example attention kernels (attn_decode.cuh,
// attn_prefill.cuh) share: the ABI's loads and stores (common.cuh), the
// project's portable exp32 and log32 (explog.cuh, a copy of
// gpu/kernels/explog.cuh that gpu's tests keep equal), -inf, and omax,
// the oracle's maximum.
#pragma once
#include "common.cuh"
#ifndef CANONICAL_NAN
#define CANONICAL_NAN 0x7fffffffu
#endif
#include "explog.cuh"

#define NEG_INF __uint_as_float(0xff800000u)

// omax is oracle.Max32: the larger of a and b; if one is NaN the other; if
// both are NaN the canonical NaN; max(-0, +0) = +0.
__device__ __forceinline__ float omax(float a, float b) {
	bool an = a != a, bn = b != b;
	if (an && bn) return __uint_as_float(CANONICAL_NAN);
	if (an) return b;
	if (bn) return a;
	if (a == 0.0f && b == 0.0f) return (__float_as_uint(a) >> 31) ? b : a;
	return a > b ? a : b;
}
