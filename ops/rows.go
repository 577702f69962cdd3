package ops

import (
	"fmt"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/values"
)

// Rows is the Input of an op whose item is one row of Cols values of
// DType (held as float32, each exactly a DType value): item i is
// Values[i*Cols : (i+1)*Cols].
type Rows struct {
	Shape  Shape
	DType  oracle.DType
	Cols   int
	Values []float32
}

// Items is the number of rows.
func (b *Rows) Items() int {
	if b.Cols == 0 {
		return 0
	}
	return len(b.Values) / b.Cols
}

// Row returns item i's values.
func (b *Rows) Row(i int) []float32 { return b.Values[i*b.Cols : (i+1)*b.Cols] }

// Gather returns the rows idx, in that order.
func (b *Rows) Gather(idx []int) (Input, error) {
	out := &Rows{Shape: b.Shape, DType: b.DType, Cols: b.Cols, Values: make([]float32, 0, len(idx)*b.Cols)}
	for _, i := range idx {
		if i < 0 || i >= b.Items() {
			return nil, fmt.Errorf("gather: item %d of a batch of %d", i, b.Items())
		}
		out.Values = append(out.Values, b.Row(i)...)
	}
	return out, nil
}

// Replace returns a copy of b whose row at[i] is row i of from.
func (b *Rows) Replace(at []int, from Input) (Input, error) {
	f, ok := from.(*Rows)
	if !ok || f.Cols != b.Cols || f.DType != b.DType {
		return nil, fmt.Errorf("replace: the rows come from another kind of batch (%T)", from)
	}
	if len(at) > f.Items() {
		return nil, fmt.Errorf("replace: %d rows to replace, %d given", len(at), f.Items())
	}
	out := &Rows{Shape: b.Shape, DType: b.DType, Cols: b.Cols, Values: append([]float32(nil), b.Values...)}
	for i, r := range at {
		if r < 0 || r >= b.Items() {
			return nil, fmt.Errorf("replace: item %d of a batch of %d", r, b.Items())
		}
		copy(out.Row(r), f.Row(i))
	}
	return out, nil
}

// SeededRows returns the batch of rows whose row i is the row of key
// keys[i] of tensor id drawn by package values (generator version 2) with
// σ = 1: a pure function of (d.Seed, tensor, key, column). d.Dist is one of
// values' distributions.
func SeededRows(d Draw, tensor uint64, cols int, keys []uint64) (*Rows, error) {
	t := values.Tensor{Seed: d.Seed, ID: tensor, Dist: spec.Dist(d.Dist), DType: d.DType, Scale: 1}
	b := &Rows{Shape: d.Shape, DType: d.DType, Cols: cols, Values: make([]float32, len(keys)*cols)}
	for i, k := range keys {
		if err := t.Row(b.Row(i), k); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// SeededRowsSensitive is SeededRows of d, except for a draw of
// distribution sensitive (an op's own): the rows are drawn normal, then
// sensitize moves each row, by the row's key, onto the op's decision
// boundary.
func SeededRowsSensitive(d Draw, tensor uint64, cols int, keys []uint64, sensitive string, sensitize func(row []float32, key uint64) error) (*Rows, error) {
	if d.Dist != sensitive {
		return SeededRows(d, tensor, cols, keys)
	}
	d.Dist = string(spec.DistNormal)
	b, err := SeededRows(d, tensor, cols, keys)
	if err != nil {
		return nil, err
	}
	for i, key := range keys {
		if err := sensitize(b.Row(i), key); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// ExplicitRows checks that values are whole rows of cols values, each
// exactly a dt value, and returns them as a batch.
func ExplicitRows(s Shape, dt oracle.DType, cols int, vals []float32) (*Rows, error) {
	if cols < 1 || len(vals) == 0 || len(vals)%cols != 0 {
		return nil, fmt.Errorf("explicit data: %d values are not whole rows of %d", len(vals), cols)
	}
	for i, v := range vals {
		if oracle.Round(dt, v) != v && v == v {
			return nil, fmt.Errorf("explicit data: value %d (%g) is not a %s value", i, v, dt)
		}
	}
	return &Rows{Shape: s, DType: dt, Cols: cols, Values: append([]float32(nil), vals...)}, nil
}
