package relate

import (
	"context"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

func init() {
	// test-short-prefill: the prefill oracle, but its output holds one
	// value fewer than its rows need; test-narrow-prefill: it claims one
	// column fewer than the batch has; test-short-taps: it claims one tap
	// column more than its taps hold (garbage from broken targets).
	for name, spoil := range map[string]func(*target.Output){
		"test-short-prefill":  func(o *target.Output) { o.Values = o.Values[:len(o.Values)-1] },
		"test-narrow-prefill": func(o *target.Output) { o.Cols--; o.Values = o.Values[:len(o.Rows)*o.Cols] },
		"test-short-taps":     func(o *target.Output) { o.TapCols++ },
	} {
		t := &testTarget{info: target.Info{Name: name, Op: spec.OpAttnPrefill, Device: "test"},
			run: oracleThen(func(_ *target.Batch, o *target.Output) { spoil(o) })}
		target.Register(name, func() (target.Target, error) { return t, nil })
	}
}

// TestMalformedOutputIsACrash: a target whose output has the right rows but
// too few values, another column count than the batch, or taps that do
// not fill their columns, is a crash
// finding in every relation, path parity of prefill (which selects rows
// itself) included, never a comparison of values past the output.
func TestMalformedOutputIsACrash(t *testing.T) {
	sh := spec.Shape{Seqs: 2, SeqLen: 5, Heads: 2, KVHeads: 1, HeadDim: 8}
	for _, target := range []string{"test-short-prefill", "test-narrow-prefill", "test-short-taps"} {
		for _, rel := range []string{spec.RelPathParity, spec.RelDeterminism} {
			c := suiteCase(spec.OpAttnPrefill, rel, sh, spec.RelParams{})
			c.Targets = []string{target}
			if rel == spec.RelPathParity {
				c.Targets = []string{"oracle-attn_prefill", target}
			}
			f, err := Check(context.Background(), c)
			if err != nil {
				t.Fatalf("%s %s: %v", target, rel, err)
			}
			if f == nil || f.Kind != "crash" || f.TargetA != target {
				t.Errorf("%s %s: got %+v, want a crash finding of %s", target, rel, f, target)
			}
		}
	}
}

// TestDeviceCompareKeepsPairOrder: compareOutputs returns the differing
// pairs in the order of the pairs on the device as on the host, so the
// "first diverging row" of a finding does not depend on where the rows
// were compared (the pairs of a permuted batch are not in row order).
func TestDeviceCompareKeepsPairOrder(t *testing.T) {
	const rows, cols = 4, 2
	a := make([]float32, rows*cols)
	b := make([]float32, rows*cols)
	for i := range b {
		b[i] = 1
	}
	ra, rb := []int{3, 1, 2, 0}, []int{0, 1, 2, 3}
	host := func(v []float32) *target.Output {
		return &target.Output{Rows: []int{0, 1, 2, 3}, Cols: cols, DType: oracle.FP32, Values: v}
	}
	dev := func(v []float32) *target.Output {
		return &target.Output{Rows: []int{0, 1, 2, 3}, Cols: cols, DType: oracle.FP32, Device: &fakeDevice{vals: v, cols: cols}}
	}
	hd, _, err := compareOutputs(host(a), host(b), ra, rb, oracle.FP32)
	if err != nil {
		t.Fatal(err)
	}
	dd, _, err := compareOutputs(dev(a), dev(b), ra, rb, oracle.FP32)
	if err != nil {
		t.Fatal(err)
	}
	if len(hd) != rows || len(dd) != rows {
		t.Fatalf("%d host and %d device diffs, want %d", len(hd), len(dd), rows)
	}
	for i := range hd {
		if hd[i].PosA != ra[i] || dd[i].PosA != hd[i].PosA || dd[i].PosB != hd[i].PosB {
			t.Errorf("diff %d: host (%d, %d), device (%d, %d), want (%d, %d)", i,
				hd[i].PosA, hd[i].PosB, dd[i].PosA, dd[i].PosB, ra[i], rb[i])
		}
	}
}

// TestHugeRelBatchIsAnError: a case (from run --case or a fuzzer) whose
// rel.batch or rel.pad asks for more input values than the memory budget
// is an error naming the budget, not an allocation that kills the process.
func TestHugeRelBatchIsAnError(t *testing.T) {
	for _, c := range []spec.Case{
		rmsCase(spec.RelBatchInvariance, "oracle-rmsnorm", 2, 8, spec.RelParams{Batch: 1 << 40, Position: 1}),
		rmsCase(spec.RelPadding, "oracle-rmsnorm", 2, 8, spec.RelParams{Pad: 1 << 40}),
		rmsCase(spec.RelPadding, "oracle-rmsnorm", 2, 8, spec.RelParams{Pad: spec.MaxElements/8 + 1, Filler: "copy"}),
	} {
		f, err := Check(context.Background(), c)
		if err == nil || !strings.Contains(err.Error(), "memory budget") {
			t.Errorf("rel %+v: finding %v, error %v; want the memory budget error", c.Rel, f, err)
		}
	}
}
