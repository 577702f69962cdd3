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

func TestFirstDiff(t *testing.T) {
	cols := []Column{{"ids", Int32, 2}, {"q", Uint8, 3}, {"w", FP32, 1}}
	base := NewOutput(cols, 1)
	base.PutInt32(0, 0, 0, 7)
	base.PutFP32(2, 0, 0, 0.5)
	for _, tc := range []struct {
		name   string
		change func(o *Output)
		where  string
		a, b   string // Hex (Dec) of a and b
	}{
		{"int32", func(o *Output) { o.PutInt32(0, 0, 1, -3) }, "ids[1] (int32)", "0x00000000 (0)", "0xfffffffd (-3)"},
		{"uint8", func(o *Output) { o.Row(1, 0)[2] = 0x7e }, "q[2] (uint8)", "0x00 (0)", "0x7e (126)"},
		{"fp32", func(o *Output) { o.PutFP32(2, 0, 0, -0.25) }, "w[0] (fp32)", "0x3f000000 (0.5)", "0xbe800000 (-0.25)"},
		{"first of two", func(o *Output) { o.PutFP32(2, 0, 0, 1); o.PutInt32(0, 0, 0, 8) }, "ids[0] (int32)", "0x00000007 (7)", "0x00000008 (8)"},
	} {
		o := NewOutput(cols, 1)
		o.CopyRow(0, base, 0)
		tc.change(o)
		a, b, ok := base.FirstDiff(0, o, 0)
		if !ok || a.Where() != tc.where || a.Hex+" ("+a.Dec+")" != tc.a || b.Hex+" ("+b.Dec+")" != tc.b || a.Where() != b.Where() {
			t.Errorf("%s: FirstDiff = %v %s %s (%s), %s (%s); want %s: %s, %s", tc.name, ok, a.Where(), a.Hex, a.Dec, b.Hex, b.Dec, tc.where, tc.a, tc.b)
		}
	}
	if _, _, ok := base.FirstDiff(0, base, 0); ok {
		t.Error("FirstDiff of a row and itself: ok, want the rows equal")
	}
}
