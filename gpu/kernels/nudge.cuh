// nudge.cuh: the boundary nudges of boundary for one RMSNorm row
// (RMSNormRows.Nudge, the probes given) and one GEMM row (GEMMRow), for
// CUDA and for plain C alike, as gen.cuh is: the same integer operations
// and the same correctly rounded fp32 and float64 operations, each rounded
// on its own, so a nudged row has the same bits on the GPU, in C and in
// Go. TestCMatchesGo in boundary compiles it with the system C
// compiler and compares whole rows with Go's; the GPU tests compare the
// device's rows with the host's.
//
// Both run boundary's tuner (tune.go): secant searches on three knob
// elements, then a scan of the last, each step one evaluation of the
// row's primary output with the oracle's schedule.
//
// RMSNorm: the reduction has T <= 32 threads (one warp): thread t's
// partial is the fma chain over its elements in index order (chunks of vec
// at t*vec, t*vec + T*vec, ...), the partials combine by the warp butterfly
// or in lane order, then
//
//	mean = ss / H, rstd = 1 / sqrt(mean + eps)
//	y[j] = (x[j]*rstd)*w[j]   (order 0)   or   x[j]*(rstd*w[j])   (order 1)
//
// The knobs x[H-3..H-1] are the last elements of their threads' chains,
// so a thread's partial is its chain over its other elements (kept)
// continued over its knobs.
//
// GEMM (split-K 1, the oracle target's): output col of a row is the fma
// chain acc = fma(x[k], W[k][col], acc) for k = 0 .. K-1; the knobs are the
// three k of largest |W[k][col]|, and a changed knob's chain is recomputed
// from the knob on (the chain's value before each knob is kept).
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

// ND_UNROLL asks nvcc to unroll a chain's loop (its loads are issued
// ahead; the fmas stay in order).
#ifdef __CUDACC__
#define ND_UNROLL _Pragma("unroll 4")
#else
#define ND_UNROLL
#endif

// MaxEvals and K of boundary; at most 32 threads a row.
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

// Ops of a nudged row.
#define ND_RMSNORM 0
#define ND_GEMM 1

// nd_row is one row's nudge state: the row, what it is reduced with, the
// knobs and the tuner's state.
struct nd_row {
	int op;
	void *x;       // the row, as dtype in bits
	const void *w; // rmsnorm: the weights; gemm: W (K x n), as dtype in bits
	long long h;   // the row's length (hidden, K)
	int in, out;
	long long kidx[3]; // the knobs' indices, in the order the search tunes the last
	float knob[3];     // their current values
	// rmsnorm
	float eps;
	int order, threads, vec, butterfly;
	long long p0;               // the probe whose output is the primary
	float rest[ND_MAX_THREADS]; // thread t's chain over its elements below h-3
	int own[3];                 // the threads whose chains end with knob i
	// gemm
	long long n, col;
	float *wcol;       // W[k][col] for k = 0 .. K-1 (the caller's scratch)
	long long spos[3]; // the knobs' indices ascending
	int sslot[3];      // and their slots
	float pre[3];      // the chain's value before knob i (at the last evaluation)
	long long from;    // the lowest element changed since: recompute from it
	// tuner
	float f; // the primary output at the current x
	float target;
	int evals;
};

// nd_slot is the knob slot of element j, or -1.
GEN_FN int nd_slot(const struct nd_row *r, long long j)
{
	if (r->op == ND_RMSNORM)
		return j >= r->h - 3 ? (int)(j - (r->h - 3)) : -1;
	for (int i = 0; i < 3; i++)
		if (r->kidx[i] == j)
			return i;
	return -1;
}

GEN_FN float nd_load(const void *p, long long j, int dt)
{
	if (dt == GEN_FP32)
		return gen_bits_f32(((const unsigned *)p)[j]);
	return gen_widen(((const unsigned short *)p)[j], dt);
}

