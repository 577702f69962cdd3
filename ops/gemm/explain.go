package gemm

import (
	"math/rand/v2"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/power"
	"github.com/bitparity/bitparity/spec"
)

// FamilyCols is the hidden size (K).
func (Op) FamilyCols(s spec.Shape) (int, bool) { return s.Hidden, true }

// Space is power.GEMMSchedules(in) (420 schedules).
func (Op) Space(in oracle.DType) []oracle.Schedule {
	var out []oracle.Schedule
	for _, g := range power.GEMMSchedules(in) {
		out = append(out, g)
	}
	return out
}

// ProbeLens is K, the length a schedule's chunks are cut from.
func (Op) ProbeLens(in ops.In, _ int) []int { return []int{input(in).K} }

// Spread sets every value x of X, then of W, to round_dt(x · 2^u), u
// uniform in -1..1.
func (Op) Spread(in ops.In, dt oracle.DType, r *rand.Rand) {
	g := input(in)
	ops.SpreadExponents(g.X, dt, r, -1, 1)
	ops.SpreadExponents(g.W, dt, r, -1, 1)
}
