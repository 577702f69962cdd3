//go:build cuda

package gpu

import (
	"context"
	"math"
	"testing"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestCublasExact: on inputs whose every partial sum is exact (small
// integers), every summation order gives the same bits, so cuBLAS must
// equal the oracle bit for bit, in every dtype pair the targets take, and
// rows must not depend on M.
func TestCublasExact(t *testing.T) {
	for _, name := range []string{CublasSgemm, CublasGemmEx} {
		tg, err := target.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, dt := range [][2]oracle.DType{{oracle.BF16, oracle.BF16}, {oracle.FP16, oracle.FP16}, {oracle.FP32, oracle.FP32}, {oracle.BF16, oracle.FP32}, {oracle.FP32, oracle.BF16}} {
			for _, m := range []int{1, 7, 64, 300} {
				k, n := 96, 40
				g := &oracle.GEMMInput{M: m, K: k, N: n, Out: dt[1], X: make([]float32, m*k), W: make([]float32, k*n)}
				for i := range g.X {
					g.X[i] = float32(i%7 - 3)
				}
				for i := range g.W {
					g.W[i] = float32(i%5 - 2)
				}
				b := &target.Batch{Op: spec.OpGEMM, In: dt[0], Out: dt[1], GEMM: g}
				got, err := tg.Run(context.Background(), b, nil)
				if err != nil {
					t.Fatalf("%s %v m %d: %v", name, dt, m, err)
				}
				want, err := oracle.GEMM(*g, target.OracleGEMMSchedule, nil)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if math.Float32bits(got.Values[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s %v m %d: value %d = %v, oracle %v", name, dt, m, i, got.Values[i], want[i])
					}
				}
			}
		}
	}
}

// TestCublasRelations runs a short campaign over the cuBLAS targets and
// logs what it finds (a vendor library's behaviour: measured, reported in
// docs/findings.md, not asserted). It fails only when the campaign cannot
// run.
func TestCublasRelations(t *testing.T) {
	if testing.Short() {
		t.Skip("campaign")
	}
	res, err := (&fuzz.Campaign{Duration: 20_000_000_000, Seed: 1, Targets: []string{CublasSgemm, CublasGemmEx}}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d cases", res.Cases)
	for _, f := range res.Findings {
		rule := ""
		if f.DriftMap != nil {
			rule = f.DriftMap.Dim + ": " + f.DriftMap.Rule
		}
		t.Logf("finding: %s %s on %s: row %d col %d %s vs %s (%d ulps); drift map %s; repro %s", f.Kind, f.Relation, f.TargetA, f.Row, f.Col, f.A.Hex, f.B.Hex, f.ULPs, rule, f.Repro)
	}
}