// nd_x is element j of the row at the current state.
GEN_FN float nd_x(const struct nd_row *r, long long j)
{
	int s = nd_slot(r, j);
	return s >= 0 ? r->knob[s] : nd_load(r->x, j, r->in);
}

// nd_w is rmsnorm's weight j, or gemm's W[j][col].
GEN_FN float nd_w(const struct nd_row *r, long long j)
{
	if (r->op == ND_GEMM)
		return r->wcol[j];
	return nd_load(r->w, j, r->in);
}

GEN_FN void nd_store(struct nd_row *r, long long j, unsigned bits)
{
	if (r->in == GEN_FP32)
		((unsigned *)r->x)[j] = bits;
	else
		((unsigned short *)r->x)[j] = (unsigned short)bits;
}

// nd_owner is the rmsnorm thread whose chain holds element j.
GEN_FN int nd_owner(const struct nd_row *r, long long j) { return (int)((j / r->vec) % r->threads); }

// nd_chain is rmsnorm thread t's chain over its elements below to.
GEN_FN float nd_chain(const struct nd_row *r, int t, long long to)
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

// nd_rstd is the rmsnorm row's rstd at the current x (RMSNormProbe.Tap).
GEN_FN float nd_rstd(const struct nd_row *r)
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

// nd_y is rmsnorm output j with rstd.
GEN_FN float nd_y(const struct nd_row *r, long long j, float rstd)
{
	float x = nd_x(r, j), w = nd_w(r, j);
	if (r->order == 1)
		return nd_canon(nd_mul(x, nd_canon(nd_mul(rstd, w))));
	return nd_canon(nd_mul(nd_canon(nd_mul(x, rstd)), w));
}

// nd_dot continues gemm's chain acc over the elements [from, to), none of
// them a knob.
GEN_FN float nd_dot(const struct nd_row *r, long long from, long long to, float acc)
{
	const float *wc = r->wcol;
	if (r->in == GEN_FP32) {
		const unsigned *x = (const unsigned *)r->x;
ND_UNROLL
		for (long long k = from; k < to; k++)
			acc = nd_fma(gen_bits_f32(x[k]), wc[k], acc);
		return acc;
	}
	const unsigned short *x = (const unsigned short *)r->x;
	const int dt = r->in;
ND_UNROLL
	for (long long k = from; k < to; k++)
		acc = nd_fma(gen_widen(x[k], dt), wc[k], acc);
	return acc;
}

// nd_gemm_eval is gemm's output at the current x: the chain recomputed
// from the lowest changed element on, segment by segment between the
// knobs, keeping its value before each knob.
GEN_FN float nd_gemm_eval(struct nd_row *r)
{
	long long k = r->from;
	float acc = 0.0f;
	int i = 0; // the first knob, in index order, at or after k
	while (i < 3 && r->spos[i] < k)
		i++;
	if (i < 3 && r->spos[i] == k) // the kept chain value at the lowest changed knob
		acc = r->pre[r->sslot[i]];
	for (; i < 3; i++) {
		long long p = r->spos[i];
		int s = r->sslot[i];
		acc = nd_dot(r, k, p, acc);
		r->pre[s] = acc;
		acc = nd_fma(r->knob[s], r->wcol[p], acc);
		k = p + 1;
	}
	acc = nd_dot(r, k, r->h, acc);
	r->from = r->h;
	return acc;
}

// nd_eval is one evaluation of the primary output at the current x.
GEN_FN float nd_eval(struct nd_row *r)
{
	if (r->op == ND_GEMM)
		return nd_gemm_eval(r);
	return nd_y(r, r->p0, nd_rstd(r));
}

// nd_put sets knob slot s to v.
GEN_FN void nd_put(struct nd_row *r, int s, float v)
{
	r->knob[s] = v;
	if (r->kidx[s] < r->from)
		r->from = r->kidx[s];
}

