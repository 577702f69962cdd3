package target

import (
	"strings"
	"testing"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// TestBatchInput: a batch is valid exactly when its one Input is a non-nil
// input of its op, and its row contract is read through that input.
func TestBatchInput(t *testing.T) {
	rms := &oracle.RMSNormInput{X: make([]float32, 3*4), W: make([]float32, 4), Rows: 3, Hidden: 4}
	for _, tc := range []struct {
		name       string
		b          Batch
		err        string // "" when valid
		rows, cols int
	}{
		{name: "rmsnorm", b: Batch{Op: spec.OpRMSNorm, Input: rms}, rows: 3, cols: 4},
		{name: "decode", b: Batch{Op: spec.OpAttnDecode, Input: &oracle.DecodeInput{K: make([][]float32, 2), Heads: 4, KVHeads: 2, HeadDim: 8}}, rows: 8, cols: 8},
		{name: "no input", b: Batch{Op: spec.OpRMSNorm}, err: "op rmsnorm has no rmsnorm input"},
		{name: "nil input", b: Batch{Op: spec.OpGEMM, Input: (*oracle.GEMMInput)(nil)}, err: "op gemm has no gemm input"},
		{name: "another op's input", b: Batch{Op: spec.OpGEMM, Input: rms}, err: "op gemm has no gemm input"},
		{name: "unknown op", b: Batch{Op: "conv", Input: rms}, err: `unknown op "conv"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.b.Validate()
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("Validate: %v, want an error containing %q", err, tc.err)
			}
			if got, got2 := tc.b.Rows(), tc.b.Cols(); got != tc.rows || got2 != tc.cols {
				t.Errorf("rows x cols %d x %d, want %d x %d", got, got2, tc.rows, tc.cols)
			}
		})
	}
}

// TestBatchWith: With keeps the op and dtypes, drops layout and source,
// and holds the new input.
func TestBatchWith(t *testing.T) {
	b := &Batch{Op: spec.OpRMSNorm, In: oracle.BF16, Out: oracle.FP16, Layout: Layout{PageSize: 16},
		Input: &oracle.RMSNormInput{X: make([]float32, 8), W: make([]float32, 4), Rows: 2, Hidden: 4}}
	in := &oracle.RMSNormInput{X: make([]float32, 4), W: make([]float32, 4), Rows: 1, Hidden: 4}
	nb := b.With(in)
	if nb.Op != b.Op || nb.In != b.In || nb.Out != b.Out || nb.Layout != (Layout{}) || nb.Source != nil {
		t.Fatalf("With: %+v", nb)
	}
	if nb.Input != in || nb.Rows() != 1 {
		t.Fatalf("With: input %v, %d rows; want the new input, 1 row", nb.Input, nb.Rows())
	}
}
