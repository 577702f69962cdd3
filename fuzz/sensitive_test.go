package fuzz

import (
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

func TestSensitiveScratch(t *testing.T) {
	for _, op := range []spec.Op{spec.OpRMSNorm, spec.OpLogProb} {
		for _, d := range []spec.Dist{spec.DistNormal, spec.DistBoundary, spec.DistSensitive} {
			c := powerCase(op, 768, 32, spec.BF16, d, 1)
			f, err := Family(c)
			if err != nil {
				t.Fatal(err)
			}
			cov := power.NewCoverage(f, 32)
			for k := range 4 {
				c.Seed = 1 + uint64(k)
				b, err := Inputs(c)
				if err != nil {
					t.Fatal(err)
				}
				sets, err := RowPower(c, b, f)
				if err != nil {
					t.Fatal(err)
				}
				cov.AddDraw(sets)
				t.Logf("%s %s draws %d: %+v", op, d, k+1, cov.Summary(0.99))
			}
		}
	}
}