// nd_dist is the tuner's dist: |f - target| in fp32 ulps (ordered bits),
// the largest value for NaN.
GEN_FN unsigned long long nd_dist(const struct nd_row *r, float f)
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

// nd_try sets knob slot s to v and evaluates (one evaluation).
GEN_FN float nd_try(struct nd_row *r, int s, float v)
{
	nd_put(r, s, v);
	r->evals++;
	return nd_eval(r);
}

// nd_knob is the tuner's secant search on knob slot s within |x| <= limit.
GEN_FN void nd_knob(struct nd_row *r, int s, float limit)
{
	if (r->evals >= ND_MAX_EVALS)
		return;
	const int in = r->in;
	float x0 = r->knob[s], f0 = r->f;
	float bestX = x0, bestF = f0;
	float x1 = nd_round(nd_mul(x0, 1.0f + 1.0f / 32), in);
	if (x0 == 0)
		x1 = nd_round(limit / 64, in);
	if (x1 == x0)
		x1 = nd_step(in, x0, 1);
	float f1 = nd_try(r, s, x1);
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
		float fn = nd_try(r, s, nx);
		if (nd_dist(r, fn) < nd_dist(r, bestF))
			bestX = nx, bestF = fn;
		if (fn != fcur)
			slope = gen_div(nd_sub64((double)fn, (double)fcur), nd_sub64((double)nx, (double)cur));
		cur = nx, fcur = fn;
	}
	nd_put(r, s, bestX);
	r->f = bestF;
}

// nd_score is the scan's score at the current x, whose primary output is
// f: rmsnorm's is Score of every output of the row (an integer sum, so
// splitting it between lanes changes nothing), gemm's Score of f alone.
GEN_FN int nd_score(const struct nd_row *r, float f)
{
	if (r->op == ND_GEMM)
		return nd_score1(f, r->out);
	float rstd = nd_rstd(r);
	int s = 0;
	for (long long j = nd_lane(); j < r->h; j += ND_LANES)
		s += nd_score1(nd_y(r, j, rstd), r->out);
	return nd_sum(s);
}

// nd_scan is the tuner's scan of knob slot s over radius input values each
// way.
GEN_FN void nd_scan(struct nd_row *r, int s, int radius)
{
	if (r->evals >= ND_MAX_EVALS)
		return;
	float base = r->knob[s];
	float bestX = base, bestF = r->f;
	int bestS = nd_score(r, r->f);
	for (int i = -radius; i <= radius && r->evals < ND_MAX_EVALS; i++) {
		float v = nd_step(r->in, base, i);
		if (i == 0 || !nd_finite(v) || v == base)
			continue;
		float f = nd_try(r, s, v);
		int sc = nd_score(r, f);
		if (sc > bestS || (sc == bestS && nd_dist(r, f) < nd_dist(r, bestF)))
			bestX = v, bestF = f, bestS = sc;
	}
	nd_put(r, s, bestX);
	r->f = bestF;
}

// nd_start evaluates the row and sets the target (boundary's newTuner):
// the out midpoint nearest the primary output, or the fp32 value one ulp
// from it to the odd side when odd. It returns 0 when the output has no
// midpoint (then the search does not run).
GEN_FN int nd_start(struct nd_row *r, int odd)
{
	r->f = nd_eval(r);
	r->evals = 1;
	unsigned n = nd_low_bits(r->out);
	unsigned fb = gen_f32_bits(r->f), fa = fb & 0x7fffffffu;
	int ok = n != 0 && fa != 0 && fa < 0x7f800000u;
	if (ok && r->out == GEN_FP16)
		ok = fa >= 0x38800000u && fa < 0x477fe000u;
	if (!ok)
		return 0;
	unsigned t = (fb & ~((1u << n) - 1u)) | (1u << (n - 1u));
	if (odd) {
		if (((fb >> n) & 1u) == 0)
			t++;
		else
			t--;
	}
	r->target = gen_bits_f32(t);
	return 1;
}

