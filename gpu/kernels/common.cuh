// common.cuh: dtypes, exact conversions and the max of the oracle.
//
// Every kernel parameter is 64 bits wide (pointers, long long, or fp32 bits
// in an unsigned long long): gorgonia.org/cu's Launch copies 8 bytes per
// parameter.
#pragma once

typedef unsigned long long u64;
typedef long long i64;

// Values of oracle.DType.
#define DT_FP32 0
#define DT_BF16 1
#define DT_FP16 2

#define CANONICAL_NAN 0x7fffffffu

// bf16 -> fp32, exact (oracle.BF16ToF32).
__device__ __forceinline__ float bf16_to_f32(unsigned short h)
{
	return __uint_as_float(((unsigned)h) << 16);
}

// fp32 -> bf16, round to nearest even; NaN stays NaN and becomes quiet
// (oracle.BF16FromF32, bit for bit).
__device__ __forceinline__ unsigned short f32_to_bf16(float f)
{
	unsigned b = __float_as_uint(f);
	if ((b & 0x7fffffffu) > 0x7f800000u)
		return (unsigned short)((b >> 16) | 0x0040u);
	b += 0x7fffu + ((b >> 16) & 1u);
	return (unsigned short)(b >> 16);
}

// fp16 -> fp32, exact (github.com/x448/float16 f16bitsToF32bits).
__device__ __forceinline__ float fp16_to_f32(unsigned short in)
{
	unsigned sign = ((unsigned)in & 0x8000u) << 16;
	unsigned exp = ((unsigned)in & 0x7c00u) >> 10;
	unsigned coef = ((unsigned)in & 0x03ffu) << 13;
	if (exp == 0x1f) {
		if (coef == 0)
			return __uint_as_float(sign | 0x7f800000u);
		return __uint_as_float(sign | 0x7fc00000u | coef);
	}
	if (exp == 0) {
		if (coef == 0)
			return __uint_as_float(sign);
		exp++;
		while ((coef & 0x7f800000u) == 0) {
			coef <<= 1;
			exp--;
		}
		coef &= 0x007fffffu;
	}
	return __uint_as_float(sign | ((exp + (0x7f - 0xf)) << 23) | coef);
}

// fp32 -> fp16, round to nearest even (x448/float16 f32bitsToF16bits).
__device__ __forceinline__ unsigned short f32_to_fp16(float f)
{
	unsigned u32 = __float_as_uint(f);
	unsigned sign = u32 & 0x80000000u;
	unsigned exp = u32 & 0x7f800000u;
	unsigned coef = u32 & 0x007fffffu;
	if (exp == 0x7f800000u) {
		unsigned nanBit = coef != 0 ? 0x0200u : 0u;
		return (unsigned short)((sign >> 16) | 0x7c00u | nanBit | (coef >> 13));
	}
	unsigned halfSign = sign >> 16;
	int halfExp = (int)(exp >> 23) - 127 + 15;
	if (halfExp >= 0x1f)
		return (unsigned short)(halfSign | 0x7c00u);
	if (halfExp <= 0) {
		if (14 - halfExp > 24)
			return (unsigned short)halfSign;
		unsigned c = coef | 0x00800000u;
		unsigned halfCoef = c >> (unsigned)(14 - halfExp);
		unsigned roundBit = 1u << (unsigned)(13 - halfExp);
		if ((c & roundBit) != 0 && (c & (3u * roundBit - 1u)) != 0)
			halfCoef++;
		return (unsigned short)(halfSign | halfCoef);
	}
	unsigned uHalfExp = (unsigned)halfExp << 10;
	unsigned halfCoef = coef >> 13;
	unsigned roundBit = 0x00001000u;
	if ((coef & roundBit) != 0 && (coef & (3u * roundBit - 1u)) != 0)
		return (unsigned short)((halfSign | uHalfExp | halfCoef) + 1u);
	return (unsigned short)(halfSign | uHalfExp | halfCoef);
}

// load reads element i of a tensor stored as dtype dt and widens it.
__device__ __forceinline__ float load(const void *p, i64 i, int dt)
{
	if (dt == DT_BF16)
		return bf16_to_f32(((const unsigned short *)p)[i]);
	if (dt == DT_FP16)
		return fp16_to_f32(((const unsigned short *)p)[i]);
	return ((const float *)p)[i];
}

// store rounds v to dtype dt and writes its bits as element i.
__device__ __forceinline__ void store(void *p, i64 i, int dt, float v)
{
	if (dt == DT_BF16)
		((unsigned short *)p)[i] = f32_to_bf16(v);
	else if (dt == DT_FP16)
		((unsigned short *)p)[i] = f32_to_fp16(v);
	else
		((float *)p)[i] = v;
}

// to_bits returns the bits of v rounded to dtype dt (oracle.ToBits).
__device__ __forceinline__ unsigned to_bits(float v, int dt)
{
	if (dt == DT_BF16)
		return f32_to_bf16(v);
	if (dt == DT_FP16)
		return f32_to_fp16(v);
	return __float_as_uint(v);
}

// omax is oracle.Max32: the larger of a and b; if one is NaN the other; if
// both are NaN the canonical NaN; max(-0, +0) = max(+0, -0) = +0. Written
// out with compares so the result does not depend on how a given chip's
// max.f32 treats signed zeros (gpu's tests probe fmaxf separately).
__device__ __forceinline__ float omax(float a, float b)
{
	bool an = a != a, bn = b != b;
	if (an && bn)
		return __uint_as_float(CANONICAL_NAN);
	if (an)
		return b;
	if (bn)
		return a;
	if (a == 0.0f && b == 0.0f)
		return (__float_as_uint(a) >> 31) ? b : a;
	return a > b ? a : b;
}

struct AddOp {
	__device__ __forceinline__ float operator()(float a, float b) const { return __fadd_rn(a, b); }
};

struct MaxOp {
	__device__ __forceinline__ float operator()(float a, float b) const { return omax(a, b); }
};
