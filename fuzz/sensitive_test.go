package fuzz

import (
	"slices"
	"testing"

	"github.com/bitparity/bitparity/power"
	"github.com/bitparity/bitparity/spec"
)

func powerCase(op spec.Op, cols, rows int, out spec.DType, dist spec.Dist, seed uint64) spec.Case {
	c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: op, Relation: spec.RelBatchInvariance,
		In: spec.BF16, Out: out, Dist: dist, Seed: seed, Eps: 1e-6}
	if op == spec.OpRMSNorm {
		c.Shape.Hidden = cols
	} else {
		c.Shape.Vocab = cols
		c.Out = spec.FP32
		c.Compare = out
	}
	c.SetBatchRows(rows)
	return c
}

// TestSensitivePower: one sensitive draw shows more of the family per row
// than one boundary draw (rmsnorm, logprob; bf16), and a sensitive row's
// bits never depend on the batch it sits in.
func TestSensitivePower(t *testing.T) {
	for _, op := range []spec.Op{spec.OpRMSNorm, spec.OpLogProb} {
		mean := map[spec.Dist]float64{}
		for _, d := range []spec.Dist{spec.DistBoundary, spec.DistSensitive} {
			c := powerCase(op, 256, 16, spec.BF16, d, 5)
			f, err := Family(c)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Inputs(c)
			if err != nil {
				t.Fatal(err)
			}
			sets, err := RowPower(c, b, f)
			if err != nil {
				t.Fatal(err)
			}
			cov := power.NewCoverage(f, len(sets))
			if err := cov.AddDraw(sets); err != nil {
				t.Fatal(err)
			}
			mean[d] = cov.Summary(0.99).Mean
		}
		t.Logf("%s: one draw's mean power: boundary %.3f, sensitive %.3f", op, mean[spec.DistBoundary], mean[spec.DistSensitive])
		if mean[spec.DistSensitive] <= mean[spec.DistBoundary] {
			t.Errorf("%s: sensitive mean power %.3f, boundary %.3f", op, mean[spec.DistSensitive], mean[spec.DistBoundary])
		}
		small, err := Inputs(powerCase(op, 256, 8, spec.BF16, spec.DistSensitive, 5))
		if err != nil {
			t.Fatal(err)
		}
		large, err := Inputs(powerCase(op, 256, 16, spec.BF16, spec.DistSensitive, 5))
		if err != nil {
			t.Fatal(err)
		}
		a, b := small.RMSNorm, large.RMSNorm
		if op == spec.OpLogProb {
			if !slices.Equal(small.LogProb.Logits, large.LogProb.Logits[:len(small.LogProb.Logits)]) {
				t.Errorf("%s: sensitive rows of a batch of 8 differ from the first 8 of 16", op)
			}
			continue
		}
		if !slices.Equal(a.X, b.X[:len(a.X)]) {
			t.Errorf("%s: sensitive rows of a batch of 8 differ from the first 8 of 16", op)
		}
	}
}
