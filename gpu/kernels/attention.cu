// attention.cu: oracle.Prefill and oracle.Decode with any
// oracle.AttentionSchedule.
#include "common.cuh"
#include "explog.cuh"

#define MAX_TILE 1024
#define MAX_HEAD_DIM 1024
#define NEG_INF __uint_as_float(0xff800000u)

// attend_range is oracle.attendRange for one query, run by one block whose
// thread d (< D) owns acc[d]. K and V of token j start at element
// kvbase + j*kvstride. Every thread returns the same m and l.
//
//	m = -Inf, l = +0, acc[d] = +0
//	for each tile [t0, t1) from lo:
//		s[j]  = fma-dot(q, k[j]) * scale         d ascending, from +0
//		mt    = max(m, s[t0], s[t0+1], ...)      oracle.Max32, j ascending
//		alpha = Exp32(m - mt)
//		l = l*alpha; acc[d] = acc[d]*alpha
//		for j ascending: p = Exp32(s[j] - mt); l = l + p; acc[d] = fma(p, v[j][d], acc[d])
//		m = mt
__device__ void attend_range(const float *sq, const void *k, const void *v, i64 kvbase, i64 kvstride, i64 D,
			     i64 lo, i64 hi, i64 tile, float scale, int idt, float *ss, float *sp, float *smt,
			     float *m_out, float *l_out, float *acc_out)
{
	const int t = threadIdx.x;
	const int T = blockDim.x;
	float m = NEG_INF, l = 0.0f, acc = 0.0f;
	for (i64 t0 = lo; t0 < hi; t0 += tile) {
		i64 t1 = t0 + tile < hi ? t0 + tile : hi;
		int n = (int)(t1 - t0);
		for (int jj = t; jj < n; jj += T) {
			i64 kp = kvbase + (t0 + jj) * kvstride;
			float dot = 0.0f;
			for (i64 d = 0; d < D; d++)
				dot = __fmaf_rn(sq[d], load(k, kp + d, idt), dot);
			ss[jj] = __fmul_rn(dot, scale);
		}
		__syncthreads();
		if (t == 0) {
			float mt = m;
			for (int jj = 0; jj < n; jj++)
				mt = omax(mt, ss[jj]);
			*smt = mt;
		}
		__syncthreads();
		float mt = *smt;
		for (int jj = t; jj < n; jj += T)
			sp[jj] = exp32(__fsub_rn(ss[jj], mt));
		__syncthreads();
		float alpha = exp32(__fsub_rn(m, mt));
		l = __fmul_rn(l, alpha);
		acc = __fmul_rn(acc, alpha);
		for (int jj = 0; jj < n; jj++) {
			float p = sp[jj];
			l = __fadd_rn(l, p);
			if (t < D)
				acc = __fmaf_rn(p, load(v, kvbase + (t0 + jj) * kvstride + t, idt), acc);
		}
		m = mt;
		__syncthreads();
	}
	*m_out = m;
	*l_out = l;
	*acc_out = acc;
}

// chunk_of is the split chunk of oracle.SplitBounds:
// ceil(ceil(L/splits)/tile)*tile, at least 1.
__device__ __forceinline__ i64 chunk_of(i64 L, i64 tile, i64 splits)
{
	i64 per = (L + splits - 1) / splits;
	i64 chunk = (per + tile - 1) / tile * tile;
	return chunk < 1 ? 1 : chunk;
}

// store_out writes output element e: y[e] = round_out(o) and, when taps
// is not null, taps[e] = o, the fp32 value before rounding (the oracle
// targets' taps, target.RunOracle). The value stored is the same with or
// without taps.
__device__ __forceinline__ void store_out(void *y, float *taps, i64 e, int out_dt, float o)
{
	store(y, e, out_dt, o);
	if (taps)
		taps[e] = o;
}

// prefill computes selected row i (batch row r = rowsel ? rowsel[i] : i;
// sequence s, position pos, head h; one block per row, blockDim.x >= D):
//
//	attend_range(q[r], KV tokens 0..pos of sequence s, head h/(H/KH))
//	o[d] = acc[d] / l                        div.rn
//	y[i][d] = round_out(o[d]); taps[i][d] = o[d] when taps is not null
extern "C" __global__ void prefill(const void *q, const void *k, const void *v, void *y, float *taps, const i64 *rowsel,
				   i64 seq_len, i64 H, i64 KH, i64 D, i64 tile, i64 in_dt, i64 out_dt)
{
	__shared__ float sq[MAX_HEAD_DIM], ss[MAX_TILE], sp[MAX_TILE], smt;
	const i64 i = blockIdx.x;
	const i64 r = rowsel ? rowsel[i] : i;
	const int idt = (int)in_dt;
	const int t = threadIdx.x;
	const i64 h = r % H, pos = (r / H) % seq_len, seq = r / H / seq_len;
	const i64 kvh = h / (H / KH);
	for (int d = t; d < D; d += blockDim.x)
		sq[d] = load(q, r * D + d, idt);
	__syncthreads();
	float scale = __fdiv_rn(1.0f, __fsqrt_rn((float)D));
	float m, l, acc;
	attend_range(sq, k, v, (seq * seq_len * KH + kvh) * D, KH * D, D, 0, pos + 1, tile, scale, idt, ss, sp, &smt, &m,
		     &l, &acc);
	if (t < D)
		store_out(y, taps, i * D + t, (int)out_dt, __fdiv_rn(acc, l));
}