// nd_store_knobs writes the knobs' final values into the row (lane 0).
GEN_FN void nd_store_knobs(struct nd_row *r)
{
	if (nd_lane() == 0)
		for (int i = 0; i < 3; i++)
			nd_store(r, r->kidx[i], nd_to_bits(r->knob[i], r->in));
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
	struct nd_row r = {0};
	r.op = ND_RMSNORM, r.x = x, r.w = w, r.h = h, r.eps = eps, r.in = in, r.out = out, r.order = order;
	r.threads = threads, r.vec = vec, r.butterfly = butterfly, r.p0 = probes[0];
	for (int i = 0; i < 3; i++)
		r.kidx[i] = h - 3 + i;
	unsigned mant, exp;
	nd_fields(in, &mant, &exp);
	// Probe i's new bits depend on its own and probe 0's, so lanes split
	// the probes once each has m.
	unsigned m = nd_to_bits(nd_load(x, probes[0], in), in);
	if ((m & exp) == 0 || (m & exp) == exp)
		m = (m & ~exp) | ((exp >> 1) & exp);
	m &= mant;
	nd_sync(); // every lane has m before probe 0 changes
	for (long long i = nd_lane(); i < np; i += ND_LANES) {
		long long j = probes[i];
		unsigned u = nd_to_bits(nd_load(x, j, in), in);
		if ((u & exp) == 0 || (u & exp) == exp)
			u = (u & ~exp) | ((exp >> 1) & exp);
		nd_store(&r, j, (u & ~mant) | m);
	}
	float sq = gen_f32(gen_sqrt((double)h));
	const float scales[3] = {1.0f / 8, 1.0f / 64, 1.0f / 512};
	for (int i = 0; i < 3; i++) {
		float mag = nd_mul(sq, scales[i]);
		float v = (gen_f32_bits(nd_load(x, h - 1 - i, in)) & 0x80000000u) ? -mag : mag;
		r.knob[2 - i] = nd_round(v, in);
	}
	for (int i = 0; i < 3; i++)
		r.own[i] = nd_owner(&r, h - 3 + i);
	nd_sync(); // the probes' stores before the chains read them
	for (int t = 0; t < threads; t++)
		r.rest[t] = t % ND_LANES == nd_lane() ? nd_chain(&r, t, h - 3) : 0.0f;
	for (int t = 0; t < threads; t++)
		r.rest[t] = nd_share(r.rest[t], t % ND_LANES);
	if (nd_start(&r, odd)) {
		nd_knob(&r, 2, sq);
		nd_knob(&r, 1, sq / 4);
		nd_knob(&r, 0, sq / 32);
		nd_scan(&r, 0, 4);
	}
	nd_store_knobs(&r);
	return nd_score(&r, r.f);
}

// nd_abs64 is |v| of a float64.
GEN_FN double nd_abs64(double v) { return v < 0 ? -v : v == 0 ? 0.0 : v; }

// nd_top3 sets kidx to the three k of largest |W[k][col]| (index
// ascending among equals: boundary's topByMagnitude, for W without NaN,
// which generated weights never hold). Lanes scan every 32nd k and merge.
GEN_FN void nd_top3(struct nd_row *r)
{
	long long idx[3] = {-1, -1, -1};
	float mag[3] = {0, 0, 0};
	for (long long k = nd_lane(); k < r->h; k += ND_LANES) {
		float a = nd_w(r, k);
		a = a < 0 ? -a : a;
		int at = 3;
		while (at > 0 && (idx[at - 1] < 0 || mag[at - 1] < a))
			at--;
		for (int i = 2; i > at; i--)
			idx[i] = idx[i - 1], mag[i] = mag[i - 1];
		if (at < 3)
			idx[at] = k, mag[at] = a;
	}
#ifdef __CUDACC__
	// Merge the lanes' lists: the order (magnitude descending, index
	// ascending) is total, so the merge order changes nothing.
	for (int off = 16; off >= 1; off /= 2) {
		long long oi[3];
		float om[3];
		for (int i = 0; i < 3; i++) {
			oi[i] = __shfl_xor_sync(0xffffffffu, idx[i], off);
			om[i] = __shfl_xor_sync(0xffffffffu, mag[i], off);
		}
		long long ni[3];
		float nm[3];
		int a = 0, b = 0;
		for (int i = 0; i < 3; i++) {
			int takeA = oi[b] < 0 ||
				    (idx[a] >= 0 && (mag[a] > om[b] || (mag[a] == om[b] && idx[a] < oi[b])));
			if (takeA)
				ni[i] = idx[a], nm[i] = mag[a], a++;
			else
				ni[i] = oi[b], nm[i] = om[b], b++;
		}
		for (int i = 0; i < 3; i++)
			idx[i] = ni[i], mag[i] = nm[i];
	}
#endif
	for (int i = 0; i < 3; i++)
		r->kidx[i] = idx[i];
}

