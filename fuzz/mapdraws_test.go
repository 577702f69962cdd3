package fuzz

import (
	"context"
	"testing"

	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/spec"
)

// A finding drawn with constant rows maps as invariant on its own data:
// 64 copies of one bf16 square sum exactly in fp32 in any order, so the
// TransformerEngine model's two reduction paths give the same bits. The
// random draws of DriftMap show the rows % 32 classes.
func TestDriftMapRandomDrawsCorrectConstantInputs(t *testing.T) {
	ctx := context.Background()
	c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm,
		Relation: spec.RelBatchInvariance, Targets: []string{"drift-rmsnorm-te-mod32"},
		Shape: spec.Shape{Rows: 32, Hidden: 64}, In: spec.BF16, Out: spec.BF16, Eps: 1e-6,
		Dist: spec.DistConstant, Seed: 7, Rel: spec.RelParams{Batch: 32}}
	f := &spec.Finding{Case: c, Relation: c.Relation}

	sw, err := SweepFor(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	own, err := driftmap.Sweep(ctx, sw.Dim, sweepValues(sw.Dim, sw.Onset), sw.Classify)
	if err != nil {
		t.Fatal(err)
	}
	if own.Kind != driftmap.Uniform {
		t.Fatalf("the constant draw alone maps as %s %q; the test needs a draw that hides the drift", own.Kind, own.Rule)
	}

	dm, err := MapDrift(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if want := "rows % 32 == 0 -> B, otherwise -> A"; dm.Rule != want || dm.Kind != driftmap.Periodic {
		t.Errorf("map over draws: %s %q, want periodic %q", dm.Kind, dm.Rule, want)
	}
	if dm.Draws != 1+mapDraws {
		t.Errorf("map says %d draws, want %d", dm.Draws, 1+mapDraws)
	}
}

func TestRandomDrawKeepsShape(t *testing.T) {
	c := spec.Case{Op: spec.OpRMSNorm, Shape: spec.Shape{Rows: 5, Hidden: 8}, Dist: spec.DistConstant, Seed: 3,
		Data: &spec.Data{Tensors: map[string][]string{"x": {"3f80"}}}}
	a, b := randomDraw(c, 1), randomDraw(c, 2)
	if a.Data != nil || a.Dist != spec.DistNormal || a.Shape.Rows != 5 || a.Shape.Hidden != 8 {
		t.Errorf("randomDraw = %+v", a)
	}
	if a.Seed == b.Seed || a.Seed == c.Seed {
		t.Errorf("seeds %d, %d from %d: draws must differ", a.Seed, b.Seed, c.Seed)
	}
}
