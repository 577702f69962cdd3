package logprob

import (
	"fmt"

	"github.com/bitparity/bitparity/boundary"
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/power"
	"github.com/bitparity/bitparity/spec"
)

var _ ops.Sensitive = Op{}

// SensitiveRows nudges with boundary.LogProbRow in the compare dtype (a
// fp32 compare: boundary.LogProbPeak), tunes the target logit and
// measures with Family.LogProb.
func (Op) SensitiveRows(_ spec.Case, in ops.In, _ []int, dt, _, cmp oracle.DType, f *power.Family, _ func(uint64) uint64) ops.SensitiveRows {
	return &rows{in: input(in), dt: dt, cmp: cmp, f: f}
}

type rows struct {
	in      *oracle.LogProbInput
	dt, cmp oracle.DType
	f       *power.Family
}

func (r *rows) Nudge(x []float32, j int, odd bool) {
	t := int(r.in.Targets[j])
	if r.cmp == oracle.FP32 {
		boundary.LogProbPeak(x, t, r.dt)
	} else {
		boundary.LogProbRow(x, t, r.dt, r.cmp, OracleSchedule, odd)
	}
}

func (r *rows) Knob(_ []float32, j int) int { return int(r.in.Targets[j]) }

func (r *rows) Check(x []float32, j int) (func(k int, v float32) power.Set, error) {
	t := int(r.in.Targets[j])
	if t < 0 || t >= len(x) {
		return nil, fmt.Errorf("logprob target %d of vocab %d", t, len(x))
	}
	return func(k int, v float32) power.Set {
		x[k] = v
		s, err := r.f.LogProb(x, t, r.cmp)
		if err != nil { // t is in range: LogProb fails on nothing else
			panic(err)
		}
		return s
	}, nil
}

func (r *rows) Shows(j int) (power.Set, error) {
	v := r.in.Vocab
	return r.f.LogProb(r.in.Logits[j*v:(j+1)*v], int(r.in.Targets[j]), r.cmp)
}
