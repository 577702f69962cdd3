package target

import (
	"github.com/bitparity/bitparity/ops/attention"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Attention layout drift models are the scan controls of the dimensions
// attention drift lives on beyond the batch size: a co-resident request's
// length (scan --dim neighbour), chunked prefill (--dim chunk) and the
// paged cache's page size (--dim page). Each reads Batch.Layout or the
// batch's shape, runs the oracle with the schedule its policy chooses for
// the whole batch, and is a scan control (Info.OnRequest, no campaign
// relation varies its dimension); `bitparity scan` must map each exactly
// and never certify it (scan/attn_test.go).

// Thresholds and tiles of the attention layout drift models.
const (
	// MaxSeqLenQSwitch is the max_seqlen_q from which
	// drift-attn-maxseqlen-10 runs its other template.
	MaxSeqLenQSwitch = 10
	// maxSeqLenTile is the KV tile of that template.
	maxSeqLenTile = 4
	// ChunkTile is the KV tile of drift-attn-chunked-prefill's kernel for
	// chunks with a cached prefix.
	ChunkTile = 32
	// PrefixBlock is the page (block) size of drift-attn-prefix-block's
	// cache, and the KV tile of its page-aligned path.
	PrefixBlock = 16
)

// MaxSeqLenQ10 is the policy of drift-attn-maxseqlen-10, a FlashAttention-3
// style varlen prefill that instantiates its kernel template from the
// batch's max_seqlen_q (vLLM #51902: a request's bits change when a
// co-resident request's query length goes from 9 to 10). The model's
// stand-in for the template change is the KV tile:
//
//	max_seqlen_q <  10: tile=64 (declared)
//	max_seqlen_q >= 10: tile=4
//
// A prefill batch here is uniform in length (oracle.PrefillInput): a
// varlen batch is held padded to its max_seqlen_q, which leaves every row
// of a causal prefill as it was, so max_seqlen_q is Prefill.SeqLen.
func MaxSeqLenQ10(b *Batch) oracle.Schedule {
	if b.Input.(*oracle.PrefillInput).SeqLen >= MaxSeqLenQSwitch {
		return oracle.AttentionSchedule{Tile: maxSeqLenTile, Splits: 1}
	}
	return OracleAttentionSchedule
}

// ChunkedPrefill is the policy of drift-attn-chunked-prefill, a chunked
// prefill whose chunks after the first (those with a cached prefix,
// Layout.ChunkFrom > 0) run another kernel than a whole prompt does, as
// vLLM ran them through its Triton prefix-prefill kernel beside
// flash-attn's varlen kernel (vLLM's chunked-prefill determinism tests
// compare the two):
//
//	ChunkFrom == 0 (a whole prompt, the first chunk): tile=64 (declared)
//	ChunkFrom >  0:                                   tile=32
//
// A row attending to 32 tokens or fewer is one tile either way.
func ChunkedPrefill(b *Batch) oracle.Schedule {
	if b.Layout.ChunkFrom > 0 {
		return oracle.AttentionSchedule{Tile: ChunkTile, Splits: 1}
	}
	return OracleAttentionSchedule
}

// PrefixBlock is the policy of drift-attn-prefix-block, a prefix-cache hit
// whose kernel takes another path when the cached prefix ends on a page
// boundary (SGLang #22819: a hit at prefix_len == block_size gave other
// bits), here the page-aligned path reading whole pages as its KV tiles:
//
//	ChunkFrom > 0 and ChunkFrom % 16 == 0: tile=16
//	otherwise (a whole prompt included):    tile=64 (declared)
//
// so a scan of the prefix length maps `prefix % 16 == 0 -> B, otherwise ->
// A`: every row past a prefix of 16 or more tokens attends to more than
// one 16-token tile.
func PrefixBlockPolicy(b *Batch) oracle.Schedule {
	if f := b.Layout.ChunkFrom; f > 0 && f%PrefixBlock == 0 {
		return oracle.AttentionSchedule{Tile: PrefixBlock, Splits: 1}
	}
	return OracleAttentionSchedule
}

// PagedDecode is the policy of drift-attn-paged-decode, a paged split-KV
// decode whose KV partition follows the page size: pages no larger than
// its 64-token tile are gathered into one split, and from a page size
// above the tile each page is a split of its own (the page-granular KV
// loop of paged decode kernels, whose work units are whole pages), the
// splits' partial softmaxes combined in order:
//
//	page size <= 64 (or 0): tile=64 splits=1 (declared)
//	page size >  64:        tile=64 splits=ceil(L / page size)
//
// where L is the batch's longest KV cache; the splits are tile-aligned
// (oracle.SplitBounds), so a cache of L <= 64 tokens is one split either
// way, and one whose second split holds a single token gives the same
// bits (its weight is 1 in either order).
func PagedDecode(b *Batch) oracle.Schedule {
	p := b.Layout.PageSize
	if p <= OracleAttentionSchedule.Tile {
		return OracleAttentionSchedule
	}
	d, L := b.Input.(*oracle.DecodeInput), 0
	for _, k := range d.K {
		L = max(L, len(k)/(d.KVHeads*d.HeadDim))
	}
	return oracle.AttentionSchedule{Tile: OracleAttentionSchedule.Tile, Splits: min(max((L+p-1)/p, 1), 128)}
}

// SplitKVMinLen is the longest KV cache from which drift-attn-split-kv
// splits the KV range.
const SplitKVMinLen = 256

// SplitKV is the policy of drift-attn-split-kv, a FlashDecoding-style
// split-KV decode (FlashInfer's split-KV path, flash-attn's num_splits
// heuristic): it splits the KV range only where that pays, when the
// requests x heads blocks leave the SMs idle and the longest cache of the
// batch has at least SplitKVMinLen tokens:
//
//	requests·heads < 132 (the H200's SMs) and L >= 256: tile=64 splits=4
//	otherwise:                                          tile=64 splits=1 (declared)
//
// so a request's bits depend on both its batch and the KV length: a scan
// of the requests decoded together at every KV length (scan.ScanGrid)
// maps, at 8 heads, `batch >= 17 and kv >= 256 -> B, otherwise -> A`.
func SplitKV(b *Batch) oracle.Schedule {
	d, L := b.Input.(*oracle.DecodeInput), 0
	for _, k := range d.K {
		L = max(L, len(k)/(d.KVHeads*d.HeadDim))
	}
	if len(d.K)*d.Heads >= SMs || L < SplitKVMinLen {
		return OracleAttentionSchedule
	}
	return oracle.AttentionSchedule{Tile: OracleAttentionSchedule.Tile, Splits: 4}
}

// attnDriftModels are the attention layout drift models every build has.
func attnDriftModels() []Target {
	control := func(name string, op spec.Op, models string, policy func(*Batch) oracle.Schedule) Target {
		return &scheduled{
			info: Info{Name: name, Op: op, Device: "cpu", Schedule: OracleAttentionSchedule.String(),
				Models: models, OnRequest: true, Layouts: true},
			policy: policy,
		}
	}
	return []Target{
		control("drift-attn-maxseqlen-10", attention.Prefill{}.Name(),
			"FlashAttention-3 varlen prefill choosing its template by the batch's max_seqlen_q (vLLM #51902): tile=64 below 10, tile=4 from 10 (scan --dim neighbour)",
			MaxSeqLenQ10),
		control("drift-attn-chunked-prefill", attention.Prefill{}.Name(),
			"chunked prefill whose chunks after the first (a cached prefix) run another kernel than a whole prompt: tile=32 instead of 64 (scan --dim chunk)",
			ChunkedPrefill),
		control("drift-attn-prefix-block", attention.Prefill{}.Name(),
			"prefix-cache hit whose prefix ends on a 16-token page boundary taking the page-aligned path (SGLang #22819, prefix_len == block_size): tile=16 instead of 64 (scan --dim prefix)",
			PrefixBlockPolicy),
		control("drift-attn-paged-decode", attention.Decode{}.Name(),
			"paged split-KV decode whose partition follows the page size: one split while pages are at most its 64-token tile, a split per page above (ceil(kv / page) splits, tile 64) (scan --dim page)",
			PagedDecode),
		&scheduled{
			info: Info{Name: "drift-attn-split-kv", Op: attention.Decode{}.Name(), Device: "cpu", Schedule: OracleAttentionSchedule.String(),
				Models: "FlashDecoding-style split-KV decode: 4 KV splits while requests x heads < 132 SMs and the longest cache has >= 256 tokens, else 1 (scan.ScanGrid: requests x kv)", OnRequest: true},
			policy: SplitKV,
		},
	}
}
