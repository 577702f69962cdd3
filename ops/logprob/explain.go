package logprob

import (
	"math/rand/v2"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/power"
	"github.com/bitparity/bitparity/spec"
)

// FamilyCols is the vocabulary size.
func (Op) FamilyCols(s spec.Shape) (int, bool) { return s.Vocab, true }

// Space is power.Reductions (176 schedules).
func (Op) Space(oracle.DType) []oracle.Schedule {
	var out []oracle.Schedule
	for _, r := range power.Reductions() {
		out = append(out, oracle.LogProbSchedule{Reduce: r})
	}
	return out
}

// ProbeLens is none: a reduction's schedules group without a length.
func (Op) ProbeLens(ops.In, int) []int { return nil }

// Spread sets every logit x to round_dt(x · 2^u), u uniform in -1..1.
func (Op) Spread(in ops.In, dt oracle.DType, r *rand.Rand) {
	ops.SpreadExponents(input(in).Logits, dt, r, -1, 1)
}
