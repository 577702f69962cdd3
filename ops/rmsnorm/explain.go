package rmsnorm

import (
	"math/rand/v2"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/power"
	"github.com/bitparity/bitparity/spec"
)

// FamilyCols is the hidden size.
func (Op) FamilyCols(s spec.Shape) (int, bool) { return s.Hidden, true }

// Space is power.Reductions x power.ScaleOrders (352 schedules).
func (Op) Space(oracle.DType) []oracle.Schedule {
	var out []oracle.Schedule
	for _, r := range power.Reductions() {
		for _, o := range power.ScaleOrders {
			out = append(out, oracle.RMSNormSchedule{Reduce: r, Order: o})
		}
	}
	return out
}

// ProbeLens is none: a reduction's schedules group without a length.
func (Op) ProbeLens(ops.In, int) []int { return nil }

// Spread sets every x to round_dt(x · 2^u), u uniform in -1..1.
func (Op) Spread(in ops.In, dt oracle.DType, r *rand.Rand) {
	ops.SpreadExponents(input(in).X, dt, r, -1, 1)
}
