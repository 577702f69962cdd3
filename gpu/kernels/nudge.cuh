// nudge.cuh: the boundary nudge of one RMSNorm row (fuzz/boundary's
// RMSNormRows.Nudge, the probes given), for CUDA and for plain C alike, as
// gen.cuh is: the same integer operations and the same correctly rounded
// fp32 and float64 operations, each rounded on its own, so a nudged row
// has the same bits on the GPU, in C and in Go. TestCMatchesGo in
// fuzz/boundary compiles it with the system C compiler and compares whole
// rows with Go's; the GPU tests compare the device's rows with the host's.
//
// The row's reduction is the oracle's with T <= 32 threads (one warp):
// thread t's partial is the fma chain over its elements in index order
// (chunks of vec at t*vec, t*vec + T*vec, ...), the partials combine by the
// warp butterfly or in lane order, then
//
//	mean = ss / H, rstd = 1 / sqrt(mean + eps)
//	y[j] = (x[j]*rstd)*w[j]   (order 0)   or   x[j]*(rstd*w[j])   (order 1)
//
// The search changes only the three knobs x[H-3..H-1], the last elements
// of their threads' chains, so a thread's partial is its chain over its
// other elements (kept) continued over its knobs.
#pragma once

#include "gen.cuh"

#ifdef __CUDACC__
GEN_FN float nd_fma(float a, float b, float c) { return __fmaf_rn(a, b, c); }
GEN_FN float nd_mul(float a, float b) { return __fmul_rn(a, b); }
GEN_FN float nd_add(float a, float b) { return __fadd_rn(a, b); }
GEN_FN float nd_div(float a, float b) { return __fdiv_rn(a, b); }
GEN_FN float nd_sqrt(float a) { return __fsqrt_rn(a); }
GEN_FN double nd_sub64(double a, double b) { return __dsub_rn(a, b); }
// A row is nudged by one warp: every lane runs the search with the same
// values, and the loops over the row's elements are split between lanes.
GEN_FN int nd_lane(void) { return threadIdx.x & 31; }
#define ND_LANES 32
GEN_FN int nd_sum(int v)
{
	for (int off = 16; off >= 1; off /= 2)
		v += __shfl_xor_sync(0xffffffffu, v, off);
	return v;
}
GEN_FN float nd_share(float v, int lane) { return __shfl_sync(0xffffffffu, v, lane); }
GEN_FN void nd_sync(void) { __syncwarp(); }
#else
#include <math.h>
GEN_FN float nd_fma(float a, float b, float c) { return fmaf(a, b, c); }
GEN_FN float nd_mul(float a, float b) { return a * b; }
GEN_FN float nd_add(float a, float b) { return a + b; }
GEN_FN float nd_div(float a, float b) { return a / b; }
GEN_FN float nd_sqrt(float a) { return sqrtf(a); }
GEN_FN double nd_sub64(double a, double b) { return a - b; }
// In C one thread is the whole "warp".
GEN_FN int nd_lane(void) { return 0; }
#define ND_LANES 1
GEN_FN int nd_sum(int v) { return v; }
GEN_FN float nd_share(float v, int lane)
{
	(void)lane;
	return v;
}
GEN_FN void nd_sync(void) {}
#endif

// MaxEvals and K of fuzz/boundary; at most 32 threads a row.
#define ND_MAX_EVALS 40
#define ND_K 4u
#define ND_MAX_THREADS 32

// nd_canon is oracle.canon: every NaN becomes 0x7fffffff (PTX's).
GEN_FN float nd_canon(float f) { return f != f ? gen_bits_f32(0x7fffffffu) : f; }

GEN_FN int nd_isnan(float f) { return f != f; }
GEN_FN int nd_finite(float f) { return (gen_f32_bits(f) & 0x7f800000u) != 0x7f800000u; }

// nd_to_bits and nd_from_bits are oracle.ToBits and oracle.FromBits.
GEN_FN unsigned nd_to_bits(float v, int dt)
{
	if (dt == GEN_BF16)
		return gen_bf16(v);
	if (dt == GEN_FP16)
		return gen_fp16(v);
	return gen_f32_bits(v);
}
GEN_FN float nd_from_bits(unsigned b, int dt) { return gen_widen(b, dt); }

// nd_round is oracle.Round.
GEN_FN float nd_round(float v, int dt) { return dt == GEN_FP32 ? v : gen_widen(nd_to_bits(v, dt), dt); }

// nd_fields returns dt's mantissa and exponent masks (boundary's fields).
GEN_FN void nd_fields(int dt, unsigned *mant, unsigned *exp)
{
	if (dt == GEN_BF16)
		*mant = 0x7fu, *exp = 0x7f80u;
	else if (dt == GEN_FP16)
		*mant = 0x3ffu, *exp = 0x7c00u;
	else
		*mant = 0x7fffffu, *exp = 0x7f800000u;
}

