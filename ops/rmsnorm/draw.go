package rmsnorm

import (
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/spec"
)

// The rmsnorm op's steps in the case generator (ops.Drawer); its batch
// steps are ops.RowsBatch's (by ops.TokenOp).

func (Op) DrawDTypes(*spec.Case, ops.Gen) {}

// DrawInner draws eps; a row's Work is at least that of hidden 64.
func (Op) DrawInner(c *spec.Case, g ops.Gen, _ int) int {
	c.Eps = g.Eps()
	return 64
}

// DrawPerRow draws hidden (at most 8192).
func (Op) DrawPerRow(c *spec.Case, g ops.Gen, _, perRow int) {
	c.Shape.Hidden = g.Hidden(min(8192, perRow))
}

func (Op) FitTokens(*spec.Case, ops.Gen, int) {}

// ResidueShape is hidden uniform in [64, 256].
func (Op) ResidueShape(s *spec.Shape, g ops.Gen) { s.Hidden = 64 + g.Intn(193) }

func (Op) ResidueDims(s spec.Shape, add func(string, int)) { add("rows", s.Rows) }
