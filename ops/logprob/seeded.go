package logprob

import (
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/values"
)

// Tensors is logits: tensor logits, the case's dist, σ 3, row key = item.
func (Op) Tensors(c spec.Case) []ops.Tensor {
	return []ops.Tensor{{ID: values.TensorLogits, Dist: c.Dist, Scale: 3}}
}

// FromSeed makes the logits (Tensors) and the target of each item: the
// first draw of version 1's stream of (seed, tensor targets, item), mod
// vocab (0 for a padding item).
func (o Op) FromSeed(c spec.Case, _, _ oracle.DType, s ops.Seeded, _ ops.In) (ops.In, error) {
	sh, n := c.Shape, s.Items()
	x, err := ops.TokenRows(s, o.Tensors(c)[0], sh.Vocab, s.Positive("vocab", sh.Vocab), s.Budget(spec.SatMul(n, sh.Vocab)))
	if err != nil {
		return nil, err
	}
	t := make([]int32, n)
	for i := range t {
		if !s.Filler(i) {
			t[i] = int32(s.First(values.TensorTargets, s.Item(i)) % uint64(sh.Vocab))
		}
	}
	return &oracle.LogProbInput{Logits: x, Targets: t, Rows: n, Vocab: sh.Vocab}, nil
}
