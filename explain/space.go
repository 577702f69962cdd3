package explain

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Space returns the schedule space of op searched for a batch whose
// inputs are of dtype in: every oracle schedule of the op's type,
//
//	rmsnorm: threads 1..1024 (powers of two) x vec 1,2,4,8 x warp x cross x out order   (352)
//	logprob: threads x vec x warp x cross                                                (176)
//	gemm:    split-K 1..64 x combine (tree for powers of two) x {fma chain, the tensor
//	         core of in: bf16, fp16, or tf32 for fp32} x K tile {none, 64, 128}          (420)
//	attn_prefill: tile 1..1024, splits 1                                                 (1024)
//	attn_decode:  tile 1..1024 x splits 1..128                                           (131072)
//
// in canonical order (the order the answer lists equivalent schedules in),
// as the op package lists them (ops.CaseOp.Space).
func Space(op spec.Op, in oracle.DType) ([]oracle.Schedule, error) {
	k, ok := all.Case(op)
	if !ok {
		return nil, fmt.Errorf("explain: no schedule space for op %q", op)
	}
	return k.Space(in), nil
}

// orderKey returns a key that is equal for two schedules that run the
// same operations in the same order (on KV lengths lens), so that only one
// of each such group needs to run: for attention the split bounds and the
// tile capped at the longest split (a tile that covers a whole split is
// one tile, whatever its size); for reductions the schedule with the warp
// order dropped when a warp has at most 2 lanes and the cross order
// dropped when there are at most 2 warps (a + b either way); for GEMM
// (lens holds K) the chunk length instead of the K tile, and the combine
// order dropped for at most 2 chunks.
func orderKey(s oracle.Schedule, lens []int) string {
	switch r := s.(type) {
	case oracle.RMSNormSchedule:
		return reductionKey(r.Reduce) + " " + r.Order.String()
	case oracle.LogProbSchedule:
		return reductionKey(r.Reduce)
	case oracle.GEMMSchedule:
		// the chunk bounds at K = lens[0], the combine when it can differ
		K := lens[0]
		chunk := r.Chunk(K)
		comb := r.Combine
		if r.SplitK <= 2 {
			comb = oracle.CrossSequential
		}
		return fmt.Sprintf("%d %d %s %s", r.SplitK, min(chunk, K), comb, r.MMA)
	}
	a, ok := s.(oracle.AttentionSchedule)
	if !ok {
		return ""
	}
	var b strings.Builder
	for _, L := range lens {
		bounds := oracle.SplitBounds(L, a.Tile, a.Splits)
		longest := 0
		for _, r := range bounds {
			longest = max(longest, r[1]-r[0])
		}
		fmt.Fprintf(&b, "%v/%d;", bounds, min(a.Tile, longest))
	}
	return b.String()
}

// distinctLens returns the sorted distinct values of lens.
func distinctLens(lens []int) []int {
	l := slices.Clone(lens)
	slices.Sort(l)
	return slices.Compact(l)
}

// reductionKey is r with the orders that cannot differ made equal.
func reductionKey(r oracle.Reduction) string {
	if min(r.Threads, 32) <= 2 {
		r.Warp = oracle.WarpButterfly
	}
	if (r.Threads+31)/32 <= 2 {
		r.Cross = oracle.CrossSequential
	}
	return r.String()
}
