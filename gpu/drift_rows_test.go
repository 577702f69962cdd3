//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/ops/rmsnorm"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// rowCase is an rmsnorm case of n rows at hidden 512, bf16 in and out,
// made by generator version 2 (the device makes a lazy batch's rows).
func rowCase(n int) spec.Case {
	return spec.Case{Version: spec.CaseVersion, GenVersion: 2, Op: rmsnorm.Op{}.Name(), Relation: spec.RelBatchInvariance,
		In: spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 3, Eps: 1e-6, Shape: spec.Shape{Rows: n, Hidden: 512}}
}

func mustInputs(t *testing.T, c spec.Case, ts ...target.Target) *target.Batch {
	t.Helper()
	b, err := inputs.Lazy(c, ts...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustRun(t *testing.T, tg target.Target, b *target.Batch, rows []int) *target.Output {
	t.Helper()
	o, err := tg.Run(context.Background(), b, rows)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// sameRows fails unless got and want hold the same rows, each with the
// same bits and taps.
func sameRows(t *testing.T, what string, got, want *target.Output) {
	t.Helper()
	if !slices.Equal(got.Rows, want.Rows) {
		t.Fatalf("%s: rows %v, want %v", what, got.Rows, want.Rows)
	}
	var bad []int
	for i := range got.Rows {
		if digest(t, got, i) != digest(t, want, i) {
			bad = append(bad, got.Rows[i])
		}
	}
	if len(bad) > 0 {
		t.Fatalf("%s: %d of %d rows differ from the CPU twin's, first %v", what, len(bad), len(got.Rows), bad[:min(len(bad), 8)])
	}
}

// scattered is a selection of n rows out of order: every 7th row from the
// last down, then row 0.
func scattered(n int) []int {
	var s []int
	for r := n - 1; r > 0; r -= 7 {
		s = append(s, r)
	}
	return append(s, 0)
}

// TestRowDriftTwins checks each deterministic GPU row drift model against
// its CPU twin (target/drift_rows.go) row for row, bits and taps, at batch
// sizes on both sides of its onsets: whole batches and a selection out of
// order through Run (a host batch and a lazy one the device makes), and a
// held batch's prefixes and a gather (Held.Run, the scan's path).
func TestRowDriftTwins(t *testing.T) {
	if err := Available(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	ctx := context.Background()
	sizes := map[string][]int{
		"drift-rmsnorm-one-row-300":     {1, 299, 300, 301, 700},
		"drift-rmsnorm-tail-tile-64":    {899, 900, 960, 961, 1000},
		"drift-rmsnorm-second-wave-264": {264, 265, 530},
		"drift-rmsnorm-capture-buckets": {248, 249, 256, 513},
	}
	for _, m := range rowDrifts {
		if m.random {
			continue // TestRowDriftAtomic
		}
		t.Run(m.twin, func(t *testing.T) {
			vals := sizes[m.twin]
			if vals == nil {
				t.Fatalf("no batch sizes for %s", m.twin)
			}
			gpuT, cpuT := lookup(t, "cuda-"+m.twin), lookup(t, m.twin)
			held, err := gpuT.(*Target).Hold(mustInputs(t, rowCase(slices.Max(vals)), gpuT))
			if err != nil {
				t.Fatal(err)
			}
			defer held.Release()
			for _, n := range vals {
				host, err := inputs.Of(rowCase(n))
				if err != nil {
					t.Fatal(err)
				}
				lazy := mustInputs(t, rowCase(n), gpuT)
				if !lazy.Lazy() {
					t.Fatalf("%d rows: the device does not make the batch", n)
				}
				for _, rows := range [][]int{nil, scattered(n)} {
					want := mustRun(t, cpuT, host, rows)
					for _, b := range []*target.Batch{host, lazy} {
						got := mustRun(t, gpuT, b, rows)
						sameRows(t, fmt.Sprintf("%d rows (lazy %v, selected %v)", n, b.Lazy(), rows != nil), got, want)
						got.Release()
					}
				}
				// the held batch: its first n rows, and those rows reversed
				got, err := held.Run(ctx, spec.Iota(n))
				if err != nil {
					t.Fatal(err)
				}
				sameRows(t, fmt.Sprintf("held, %d rows", n), got, mustRun(t, cpuT, host, nil))
				got.Release()
				perm := spec.Iota(n)
				slices.Reverse(perm)
				if got, err = held.Run(ctx, perm); err != nil {
					t.Fatal(err)
				}
				k, in, err := host.Kind()
				if err != nil {
					t.Fatal(err)
				}
				sameRows(t, fmt.Sprintf("held, %d rows reversed", n), got, mustRun(t, cpuT, host.With(k.Gather(in, perm)), nil))
				got.Release()
			}
		})
	}
}

// TestRowDriftAtomic checks cuda-drift-rmsnorm-atomic-128 as its twin
// drift-rmsnorm-atomic-128 is: a run whose rows' orders are
// target.AtomicPartials(r)'s gives, row for row, the CPU oracle's bits
// and taps under each row's schedule; two runs of the registered model
// agree on every row below 128 rows and differ from 128 rows on.
func TestRowDriftAtomic(t *testing.T) {
	d, err := Default()
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	tw := lookup(t, "cuda-drift-rmsnorm-atomic-128")
	if tw.(*Target).Deterministic() {
		t.Error("cuda-drift-rmsnorm-atomic-128 says it is deterministic")
	}
	for _, n := range []int{127, 128, 300} {
		b, err := inputs.Of(rowCase(n))
		if err != nil {
			t.Fatal(err)
		}
		p := target.AtomicPartials(7)
		fixed := &Target{info: target.Info{Name: "test-atomic-run-7", Op: rmsnorm.Op{}.Name()}, rows: fixedRows(p), dev: d}
		got := mustRun(t, fixed, b, nil)
		for r := range n {
			want, err := target.RunOracle(b, p(b, r), []int{r})
			if err != nil {
				t.Fatal(err)
			}
			if digest(t, got, r) != digest(t, want, 0) {
				t.Fatalf("%d rows, run 7: row %d differs from the oracle under its schedule %v", n, r, p(b, r))
			}
		}
		got.Release()
		o1, o2 := mustRun(t, tw, b, nil), mustRun(t, tw, b, nil)
		differ := 0
		for r := range n {
			if digest(t, o1, r) != digest(t, o2, r) {
				differ++
			}
		}
		if (differ > 0) != (n >= target.NondeterministicFrom) {
			t.Errorf("%d rows: two runs differ in %d rows", n, differ)
		}
		t.Logf("%d rows: two runs differ in %d rows", n, differ)
	}
}
