package inputs

import (
	"reflect"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestViewAndFirstItems: the batches a drift map shares instead of copying
// hold the same values as gather's copies, for every op: View(b, ids) is
// gather(b, ids), and FirstItems(gather(b, ids), n) is gather(b, ids[:n]).
func TestViewAndFirstItems(t *testing.T) {
	shapes := map[spec.Op]spec.Shape{
		spec.OpRMSNorm:     {Rows: 3, Hidden: 40},
		spec.OpGEMM:        {Rows: 3, Hidden: 40, N: 8},
		spec.OpLogProb:     {Rows: 3, Vocab: 70},
		spec.OpAttnPrefill: {Seqs: 3, SeqLen: 5, Heads: 2, KVHeads: 1, HeadDim: 8},
		spec.OpAttnDecode:  {Rows: 3, KV: 7, Heads: 2, KVHeads: 1, HeadDim: 8},
	}
	ids := []int{2, 0, 2, 1, 1, 0, 2}
	for op, sh := range shapes {
		t.Run(string(op), func(t *testing.T) {
			c := spec.Case{Version: spec.CaseVersion, GenVersion: spec.GeneratorVersion, Op: op, Relation: spec.RelBatchInvariance,
				Shape: sh, In: spec.BF16, Out: spec.BF16, Dist: spec.DistNormal, Seed: 7}
			if op == spec.OpRMSNorm {
				c.Eps = 1e-6
			}
			if op == spec.OpLogProb {
				c.Out = spec.FP32
			}
			b, err := Of(c)
			if err != nil {
				t.Fatal(err)
			}
			want, err := gather(b, ids)
			if err != nil {
				t.Fatal(err)
			}
			got, err := View(b, ids)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("View(b, %v) differs from gather's copy", ids)
			}
			for n := 0; n <= len(ids); n++ {
				first, err := FirstItems(want, n)
				if err != nil {
					t.Fatal(err)
				}
				copied, err := gather(b, ids[:n])
				if err != nil {
					t.Fatal(err)
				}
				if first.Items() != n || first.Rows() != copied.Rows() || !reflect.DeepEqual(first, copied) {
					t.Errorf("FirstItems(batch, %d): %d items, %d rows; differs from gather of the first %d ids", n, first.Items(), first.Rows(), n)
				}
			}
			if _, err := FirstItems(want, len(ids)+1); err == nil {
				t.Errorf("firstItems beyond the batch: no error")
			}
			if _, err := View(b, []int{3}); err == nil {
				t.Errorf("view of item 3 of a batch of 3: no error")
			}
		})
	}
}
