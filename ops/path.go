package ops

import "github.com/bitparity/bitparity/spec"

// Path is what path parity compares of a batch of an op (CaseOp.Path):
// the batch's rows Rows (nil: every row), which another op, Next, also
// computes, from the input Of returns, as its rows in order.
type Path struct {
	// Rows are the rows compared, What says which (a prefill's last
	// position of each sequence); nil: every row.
	Rows []int
	What string
	// Next is the op of the other path ("" when the op has none);
	// FromWhat and NextWhat say what each path's run is.
	Next               spec.Op
	FromWhat, NextWhat string
	// Of returns the input of Next whose rows are Rows, in order.
	Of func() (In, error)
}