// nd_low_bits is boundary's lowBits: fp32 mantissa bits below dt's last.
GEN_FN unsigned nd_low_bits(int dt) { return dt == GEN_BF16 ? 16u : dt == GEN_FP16 ? 13u : 0u; }

// nd_step is boundary's step: the dt value n representable values from v.
GEN_FN float nd_step(int dt, float v, int n)
{
	unsigned sign = dt == GEN_FP32 ? 0x80000000u : 0x8000u;
	unsigned u = nd_to_bits(v, dt);
	long long ord = (long long)(u & ~sign);
	if (u & sign)
		ord = -ord;
	ord += n;
	if (ord < 0)
		return nd_from_bits(sign | (unsigned)(-ord), dt);
	return nd_from_bits((unsigned)ord, dt);
}

// nd_score1 is boundary.Score of one value with k = ND_K.
GEN_FN int nd_score1(float v, int dt)
{
	unsigned n = nd_low_bits(dt);
	if (n == 0)
		return 0;
	unsigned lo = 1u, hi = 0x7f800000u;
	if (dt == GEN_FP16)
		lo = 0x38800000u, hi = 0x477fe000u; // 2^-14 and 65504
	unsigned mask = (1u << n) - 1u, half = 1u << (n - 1u);
	unsigned a = gen_f32_bits(v) & 0x7fffffffu;
	if (a < lo || a >= hi)
		return 0;
	unsigned m = (a & ~mask) | half;
	unsigned d = a >= m ? a - m : m - a;
	return d <= ND_K ? (int)(ND_K + 1u - d) : 0;
}

// nd_rms is one row's nudge state: the row, its weights, the schedule,
// the kept partials and the knobs' current values.
struct nd_rms {
	void *x;       // the row, as dtype in bits
	const void *w; // the weights, as dtype in bits
	long long h;
	float eps;
	int in, out, order, threads, vec, butterfly;
	float rest[ND_MAX_THREADS]; // thread t's chain over its elements below h-3
	float knob[3];              // x[h-3], x[h-2], x[h-1]
	int own[3];                 // the threads whose chains end with them
	float f;                    // the primary output at the current x
	unsigned long long target_bits;
	float target;
	int evals;
};

// nd_x is element j of the row at the current state.
GEN_FN float nd_x(const struct nd_rms *r, long long j)
{
	if (j >= r->h - 3)
		return r->knob[j - (r->h - 3)];
	if (r->in == GEN_FP32)
		return gen_bits_f32(((const unsigned *)r->x)[j]);
	return gen_widen(((const unsigned short *)r->x)[j], r->in);
}

GEN_FN float nd_w(const struct nd_rms *r, long long j)
{
	if (r->in == GEN_FP32)
		return gen_bits_f32(((const unsigned *)r->w)[j]);
	return gen_widen(((const unsigned short *)r->w)[j], r->in);
}

GEN_FN void nd_store(struct nd_rms *r, long long j, unsigned bits)
{
	if (r->in == GEN_FP32)
		((unsigned *)r->x)[j] = bits;
	else
		((unsigned short *)r->x)[j] = (unsigned short)bits;
}

// nd_owner is the thread whose chain holds element j.
GEN_FN int nd_owner(const struct nd_rms *r, long long j) { return (int)((j / r->vec) % r->threads); }

// nd_chain is thread t's chain over its elements below to.
GEN_FN float nd_chain(const struct nd_rms *r, int t, long long to)
{
	const long long V = r->vec, step = (long long)r->threads * V;
	float acc = 0.0f;
	for (long long base = t * V; base < to; base += step)
		for (long long j = base; j < base + V && j < to; j++) {
			float v = nd_x(r, j);
			acc = nd_fma(v, v, acc);
		}
	return acc;
}

// nd_rstd is the row's rstd at the current x (RMSNormProbe.Tap).
GEN_FN float nd_rstd(const struct nd_rms *r)
{
	float p[ND_MAX_THREADS] = {0};
	const int T = r->threads;
	for (int t = 0; t < T; t++)
		p[t] = r->rest[t];
	// Each chain goes on over its knobs in index order (at most three fmas).
	for (int i = 0; i < 3; i++)
		p[r->own[i]] = nd_fma(r->knob[i], r->knob[i], p[r->own[i]]);
	float ss;
	if (r->butterfly) {
		for (int off = T / 2; off >= 1; off /= 2)
			for (int l = 0; l < off; l++)
				p[l] = nd_canon(nd_add(p[l], p[l + off]));
		ss = p[0];
	} else {
		ss = p[0];
		for (int l = 1; l < T; l++)
			ss = nd_canon(nd_add(ss, p[l]));
	}
	float mean = nd_canon(nd_div(ss, (float)r->h));
	return nd_canon(nd_div(1.0f, nd_canon(nd_sqrt(nd_canon(nd_add(mean, r->eps))))));
}

