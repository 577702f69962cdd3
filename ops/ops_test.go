package ops

import (
	"testing"

	"github.com/bitparity/bitparity/oracle"
)

func TestRowsItems(t *testing.T) {
	b, err := ExplicitRows(Shape{"hidden": 2}, oracle.FP32, 2, []float32{1, 2, 3, 4, 5, 6})
	if err != nil {
		t.Fatal(err)
	}
	g, err := b.Gather([]int{2, 0, 2})
	if err != nil || g.Items() != 3 || g.(*Rows).Row(0)[0] != 5 || g.(*Rows).Row(1)[1] != 2 {
		t.Fatalf("Gather: %v %v", g, err)
	}
	if _, err := b.Gather([]int{3}); err == nil {
		t.Error("Gather past the batch: no error")
	}
	from, _ := ExplicitRows(Shape{"hidden": 2}, oracle.FP32, 2, []float32{7, 8})
	r, err := b.Replace([]int{1}, from)
	if err != nil || r.(*Rows).Row(1)[0] != 7 || b.Row(1)[0] != 3 {
		t.Errorf("Replace: %v %v, the original changed: %v", r, err, b.Row(1)[0] != 3)
	}
	if _, err := ExplicitRows(Shape{}, oracle.FP32, 2, []float32{1, 2, 3}); err == nil {
		t.Error("values that are not whole rows: no error")
	}
}

func TestOutputRows(t *testing.T) {
	cols := []Column{{"ids", Int32, 2}, {"q", Uint8, 3}}
	o := NewOutput(cols, 2)
	o.PutInt32(0, 1, 1, -5)
	if o.Int32(0, 1, 1) != -5 || o.SameRow(0, o, 1) || o.Digest(0) == o.Digest(1) {
		t.Error("row 1 differs from row 0 in its ids")
	}
	o.Row(1, 0)[2] = 1
	p := NewOutput(cols, 2)
	copy(p.Data[0], o.Data[0])
	if p.SameRow(0, o, 0) {
		t.Error("a row that differs in its uint8 column compares equal")
	}
	if err := o.SameColumns(NewOutput(cols[:1], 2)); err == nil {
		t.Error("outputs of other columns: no error")
	}
}
