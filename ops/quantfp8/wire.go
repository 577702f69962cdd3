package quantfp8

import "github.com/bitparity/bitparity/ops"

var _ ops.WireOp = Op{}

// Wire is a batch's request: x [tokens, hidden] in the batch's dtype;
// field hidden.
func (Op) Wire(in ops.Input) (ops.WireBatch, error) { return ops.RowsWire(Name, in, "x") }

// CheckPolicy returns ParsePolicy's error.
func (Op) CheckPolicy(policy string) error {
	_, err := ParsePolicy(policy)
	return err
}
