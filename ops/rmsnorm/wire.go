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
	r := ops.ReadWire(w)
	x, xs := r.Floats("x", 2)
	wv, _ := r.Floats("w", 1)
	eps := r.Eps()
	if err := r.Err(); err != nil {
		return nil, err
	}
	return &oracle.RMSNormInput{X: x, W: wv, Rows: xs[0], Hidden: xs[1], Eps: eps, Out: out}, nil
}
