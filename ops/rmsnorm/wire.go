package rmsnorm

import (
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
)

// WireTensors is x [rows, hidden] and w [hidden], with the eps.
func (Op) WireTensors(in ops.In) (float32, []ops.WireTensor, error) {
	r := in.(*oracle.RMSNormInput)
	return r.Eps, []ops.WireTensor{
		ops.FloatTensor("x", []int{r.Rows, r.Hidden}, r.X),
		ops.FloatTensor("w", []int{r.Hidden}, r.W),
	}, nil
}

// FromWire reads x, w and the eps.
func (Op) FromWire(w ops.Wire, out oracle.DType) (ops.In, error) {
	x, xs, err := w.Floats("x", 2)
	if err != nil {
		return nil, err
	}
	wv, _, err := w.Floats("w", 1)
	if err != nil {
		return nil, err
	}
	eps, err := w.Eps()
	if err != nil {
		return nil, err
	}
	return &oracle.RMSNormInput{X: x, W: wv, Rows: xs[0], Hidden: xs[1], Eps: eps, Out: out}, nil
}
