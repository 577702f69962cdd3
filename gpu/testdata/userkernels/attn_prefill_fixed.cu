// attn_prefill_fixed.cu: a varlen causal prefill that is batch invariant
// by construction: KV tiles of 64 tokens whatever the batch, so its
// manifest declares the oracle schedule "tile=64 splits=1" and oracle
// parity is bitwise on every relation; a chunk (positions from q_start)
// gives the whole prompt's rows, its tiles counted from the sequence's
// start whatever the chunk. The body is attn_prefill.cuh.
#include "attn_prefill.cuh"

extern "C" __global__ void attn_prefill_fixed(const void *q, const void *k, const void *v,
		const int *cu_seqlens, void *y, float *lse,
		long long seqs, long long tokens, long long q_start, long long heads, long long kv_heads,
		long long head_dim, float scale, long long in_dtype, long long out_dtype) {
	extern __shared__ float acc[];
	prefill_args a = {q, k, v, cu_seqlens, y, lse, seqs, tokens, q_start, heads, kv_heads, head_dim, scale, in_dtype, out_dtype};
	prefill_row(a, 64, acc);
}
