// explog.cuh: oracle.Exp32 and oracle.Log32, step for step, with the same
// fp32 constants given by their bits (oracle/explog.go; gpu's CPU test
// checks these bits against the oracle's constants).
#pragma once
#include "common.cuh"

#define EXP_MAGIC 0x4b400000u // 1.5*2^23
#define LOG2E 0x3fb8aa3bu
#define LN2_HI 0x3f317200u
#define LN2_LO 0x35bfbe8eu
#define SQRT2 0x3fb504f3u
#define EXP_C7 0x39500d01u // 1/5040
#define EXP_C6 0x3ab60b61u // 1/720
#define EXP_C5 0x3c088889u // 1/120
#define EXP_C4 0x3d2aaaabu // 1/24
#define EXP_C3 0x3e2aaaabu // 1/6
#define EXP_C2 0x3f000000u // 1/2
#define LOG_C9 0x3e638e39u // 2/9
#define LOG_C7 0x3e924925u // 2/7
#define LOG_C5 0x3ecccccdu // 2/5
#define LOG_C3 0x3f2aaaabu // 2/3
#define EXP_MAX_ARG 89.0f
#define EXP_MIN_ARG -104.0f

__device__ __forceinline__ float fbits(unsigned b) { return __uint_as_float(b); }

// pow2 is 2^k for -126 <= k <= 127, from bits.
__device__ __forceinline__ float pow2(int k) { return __uint_as_float((unsigned)(k + 127) << 23); }

__device__ float exp32(float x)
{
	if (x != x)
		return __uint_as_float(CANONICAL_NAN);
	if (x > EXP_MAX_ARG)
		return __uint_as_float(0x7f800000u);
	if (x < EXP_MIN_ARG)
		return 0.0f;
	float magic = fbits(EXP_MAGIC);
	float t = __fmaf_rn(x, fbits(LOG2E), magic);
	float k = __fsub_rn(t, magic);
	float r = __fmaf_rn(-k, fbits(LN2_HI), x);
	r = __fmaf_rn(-k, fbits(LN2_LO), r);
	float p = fbits(EXP_C7);
	p = __fmaf_rn(p, r, fbits(EXP_C6));
	p = __fmaf_rn(p, r, fbits(EXP_C5));
	p = __fmaf_rn(p, r, fbits(EXP_C4));
	p = __fmaf_rn(p, r, fbits(EXP_C3));
	p = __fmaf_rn(p, r, fbits(EXP_C2));
	p = __fmaf_rn(p, r, 1.0f);
	p = __fmaf_rn(p, r, 1.0f);
	int ki = (int)k;
	if (ki > 127)
		return __fmul_rn(__fmul_rn(p, pow2(ki - 1)), 2.0f);
	if (ki < -125)
		return __fmul_rn(__fmul_rn(p, pow2(ki + 100)), pow2(-100));
	return __fmul_rn(p, pow2(ki));
}

__device__ float log32(float x)
{
	if (x != x || x < 0.0f)
		return __uint_as_float(CANONICAL_NAN);
	if (x == 0.0f)
		return __uint_as_float(0xff800000u);
	if (x == __uint_as_float(0x7f800000u))
		return x;
	int e = 0;
	if (x < __uint_as_float(0x00800000u)) {
		x = __fmul_rn(x, pow2(23));
		e = -23;
	}
	unsigned b = __float_as_uint(x);
	e += (int)(b >> 23) - 127;
	b = (b & 0x007fffffu) | 0x3f800000u;
	if (b > SQRT2) {
		b -= 1u << 23;
		e++;
	}
	float m = __uint_as_float(b);
	float f = __fsub_rn(m, 1.0f);
	float s = __fdiv_rn(f, __fadd_rn(2.0f, f));
	float z = __fmul_rn(s, s);
	float r = fbits(LOG_C9);
	r = __fmaf_rn(r, z, fbits(LOG_C7));
	r = __fmaf_rn(r, z, fbits(LOG_C5));
	r = __fmaf_rn(r, z, fbits(LOG_C3));
	r = __fmul_rn(r, z);
	float l = __fmaf_rn(s, r, __fadd_rn(s, s));
	float ef = (float)e;
	return __fmaf_rn(ef, fbits(LN2_HI), __fmaf_rn(ef, fbits(LN2_LO), l));
}
