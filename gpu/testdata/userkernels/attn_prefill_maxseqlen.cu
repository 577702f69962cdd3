// attn_prefill_maxseqlen.cu: a FlashAttention-3 style varlen prefill that
// instantiates another template once the batch's max_seqlen_q passes 9
// (vLLM #51902: a request's bits change when a co-resident request's
// query length goes from 9 to 10). Its max_seqlen_q is max_seqlen -
// q_start, the queries of a chunk. The template change is the KV tile:
//
//	max_seqlen - q_start <  10: tile 64 (the schedule its manifest declares)
//	max_seqlen - q_start >= 10: tile 4
//
// so a row attending to more than 4 tokens gets other bits once any
// sequence of its batch has 10 queries or more: a scan of the neighbour
// dimension (a co-resident sequence's length) maps `neighbour <= 9 -> A,
// neighbour >= 10 -> B` (target.MaxSeqLenQ10 is this rule). The body is
// attn_prefill.cuh.
#include "attn_prefill.cuh"

extern "C" __global__ void attn_prefill_maxseqlen(const void *q, const void *k, const void *v,
		const int *cu_seqlens, void *y, float *lse,
		long long seqs, long long tokens, long long max_seqlen, long long q_start, long long heads,
		long long kv_heads, long long head_dim, float scale, long long in_dtype, long long out_dtype) {
	extern __shared__ float acc[];
	prefill_args a = {q, k, v, cu_seqlens, y, lse, seqs, tokens, q_start, heads, kv_heads, head_dim, scale, in_dtype, out_dtype};
	prefill_row(a, max_seqlen - q_start >= 10 ? 4 : 64, acc);
}
