package gemm

import (
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/spec"
)

// The gemm op's steps in the case generator (ops.Drawer); its batch
// steps are ops.RowsBatch's (by ops.TokenOp).

func (Op) DrawDTypes(*spec.Case, ops.Gen) {}

// DrawInner draws nothing; a row's Work is at least that of K·N = 64.
func (Op) DrawInner(*spec.Case, ops.Gen, int) int { return 64 }

// DrawPerRow draws K first, leaving room for N >= 8 where the budget
// allows, then N (each at most 8192).
func (Op) DrawPerRow(c *spec.Case, g ops.Gen, _, perRow int) {
	s := &c.Shape
	s.Hidden = g.Hidden(min(8192, max(1, perRow/8)))
	s.N = g.Hidden(min(8192, max(1, perRow/s.Hidden)))
}

func (Op) FitTokens(*spec.Case, ops.Gen, int) {}

// ResidueShape is K uniform in [64, 256], N in [1, 8].
func (Op) ResidueShape(s *spec.Shape, g ops.Gen) {
	s.Hidden = 64 + g.Intn(193)
	s.N = 1 + g.Intn(8)
}

func (Op) ResidueDims(s spec.Shape, add func(string, int)) { add("rows", s.Rows) }
