package moeroute

import "github.com/bitparity/bitparity/ops"

var _ ops.WireOp = Op{}

// Wire is a batch's request: logits [tokens, experts] in the batch's
// dtype; fields experts and top_k.
func (Op) Wire(in ops.Input) (ops.WireBatch, error) { return ops.RowsWire(Name, in, "logits") }

// CheckPolicy returns ParsePolicy's error.
func (Op) CheckPolicy(policy string) error {
	_, err := ParsePolicy(policy)
	return err
}
