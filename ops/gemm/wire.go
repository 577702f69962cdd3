package gemm

import (
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
)

// WireTensors is x [m, k] and w [k, n].
func (Op) WireTensors(in ops.In) (float32, []ops.WireTensor, error) {
	g := in.(*oracle.GEMMInput)
	return 0, []ops.WireTensor{
		ops.FloatTensor("x", []int{g.M, g.K}, g.X),
		ops.FloatTensor("w", []int{g.K, g.N}, g.W),
	}, nil
}

// FromWire reads x and w.
func (Op) FromWire(w ops.Wire, out oracle.DType) (ops.In, error) {
	r := ops.ReadWire(w)
	x, xs := r.Floats("x", 2)
	wv, ws := r.Floats("w", 2)
	if err := r.Err(); err != nil {
		return nil, err
	}
	return &oracle.GEMMInput{X: x, W: wv, M: xs[0], K: xs[1], N: ws[1], Out: out}, nil
}
