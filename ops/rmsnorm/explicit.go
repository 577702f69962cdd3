package rmsnorm

import (
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// FromData reads tensors x (rows·hidden values) and w (hidden).
func (Op) FromData(c spec.Case, out oracle.DType, e ops.Explicit) (ops.In, error) {
	s := c.Shape
	if err := e.Budget(spec.SatMul(s.Rows, s.Hidden)); err != nil {
		return nil, err
	}
	r := &oracle.RMSNormInput{Rows: s.Rows, Hidden: s.Hidden, Eps: c.Eps, Out: out}
	var err error
	if r.X, err = e.Tensor("x", s.Rows*s.Hidden); err != nil {
		return nil, err
	}
	if r.W, err = e.Tensor("w", s.Hidden); err != nil {
		return nil, err
	}
	return r, nil
}
