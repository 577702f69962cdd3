package explain

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// driftCase is a drift model's finding reduced to what explain reads: the
// case, the drift map's classes (one value each) and rule, and the true
// policy.
type driftCase struct {
	target string
	c      spec.Case
	dim    string
	rule   string
	values map[string]int // label -> probed value
	truth  func(v int) any
}

func batchAt(op spec.Op, v, heads int) *fuzz.Batch {
	b := &fuzz.Batch{Op: op}
	switch op {
	case spec.OpRMSNorm:
		b.RMSNorm = &oracle.RMSNormInput{Rows: v}
	case spec.OpGEMM:
		b.GEMM = &oracle.GEMMInput{M: v}
	case spec.OpAttnDecode:
		b.Decode = &oracle.DecodeInput{K: make([][]float32, v), Heads: heads}
	}
	return b
}

var driftCases = []driftCase{
	{
		target: "drift-rmsnorm-te-mod32",
		c:      spec.Case{Op: spec.OpRMSNorm, Relation: spec.RelBatchInvariance, Shape: spec.Shape{Rows: 31, Hidden: 1024}, In: "bf16", Out: "bf16"},
		dim:    "rows", rule: "rows % 32 == 0 -> B, otherwise -> A", values: map[string]int{"A": 31, "B": 32},
		truth: func(v int) any { return fuzz.TERMSNormMod32(batchAt(spec.OpRMSNorm, v, 0)) },
	},
	{
		target: "drift-rmsnorm-vllm-256",
		c:      spec.Case{Op: spec.OpRMSNorm, Relation: spec.RelBatchInvariance, Shape: spec.Shape{Rows: 255, Hidden: 2048}, In: "bf16", Out: "bf16"},
		dim:    "rows", rule: "rows <= 255 -> A, rows >= 256 -> B", values: map[string]int{"A": 255, "B": 256},
		truth: func(v int) any { return fuzz.VLLMRMSNorm256(batchAt(spec.OpRMSNorm, v, 0)) },
	},
	{
		target: "drift-gemm-splitk-by-m",
		c:      spec.Case{Op: spec.OpGEMM, Relation: spec.RelBatchInvariance, Shape: spec.Shape{Rows: 64, Hidden: 96, N: 4}, In: "bf16", Out: "bf16"},
		dim:    "rows", rule: "rows <= 64 -> A, rows >= 65 -> B", values: map[string]int{"A": 64, "B": 65},
		truth: func(v int) any { return fuzz.GEMMSplitKByM(batchAt(spec.OpGEMM, v, 0)) },
	},
	{
		target: "drift-decode-splits-by-batch",
		c:      spec.Case{Op: spec.OpAttnDecode, Relation: spec.RelBatchInvariance, Shape: spec.Shape{Rows: 8, KV: 200, Heads: 4, KVHeads: 2, HeadDim: 16}, In: "bf16", Out: "bf16"},
		dim:    "batch", rule: "batch <= 32 -> A, batch >= 33 -> B", values: map[string]int{"A": 32, "B": 33},
		truth: func(v int) any { return fuzz.DecodeSplitsByBatch(batchAt(spec.OpAttnDecode, v, 4)) },
	},
}

func finding(d driftCase) *spec.Finding {
	c := d.c
	c.Targets = []string{d.target}
	c.Dist = spec.DistNormal
	c.GenVersion = spec.GeneratorVersion
	dm := &spec.DriftMap{Dim: d.dim, Rule: d.rule}
	for _, l := range []string{"A", "B"} {
		dm.Classes = append(dm.Classes, spec.DriftClass{Label: l, Values: []int{d.values[l]}})
	}
	return &spec.Finding{Case: c, DriftMap: dm}
}

func TestDriftModels(t *testing.T) {
	for _, d := range driftCases {
		t.Run(d.target, func(t *testing.T) {
			ex, err := Finding(context.Background(), finding(d), Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Log(ex.Text())
			for _, c := range ex.Classes {
				truth := fmt.Sprint(d.truth(c.Value))
				tg := c.Targets[0]
				if len(tg.Matches) != 1 || !slices.Contains(tg.Matches[0].Schedules, truth) {
					t.Errorf("class %s: want one group holding %s, got %s", c.Label, truth, tg.Describe())
				}
			}
		})
	}
}
