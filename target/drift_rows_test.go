package target

import (
	"context"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// rmsBatch is an rmsnorm batch of n rows of hidden values drawn from a
// seeded normal distribution, rounded to bf16.
func rmsBatch(n, hidden int, seed int64) *Batch {
	r := rand.New(rand.NewSource(seed))
	x := make([]float32, n*hidden)
	w := make([]float32, hidden)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for i := range w {
		w[i] = float32(1 + r.NormFloat64()/8)
	}
	oracle.RoundSlice(oracle.BF16, x)
	oracle.RoundSlice(oracle.BF16, w)
	return &Batch{Op: spec.OpRMSNorm, In: oracle.BF16, Out: oracle.BF16,
		Input: &oracle.RMSNormInput{X: x, W: w, Rows: n, Hidden: hidden, Eps: 1e-6}}
}

// differingRows runs tg on b and returns the rows whose fp32 taps differ
// from the declared schedule's.
func differingRows(t *testing.T, tg Target, b *Batch) []int {
	t.Helper()
	got, err := tg.Run(context.Background(), b, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := RunOracle(b, OracleRMSNormSchedule, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Info().Name == "drift-rmsnorm-capture-buckets" {
		if want, err = RunOracle(b, rmsBlock1024, nil); err != nil {
			t.Fatal(err)
		}
	}
	var rows []int
	for r := range b.Rows() {
		for c := range got.TapCols {
			if math.Float32bits(got.Taps[r*got.TapCols+c]) != math.Float32bits(want.Taps[r*want.TapCols+c]) {
				rows = append(rows, r)
				break
			}
		}
	}
	return rows
}

// The row drift models give each row the path their doc comments state:
// the rows whose fp32 sum of squares differs from the declared schedule's
// lie where the policy puts the other path (a subset: a row whose sum
// comes out alike in both orders does not show), and only there.
func TestRowDriftModels(t *testing.T) {
	tests := []struct {
		name    string
		n       int
		other   func(row int) bool // the rows the policy gives the other path
		atLeast int                // rows that must show it
	}{
		{"drift-rmsnorm-one-row-300", 299, func(int) bool { return false }, 0},
		{"drift-rmsnorm-one-row-300", 300, func(r int) bool { return r == 299 }, 1},
		{"drift-rmsnorm-tail-tile-64", 899, func(int) bool { return false }, 0},
		{"drift-rmsnorm-tail-tile-64", 930, func(r int) bool { return r >= 896 }, 10},
		{"drift-rmsnorm-tail-tile-64", 960, func(int) bool { return false }, 0},
		{"drift-rmsnorm-second-wave-264", 264, func(int) bool { return false }, 0},
		{"drift-rmsnorm-second-wave-264", 280, func(r int) bool { return r >= 264 }, 3},
		{"drift-rmsnorm-capture-buckets", 248, func(int) bool { return false }, 0},
		{"drift-rmsnorm-capture-buckets", 249, func(int) bool { return true }, 100},
		{"drift-rmsnorm-capture-buckets", 600, func(int) bool { return true }, 100},
	}
	for _, tt := range tests {
		tg, err := Lookup(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if info := tg.Info(); !info.OnRequest || info.Invariant || !slices.Equal(info.Expect, []string{spec.RelBatchInvariance}) {
			t.Errorf("%s: info %+v, want a scan control of batch invariance", tt.name, info)
		}
		rows := differingRows(t, tg, rmsBatch(tt.n, 1024, 2)) // seed 2: row 299 shows its change (40% of rows do)
		for _, r := range rows {
			if !tt.other(r) {
				t.Errorf("%s, %d rows: row %d differs from the declared schedule", tt.name, tt.n, r)
			}
		}
		if len(rows) < tt.atLeast {
			t.Errorf("%s, %d rows: %d rows differ, want at least %d", tt.name, tt.n, len(rows), tt.atLeast)
		}
	}
}

// A row drift model computes a row alike whichever rows are selected.
func TestRowDriftSelection(t *testing.T) {
	tg, err := Lookup("drift-rmsnorm-second-wave-264")
	if err != nil {
		t.Fatal(err)
	}
	b := rmsBatch(280, 64, 2)
	all, err := tg.Run(context.Background(), b, nil)
	if err != nil {
		t.Fatal(err)
	}
	sel := []int{270, 3, 264, 263}
	some, err := tg.Run(context.Background(), b, sel)
	if err != nil {
		t.Fatal(err)
	}
	if d := CompareHost(all, some, sel, []int{0, 1, 2, 3}, oracle.FP32); len(d) > 0 || !slices.Equal(some.Rows, sel) {
		t.Errorf("rows %v selected: %d differ from the whole batch's, rows %v", sel, len(d), some.Rows)
	}
}

// drift-rmsnorm-atomic-128 answers one batch two ways from 128 rows on,
// and one way below.
func TestAtomicNondeterministic(t *testing.T) {
	tg, err := Lookup("drift-rmsnorm-atomic-128")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{127, 128, 200} {
		b := rmsBatch(n, 256, 3)
		x, err := tg.Run(context.Background(), b, nil)
		if err != nil {
			t.Fatal(err)
		}
		y, err := tg.Run(context.Background(), b, nil)
		if err != nil {
			t.Fatal(err)
		}
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		d := CompareHost(&Output{Rows: x.Rows, Cols: 2, Values: x.Taps}, &Output{Rows: y.Rows, Cols: 2, Values: y.Taps}, all, all, oracle.FP32)
		if (len(d) > 0) != (n >= NondeterministicFrom) {
			t.Errorf("%d rows: %d rows differ between two runs", n, len(d))
		}
	}
}
