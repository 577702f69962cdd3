package mapper

import (
	"context"
	"flag"
	"testing"

	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

var (
	panelSeeds  = flag.Int("panel-seeds", 4, "TestPanelDrawSensitive: the seeds tried")
	panelHidden = flag.Int("panel-hidden", 16, "TestPanelDrawSensitive: the case's hidden size")
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

	dm, err := Map(ctx, f)
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

// outputsOnly is a planted target that shows its outputs only (no fp32
// taps, as a GPU kernel or a process does): the sum of squares of rows
// 132 and up runs 64 threads of vector width 8 (plantB) instead of 32 of
// width 4 (plantA), which flips a bf16 output only where the value sits
// near a rounding midpoint.
type outputsOnly struct{ target.Target }

func (o outputsOnly) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	out, err := o.Target.Run(ctx, b, rows)
	if err != nil {
		return nil, err
	}
	out.Taps, out.TapCols = nil, 0
	return out, nil
}

// TestPanelDrawSensitive: a finding on a target that shows its outputs
// only, whose own data does not show the drift, maps with its exact onset
// on every seed tried: draw 1's panel is sensitive (panelDraw), so its
// items show the order change at 132 rows; a target with taps keeps a
// normal panel.
func TestPanelDrawSensitive(t *testing.T) {
	ctx := context.Background()
	tgt := outputsOnly{plantedOnset()}
	for seed := range uint64(*panelSeeds) {
		c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm,
			Relation: spec.RelOracleParity, Targets: []string{tgt.Info().Name},
			Shape: spec.Shape{Rows: 140, Hidden: *panelHidden}, In: spec.BF16, Out: spec.BF16, Eps: 1e-6,
			Dist: spec.DistConstant, Seed: seed}
		f := &spec.Finding{Kind: spec.KindMismatch, Case: c, Relation: c.Relation}
		m, err := Map(ctx, f, tgt)
		if err != nil {
			t.Fatal(err)
		}
		if want := "rows <= 131 -> A, rows >= 132 -> B"; m.Rule != want {
			t.Errorf("seed %d: map %q, want %q", seed, m.Rule, want)
		}
	}
	withTaps, err := panelDraw(ctx, plantedOnset(), spec.Case{Op: spec.OpRMSNorm, Relation: spec.RelOracleParity,
		Shape: spec.Shape{Rows: 1, Hidden: 64}, In: spec.BF16, Out: spec.BF16, Eps: 1e-6, Dist: spec.DistNormal, Version: 1}, 1)
	if err != nil || withTaps.Dist != spec.DistNormal {
		t.Errorf("a target with taps: panel draw %s (%v), want normal", withTaps.Dist, err)
	}
}
