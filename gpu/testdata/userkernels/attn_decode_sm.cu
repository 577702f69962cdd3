// attn_decode_sm.cu: a FlashDecoding-style decode whose KV split count
// follows the batch: it splits the KV range while the requests x heads
// blocks leave the GPU's multiprocessors idle, and not once they fill
// them. The rule:
//
//	requests * heads <  sms: 4 splits (tile 64)
//	requests * heads >= sms: 1 split  (tile 64; the schedule its manifest declares)
//
// sms is the device's multiprocessor count (132 on an H200), so on an
// H200 with 8 heads a request decoded with up to 16 requests (128 blocks)
// gets other bits than with 17 or more (136), once its KV cache is longer
// than one tile (64 tokens): a scan of the requests decoded together maps
// `batch <= 16 -> A, batch >= 17 -> B` (target.DecodeSplitsByBatch is
// this rule at 132 SMs). The body is attn_decode.cuh.
#include "attn_decode.cuh"

extern "C" __global__ void attn_decode_sm(const void *q, const void *k_cache, const void *v_cache,
		const int *block_table, const int *kv_lens, void *y, float *lse,
		long long requests, long long heads, long long kv_heads, long long head_dim, long long page_size,
		long long max_pages, long long sms, float scale, long long in_dtype, long long out_dtype) {
	extern __shared__ float part[];
	decode_args a = {q, k_cache, v_cache, block_table, kv_lens, y, lse,
		heads, kv_heads, head_dim, page_size, max_pages, scale, in_dtype, out_dtype};
	decode_row(a, requests * heads < sms ? 4 : 1, part);
}
