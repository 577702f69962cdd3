package gemm

import (
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// FromData reads tensors x (rows·K values) and w (K·N).
func (Op) FromData(c spec.Case, out oracle.DType, e ops.Explicit) (ops.In, error) {
	s := c.Shape
	if err := e.Budget(spec.SatMul(s.Rows, s.Hidden), spec.SatMul(s.Hidden, s.N)); err != nil {
		return nil, err
	}
	g := &oracle.GEMMInput{M: s.Rows, K: s.Hidden, N: s.N, Out: out}
	var err error
	if g.X, err = e.Tensor("x", s.Rows*s.Hidden); err != nil {
		return nil, err
	}
	if g.W, err = e.Tensor("w", s.Hidden*s.N); err != nil {
		return nil, err
	}
	return g, nil
}
