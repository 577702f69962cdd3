package moerouter

import (
	"fmt"

	"github.com/bitparity/bitparity/ops"
)

var _ ops.WireOp = Op{}

// Wire is a batch's request: x [tokens, hidden] and the router weights w
// [hidden, experts], both in the batch's dtype (w's values are bf16,
// exact in fp32); fields hidden, experts and top_k.
func (Op) Wire(in ops.Input) (ops.WireBatch, error) {
	b, ok := in.(*Batch)
	if !ok {
		return ops.WireBatch{}, fmt.Errorf("%s: a batch of %T, want tokens and router weights (*moerouter.Batch)", Name, in)
	}
	w, err := ops.RowsWire(Name, b.Rows, "x")
	if err != nil {
		return w, err
	}
	h, e := b.Shape[DimHidden], len(b.W)/max(b.Shape[DimHidden], 1)
	if h*e != len(b.W) {
		return w, fmt.Errorf("%s: %d router weights are not hidden (%d) x experts", Name, len(b.W), h)
	}
	w.Tensors = append(w.Tensors, ops.FloatTensor("w", []int{h, e}, b.W))
	return w, nil
}

// CheckPolicy returns ParsePolicy's error.
func (Op) CheckPolicy(policy string) error {
	_, err := ParsePolicy(policy)
	return err
}