// nd_y is output j with rstd.
GEN_FN float nd_y(const struct nd_rms *r, long long j, float rstd)
{
	float x = nd_x(r, j), w = nd_w(r, j);
	if (r->order == 1)
		return nd_canon(nd_mul(x, nd_canon(nd_mul(rstd, w))));
	return nd_canon(nd_mul(nd_canon(nd_mul(x, rstd)), w));
}

// nd_dist is the tuner's dist: |f - target| in fp32 ulps (ordered bits),
// the largest value for NaN.
GEN_FN unsigned long long nd_dist(const struct nd_rms *r, float f)
{
	if (nd_isnan(f))
		return ~0ull;
	unsigned a = gen_f32_bits(f), b = gen_f32_bits(r->target);
	long long oa = (long long)(a & 0x7fffffffu), ob = (long long)(b & 0x7fffffffu);
	if (a & 0x80000000u)
		oa = -oa;
	if (b & 0x80000000u)
		ob = -ob;
	long long d = oa - ob;
	return (unsigned long long)(d < 0 ? -d : d);
}

// nd_try sets knob k (an index h-3..h-1) to v and evaluates the primary
// output p0 (one evaluation).
GEN_FN float nd_try(struct nd_rms *r, long long k, float v, long long p0)
{
	r->knob[k - (r->h - 3)] = v;
	r->evals++;
	return nd_y(r, p0, nd_rstd(r));
}

// nd_knob is the tuner's secant search on knob k within |x[k]| <= limit.
GEN_FN void nd_knob(struct nd_rms *r, long long k, float limit, long long p0)
{
	if (r->evals >= ND_MAX_EVALS)
		return;
	const int in = r->in;
	float x0 = r->knob[k - (r->h - 3)], f0 = r->f;
	float bestX = x0, bestF = f0;
	float x1 = nd_round(nd_mul(x0, 1.0f + 1.0f / 32), in);
	if (x0 == 0)
		x1 = nd_round(limit / 64, in);
	if (x1 == x0)
		x1 = nd_step(in, x0, 1);
	float f1 = nd_try(r, k, x1, p0);
	if (nd_dist(r, f1) < nd_dist(r, bestF))
		bestX = x1, bestF = f1;
	double slope = gen_div(nd_sub64((double)f1, (double)f0), nd_sub64((double)x1, (double)x0));
	float cur = x1, fcur = f1;
	for (int i = 0; i < 6 && slope != 0 && slope == slope && slope - slope == 0 && nd_dist(r, bestF) > 0 &&
			r->evals < ND_MAX_EVALS;
	     i++) {
		double d = gen_div(nd_sub64((double)r->target, (double)fcur), slope);
		float nx = nd_round(gen_f32(gen_add((double)cur, d)), in);
		if (nx == cur || !nd_finite(nx) || gen_f32(nx < 0 ? -(double)nx : (double)nx) > limit)
			break;
		float fn = nd_try(r, k, nx, p0);
		if (nd_dist(r, fn) < nd_dist(r, bestF))
			bestX = nx, bestF = fn;
		if (fn != fcur)
			slope = gen_div(nd_sub64((double)fn, (double)fcur), nd_sub64((double)nx, (double)cur));
		cur = nx, fcur = fn;
	}
	r->knob[k - (r->h - 3)] = bestX;
	r->f = bestF;
}

// nd_score is the scan's score: Score of every output of the row (an
// integer sum, so splitting it between lanes changes nothing).
GEN_FN int nd_score(const struct nd_rms *r)
{
	float rstd = nd_rstd(r);
	int s = 0;
	for (long long j = nd_lane(); j < r->h; j += ND_LANES)
		s += nd_score1(nd_y(r, j, rstd), r->out);
	return nd_sum(s);
}

// nd_scan is the tuner's scan of knob k over radius input values each way.
GEN_FN void nd_scan(struct nd_rms *r, long long k, int radius, long long p0)
{
	if (r->evals >= ND_MAX_EVALS)
		return;
	float base = r->knob[k - (r->h - 3)];
	float bestX = base, bestF = r->f;
	int bestS = nd_score(r);
	for (int i = -radius; i <= radius && r->evals < ND_MAX_EVALS; i++) {
		float v = nd_step(r->in, base, i);
		if (i == 0 || !nd_finite(v) || v == base)
			continue;
		float f = nd_try(r, k, v, p0);
		int s = nd_score(r);
		if (s > bestS || (s == bestS && nd_dist(r, f) < nd_dist(r, bestF)))
			bestX = v, bestF = f, bestS = s;
	}
	r->knob[k - (r->h - 3)] = bestX;
	r->f = bestF;
}

