package logprob

import (
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/spec"
)

// The log-prob op's steps in the case generator (ops.Drawer); its batch
// steps are ops.RowsBatch's (by ops.TokenOp).

// DrawDTypes sets Out to fp32 (log-probs are always fp32) and, under
// logprob_parity, draws the Compare dtype: 40% bf16, 40% fp32, 20% fp16.
func (Op) DrawDTypes(c *spec.Case, g ops.Gen) {
	c.Out = spec.FP32
	if c.Relation != spec.RelLogProbParity {
		return
	}
	switch p := g.Intn(10); {
	case p < 4:
		c.Compare = spec.BF16
	case p < 8:
		c.Compare = spec.FP32
	default:
		c.Compare = spec.FP16
	}
}

// DrawInner draws nothing; a row's Work is at least that of vocab 2.
func (Op) DrawInner(_ *spec.Case, g ops.Gen, _ int) int {
	return workOf(g, 2)
}

// DrawPerRow draws the vocabulary (at most 152064).
func (Op) DrawPerRow(c *spec.Case, g ops.Gen, _, perRow int) {
	c.Shape.Vocab = g.Vocab(min(152064, max(1, perRow/workOf(g, 1))))
}

// workOf is the Work of a row of vocab logits.
func workOf(g ops.Gen, vocab int) int {
	return g.Work(spec.Case{Op: spec.OpLogProb, Shape: spec.Shape{Vocab: vocab}})
}

func (Op) FitTokens(*spec.Case, ops.Gen, int) {}

// ResidueShape is vocab uniform in [64, 256].
func (Op) ResidueShape(s *spec.Shape, g ops.Gen) { s.Vocab = 64 + g.Intn(193) }

func (Op) ResidueDims(s spec.Shape, add func(string, int)) { add("rows", s.Rows) }
