//go:build cuda

package gpu_test

import (
	"context"
	"testing"

	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/fuzz/mapper"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/spec"
)

// A cuBLAS GemmEx finding drawn with constant rows (bf16 in, fp32 out,
// K = 96, N = 1) mapped "every rows -> A" on its own data on the H200;
// the map over random draws beside it must not be invariant.
func TestDriftMapCublasConstantFinding(t *testing.T) {
	if err := gpu.Available(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	ctx := context.Background()
	c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpGEMM,
		Relation: spec.RelBatchInvariance, Targets: []string{gpu.CublasGemmEx},
		Shape: spec.Shape{Rows: 8, Hidden: 96, N: 1}, In: spec.BF16, Out: spec.FP32,
		Dist: spec.DistConstant, Seed: 1, Rel: spec.RelParams{Batch: 16}}
	f := &spec.Finding{Case: c, Relation: c.Relation}
	sw, err := mapper.SweepFor(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	own, err := driftmap.Sweep(ctx, sw.Dim, driftmap.Values(sw.Dim, sw.Onset), sw.Classify)
	if err != nil {
		t.Fatal(err)
	}
	dm, err := mapper.Map(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("own constant data: %s %q", own.Kind, own.Rule)
	t.Logf("over %d draws: %s %q (%d classes)", dm.Draws, dm.Kind, dm.Rule, len(dm.Classes))
	if dm.Kind == driftmap.Uniform {
		t.Errorf("the map over random draws is still invariant")
	}
}
