//go:build cuda

package gpu

import (
	"context"
	"io"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
	"github.com/bitparity/bitparity/verdict"
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
				b := &target.Batch{Op: spec.OpGEMM, In: dt[0], Out: dt[1], Input: g}
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
// asserts what docs/findings.md reports: both targets run, and every
// finding has the identity (kind, op, relation and targets) of one of the
// cases recorded on the H200 in corpus/h200; one whose map also splits the
// swept rows alike is logged as that case (verdict.Known.Match), one whose
// map partitions otherwise (the campaign's draws and dtypes vary) is
// logged to re-record. A finding of another identity (a new library
// version, a new device, a new relation failing) fails it: measure it,
// then add its case to corpus/h200 and say it in docs/findings.md.
func TestCublasRelations(t *testing.T) {
	if testing.Short() {
		t.Skip("campaign")
	}
	ctx := context.Background()
	known, err := verdict.LoadKnown(ctx, []string{filepath.Join("..", "corpus", "h200")}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	targets := []string{CublasSgemm, CublasGemmEx}
	res, err := (&fuzz.Campaign{Duration: 20 * time.Second, Seed: 1, Targets: targets}).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d cases", res.Cases)
	ran := map[string]int64{}
	for _, ts := range res.Targets {
		ran[ts.Target] += ts.Cases
	}
	for _, name := range targets {
		if ran[name] == 0 {
			t.Errorf("%s ran no case", name)
		}
	}
	for _, f := range res.Findings {
		rule := ""
		if f.DriftMap != nil {
			rule = f.DriftMap.Dim + ": " + f.DriftMap.Rule
		}
		if at, ok := known.Match(f); ok {
			t.Logf("known (%s): %s %s on %s, drift map %s", at, f.Kind, f.Relation, f.TargetA, rule)
			continue
		}
		if known.Knows(f) {
			// the same kind of drift of the same target and relation, its
			// map partitioned otherwise (other dtypes or draws than the
			// recorded case's): logged, to re-record in corpus/h200
			t.Logf("known kind, another map: %s %s on %s, drift map %s; repro %s", f.Kind, f.Relation, f.TargetA, rule, f.Repro)
			continue
		}
		t.Errorf("a cuBLAS finding not in corpus/h200: %s %s on %s: row %d col %d %s vs %s (%d ulps); drift map %s; repro %s",
			f.Kind, f.Relation, f.TargetA, f.Row, f.Col, f.A.Hex, f.B.Hex, f.ULPs, rule, f.Repro)
	}
}