// nd_gemm_row nudges row x (K = h >= 4 elements of dtype in) in place as
// GEMMRow does for output column col of W (K x n): the knobs are the three
// k of largest |W[k][col]| (c0, c1, c2 their coefficients); knobs 2 and 3
// are first set so that their terms are 2^-6 and 2^-13 of the first's
// (linearKnobs), then each is searched in turn and the last scanned over
// ±4 input values, for output col to reach the target. Nothing happens
// when the largest coefficient is zero or the output has no midpoint.
// wcol is scratch for K floats: the column, gathered once so that every
// evaluation reads it in order.
GEN_FN void nd_gemm_row(void *x, const void *w, float *wcol, long long h, long long n, long long col, int in, int out,
			int odd)
{
	struct nd_row r = {0};
	r.op = ND_GEMM, r.x = x, r.w = w, r.wcol = wcol, r.h = h, r.n = n, r.col = col, r.in = in, r.out = out;
	for (long long k = nd_lane(); k < h; k += ND_LANES)
		wcol[k] = nd_load(w, k * n + col, in);
	nd_sync(); // the column before any lane reads it
	nd_top3(&r);
	for (int i = 0; i < 3; i++) // the knobs in index order
		r.spos[i] = r.kidx[i], r.sslot[i] = i;
	for (int i = 1; i < 3; i++)
		for (int j = i; j > 0 && r.spos[j - 1] > r.spos[j]; j--) {
			long long p = r.spos[j];
			int q = r.sslot[j];
			r.spos[j] = r.spos[j - 1], r.sslot[j] = r.sslot[j - 1];
			r.spos[j - 1] = p, r.sslot[j - 1] = q;
		}
	double c[3];
	for (int i = 0; i < 3; i++) {
		c[i] = (double)nd_w(&r, r.kidx[i]);
		r.knob[i] = nd_load(x, r.kidx[i], in);
	}
	if (c[0] == 0)
		return;
	r.from = 0;
	if (!nd_start(&r, odd))
		return;
	// linearKnobs
	double x0 = nd_abs64((double)r.knob[0]);
	double c1 = gen_mul(nd_abs64(c[0]), x0 > 1 ? x0 : 1.0);
	const double frac[2] = {0x1p-6, 0x1p-13};
	for (int i = 0; i < 2; i++) {
		int j = i + 1;
		if (c[j] == 0)
			break;
		double v = gen_div(gen_mul(c1, frac[i]), nd_abs64(c[j]));
		if (v > 64.0)
			break;
		float fv = gen_f32(v);
		if (gen_f32_bits(r.knob[j]) & 0x80000000u)
			fv = -fv;
		nd_put(&r, j, nd_round(fv, in));
	}
	r.f = nd_eval(&r);
	r.evals++;
	for (int i = 0; i < 3; i++)
		nd_knob(&r, i, 64);
	nd_scan(&r, 2, 4);
	nd_store_knobs(&r);
}
