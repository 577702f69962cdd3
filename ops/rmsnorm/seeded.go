package rmsnorm

import (
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/values"
)

// Tensors is x: tensor x, the case's dist, σ 1, row key = item.
func (Op) Tensors(c spec.Case) []ops.Tensor {
	return []ops.Tensor{{ID: values.TensorX, Dist: c.Dist, Scale: 1}}
}

// FromSeed makes x (Tensors) and w: tensor w, normal, σ 0.25, row 0,
// then round(1 + w).
func (o Op) FromSeed(c spec.Case, dt, out oracle.DType, s ops.Seeded, like ops.In) (ops.In, error) {
	sh, n := c.Shape, s.Items()
	x, err := ops.TokenRows(s, o.Tensors(c)[0], sh.Hidden, s.Positive("hidden", sh.Hidden), s.Budget(spec.SatMul(n, sh.Hidden), sh.Hidden))
	if err != nil {
		return nil, err
	}
	var w []float32
	if like != nil {
		w = input(like).W
	} else {
		w, err = s.Shared(ops.Tensor{ID: values.TensorW, Dist: spec.DistNormal, Scale: 0.25}, 1, sh.Hidden)
		for i := range w {
			w[i] = oracle.Round(dt, 1+w[i])
		}
		if err != nil {
			return nil, err
		}
	}
	return &oracle.RMSNormInput{X: x, W: w, Rows: n, Hidden: sh.Hidden, Eps: c.Eps, Out: out}, nil
}
