package fuzz

import (
	"context"
	"fmt"
	"testing"

	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// crashing faults on batches of a multiple of 89 rows.
type crashing struct{}

func (crashing) Info() target.Info {
	return target.Info{Name: "plant-crash-89", Op: spec.OpRMSNorm, Device: "cpu", Schedule: target.OracleRMSNormSchedule.String()}
}

func (crashing) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	if b.Rows()%89 == 0 {
		return nil, fmt.Errorf("illegal memory access at %d rows: %w", b.Rows(), target.ErrTargetCrashed)
	}
	return target.RunOracle(b, target.OracleRMSNormSchedule, rows)
}

// A crash found by a relation is shrunk and gets the map of the values
// that crash (Minimize's map step).
func TestMinimizeMapsCrash(t *testing.T) {
	ctx := context.Background()
	c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: spec.OpRMSNorm,
		Relation: spec.RelBatchInvariance, Targets: []string{"plant-crash-89"}, Shape: spec.Shape{Rows: 178, Hidden: 256},
		In: spec.BF16, Out: spec.BF16, Eps: 1e-6, Dist: spec.DistNormal, Seed: 11}
	f, err := Check(ctx, c, crashing{})
	if err != nil || f == nil || f.Kind != spec.KindCrash {
		t.Fatalf("check: %+v, %v; want a crash finding", f, err)
	}
	g, _, err := Minimize(ctx, f, MinimizeOptions{Targets: []target.Target{crashing{}}})
	if err != nil {
		t.Fatal(err)
	}
	if m := g.DriftMap; m == nil || m.Rule != "rows % 89 == 0 -> crash, otherwise -> runs" {
		t.Fatalf("minimal crash %s: map %s", words.Case(g.Case), words.Drift(g.DriftMap))
	}
}
