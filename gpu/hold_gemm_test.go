//go:build cuda

package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// heldRowLists are the row lists a held batch of 80 rows is run on:
// prefixes on both sides of the split-K drift's M = 64, a panel gather as
// a scan's items class makes (first 60, 30 rows, wrapping), scattered
// runs, a reversal and a single row.
func heldRowLists() [][]int {
	seqFrom := func(first, n, mod int) []int {
		ids := make([]int, n)
		for i := range ids {
			ids[i] = (first + i) % mod
		}
		return ids
	}
	rev := seqFrom(0, 80, 80)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return [][]int{seqFrom(0, 1, 80), seqFrom(0, 64, 80), seqFrom(0, 65, 80), seqFrom(0, 80, 80),
		seqFrom(60, 30, 80), seqFrom(3, 5, 80), {5, 6, 7, 70, 71, 0, 1}, rev, {79}}
}

// runGathered is tg's Run on the rows ids of b gathered into a batch of
// their own (inputs.Gather): what a held batch's Run of ids must give.
func runGathered(t *testing.T, tg target.Target, b *target.Batch, ids []int) *target.Output {
	t.Helper()
	gb, err := inputs.Gather(b, ids)
	if err != nil {
		t.Fatal(err)
	}
	o, err := tg.Run(context.Background(), gb, nil)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// heldRunsGathered fails unless run (a held batch's Run) gives, for every
// row list of lists, tg's Run on those rows of b gathered (runGathered),
// bit for bit.
func heldRunsGathered(t *testing.T, run func(context.Context, []int) (*target.Output, error), tg target.Target, b *target.Batch, lists [][]int) {
	t.Helper()
	for _, ids := range lists {
		got, err := run(context.Background(), ids)
		if err != nil {
			t.Fatal(err)
		}
		sameBits(t, "rows "+itoa(ids), got, runGathered(t, tg, b, ids))
	}
}

// sameBits fails unless got and want hold the same rows, values and taps
// bit for bit.
func sameBits(t *testing.T, what string, got, want *target.Output) {
	t.Helper()
	if err := got.ToHost(); err != nil {
		t.Fatal(err)
	}
	if err := want.ToHost(); err != nil {
		t.Fatal(err)
	}
	if len(got.Rows) != len(want.Rows) || got.Cols != want.Cols || got.DType != want.DType || got.TapCols != want.TapCols {
		t.Fatalf("%s: %d rows x %d %s (%d taps), want %d x %d %s (%d taps)", what, len(got.Rows), got.Cols, got.DType, got.TapCols,
			len(want.Rows), want.Cols, want.DType, want.TapCols)
	}
	for _, p := range []struct {
		name   string
		a, b   []float32
		perRow int
	}{{"value", got.Values, want.Values, got.Cols}, {"tap", got.Taps, want.Taps, got.TapCols}} {
		if len(p.a) != len(p.b) {
			t.Fatalf("%s: %d %ss, want %d", what, len(p.a), p.name, len(p.b))
		}
		for i := range p.a {
			if math.Float32bits(p.a[i]) != math.Float32bits(p.b[i]) {
				t.Fatalf("%s: row %d %s %d is %v, want %v", what, i/p.perRow, p.name, i%p.perRow, p.a[i], p.b[i])
			}
		}
	}
}

// randomValues returns n normal values rounded to dt.
func randomValues(r *rand.Rand, n int, dt oracle.DType) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	oracle.RoundSlice(dt, v)
	return v
}

// A held gemm batch computes what the target's Run computes on the
// gathered batch, bit for bit: every row list (prefix, gather), every row
// alone, and enqueuePrefix's prefixes; on a GPU target a gather's rows
// equal the prefix's where the policy chooses one schedule for both.
func TestHoldGEMMEqualsRun(t *testing.T) {
	ctx := context.Background()
	const m = 80
	for _, tc := range []struct {
		target  string
		k, n    int
		in, out oracle.DType
	}{
		{"cuda-gemm", 64, 48, oracle.BF16, oracle.BF16},
		{"cuda-drift-gemm-splitk-by-m", 128, 16, oracle.BF16, oracle.BF16},
		{CublasGemmEx, 100, 40, oracle.BF16, oracle.BF16}, // rows off the allocation alignment: alone from scratch rows
		{CublasGemmEx, 128, 128, oracle.BF16, oracle.BF16},
		{CublasGemmEx, 64, 64, oracle.FP16, oracle.FP32},
		{CublasSgemm, 96, 40, oracle.BF16, oracle.FP32},
	} {
		t.Run(tc.target, func(t *testing.T) {
			tg := lookup(t, tc.target)
			r := rand.New(rand.NewSource(int64(tc.k*1000 + tc.n)))
			g := &oracle.GEMMInput{M: m, K: tc.k, N: tc.n, Out: tc.out,
				X: randomValues(r, m*tc.k, tc.in), W: randomValues(r, tc.k*tc.n, tc.in)}
			b := &target.Batch{Op: spec.OpGEMM, In: tc.in, Out: tc.out, Input: g}
			h, err := HoldGEMM(tg, b)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Release()
			unheld := func(ids []int) *target.Output { return runGathered(t, tg, b, ids) }
			heldRunsGathered(t, h.Run, tg, b, heldRowLists())
			alone, err := h.Alone(ctx, m)
			if err != nil {
				t.Fatal(err)
			}
			for i := range m {
				if err := alone.ToHost(); err != nil {
					t.Fatal(err)
				}
				one := &target.Output{Rows: []int{0}, Cols: tc.n, DType: tc.out, Values: alone.Values[i*tc.n : (i+1)*tc.n]}
				sameBits(t, fmt.Sprint("row alone ", i), one, unheld([]int{i}))
			}
			for _, v := range []int{1, 64, 65, m} {
				sameBits(t, fmt.Sprint("enqueuePrefix ", v), enqueuedGEMM(t, h, v), unheld(spec.Iota(v)))
			}
			gt, ok := tg.(*Target)
			if !ok {
				return
			}
			schedule := func(rows int) oracle.Schedule {
				in := *g
				in.M = rows
				return gt.policy(&target.Batch{Op: spec.OpGEMM, In: tc.in, Out: tc.out, Input: &in})
			}
			for _, ids := range heldRowLists() {
				top := 0
				for _, id := range ids {
					top = max(top, id)
				}
				if !reflect.DeepEqual(schedule(len(ids)), schedule(top+1)) {
					continue
				}
				got, err := h.Run(ctx, ids)
				if err != nil {
					t.Fatal(err)
				}
				pre, err := h.Run(ctx, spec.Iota(top+1))
				if err != nil {
					t.Fatal(err)
				}
				if err := pre.ToHost(); err != nil {
					t.Fatal(err)
				}
				want := &target.Output{Rows: ids, Cols: tc.n, DType: tc.out}
				for _, id := range ids {
					want.Values = append(want.Values, pre.Values[id*tc.n:(id+1)*tc.n]...)
				}
				sameBits(t, "gather "+itoa(ids)+" against the prefix", got, want)
			}
		})
	}
}

