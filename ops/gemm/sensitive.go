package gemm

import (
	"github.com/bitparity/bitparity/boundary"
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/power"
	"github.com/bitparity/bitparity/spec"
)

var _ ops.Sensitive = Op{}

// SensitiveRows measures slot j on W's column Column(c, keys[j], mix)
// (the column Nudge tunes): boundary.GEMMRow, the column's
// boundary.GEMMKnob (the last element when it has none) and
// power.GEMMCheck (Family.GEMM for a batch's row).
func (Op) SensitiveRows(c spec.Case, in ops.In, keys []int, dt, _, cmp oracle.DType, f *power.Family, mix func(uint64) uint64) ops.SensitiveRows {
	g := input(in)
	r := &rows{in: g, dt: dt, cmp: cmp, f: f, col: make([]int, len(keys)), cols: make([][]float32, len(keys))}
	for j, i := range keys {
		r.col[j] = Column(c, uint64(i), mix)
		r.cols[j] = boundary.GEMMColumn(g.W, g.N, r.col[j])
	}
	return r
}

type rows struct {
	in      *oracle.GEMMInput
	dt, cmp oracle.DType
	f       *power.Family
	col     []int       // slot j's column
	cols    [][]float32 // its values in W
}

func (r *rows) Nudge(x []float32, j int, odd bool) {
	boundary.GEMMRow(x, r.in.W, r.in.N, r.col[j], r.dt, r.cmp, OracleSchedule, odd)
}

func (r *rows) Knob(x []float32, j int) int {
	if k := boundary.GEMMKnob(r.cols[j]); k >= 0 {
		return k
	}
	return len(x) - 1
}

func (r *rows) Check(x []float32, j int) (func(k int, v float32) power.Set, error) {
	return ops.CheckOf(r.f.NewGEMMCheck(x, r.cols[j], r.cmp))
}

func (r *rows) Shows(j int) (power.Set, error) {
	k := r.in.K
	return r.f.GEMM(r.in.X[j*k:(j+1)*k], r.cols[j], r.cmp)
}
