// Package rmsnorm is the RMSNorm op (spec.OpRMSNorm): y = x·rstd·w per
// token, its batch an *oracle.RMSNormInput of Rows tokens of Hidden values
// sharing one weight row.
package rmsnorm

import (
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Op is the rmsnorm op; it implements ops.CaseOp.
type Op struct{ ops.TokenOp }

var _ ops.CaseOp = Op{}

// OracleSchedule is the fixed schedule of the oracle target, which the
// exact CUDA kernel implements too: one warp per row (32 threads, 4-wide
// loads, butterfly combine). One warp per row keeps the CPU oracle cheap
// for the small rows most cases have (a 256-thread block costs 8 warp
// butterflies, 1280 adds per row, whatever the row's length).
var OracleSchedule = oracle.RMSNormSchedule{Reduce: oracle.Reduction{Threads: 32, Vec: 4,
	Warp: oracle.WarpButterfly, Cross: oracle.CrossSequential}, Order: oracle.ScaleThenWeight}

func input(in ops.In) *oracle.RMSNormInput { return in.(*oracle.RMSNormInput) }

func (Op) Name() spec.Op                                   { return spec.OpRMSNorm }
func (Op) Rows(in ops.In) int                              { return input(in).Rows }
func (Op) Cols(in ops.In) int                              { return input(in).Hidden }
func (Op) OutDType(out oracle.DType) oracle.DType          { return out }
func (Op) Items(in ops.In) int                             { return input(in).Rows }
func (Op) ItemValues(in ops.In, _ int) int                 { return input(in).Hidden }
func (Op) Schedule() oracle.Schedule                       { return OracleSchedule }
func (Op) Balance(c spec.Case, n int) int                  { return min(n, c.Shape.Hidden) }
func (Op) Cost(c spec.Case) int64                          { return 5*int64(c.Shape.Hidden) + 500 }
func (Op) ParseSchedule(s string) (oracle.Schedule, error) { return oracle.ParseRMSNormSchedule(s) }

func (Op) Holds(in ops.In) bool {
	x, ok := in.(*oracle.RMSNormInput)
	return ok && x != nil
}

// Reference runs oracle.RMSNormTaps in fp32; the taps are each row's sum
// of squares and rstd.
func (Op) Reference(in ops.In, s oracle.Schedule, sel []int) (y, taps []float32, tapCols int, err error) {
	sch, err := ops.ScheduleOf[oracle.RMSNormSchedule](spec.OpRMSNorm, s)
	if err != nil {
		return nil, nil, 0, err
	}
	x := *input(in)
	x.Out = oracle.FP32
	y, ts, err := oracle.RMSNormTaps(x, sch, sel)
	if err != nil {
		return nil, nil, 0, err
	}
	taps = make([]float32, 0, 2*len(ts))
	for _, t := range ts {
		taps = append(taps, t.SumSq, t.Rstd)
	}
	return y, taps, 2, nil
}

func (Op) Gather(in ops.In, ids []int) ops.In {
	src := input(in)
	r := *src
	r.X = ops.GatherRows(src.X, ids, r.Hidden)
	r.Rows = len(ids)
	return &r
}

func (o Op) View(in ops.In, ids []int) ops.In { return o.Gather(in, ids) }

func (Op) First(in ops.In, n int) ops.In {
	r := *input(in)
	r.X, r.Rows = r.X[:n*r.Hidden], n
	return &r
}

func (Op) Fill(in ops.In, from int, v func(int) float32) {
	r := input(in)
	ops.FillRows(r.X, from, r.Hidden, v)
}

func (Op) Overlay(dst, src ops.In) { copy(input(dst).X, input(src).X) }

func (Op) ModelShapes(m spec.Shape, _ []spec.Shape) []spec.Shape {
	return []spec.Shape{{Hidden: m.Hidden}}
}

func (Op) AtModel(c *spec.Case, dt spec.DType, eps float32, inner spec.Shape) {
	c.In, c.Out, c.Eps = dt, dt, eps
	c.Shape.Hidden = inner.Hidden
}

// WorkPerFMA is 1/2 (hidden a row).
func (Op) WorkPerFMA() (num, den int) { return 1, 2 }

// ShapeFields is rows, hidden.
func (Op) ShapeFields(s *spec.Shape, f ops.Fields) { f.Rows(&s.Rows); f.Hidden(&s.Hidden) }

// OwnFields is eps.
func (Op) OwnFields(c *spec.Case, f ops.Fields) { f.Eps(&c.Eps) }

func (Op) ItemRows(in ops.In) *[]float32 { return &input(in).X }
func (Op) LazyBoundary() bool            { return true }

func (Op) FuzzWord() string { return "RMSNorm" }
