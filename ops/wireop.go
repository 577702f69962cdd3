package ops

import (
	"fmt"

	"github.com/bitparity/bitparity/oracle"
)

// WireOp is an Op the process protocol carries (docs/protocol.md, "Ops of
// the op packages"): its batch travels as a request frame whose float
// tensors are in DType, with one decimal field per dimension of Shape,
// and the reply holds one tensor per output column (Columns), named as
// the column, of its element type.
type WireOp interface {
	Op
	// Wire is in's request: its dtype, sizes and tensors, in order; an
	// error names a batch that is not the op's.
	Wire(in Input) (WireBatch, error)
	// CheckPolicy returns an error naming a policy Reference does not
	// read (an adapter's declared schedule).
	CheckPolicy(policy string) error
}

// WireBatch is one batch of an op package's op in the process protocol.
type WireBatch struct {
	DType   oracle.DType // the float tensors' dtype (the request's "in")
	Shape   Shape        // the op's sizes, one request field each
	Items   int          // the batch's items: the rows of every output column
	Tensors []WireTensor
}

// RowsWire is the WireBatch of a batch of rows (*Rows): one float tensor
// name [items, Cols] of its values.
func RowsWire(op string, in Input, name string) (WireBatch, error) {
	b, ok := in.(*Rows)
	if !ok {
		return WireBatch{}, fmt.Errorf("%s: a batch of %T, want rows (*ops.Rows)", op, in)
	}
	return WireBatch{DType: b.DType, Shape: b.Shape, Items: b.Items(),
		Tensors: []WireTensor{FloatTensor(name, []int{b.Items(), b.Cols}, b.Values)}}, nil
}
