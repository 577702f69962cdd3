// gen.cuh: input generator version 2 (values, whose doc.go states the
// derivation), one value at a time, for CUDA and for plain C alike: the
// same integer operations and the same correctly rounded float64
// operations, each rounded on its own, so a value has the same bits on the
// GPU, in C and in Go. Under nvcc the arithmetic is spelled with the _rn
// intrinsics (never contracted whatever -fmad says); plain C must be
// compiled without contraction (-ffp-contract=off) and with SSE2 or
// another IEEE double unit (no x87 excess precision).
#pragma once

#ifdef __CUDACC__
#define GEN_FN __device__ __forceinline__
#define GEN_TABLE __device__ const
#else
#include <string.h>
#define GEN_FN static inline
#define GEN_TABLE static const
#endif

typedef unsigned long long gen_u64;

#include "gen_table.cuh"

// Values of oracle.DType.
#define GEN_FP32 0
#define GEN_BF16 1
#define GEN_FP16 2

// Distribution codes (values.DistCode).
#define GEN_NORMAL 0
#define GEN_HEAVY 1
#define GEN_OUTLIER 2
#define GEN_CONSTANT 3
#define GEN_SIGNED_ZERO 4
#define GEN_SUBNORMAL 5
#define GEN_NEAR_OVERFLOW 6
#define GEN_TIES 7

#define GEN_GOLDEN 0x9e3779b97f4a7c15ull

#ifdef __CUDACC__
GEN_FN double gen_add(double a, double b) { return __dadd_rn(a, b); }
GEN_FN double gen_mul(double a, double b) { return __dmul_rn(a, b); }
GEN_FN double gen_div(double a, double b) { return __ddiv_rn(a, b); }
GEN_FN double gen_sqrt(double a) { return __dsqrt_rn(a); }
GEN_FN float gen_f32(double a) { return __double2float_rn(a); }
GEN_FN double gen_u64_to_f64(gen_u64 x) { return __ull2double_rn(x); }
GEN_FN int gen_clz(gen_u64 x) { return __clzll((long long)x); }
GEN_FN unsigned gen_f32_bits(float f) { return __float_as_uint(f); }
GEN_FN float gen_bits_f32(unsigned b) { return __uint_as_float(b); }
#else
GEN_FN double gen_add(double a, double b) { return a + b; }
GEN_FN double gen_mul(double a, double b) { return a * b; }
GEN_FN double gen_div(double a, double b) { return a / b; }
GEN_FN double gen_sqrt(double a) { return __builtin_sqrt(a); }
GEN_FN float gen_f32(double a) { return (float)a; }
GEN_FN double gen_u64_to_f64(gen_u64 x) { return (double)x; }
GEN_FN int gen_clz(gen_u64 x) { return x == 0 ? 64 : __builtin_clzll(x); }
GEN_FN unsigned gen_f32_bits(float f)
{
	unsigned b;
	memcpy(&b, &f, sizeof b);
	return b;
}
GEN_FN float gen_bits_f32(unsigned b)
{
	float f;
	memcpy(&f, &b, sizeof f);
	return f;
}
#endif

