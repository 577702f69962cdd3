//go:build cuda

package gpu

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestAttnHeld: a held attention batch of each GPU attention target (the
// exact ones and the drift models, whose schedule follows the batch)
// gives, for prefixes, gathers out of order with a repeat and the items
// alone, the bits of values and taps that Run gives on the gathered batch
// uploaded whole; a lazy batch and an rmsnorm batch are not held.
func TestAttnHeld(t *testing.T) {
	ctx := context.Background()
	bits := func(o *target.Output, err error) ([]uint32, []uint32) {
		t.Helper()
		return outBits(t, o, err)
	}
	lens := []int{130, 1, 64, 65, 17, 200, 300, 33}
	var kvs []int
	for i := range 24 {
		kvs = append(kvs, lens[i%len(lens)])
	}
	cases := map[spec.Op]spec.Case{
		spec.OpAttnDecode: {Version: spec.CaseVersion, Op: spec.OpAttnDecode, Relation: spec.RelOracleParity,
			Shape: spec.Shape{Rows: len(kvs), KV: kvs[0], KVLens: kvs, Heads: 8, KVHeads: 2, HeadDim: 64},
			In:    spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 9, GenVersion: spec.GeneratorVersion},
		spec.OpAttnPrefill: {Version: spec.CaseVersion, Op: spec.OpAttnPrefill, Relation: spec.RelOracleParity,
			Shape: spec.Shape{Seqs: 6, SeqLen: 70, Heads: 4, KVHeads: 2, HeadDim: 64},
			In:    spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 9, GenVersion: spec.GeneratorVersion},
	}
	for _, name := range []string{Name(spec.OpAttnDecode), "cuda-drift-decode-splits-by-batch", Name(spec.OpAttnPrefill), "cuda-drift-attn-tile48"} {
		tg := lookup(t, name).(*Target)
		b, err := inputs.Of(cases[tg.Info().Op])
		if err != nil {
			t.Fatal(err)
		}
		h, err := tg.HoldAttention(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n := b.Items()
		want := func(ids []int) ([]uint32, []uint32) { return bits(tg.Run(ctx, runGatheredBatch(t, b, ids), nil)) }
		checkHeldRuns(t, name, "tap", "taps", h, n, want)
		h.Release()
		if _, err := h.Run(ctx, spec.Iota(1)); err == nil {
			t.Errorf("%s: a run after Release: no error", name)
		}
		lb, err := inputs.Lazy(cases[tg.Info().Op], tg)
		if err != nil {
			t.Fatal(err)
		}
		if h, err := tg.HoldAttention(lb); lb.Lazy() && !errors.Is(err, target.ErrUnsupported) {
			if h != nil {
				h.Release()
			}
			t.Errorf("%s: a lazy batch: %v, want ErrUnsupported", name, err)
		}
	}
	if _, err := lookup(t, Name(spec.OpRMSNorm)).(*Target).HoldAttention(&target.Batch{Op: spec.OpRMSNorm}); err == nil {
		t.Error("an rmsnorm batch was held as attention")
	}
}

// runGatheredBatch is fuzz's gather of items ids of b, b's layout kept.
func runGatheredBatch(t *testing.T, b *target.Batch, ids []int) *target.Batch {
	t.Helper()
	g, err := inputs.Gather(b, ids)
	if err != nil {
		t.Fatal(fmt.Errorf("gather %v: %w", ids, err))
	}
	g.Layout = b.Layout
	return g
}
