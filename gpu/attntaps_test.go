//go:build cuda

package gpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestAttentionTaps: the attention kernels' fp32 taps are the oracle
// targets' taps bit for bit (target.RunOracle: the fp32 outputs before
// rounding, TapCols = Cols, none for fp32 outputs) for prefill and decode
// under every schedule the GPU targets run (tile 64, the tile-48 model,
// the decode splits model's 4 splits) and a few others; fetched to the host
// and compared on the device; and a run without taps (TransformerOps')
// gives the same output bits and no taps.
func TestAttentionTaps(t *testing.T) {
	d := device(t)
	prefill := func(seqs, seqLen, heads, kvHeads, headDim int) spec.Shape {
		return spec.Shape{Seqs: seqs, SeqLen: seqLen, Heads: heads, KVHeads: kvHeads, HeadDim: headDim}
	}
	decode := func(heads, kvHeads, headDim int, lens ...int) spec.Shape {
		return spec.Shape{Rows: len(lens), Heads: heads, KVHeads: kvHeads, HeadDim: headDim, KVLens: lens}
	}
	splits4 := oracle.AttentionSchedule{Tile: 64, Splits: 4} // target.DecodeSplitsByBatch below 132 rows
	tests := []struct {
		op    spec.Op
		shape spec.Shape
		s     oracle.AttentionSchedule
		rows  []int // nil: all
	}{
		{spec.OpAttnPrefill, prefill(2, 100, 4, 2, 16), target.OracleAttentionSchedule, nil},
		{spec.OpAttnPrefill, prefill(2, 100, 4, 2, 16), target.Tile48, nil},
		{spec.OpAttnPrefill, prefill(1, 130, 2, 1, 64), target.Tile48, []int{259, 0, 97, 98}},
		{spec.OpAttnPrefill, prefill(3, 49, 2, 2, 1), oracle.AttentionSchedule{Tile: 1, Splits: 1}, nil},
		{spec.OpAttnPrefill, prefill(1, 70, 4, 1, 128), target.OracleAttentionSchedule, []int{279, 3}},
		{spec.OpAttnDecode, decode(4, 2, 16, 1, 49, 200), target.OracleAttentionSchedule, nil},
		{spec.OpAttnDecode, decode(4, 2, 16, 1, 49, 200), splits4, nil},
		{spec.OpAttnDecode, decode(8, 2, 64, 130, 7, 512), splits4, []int{23, 0, 9}},
		{spec.OpAttnDecode, decode(2, 1, 8, 300, 65), oracle.AttentionSchedule{Tile: 16, Splits: 3}, nil},
		{spec.OpAttnDecode, decode(2, 2, 1, 2, 3), oracle.AttentionSchedule{Tile: 1, Splits: 2}, nil},
	}
	for i, tt := range tests {
		for _, out := range []spec.DType{spec.BF16, spec.FP16, spec.FP32} {
			name := fmt.Sprintf("%d-%s-%s-%s", i, tt.op, tt.s, out)
			t.Run(name, func(t *testing.T) {
				c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: tt.op, In: spec.BF16, Out: out,
					Dist: spec.DistNormal, Seed: uint64(31 + i), Shape: tt.shape}
				b, err := inputs.Of(c)
				if err != nil {
					t.Fatal(err)
				}
				want, err := target.RunOracle(b, tt.s, tt.rows)
				if err != nil {
					t.Fatal(err)
				}
				wantCols := b.Cols()
				if b.Out == oracle.FP32 {
					wantCols = 0
				}
				if want.TapCols != wantCols {
					t.Fatalf("the oracle target gives %d tap columns, the test expects %d (did target.RunOracle change?)", want.TapCols, wantCols)
				}
				got, err := d.Run(b, tt.s, tt.rows)
				if err != nil {
					t.Fatal(err)
				}
				defer got.Release()
				if got.TapCols != want.TapCols || (got.DeviceTaps != nil) != (wantCols > 0) {
					t.Fatalf("gpu taps: %d columns (on the device: %v), oracle %d", got.TapCols, got.DeviceTaps != nil, want.TapCols)
				}
				if got.DeviceTaps != nil { // before ToHost: the device compare with the oracle's taps
					up, err := d.Upload(&target.Output{Rows: want.Rows, Cols: want.TapCols, DType: oracle.FP32, Values: want.Taps})
					if err != nil {
						t.Fatal(err)
					}
					all := spec.Iota(len(want.Rows))
					diffs, err := got.DeviceTaps.CompareRows(up, all, all, oracle.FP32)
					up.Release()
					if err != nil {
						t.Fatal(err)
					}
					if len(diffs) != 0 {
						t.Fatalf("device compare of the taps: %d rows differ from the oracle's, first %+v", len(diffs), diffs[0])
					}
				}
				if err := got.ToHost(); err != nil {
					t.Fatal(err)
				}
				if j, ok := bitsEqual(b.Out, got.Values, want.Values); !ok {
					t.Fatalf("output %d: gpu %s oracle %s", j, hexAt(b.Out, got.Values, j), hexAt(b.Out, want.Values, j))
				}
				if j, ok := bitsEqual(oracle.FP32, got.Taps, want.Taps); !ok {
					t.Fatalf("tap %d of %d: gpu %s oracle %s", j, len(want.Taps), hexAt(oracle.FP32, got.Taps, j), hexAt(oracle.FP32, want.Taps, j))
				}
				plain, err := d.run(b, tt.s, tt.rows, false)
				if err != nil {
					t.Fatal(err)
				}
				defer plain.Release()
				if plain.DeviceTaps != nil || plain.TapCols != 0 {
					t.Fatalf("a run without taps has %d tap columns", plain.TapCols)
				}
				if err := plain.ToHost(); err != nil {
					t.Fatal(err)
				}
				if j, ok := bitsEqual(b.Out, plain.Values, got.Values); !ok {
					t.Fatalf("output %d without taps %s, with taps %s", j, hexAt(b.Out, plain.Values, j), hexAt(b.Out, got.Values, j))
				}
			})
		}
	}
}

// hexAt is element j of vs in hex, or "none" past its end.
func hexAt(dt oracle.DType, vs []float32, j int) string {
	if j < 0 || j >= len(vs) {
		return fmt.Sprintf("none (%d values)", len(vs))
	}
	if dt == oracle.FP32 {
		return fmt.Sprintf("%08x", math.Float32bits(vs[j]))
	}
	return oracle.Hex(dt, vs[j])
}
