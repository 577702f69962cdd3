package gemm

import (
	"math"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/values"
)

// Tensors is x: tensor x, the case's dist, σ 1, row key = item.
func (Op) Tensors(c spec.Case) []ops.Tensor {
	return []ops.Tensor{{ID: values.TensorX, Dist: c.Dist, Scale: 1}}
}

// Weights is the recipe of W at shape sh: tensor w, normal, σ 1/sqrt(K),
// row key = k (K rows of N).
func Weights(sh spec.Shape) ops.Tensor {
	return ops.Tensor{ID: values.TensorW, Dist: spec.DistNormal, Scale: 1 / math.Sqrt(float64(sh.Hidden))}
}

// FromSeed makes x (Tensors) and W (Weights).
func (o Op) FromSeed(c spec.Case, _, out oracle.DType, s ops.Seeded, like ops.In) (ops.In, error) {
	sh, n := c.Shape, s.Items()
	x, err := ops.TokenRows(s, o.Tensors(c)[0], sh.Hidden, s.Positive("hidden (K)", sh.Hidden), s.Positive("n", sh.N),
		s.Budget(spec.SatMul(n, sh.Hidden), spec.SatMul(sh.Hidden, sh.N)))
	if err != nil {
		return nil, err
	}
	var w []float32
	if like != nil {
		w = input(like).W
	} else if w, err = s.Shared(Weights(sh), sh.Hidden, sh.N); err != nil {
		return nil, err
	}
	return &oracle.GEMMInput{X: x, W: w, M: n, K: sh.Hidden, N: sh.N, Out: out}, nil
}
