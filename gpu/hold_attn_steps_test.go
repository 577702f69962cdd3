package gpu

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestAttnStepRows: a step of a held attention batch of a GPU target is
// the held batch's rows of the step's items (itemRows), each row computed
// on its own: the oracle's rows so selected from the held batch are, bit
// for bit, its rows of the gathered batch; and the batch the target's
// policy sees (attnStepBatch) is the gathered batch, its layout kept.
func TestAttnStepRows(t *testing.T) {
	lens := []int{40, 1, 16, 17, 3}
	for _, c := range []spec.Case{
		{Version: spec.CaseVersion, Op: spec.OpAttnDecode, Relation: spec.RelOracleParity,
			Shape: spec.Shape{Rows: len(lens), KV: lens[0], KVLens: lens, Heads: 4, KVHeads: 2, HeadDim: 8},
			In:    spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 3, GenVersion: spec.GeneratorVersion},
		{Version: spec.CaseVersion, Op: spec.OpAttnPrefill, Relation: spec.RelOracleParity,
			Shape: spec.Shape{Seqs: 4, SeqLen: 9, Heads: 4, KVHeads: 2, HeadDim: 8},
			In:    spec.BF16, Out: spec.FP32, Dist: spec.DistNormal, Seed: 3, GenVersion: spec.GeneratorVersion},
	} {
		b, err := inputs.Of(c)
		if err != nil {
			t.Fatal(err)
		}
		b.Layout = target.Layout{PageSize: 3}
		if c.Op == spec.OpAttnPrefill {
			b.Layout = target.Layout{ChunkFrom: 2}
		}
		o, err := target.Lookup("oracle-" + string(c.Op))
		if err != nil {
			t.Fatal(err)
		}
		n := b.Items()
		for _, ids := range [][]int{{0}, {0, 1}, spec.Iota(n), {n - 1, 0, 2, 2}, {3}} {
			what := fmt.Sprintf("%s, items %v", c.Op, ids)
			g, err := attnStepBatch(b, ids)
			if err != nil {
				t.Fatal(err)
			}
			w, err := inputs.Gather(b, ids)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g.Input, w.Input) || g.Layout != b.Layout || g.Op != b.Op || g.In != b.In || g.Out != b.Out {
				t.Errorf("%s: the policy's batch is not the gathered batch with the held layout", what)
			}
			got, err := o.Run(context.Background(), b, itemRows(ids, b.RowsPerItem()))
			if err != nil {
				t.Fatal(err)
			}
			want, err := o.Run(context.Background(), w, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !equalBits(got.Values, want.Values) || !equalBits(got.Taps, want.Taps) || len(got.Values) != w.Rows()*w.Cols() {
				t.Errorf("%s: the held rows of the items give other bits than the gathered batch", what)
			}
		}
		if _, err := attnStepBatch(b, []int{n}); err == nil {
			t.Errorf("%s: item %d of %d: no error", c.Op, n, n)
		}
	}
}