// nd_rmsnorm_row nudges row x (h elements of dtype in, h >= 8) in place as
// RMSNormRows.Nudge does with the probes probes[0..np-1] (np >= 1):
//
//  1. every probe keeps its sign and exponent (zero, subnormal, Inf and
//     NaN exponents become the bias's) and takes the mantissa of probe 0;
//  2. the knobs x[h-1], x[h-2], x[h-3] get magnitudes sqrt(h)/8, /64,
//     /512, signs kept;
//  3. a secant search on each knob drives output probes[0] to the target
//     (the out midpoint nearest it, or one fp32 ulp to its odd side when
//     odd), then a scan of x[h-3] over ±4 input values keeps the highest
//     Score of the row.
//
// Nothing past step 2 happens when the primary output has no midpoint. It
// returns the nudged row's Score (a check of the score the scan uses).
GEN_FN int nd_rmsnorm_row(void *x, const void *w, long long h, const long long *probes, long long np, float eps,
			   int in, int out, int threads, int vec, int butterfly, int order, int odd)
{
	struct nd_rms r = {0};
	r.x = x, r.w = w, r.h = h, r.eps = eps, r.in = in, r.out = out, r.order = order;
	r.threads = threads, r.vec = vec, r.butterfly = butterfly;
	unsigned mant, exp;
	nd_fields(in, &mant, &exp);
	// Probe i's new bits depend on its own and probe 0's, so lanes split
	// the probes once each has m.
	unsigned m = nd_to_bits(nd_x(&r, probes[0]), in);
	if ((m & exp) == 0 || (m & exp) == exp)
		m = (m & ~exp) | ((exp >> 1) & exp);
	m &= mant;
	nd_sync(); // every lane has m before probe 0 changes
	for (long long i = nd_lane(); i < np; i += ND_LANES) {
		long long j = probes[i];
		unsigned u = nd_to_bits(nd_x(&r, j), in);
		if ((u & exp) == 0 || (u & exp) == exp)
			u = (u & ~exp) | ((exp >> 1) & exp);
		nd_store(&r, j, (u & ~mant) | m);
	}
	// The knobs, read before the state's knob copies exist.
	float sq = gen_f32(gen_sqrt((double)h));
	const float scales[3] = {1.0f / 8, 1.0f / 64, 1.0f / 512};
	for (int i = 0; i < 3; i++) {
		long long k = h - 1 - i;
		unsigned xb = in == GEN_FP32 ? ((const unsigned *)x)[k] : ((const unsigned short *)x)[k];
		float xv = gen_widen(xb, in);
		float mag = nd_mul(sq, scales[i]);
		float v = (gen_f32_bits(xv) & 0x80000000u) ? -mag : mag;
		r.knob[2 - i] = nd_round(v, in);
	}
	for (int i = 0; i < 3; i++)
		r.own[i] = nd_owner(&r, h - 3 + i);
	nd_sync(); // the probes' stores before the chains read them
	for (int t = 0; t < threads; t++)
		r.rest[t] = t % ND_LANES == nd_lane() ? nd_chain(&r, t, h - 3) : 0.0f;
	for (int t = 0; t < threads; t++)
		r.rest[t] = nd_share(r.rest[t], t % ND_LANES);
	const long long p0 = probes[0];
	r.f = nd_y(&r, p0, nd_rstd(&r));
	r.evals = 1;
	// Midpoint(f, out)
	unsigned n = nd_low_bits(out);
	unsigned fb = gen_f32_bits(r.f), fa = fb & 0x7fffffffu;
	int ok = n != 0 && fa != 0 && fa < 0x7f800000u;
	if (ok && out == GEN_FP16)
		ok = fa >= 0x38800000u && fa < 0x477fe000u;
	if (ok) {
		unsigned t = (fb & ~((1u << n) - 1u)) | (1u << (n - 1u));
		if (odd) {
			if (((fb >> n) & 1u) == 0)
				t++;
			else
				t--;
		}
		r.target = gen_bits_f32(t);
		nd_knob(&r, h - 1, sq, p0);
		nd_knob(&r, h - 2, sq / 4, p0);
		nd_knob(&r, h - 3, sq / 32, p0);
		nd_scan(&r, h - 3, 4, p0);
	}
	if (nd_lane() == 0)
		for (int i = 0; i < 3; i++)
			nd_store(&r, h - 3 + i, nd_to_bits(r.knob[i], in));
	return nd_score(&r);
}
