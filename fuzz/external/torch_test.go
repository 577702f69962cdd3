package external

import (
	"fmt"
	"math"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestTorchAdapter checks adapters/torch_ops.py with BITPARITY_TEST_TORCH=1
// (and a Python with torch; CI has none, the H200 run uses it): every op
// answers the right rows in the right dtype and computes the right op: each
// value within 3% of its row's largest magnitude of the oracle's (a
// transposed head, a wrong GQA mapping or a missing mask is off by the
// order of the values themselves; bf16 arithmetic all along stays well
// inside). The ulp distances are logged, not asserted: the H200 run
// measures them against the declared bounds.
func TestTorchAdapter(t *testing.T) {
	torchPython(t)
	tests := []struct {
		op   spec.Op
		args []string
		in   spec.DType
		sh   spec.Shape
	}{
		{spec.OpRMSNorm, nil, spec.BF16, spec.Shape{}},
		{spec.OpGEMM, nil, spec.BF16, spec.Shape{}},
		{spec.OpLogProb, nil, spec.BF16, spec.Shape{}},
		{spec.OpLogProb, []string{"--logprob-dtype", "native"}, spec.BF16, spec.Shape{}},
		{spec.OpAttnPrefill, nil, spec.BF16, spec.Shape{}},
		{spec.OpAttnPrefill, nil, spec.FP32, spec.Shape{}},
		{spec.OpAttnDecode, nil, spec.BF16, spec.Shape{}},
		{spec.OpAttnDecode, []string{"--decode-mask", "always"}, spec.FP32, spec.Shape{Rows: 3, KV: 70, Heads: 4, KVHeads: 2, HeadDim: 16}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.op, tt.args, tt.in), func(t *testing.T) {
			t.Parallel()
			tg, err := New(adapterCmd(t, "adapters/torch_ops.py", append([]string{string(tt.op), "--device", "cpu"}, tt.args...)...), tt.op, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			c := testCase(tt.op, tt.in, tt.in, spec.DistNormal, 9)
			if tt.sh.Rows != 0 {
				c.Shape = tt.sh
			}
			b, err := inputs.Of(c)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := target.Lookup(target.OracleName(tt.op))
			if err != nil {
				t.Fatal(err)
			}
			rows := []int{b.Rows() - 1, 0}
			for _, sel := range [][]int{nil, rows} {
				got, want := run(t, tg, b, sel), run(t, ref, b, sel)
				n, ulps, first := diff(got.DType, got, want)
				t.Logf("%s (%s): %d of %d values differ from the oracle, max %d ulps (%s); first %s",
					tg.Info().Name, tg.Info().Models, n, len(got.Values), ulps, got.DType, first)
				if tt.args != nil && tt.args[0] == "--logprob-dtype" {
					continue // bf16 log-probs: off by design
				}
				if i, rel := worstRelative(got, want); rel > 0.03 {
					t.Fatalf("row %d col %d: %v vs the oracle's %v, %.3g of the row's scale: not the same op",
						got.Rows[i/got.Cols], i%got.Cols, got.Values[i], want.Values[i], rel)
				}
			}
		})
	}
}

// worstRelative returns the value whose distance to the oracle is the
// largest relative to its row's largest oracle magnitude, and that ratio.
func worstRelative(got, want *target.Output) (int, float64) {
	worst, at := 0.0, 0
	for r := range got.Rows {
		scale := 0.0
		for c := 0; c < got.Cols; c++ {
			scale = max(scale, math.Abs(float64(want.Values[r*got.Cols+c])))
		}
		for c := 0; c < got.Cols; c++ {
			i := r*got.Cols + c
			d := math.Abs(float64(got.Values[i]) - float64(want.Values[i]))
			if d != d || d/max(scale, 1e-30) > worst {
				worst, at = d/max(scale, 1e-30), i
				if d != d {
					return i, math.Inf(1)
				}
			}
		}
	}
	return at, worst
}

// TestTorchChunk checks, with BITPARITY_TEST_TORCH=1, that the torch
// adapter reads the layout (its hello) and prefills a chunk past a cached
// prefix as the same op: every row at a position >= chunk_from within 3%
// of its row's scale of the oracle's whole-prompt row (the oracle's rows
// are the same whatever the layout), for chunks from 1, 5 and the last
// position.
func TestTorchChunk(t *testing.T) {
	torchPython(t)
	tg, err := New(adapterCmd(t, "adapters/torch_ops.py", "attn_prefill", "--device", "cpu"), spec.OpAttnPrefill, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if !tg.Info().Layouts {
		t.Fatalf("the torch prefill does not say it reads the layout: hello %v", tg.Hello())
	}
	b, err := inputs.Of(testCase(spec.OpAttnPrefill, spec.BF16, spec.BF16, spec.DistNormal, 9))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := target.Lookup(target.OracleName(spec.OpAttnPrefill))
	if err != nil {
		t.Fatal(err)
	}
	p := b.Input.(*oracle.PrefillInput)
	for _, from := range []int{1, 5, p.SeqLen - 1} {
		var sel []int // the chunk's rows
		for s := range p.Seqs {
			for r := (s*p.SeqLen + from) * p.Heads; r < (s+1)*p.SeqLen*p.Heads; r++ {
				sel = append(sel, r)
			}
		}
		g := *b
		g.Layout = target.Layout{ChunkFrom: from}
		got, want := run(t, tg, &g, sel), run(t, ref, b, sel)
		if i, rel := worstRelative(got, want); rel > 0.03 {
			t.Fatalf("chunk from %d: row %d col %d: %v vs the oracle's %v, %.3g of the row's scale",
				from, got.Rows[i/got.Cols], i%got.Cols, got.Values[i], want.Values[i], rel)
		}
	}
}
