// attn_prefill_prefix.cu: a prefix-cache prefill that takes a page-aligned
// path when the cached prefix ends on a 16-token page boundary (SGLang
// #22819: a hit at prefix_len == block_size gave other bits). The path
// reads whole pages as its KV tiles:
//
//	q_start > 0 and q_start % 16 == 0: tile 16
//	otherwise (a whole prompt included): tile 64 (the schedule its manifest declares)
//
// so a row attending to more than 16 tokens gets other bits when the
// prefix before its chunk is a whole number of pages: a scan of the
// prefix dimension maps `prefix % 16 == 0 -> B, otherwise -> A`
// (target.PrefixBlockPolicy is this rule). The body is attn_prefill.cuh.
#include "attn_prefill.cuh"

extern "C" __global__ void attn_prefill_prefix(const void *q, const void *k, const void *v,
		const int *cu_seqlens, void *y, float *lse,
		long long seqs, long long tokens, long long q_start, long long heads, long long kv_heads,
		long long head_dim, float scale, long long in_dtype, long long out_dtype) {
	extern __shared__ float acc[];
	prefill_args a = {q, k, v, cu_seqlens, y, lse, seqs, tokens, q_start, heads, kv_heads, head_dim, scale, in_dtype, out_dtype};
	prefill_row(a, q_start > 0 && q_start % 16 == 0 ? 16 : 64, acc);
}
