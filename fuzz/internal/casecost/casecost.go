// Package casecost is the campaign's CPU cost model of a case: the work
// of checking it on the CPU oracle (Of), the caps the campaign's draws
// keep under, and which draws a residue case follows. Package fuzz draws
// by it, and the detection-power measurement (fuzz/detect)
// repeats the campaign's draw with it.
package casecost

import (
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/spec"
)

// Cost limits of drawn cases, in fma-equivalents of CPU work over every
// batch the relation builds (Of). gen.Case already keeps most cases
// small (gen.SmallWork); the campaign caps what it takes at Small (8x
// for attention prefill, whose rows cost the square of their length), and
// one draw in BigEvery takes one of gen's medium or big cases (more than
// gen.SmallWork: hundreds or thousands of rows with a hidden size past 256,
// long KV caches) of up to Big, so the thresholds that only large
// batches cross are reached every few seconds. One small draw in
// ResidueEvery (two for attn_prefill) is followed by a residue case
// (the campaign's stream, gen.Residue): batch dimensions over their whole range at cheap
// inner sizes, so that every residue class mod m <= 128 of every batch
// dimension is reached within 10^4 cases (docs/detection.md).
//
// These caps are the CPU oracle's cost, for campaigns without a profile.
// A campaign at a model profile (Campaign.MaxTokens) bounds a case by the
// work the CPU must do for its pair instead (fuzz/reshape.go): none beyond spec.MaxElements where GPU or process
// targets are compared with themselves, each other or their device
// reference.
const (
	Small        = 1 << 20
	Big          = 1 << 23
	BigEvery     = 10
	ResidueEvery = 9
)

// SmallOf is the cost cap of a small draw of op: Small times the op's
// ops.CaseOp.SmallScale (8 for attn_prefill); Small for an op no package
// holds.
func SmallOf(op spec.Op) int64 {
	if k, ok := all.Case(op); ok {
		return Small * k.SmallScale()
	}
	return Small
}

// ResidueDraw reports whether the campaign follows small draw c with its
// residue case (gen.Residue): seed % ResidueEvery == 0, and for attn_prefill also == 1
// (gen.Residue sweeps either its sequences or its length, so each of the
// two gets the share the other ops' batch dimensions get).
func ResidueDraw(c spec.Case) bool {
	draws := uint64(1)
	if k, ok := all.Case(c.Op); ok {
		draws = k.ResidueDraws()
	}
	return c.Seed%ResidueEvery < draws
}

// Balance is min(batch size, row size) of a case: the batch size is the
// largest batch its relation builds (items, Rel.Batch, Rel.Pad; times the
// heads for decode), the row size its reduction length (hidden, vocab, KV
// length); a prefill's is its sequence length alone.
func Balance(c spec.Case) int {
	k, ok := all.Case(c.Op)
	if !ok {
		return 0
	}
	return k.Balance(c, max(c.BatchRows(), c.Rel.Batch, c.Rel.Pad))
}

// Of estimates the CPU work of checking case c, in fma-equivalents:
// the work of one item (an Exp32 counts 12, a generated input value 4,
// every output row 500 for the oracle's per-row overhead) times the items
// of the batches the relation runs (path parity of attention prefill runs
// only the last position of each sequence): batch invariance the case's batch
// twice, the item alone and Rel.Batch; padding the batch and Rel.Pad; the
// others the batch twice.
func Of(c spec.Case) int64 {
	var item int64
	if k, ok := all.Case(c.Op); ok {
		item = k.Cost(c)
	}
	n := int64(c.BatchRows())
	runs := 2 * n
	switch c.Relation {
	case spec.RelBatchInvariance:
		runs = 2*n + 1 + int64(c.Rel.Batch)
	case spec.RelPadding:
		runs = n + int64(c.Rel.Pad)
	}
	return item * runs
}
