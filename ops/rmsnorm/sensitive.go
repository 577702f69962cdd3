package rmsnorm

import (
	"github.com/bitparity/bitparity/boundary"
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/power"
	"github.com/bitparity/bitparity/spec"
)

var _ ops.Sensitive = Op{}

// SensitiveRows nudges with boundary.RMSNormRows, tunes x[hidden-3] and
// measures with power.RMSNormCheck (Family.RMSNorm for a batch's row).
func (Op) SensitiveRows(_ spec.Case, in ops.In, _ []int, dt, out, cmp oracle.DType, f *power.Family, _ func(uint64) uint64) ops.SensitiveRows {
	x := input(in)
	return &rows{in: x, rms: boundary.NewRMSNormRows(x.W, x.Eps, dt, out, OracleSchedule), cmp: cmp, f: f}
}

type rows struct {
	in  *oracle.RMSNormInput
	rms *boundary.RMSNormRows
	cmp oracle.DType
	f   *power.Family
}

func (r *rows) Nudge(x []float32, _ int, odd bool) { r.rms.Nudge(x, odd) }
func (r *rows) Knob(x []float32, _ int) int        { return len(x) - 3 }

func (r *rows) Check(x []float32, _ int) (func(k int, v float32) power.Set, error) {
	return ops.CheckOf(r.f.NewRMSNormCheck(x, r.in.W, r.in.Eps, r.cmp))
}

func (r *rows) Shows(j int) (power.Set, error) {
	h := r.in.Hidden
	return r.f.RMSNorm(r.in.X[j*h:(j+1)*h], r.in.W, r.in.Eps, r.cmp)
}