// enqueuedGEMM runs h.enqueuePrefix(v) into a new device output.
func enqueuedGEMM(t *testing.T, h *GEMMHeld, v int) *target.Output {
	t.Helper()
	d := h.d
	out := newDevOut(d, v, h.n, h.c)
	err := d.do(func() (err error) {
		if out.buf, err = d.pool.get(v * h.n * dsize(h.c)); err != nil {
			return err
		}
		return h.enqueuePrefix(v, out.buf, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	return &target.Output{Rows: spec.Iota(v), Cols: h.n, DType: h.c, Device: out}
}

// A cuBLAS output rounded on the host (bf16 out of cublas-sgemm) is not
// held: the scan runs it through Run.
func TestHoldGEMMRefusesHostRounding(t *testing.T) {
	g := &oracle.GEMMInput{M: 4, K: 8, N: 8, Out: oracle.BF16, X: make([]float32, 32), W: make([]float32, 64)}
	_, err := HoldGEMM(lookup(t, CublasSgemm), &target.Batch{Op: spec.OpGEMM, In: oracle.BF16, Out: oracle.BF16, Input: g})
	if !errors.Is(err, target.ErrUnsupported) {
		t.Fatalf("hold: %v, want target.ErrUnsupported", err)
	}
}

// A held log-prob batch computes what the target's Run computes on the
// gathered batch, values and taps bit for bit, on both sides of the
// rows132 drift's 132 rows.
func TestHoldLogProbEqualsRun(t *testing.T) {
	ctx := context.Background()
	const rows, vocab = 140, 300
	for _, name := range []string{"cuda-logprob", "cuda-drift-order-logprob-rows132"} {
		t.Run(name, func(t *testing.T) {
			tg := lookup(t, name)
			r := rand.New(rand.NewSource(7))
			in := &oracle.LogProbInput{Rows: rows, Vocab: vocab, Logits: randomValues(r, rows*vocab, oracle.BF16), Targets: make([]int32, rows)}
			for i := range in.Targets {
				in.Targets[i] = int32(r.Intn(vocab))
			}
			b := &target.Batch{Op: spec.OpLogProb, In: oracle.BF16, Out: oracle.FP32, Input: in}
			h, err := HoldLogProb(tg, b)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Release()
			unheld := func(ids []int) *target.Output { return runGathered(t, tg, b, ids) }
			heldRunsGathered(t, h.Run, tg, b, append(heldRowLists(), spec.Iota(131), spec.Iota(132), spec.Iota(rows), []int{139, 0, 138, 1}))
			alone, err := h.Alone(ctx, rows)
			if err != nil {
				t.Fatal(err)
			}
			if err := alone.ToHost(); err != nil {
				t.Fatal(err)
			}
			for i := range rows {
				one := &target.Output{Rows: []int{0}, Cols: 1, DType: oracle.FP32, TapCols: 2,
					Values: alone.Values[i : i+1], Taps: alone.Taps[2*i : 2*i+2]}
				sameBits(t, fmt.Sprint("row alone ", i), one, unheld([]int{i}))
			}
			for _, v := range []int{1, 131, 132, rows} {
				var o *target.Output
				err := h.t.dev.do(func() error {
					var out, taps *buffer
					var err error
					if o, out, taps, err = h.newOutput(v); err != nil {
						return err
					}
					return h.enqueuePrefix(v, out, taps)
				})
				if err != nil {
					t.Fatal(err)
				}
				sameBits(t, fmt.Sprint("enqueuePrefix ", v), o, unheld(spec.Iota(v)))
			}
		})
	}
}

// itoa names a row list in a failure: its first rows and its length.
func itoa(ids []int) string {
	if len(ids) > 8 {
		return fmt.Sprintf("%v... (%d rows)", ids[:8], len(ids))
	}
	return fmt.Sprint(ids)
}
