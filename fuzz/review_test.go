package fuzz

import (
	"context"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

func init() {
	// test-short-prefill: the prefill oracle, but its output holds one
	// value fewer than its rows need; test-narrow-prefill: it claims one
	// column fewer than the batch has; test-short-taps: it claims one tap
	// column more than its taps hold (garbage from broken targets).
	for name, spoil := range map[string]func(*Output){
		"test-short-prefill":  func(o *Output) { o.Values = o.Values[:len(o.Values)-1] },
		"test-narrow-prefill": func(o *Output) { o.Cols--; o.Values = o.Values[:len(o.Rows)*o.Cols] },
		"test-short-taps":     func(o *Output) { o.TapCols++ },
	} {
		t := &testTarget{info: Info{Name: name, Op: spec.OpAttnPrefill, Device: "test"},
			run: func(_ context.Context, b *Batch, rows []int) (*Output, error) {
				o, err := oracleRun(b, rows)
				if err != nil {
					return nil, err
				}
				spoil(o)
				return o, nil
			}}
		Register(name, func() (Target, error) { return t, nil })
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
