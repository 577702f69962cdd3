package spec

import (
	"slices"
	"testing"
)

// TestOpTable: every op has one record; a single op's batch dimension is
// the first dimension it reads, its functions are set, and the dimension
// accessors read and write the field they name.
func TestOpTable(t *testing.T) {
	seen := map[Op]bool{}
	for _, o := range opTable {
		if seen[o.Op] {
			t.Errorf("%s: two records", o.Op)
		}
		seen[o.Op] = true
		if len(o.Reads) == 0 || o.Reads[0].Name != o.Batch.Name {
			t.Errorf("%s: reads %v, want the batch dimension %s first", o.Op, o.Reads, o.Batch.Name)
		}
		single := slices.Contains(Ops, o.Op)
		if single == o.Composite {
			t.Errorf("%s: composite %v, but Ops lists it: %v", o.Op, o.Composite, single)
		}
		if single && (o.Elements == nil || o.FMAs == nil || o.Cols == nil || o.RowsPerItem == nil || o.Tensors == nil || len(o.Fillers) == 0) {
			t.Errorf("%s: a single op's record lacks a function or its fillers", o.Op)
		}
	}
	for _, op := range append(slices.Clone(Ops), OpTransformer, OpModel) {
		if _, ok := op.Info(); !ok {
			t.Errorf("%s: no record", op)
		}
	}
	if _, ok := Op("conv").Info(); ok {
		t.Error("an unknown op has a record")
	}
	for i, d := range Dims {
		var s Shape
		d.Set(&s, 100+i)
		for j, e := range Dims {
			if want := map[bool]int{true: 100 + i, false: 0}[i == j]; e.Get(s) != want {
				t.Errorf("Set %s then Get %s = %d, want %d", d.Name, e.Name, e.Get(s), want)
			}
		}
	}
}

// TestCaseCounts: the batch dimension, elements and per-item counts of
// one case of each op, by hand.
func TestCaseCounts(t *testing.T) {
	for _, tc := range []struct {
		c                               Case
		rows, elements, cols, rpi, fmas int
	}{
		// (3 + 5 batch)·64 + 64 weights
		{Case{Op: OpRMSNorm, Shape: Shape{Rows: 3, Hidden: 64}, Rel: RelParams{Batch: 5}}, 3, 8*64 + 64, 64, 1, 2 * 64},
		// (2 + 4 pad)·16 + 16·8 weights; the output is not counted
		{Case{Op: OpGEMM, Shape: Shape{Rows: 2, Hidden: 16, N: 8}, Rel: RelParams{Pad: 4}}, 2, 6*16 + 128, 8, 1, 16 * 8},
		// 4·(10 logits + 1 target)
		{Case{Op: OpLogProb, Shape: Shape{Rows: 4, Vocab: 10}}, 4, 44, 1, 1, 2 * 10},
		// 2 sequences of 5 tokens, each (4 + 2·2)·8
		{Case{Op: OpAttnPrefill, Shape: Shape{Seqs: 2, SeqLen: 5, Heads: 4, KVHeads: 2, HeadDim: 8}}, 2, 2 * 5 * 64, 8, 20, 5 * 6 * 4 * 8},
		// 3 requests, each (4 + 2·49·2)·8 at the longest cache
		{Case{Op: OpAttnDecode, Shape: Shape{Rows: 3, KV: 16, KVLens: []int{48, 49}, Heads: 4, KVHeads: 2, HeadDim: 8}}, 3, 3 * (4 + 196) * 8, 8, 4, 2 * 4 * 49 * 8},
	} {
		o, _ := tc.c.Op.Info()
		if got := tc.c.BatchRows(); got != tc.rows {
			t.Errorf("%s: BatchRows %d, want %d", tc.c.Op, got, tc.rows)
		}
		if got := tc.c.Elements(); got != tc.elements {
			t.Errorf("%s: Elements %d, want %d", tc.c.Op, got, tc.elements)
		}
		if got := o.Cols(tc.c.Shape); got != tc.cols {
			t.Errorf("%s: Cols %d, want %d", tc.c.Op, got, tc.cols)
		}
		if got := o.RowsPerItem(tc.c.Shape); got != tc.rpi {
			t.Errorf("%s: RowsPerItem %d, want %d", tc.c.Op, got, tc.rpi)
		}
		if got := o.FMAs(tc.c.Shape); got != tc.fmas {
			t.Errorf("%s: FMAs %d, want %d", tc.c.Op, got, tc.fmas)
		}
		c := tc.c
		c.SetBatchRows(7)
		if c.BatchRows() != 7 || o.Batch.Get(c.Shape) != 7 {
			t.Errorf("%s: SetBatchRows(7) gave %d", c.Op, c.BatchRows())
		}
	}
}

func TestSatMulSatAdd(t *testing.T) {
	for _, tc := range []struct {
		got, want int
	}{
		{SatMul(3, 5, 7), 105},
		{SatMul(), 1},
		{SatMul(1<<40, 1<<40), SatLimit},
		{SatMul(4, -1), SatLimit},
		{SatMul(-1, 0), SatLimit},
		{SatMul(1<<40, 0, 1<<40), 0},
		{SatAdd(1, 2, 3), 6},
		{SatAdd(SatLimit, 1), SatLimit},
		{SatAdd(1, -2), SatLimit},
	} {
		if tc.got != tc.want {
			t.Errorf("got %d, want %d", tc.got, tc.want)
		}
	}
}

func TestFiller(t *testing.T) {
	for _, f := range Fillers {
		if got, err := ParseFiller(string(f)); err != nil || got != f || !f.Valid() {
			t.Errorf("%s: ParseFiller %q, %v", f, got, err)
		}
	}
	if _, err := ParseFiller("ones"); err == nil || Filler("").Valid() {
		t.Error("an unknown filler parsed")
	}
}