// decode_split runs split c = blockIdx.y of selected row i = blockIdx.x
// (request b = r / H, head h = r % H) over KV tokens
// [c*chunk, min((c+1)*chunk, L)) of request b's cache, whose token 0 is
// token kv_off[b] of the packed K and V ([tokens][KH][D]), and stores the
// partial (m, l, acc) at part[(i*splits + c)*(D+2)]: m, l, acc[0..D).
// Splits past the end (empty) store nothing.
extern "C" __global__ void decode_split(const void *q, const void *k, const void *v, const i64 *kv_off,
					const i64 *kv_len, float *part, const i64 *rowsel, i64 H, i64 KH, i64 D,
					i64 tile, i64 splits, i64 in_dt)
{
	__shared__ float sq[MAX_HEAD_DIM], ss[MAX_TILE], sp[MAX_TILE], smt;
	const i64 i = blockIdx.x;
	const i64 c = blockIdx.y;
	const i64 r = rowsel ? rowsel[i] : i;
	const int idt = (int)in_dt;
	const int t = threadIdx.x;
	const i64 b = r / H, h = r % H;
	const i64 kvh = h / (H / KH);
	const i64 L = kv_len[b];
	const i64 chunk = chunk_of(L, tile, splits);
	const i64 lo = c * chunk;
	if (lo >= L)
		return;
	const i64 hi = lo + chunk < L ? lo + chunk : L;
	for (int d = t; d < D; d += blockDim.x)
		sq[d] = load(q, r * D + d, idt);
	__syncthreads();
	float scale = __fdiv_rn(1.0f, __fsqrt_rn((float)D));
	float m, l, acc;
	attend_range(sq, k, v, (kv_off[b] * KH + kvh) * D, KH * D, D, lo, hi, tile, scale, idt, ss, sp, &smt, &m, &l,
		     &acc);
	float *pp = part + (i * splits + c) * (D + 2);
	if (t == 0) {
		pp[0] = m;
		pp[1] = l;
	}
	if (t < D)
		pp[2 + t] = acc;
}

// decode_combine combines the partials of selected row i (one block,
// blockDim.x >= D), oracle.Decode's combine:
//
//	M = max_c m_c                              oracle.Max32, c ascending from -Inf
//	num[d] = -0, den = -0                       -0, not +0 (oracle 448de4e)
//	for c ascending: w = Exp32(m_c - M); den = fma(w, l_c, den); num[d] = fma(w, acc_c[d], num[d])
//	o[d] = num[d] / den                          div.rn
//	y[i][d] = round_out(o[d]); taps[i][d] = o[d] when taps is not null
//
// With one split this is the prefill row of the last position, taps too
// (oracle.Decode).
extern "C" __global__ void decode_combine(const i64 *kv_len, const float *part, void *y, float *taps, const i64 *rowsel,
					  i64 H, i64 D, i64 tile, i64 splits, i64 out_dt)
{
	const i64 i = blockIdx.x;
	const i64 r = rowsel ? rowsel[i] : i;
	const int t = threadIdx.x;
	const i64 L = kv_len[r / H];
	const i64 chunk = chunk_of(L, tile, splits);
	const i64 nparts = (L + chunk - 1) / chunk;
	const float *pp = part + i * splits * (D + 2);
	float M = NEG_INF;
	for (i64 c = 0; c < nparts; c++)
		M = omax(M, pp[c * (D + 2)]);
	float num = __uint_as_float(0x80000000u), den = __uint_as_float(0x80000000u);
	for (i64 c = 0; c < nparts; c++) {
		const float *p = pp + c * (D + 2);
		float w = exp32(__fsub_rn(p[0], M));
		den = __fmaf_rn(w, p[1], den);
		if (t < D)
			num = __fmaf_rn(w, p[2 + t], num);
	}
	if (t < D)
		store_out(y, taps, i * D + t, (int)out_dt, __fdiv_rn(num, den));
}
