package inputs

import (
	"errors"
	"math"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
	"github.com/bitparity/bitparity/values"
)

// GEMMTensors' recipes make the X and W that Inputs makes, row by row
// (a boundary case's X before its nudge: the normal rows), and it refuses
// what a device cannot make or what Inputs refuses.
func TestGEMMTensors(t *testing.T) {
	for _, dist := range []spec.Dist{spec.DistNormal, spec.DistHeavy, spec.DistTies, spec.DistBoundary} {
		c := spec.Case{Version: spec.CaseVersion, GenVersion: 2, Op: spec.OpGEMM, Relation: spec.RelBatchInvariance,
			Shape: spec.Shape{Rows: 5, Hidden: 24, N: 7}, In: "bf16", Out: "bf16", Dist: dist, Seed: 9}
		x, w, err := GEMMTensors(c)
		if err != nil {
			t.Fatal(err)
		}
		want := c
		if dist == spec.DistBoundary {
			want.Dist = spec.DistNormal
		}
		b, err := Of(want)
		if err != nil {
			t.Fatal(err)
		}
		g := b.Input.(*oracle.GEMMInput)
		same := func(name string, tn values.Tensor, rows, cols int, vs []float32) {
			row := make([]float32, cols)
			for r := range rows {
				if err := tn.Row(row, uint64(r)); err != nil {
					t.Fatal(err)
				}
				for j, v := range row {
					if math.Float32bits(v) != math.Float32bits(vs[r*cols+j]) {
						t.Fatalf("%s: %s row %d col %d: recipe %v, Inputs %v", dist, name, r, j, v, vs[r*cols+j])
					}
				}
			}
		}
		same("x", x, g.M, g.K, g.X)
		same("w", w, g.K, g.N, g.W)
	}
	ok := spec.Case{Version: spec.CaseVersion, GenVersion: 2, Op: spec.OpGEMM, Shape: spec.Shape{Rows: 5, Hidden: 24, N: 7},
		In: "bf16", Out: "bf16", Dist: spec.DistNormal, Seed: 9}
	for _, tc := range []struct {
		name        string
		edit        func(*spec.Case)
		unsupported bool
	}{
		{"generator version 1", func(c *spec.Case) { c.GenVersion = 1 }, true},
		{"rmsnorm", func(c *spec.Case) { c.Op = spec.OpRMSNorm }, true},
		{"sensitive", func(c *spec.Case) { c.Dist = spec.DistSensitive }, true},
		{"no columns", func(c *spec.Case) { c.Shape.N = 0 }, false},
		{"bad dtype", func(c *spec.Case) { c.In = "int3" }, false},
	} {
		c := ok
		tc.edit(&c)
		_, _, err := GEMMTensors(c)
		if err == nil || errors.Is(err, target.ErrUnsupported) != tc.unsupported {
			t.Errorf("%s: %v (want an error, unsupported %v)", tc.name, err, tc.unsupported)
		}
	}
}
