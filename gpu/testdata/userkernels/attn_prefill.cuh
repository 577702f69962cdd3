// attn_prefill.cuh: the body of the example attn_prefill kernels,
// oracle.Prefill with the KV tile the kernel passes, step for step, on the
// ABI's packed varlen batch (docs/kernel-abi.md): one thread per row
// r = token * heads + head h, PREFILL_BLOCK rows a block; a row's
// accumulator is in dynamic shared memory (PREFILL_BLOCK*head_dim floats).
// Only correctly rounded operations and the project's portable exp32 and
// log32 (explog.cuh), so oracle parity is bitwise.
#pragma once
#include "attn.cuh"

#define PREFILL_BLOCK 32

struct prefill_args {
	const void *q, *k, *v;
	const int *cu_seqlens;
	void *y;
	float *lse;
	long long seqs, tokens, q_start, heads, kv_heads, head_dim;
	float scale;
	long long in_dtype, out_dtype;
};

// prefill_score is s = fma-dot(q[row], k[token, kvh]) * scale, d
// ascending from +0.
__device__ __forceinline__ float prefill_score(const prefill_args &a, long long row, long long token, long long kvh) {
	const long long D = a.head_dim, kbase = (token * a.kv_heads + kvh) * D;
	float dot = 0.0f;
	for (long long d = 0; d < D; d++)
		dot = __fmaf_rn(load_val(a.q, row * D + d, a.in_dtype), load_val(a.k, kbase + d, a.in_dtype), dot);
	return __fmul_rn(dot, a.scale);
}

// prefill_row computes row blockIdx.x*PREFILL_BLOCK + threadIdx.x (token
// t of sequence s, position i = t - cu_seqlens[s], head h) over KV tokens
// cu_seqlens[s] .. t (causal) in tiles of `tile` from the sequence's
// start, for the positions i >= q_start (the chunk: the rows below were
// prefilled by earlier chunks, or are a cached prefix; they are not
// written, nor their q read):
//
//	m = -Inf, l = +0, acc[d] = +0
//	per tile: mt = max(m, s[j] of the tile)  omax, j ascending
//	          alpha = exp32(m - mt); l = l*alpha; acc[d] = acc[d]*alpha
//	          for j ascending: p = exp32(s[j] - mt); l = l + p; acc[d] = fma(p, v[j][d], acc[d])
//	          m = mt
//	y[r][d] = round_out(acc[d] / l); lse[r] = m + log32(l)
__device__ void prefill_row(const prefill_args &a, long long tile, float *shared) {
	const long long r = blockIdx.x * (long long)PREFILL_BLOCK + threadIdx.x;
	if (r >= a.tokens * a.heads) return;
	const long long D = a.head_dim, t = r / a.heads, h = r % a.heads;
	const long long kvh = h / (a.heads / a.kv_heads);
	long long s = 0;
	while (s + 1 < a.seqs && a.cu_seqlens[s + 1] <= t) s++;
	const long long start = a.cu_seqlens[s];
	if (t - start < a.q_start) return;
	float *acc = shared + threadIdx.x * D;
	float m = NEG_INF, l = 0.0f;
	for (long long d = 0; d < D; d++) acc[d] = 0.0f;
	for (long long t0 = start; t0 <= t; t0 += tile) {
		const long long t1 = t0 + tile <= t + 1 ? t0 + tile : t + 1;
		float mt = m;
		for (long long j = t0; j < t1; j++) mt = omax(mt, prefill_score(a, r, j, kvh));
		float alpha = exp32(__fsub_rn(m, mt));
		l = __fmul_rn(l, alpha);
		for (long long d = 0; d < D; d++) acc[d] = __fmul_rn(acc[d], alpha);
		for (long long j = t0; j < t1; j++) {
			float p = exp32(__fsub_rn(prefill_score(a, r, j, kvh), mt));
			l = __fadd_rn(l, p);
			const long long vbase = (j * a.kv_heads + kvh) * D;
			for (long long d = 0; d < D; d++)
				acc[d] = __fmaf_rn(p, load_val(a.v, vbase + d, a.in_dtype), acc[d]);
		}
		m = mt;
	}
	for (long long d = 0; d < D; d++) store_val(a.y, r * D + d, a.out_dtype, __fdiv_rn(acc[d], l));
	if (a.lse) a.lse[r] = __fadd_rn(m, log32(l));
}