// mix is splitmix64.
GEN_FN gen_u64 gen_mix(gen_u64 x)
{
	x += GEN_GOLDEN;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

// gen_state is the row state of (seed, tensor, row key).
GEN_FN gen_u64 gen_state(gen_u64 seed, gen_u64 tensor, gen_u64 key)
{
	return gen_mix(gen_mix(seed ^ tensor * GEN_GOLDEN) ^ key);
}

// gen_draw is draw k of row state s.
GEN_FN gen_u64 gen_draw(gen_u64 s, gen_u64 k) { return gen_mix(s + k * GEN_GOLDEN); }

// gen_normal is the inverse-CDF sampler N(u).
GEN_FN double gen_normal(gen_u64 u)
{
	gen_u64 r = u & 0x7fffffffffffffffull;
	int e = gen_clz(r) - 1;
	if (e > GEN_OCTAVES - 1)
		e = GEN_OCTAVES - 1;
	gen_u64 f = r << (e + 2);
	int j = (int)(f >> (64 - GEN_CELL_BITS));
	double t = gen_mul(gen_u64_to_f64((f << GEN_CELL_BITS) >> 11), 0x1p-53);
	double a = gen_quantiles[e][j];
	double z = gen_add(a, gen_mul(t, gen_add(gen_quantiles[e][j + 1], -a)));
	return (u >> 63) ? -z : z;
}

// gen_heavy is n / sqrt(((a*a + b*b) + c*c)/3 + 1e-12).
GEN_FN double gen_heavy(double n, double a, double b, double c)
{
	double ss = gen_add(gen_mul(a, a), gen_mul(b, b));
	ss = gen_add(ss, gen_mul(c, c));
	ss = gen_add(gen_div(ss, 3.0), 1e-12);
	return gen_div(n, gen_sqrt(ss));
}

// fp32 -> bf16 bits, round to nearest even (oracle.BF16FromF32).
GEN_FN unsigned gen_bf16(float v)
{
	unsigned b = gen_f32_bits(v);
	if ((b & 0x7fffffffu) > 0x7f800000u)
		return ((b >> 16) | 0x0040u) & 0xffffu;
	b += 0x7fffu + ((b >> 16) & 1u);
	return b >> 16;
}

// fp32 -> fp16 bits, round to nearest even (oracle.FP16FromF32, from
// github.com/x448/float16).
GEN_FN unsigned gen_fp16(float v)
{
	unsigned u32 = gen_f32_bits(v);
	unsigned sign = u32 & 0x80000000u;
	unsigned exp = u32 & 0x7f800000u;
	unsigned coef = u32 & 0x007fffffu;
	if (exp == 0x7f800000u) {
		unsigned nanBit = coef != 0 ? 0x0200u : 0u;
		return (sign >> 16) | 0x7c00u | nanBit | (coef >> 13);
	}
	unsigned halfSign = sign >> 16;
	int halfExp = (int)(exp >> 23) - 127 + 15;
	if (halfExp >= 0x1f)
		return halfSign | 0x7c00u;
	if (halfExp <= 0) {
		if (14 - halfExp > 24)
			return halfSign;
		unsigned c = coef | 0x00800000u;
		unsigned halfCoef = c >> (unsigned)(14 - halfExp);
		unsigned roundBit = 1u << (unsigned)(13 - halfExp);
		if ((c & roundBit) != 0 && (c & (3u * roundBit - 1u)) != 0)
			halfCoef++;
		return halfSign | halfCoef;
	}
	unsigned halfCoef = coef >> 13;
	unsigned roundBit = 0x00001000u;
	unsigned h = halfSign | ((unsigned)halfExp << 10) | halfCoef;
	if ((coef & roundBit) != 0 && (coef & (3u * roundBit - 1u)) != 0)
		h++;
	return h;
}

// gen_bits rounds v to float32, then to dtype dt, and returns its bits.
GEN_FN unsigned gen_bits(double v, int dt)
{
	float f = gen_f32(v);
	if (dt == GEN_BF16)
		return gen_bf16(f);
	if (dt == GEN_FP16)
		return gen_fp16(f);
	return gen_f32_bits(f);
}

// gen_widen is the fp32 value of dtype bits h.
GEN_FN float gen_widen(unsigned h, int dt)
{
	if (dt == GEN_BF16)
		return gen_bits_f32(h << 16);
	if (dt == GEN_FP16) {
		unsigned sign = (h & 0x8000u) << 16;
		unsigned exp = (h & 0x7c00u) >> 10;
		unsigned coef = (h & 0x03ffu) << 13;
		if (exp == 0x1f)
			return gen_bits_f32(coef == 0 ? (sign | 0x7f800000u) : (sign | 0x7fc00000u | coef));
		if (exp == 0) {
			if (coef == 0)
				return gen_bits_f32(sign);
			exp++;
			while ((coef & 0x7f800000u) == 0) {
				coef <<= 1;
				exp--;
			}
			coef &= 0x007fffffu;
		}
		return gen_bits_f32(sign | ((exp + (0x7f - 0xf)) << 23) | coef);
	}
	return gen_bits_f32(h);
}

// gen_smallest_normal and gen_max_finite are oracle.SmallestNormal and
// oracle.MaxFinite of dt.
GEN_FN double gen_smallest_normal(int dt)
{
	return dt == GEN_BF16 ? 0x1p-126 : dt == GEN_FP16 ? 0x1p-14 : 0x1p-126;
}
GEN_FN double gen_max_finite(int dt)
{
	return dt == GEN_BF16 ? 0x1.fep+127 : dt == GEN_FP16 ? 65504.0 : 0x1.fffffep+127;
}

// gen_value is the bits (of dtype dt) of column col of the row with state
// s, in a row of n columns, under distribution dist with scale sigma:
// values.Tensor.Value, bit for bit.
GEN_FN unsigned gen_value(int dist, int dt, double sigma, gen_u64 s, gen_u64 col, gen_u64 n)
{
	gen_u64 h;
	double v, u;
	switch (dist) {
	case GEN_HEAVY:
		v = gen_heavy(gen_normal(gen_draw(s, 4 * col)), gen_normal(gen_draw(s, 4 * col + 1)),
			      gen_normal(gen_draw(s, 4 * col + 2)), gen_normal(gen_draw(s, 4 * col + 3)));
		return gen_bits(gen_mul(v, sigma), dt);
	case GEN_OUTLIER: {
		unsigned b = gen_bits(gen_mul(gen_normal(gen_draw(s, col)), sigma), dt);
		if (gen_draw(s, n) % n != col)
			return b;
		return gen_bits(gen_mul((double)gen_widen(b, dt), 1000.0), dt);
	}
	case GEN_CONSTANT:
		return gen_bits(gen_mul(gen_normal(gen_draw(s, 0)), sigma), dt);
	case GEN_SIGNED_ZERO:
		switch (gen_draw(s, 2 * col) % 3) {
		case 0:
			return 0;
		case 1:
			return dt == GEN_FP32 ? 0x80000000u : 0x8000u;
		}
		return gen_bits(gen_mul(gen_normal(gen_draw(s, 2 * col + 1)), sigma), dt);
	case GEN_SUBNORMAL:
		u = gen_mul(gen_u64_to_f64(gen_draw(s, col) >> 11), 0x1p-53);
		return gen_bits(gen_mul(gen_add(gen_mul(u, 2.0), -1.0), gen_smallest_normal(dt)), dt);
	case GEN_NEAR_OVERFLOW:
		h = gen_draw(s, col);
		u = gen_mul(gen_u64_to_f64((h << 1) >> 11), 0x1p-53);
		v = gen_mul(gen_add(0.25, gen_mul(0.75, u)), gen_max_finite(dt));
		return gen_bits((h >> 63) ? -v : v, dt);
	case GEN_TIES: {
		h = gen_draw(s, col);
		int m = (int)((h & 0xffffffffull) % 33) - 16;
		int p = (int)((h >> 32) % 5);
		v = gen_mul((double)m, p == 0 ? 0x1p-5 : p == 1 ? 0x1p-4 : p == 2 ? 0x1p-3 : p == 3 ? 0x1p-2 : 0x1p-1);
		return gen_bits(gen_mul(v, sigma), dt);
	}
	}
	return gen_bits(gen_mul(gen_normal(gen_draw(s, col)), sigma), dt);
}

// gen_row_key is the row key of row i of a tensor whose keys start at
// base: base + i when seq_len is 0, else base + (i / seq_len) << 32 +
// i % seq_len (attention's (sequence, position) keys).
GEN_FN gen_u64 gen_row_key(gen_u64 base, gen_u64 seq_len, gen_u64 i)
{
	if (seq_len == 0)
		return base + i;
	return base + ((i / seq_len) << 32) + i % seq_len;
}
