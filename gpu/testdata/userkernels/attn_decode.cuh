// attn_decode.cuh: the body of the example attn_decode kernels, oracle.Decode
// with tile 64 and the split count the kernel passes, step for step, on the
// ABI's paged K/V cache (docs/kernel-abi.md): one block of MAX_SPLITS
// threads per row r = request b * heads + head h; thread c runs split c.
// Only correctly rounded operations (__fmaf_rn, __fadd_rn, __fsub_rn,
// __fmul_rn, __fdiv_rn) and the project's portable exp32 and log32
// (explog.cuh, a copy of gpu/kernels/explog.cuh that gpu's tests keep
// equal), so oracle parity is bitwise.
#pragma once
#include "attn.cuh"

#define MAX_SPLITS 4
#define TILE 64

struct decode_args {
	const void *q, *k_cache, *v_cache;
	const int *block_table, *kv_lens;
	void *y;
	float *lse;
	long long heads, kv_heads, head_dim, page_size, max_pages;
	float scale;
	long long in_dtype, out_dtype;
};

// kv_at is the cache index of dimension 0 of request b's token t, KV head
// kvh: slot t % page_size of page block_table[b][t / page_size].
__device__ __forceinline__ long long kv_at(const decode_args &a, long long b, long long t, long long kvh) {
	long long page = a.block_table[b * a.max_pages + t / a.page_size];
	return ((page * a.page_size + t % a.page_size) * a.kv_heads + kvh) * a.head_dim;
}

// score is s = fma-dot(q, k[t]) * scale, d ascending from +0.
__device__ __forceinline__ float score(const decode_args &a, long long r, long long kbase) {
	float dot = 0.0f;
	for (long long d = 0; d < a.head_dim; d++)
		dot = __fmaf_rn(load_val(a.q, r * a.head_dim + d, a.in_dtype), load_val(a.k_cache, kbase + d, a.in_dtype), dot);
	return __fmul_rn(dot, a.scale);
}

// decode_row computes row blockIdx.x with `splits` (1..MAX_SPLITS) KV
// splits; part is dynamic shared memory of MAX_SPLITS*(head_dim+2) floats.
//
//	chunk = ceil(ceil(L/splits)/TILE)*TILE; split c covers [c*chunk, min((c+1)*chunk, L)), if not empty
//	split c (thread c), in tiles of TILE from its start:
//		mt = max(m, s[j] of the tile)  omax, j ascending; m starts -Inf, l and acc[d] +0
//		alpha = exp32(m - mt); l = l*alpha; acc[d] = acc[d]*alpha
//		for j ascending: p = exp32(s[j] - mt); l = l + p; acc[d] = fma(p, v[j][d], acc[d])
//		m = mt
//	combine (thread 0): M = max_c m_c; den = -0, num[d] = -0;
//		for c ascending: w = exp32(m_c - M); den = fma(w, l_c, den); num[d] = fma(w, acc_c[d], num[d])
//	y[r][d] = round_out(num[d] / den); lse[r] = M + log32(den)
__device__ void decode_row(const decode_args &a, long long splits, float *part) {
	const long long r = blockIdx.x, b = r / a.heads, h = r % a.heads;
	const long long kvh = h / (a.heads / a.kv_heads), D = a.head_dim;
	const long long L = a.kv_lens[b];
	long long per = (L + splits - 1) / splits;
	long long chunk = (per + TILE - 1) / TILE * TILE;
	if (chunk < 1) chunk = 1;
	const long long nparts = (L + chunk - 1) / chunk;
	const long long c = threadIdx.x;
	if (c < nparts) {
		float *acc = part + c * (D + 2) + 2;
		float m = NEG_INF, l = 0.0f;
		for (long long d = 0; d < D; d++) acc[d] = 0.0f;
		const long long lo = c * chunk, hi = lo + chunk < L ? lo + chunk : L;
		for (long long t0 = lo; t0 < hi; t0 += TILE) {
			const long long t1 = t0 + TILE < hi ? t0 + TILE : hi;
			float mt = m;
			for (long long j = t0; j < t1; j++) mt = omax(mt, score(a, r, kv_at(a, b, j, kvh)));
			float alpha = exp32(__fsub_rn(m, mt));
			l = __fmul_rn(l, alpha);
			for (long long d = 0; d < D; d++) acc[d] = __fmul_rn(acc[d], alpha);
			for (long long j = t0; j < t1; j++) {
				const long long kv = kv_at(a, b, j, kvh);
				float p = exp32(__fsub_rn(score(a, r, kv), mt));
				l = __fadd_rn(l, p);
				for (long long d = 0; d < D; d++)
					acc[d] = __fmaf_rn(p, load_val(a.v_cache, kv + d, a.in_dtype), acc[d]);
			}
			m = mt;
		}
		part[c * (D + 2)] = m;
		part[c * (D + 2) + 1] = l;
	}
	__syncthreads();
	if (c != 0) return;
	float M = NEG_INF;
	for (long long i = 0; i < nparts; i++) M = omax(M, part[i * (D + 2)]);
	const float negz = __uint_as_float(0x80000000u);
	float den = negz;
	for (long long i = 0; i < nparts; i++)
		den = __fmaf_rn(exp32(__fsub_rn(part[i * (D + 2)], M)), part[i * (D + 2) + 1], den);
	for (long long d = 0; d < D; d++) {
		float num = negz;
		for (long long i = 0; i < nparts; i++)
			num = __fmaf_rn(exp32(__fsub_rn(part[i * (D + 2)], M)), part[i * (D + 2) + 2 + d], num);
		store_val(a.y, r * D + d, a.out_dtype, __fdiv_rn(num, den));
	}
	if (a.lse) a.lse[r] = __fadd_rn(M, log32(den));
}
