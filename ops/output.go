package ops

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
)

// Elem is the element type of an output column.
type Elem uint8

const (
	Int32 Elem = iota + 1 // little-endian two's complement (expert ids)
	Uint8                 // one byte (fp8 bits)
	FP32                  // little-endian IEEE binary32 bits (weights, scales)
)

// Size is the number of bytes of one element.
func (e Elem) Size() int {
	if e == Uint8 {
		return 1
	}
	return 4
}

func (e Elem) String() string {
	switch e {
	case Int32:
		return "int32"
	case Uint8:
		return "uint8"
	case FP32:
		return "fp32"
	}
	return fmt.Sprintf("elem(%d)", uint8(e))
}

// Column is one compared output of an op: Width elements of Elem per row.
type Column struct {
	Name  string // "expert_ids"
	Elem  Elem
	Width int
}

// Output is the rows of a batch, one byte slice per column: row r of
// column c is Data[c][r*w : (r+1)*w] with w = Columns[c].Width *
// Columns[c].Elem.Size(). Rows are compared bitwise.
type Output struct {
	Columns []Column
	Rows    int
	Data    [][]byte
}

// NewOutput returns a zeroed output of rows rows of cols.
func NewOutput(cols []Column, rows int) *Output {
	o := &Output{Columns: cols, Rows: rows, Data: make([][]byte, len(cols))}
	for c, col := range cols {
		o.Data[c] = make([]byte, rows*col.Width*col.Elem.Size())
	}
	return o
}

// Row returns the bytes of row r of column c.
func (o *Output) Row(c, r int) []byte {
	w := o.Columns[c].Width * o.Columns[c].Elem.Size()
	return o.Data[c][r*w : (r+1)*w]
}

// PutInt32 sets element i of row r of column c to v.
func (o *Output) PutInt32(c, r, i int, v int32) {
	binary.LittleEndian.PutUint32(o.Row(c, r)[4*i:], uint32(v))
}

// PutFP32 sets element i of row r of column c to the bits of v.
func (o *Output) PutFP32(c, r, i int, v float32) {
	binary.LittleEndian.PutUint32(o.Row(c, r)[4*i:], math.Float32bits(v))
}

// Int32 is element i of row r of column c.
func (o *Output) Int32(c, r, i int) int32 {
	return int32(binary.LittleEndian.Uint32(o.Row(c, r)[4*i:]))
}

// FP32 is element i of row r of column c.
func (o *Output) FP32(c, r, i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(o.Row(c, r)[4*i:]))
}

// SameRow reports whether row r of o and row q of p have the same bits in
// every column. The outputs must have the same columns.
func (o *Output) SameRow(r int, p *Output, q int) bool {
	for c := range o.Columns {
		if !bytes.Equal(o.Row(c, r), p.Row(c, q)) {
			return false
		}
	}
	return true
}

// Element is one element of an output row, located and written out.
type Element struct {
	Column string // the column's name
	Elem   Elem
	Index  int    // the element's index within its column's row
	Hex    string // its bits: 0x and 2 hex digits a byte, most significant first
	Dec    string // its value: a decimal integer, or an fp32 as %g
}

// Where is the element's place in words: "expert_ids[3] (int32)".
func (e Element) Where() string {
	return fmt.Sprintf("%s[%d] (%s)", e.Column, e.Index, e.Elem)
}

// FirstDiff returns the first element, columns in order and elements in
// order within a row, whose bits differ between row r of o (a) and row q
// of p (b); ok is false when the rows are equal. The outputs must have
// the same columns.
func (o *Output) FirstDiff(r int, p *Output, q int) (a, b Element, ok bool) {
	for c, col := range o.Columns {
		x, y := o.Row(c, r), p.Row(c, q)
		n := col.Elem.Size()
		for i := 0; i < col.Width; i++ {
			if !bytes.Equal(x[i*n:(i+1)*n], y[i*n:(i+1)*n]) {
				return o.element(c, r, i), p.element(c, q, i), true
			}
		}
	}
	return Element{}, Element{}, false
}

// element is element i of row r of column c.
func (o *Output) element(c, r, i int) Element {
	col := o.Columns[c]
	e := Element{Column: col.Name, Elem: col.Elem, Index: i}
	switch col.Elem {
	case Uint8:
		v := o.Row(c, r)[i]
		e.Hex, e.Dec = fmt.Sprintf("0x%02x", v), fmt.Sprint(v)
	case FP32:
		v := o.FP32(c, r, i)
		e.Hex, e.Dec = fmt.Sprintf("0x%08x", math.Float32bits(v)), strconv.FormatFloat(float64(v), 'g', -1, 32)
	default:
		v := o.Int32(c, r, i)
		e.Hex, e.Dec = fmt.Sprintf("0x%08x", uint32(v)), fmt.Sprint(v)
	}
	return e
}

// CopyRow copies row q of p into row r of o, every column. The outputs
// must have the same columns.
func (o *Output) CopyRow(r int, p *Output, q int) {
	for c := range o.Columns {
		copy(o.Row(c, r), p.Row(c, q))
	}
}

// Digest is a short hash of row r's bits, column by column: the class
// label of a row in a drift map.
func (o *Output) Digest(r int) string {
	h := sha256.New()
	for c := range o.Columns {
		h.Write(o.Row(c, r))
		h.Write([]byte{0xff})
	}
	return hex.EncodeToString(h.Sum(nil)[:6])
}

// SameColumns reports an error when o and p do not have the same columns
// and rows.
func (o *Output) SameColumns(p *Output) error {
	if len(o.Columns) != len(p.Columns) {
		return fmt.Errorf("outputs have %d and %d columns", len(o.Columns), len(p.Columns))
	}
	for c := range o.Columns {
		if o.Columns[c] != p.Columns[c] {
			return fmt.Errorf("output column %d: %+v against %+v", c, o.Columns[c], p.Columns[c])
		}
	}
	return nil
}
