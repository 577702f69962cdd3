// Package gemm is the GEMM op (spec.OpGEMM): y = x·w per token, its batch
// an *oracle.GEMMInput of M tokens of K values sharing one K×N weight.
package gemm

import (
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Op is the gemm op; it implements ops.CaseOp.
type Op struct{ ops.TokenOp }

var _ ops.CaseOp = Op{}

// OracleSchedule is the fixed schedule of the oracle target, which the
// exact CUDA kernel implements too: one K chunk.
var OracleSchedule = oracle.GEMMSchedule{SplitK: 1, Combine: oracle.CrossSequential}

func input(in ops.In) *oracle.GEMMInput { return in.(*oracle.GEMMInput) }

func (Op) Name() spec.Op                          { return spec.OpGEMM }
func (Op) Rows(in ops.In) int                     { return input(in).M }
func (Op) Cols(in ops.In) int                     { return input(in).N }
func (Op) OutDType(out oracle.DType) oracle.DType { return out }
func (Op) Items(in ops.In) int                    { return input(in).M }
func (Op) ItemValues(in ops.In, _ int) int        { return input(in).K }
func (Op) Schedule() oracle.Schedule              { return OracleSchedule }
func (Op) Balance(c spec.Case, n int) int         { return min(n, c.Shape.Hidden) }

// Cost is hidden·n multiply-adds, 4 per generated value and 500 a row.
func (Op) Cost(c spec.Case) int64 {
	s := c.Shape
	return int64(s.Hidden)*int64(s.N) + 4*int64(s.Hidden) + 500
}

func (Op) ParseSchedule(s string) (oracle.Schedule, error) { return oracle.ParseGEMMSchedule(s) }

func (Op) Holds(in ops.In) bool {
	x, ok := in.(*oracle.GEMMInput)
	return ok && x != nil
}

// Reference runs oracle.GEMM in fp32; it has no taps besides its outputs.
func (Op) Reference(in ops.In, s oracle.Schedule, sel []int) (y, taps []float32, tapCols int, err error) {
	sch, err := ops.ScheduleOf[oracle.GEMMSchedule](spec.OpGEMM, s)
	if err != nil {
		return nil, nil, 0, err
	}
	x := *input(in)
	x.Out = oracle.FP32
	y, err = oracle.GEMM(x, sch, sel)
	return y, nil, 0, err
}

func (Op) Gather(in ops.In, ids []int) ops.In {
	src := input(in)
	g := *src
	g.X = ops.GatherRows(src.X, ids, g.K)
	g.M = len(ids)
	return &g
}

func (o Op) View(in ops.In, ids []int) ops.In { return o.Gather(in, ids) }

func (Op) First(in ops.In, n int) ops.In {
	g := *input(in)
	g.X, g.M = g.X[:n*g.K], n
	return &g
}

func (Op) Fill(in ops.In, from int, v func(int) float32) {
	g := input(in)
	ops.FillRows(g.X, from, g.K, v)
}

func (Op) Overlay(dst, src ops.In) { copy(input(dst).X, input(src).X) }

// ModelShapes are the model's projections.
func (Op) ModelShapes(_ spec.Shape, projections []spec.Shape) []spec.Shape {
	var s []spec.Shape
	for _, p := range projections {
		s = append(s, spec.Shape{Hidden: p.Hidden, N: p.N})
	}
	return s
}

func (Op) AtModel(c *spec.Case, dt spec.DType, _ float32, inner spec.Shape) {
	c.In, c.Out = dt, dt
	c.Shape.Hidden, c.Shape.N = inner.Hidden, inner.N
}

// WorkPerFMA is 1/1 (hidden·n).
func (Op) WorkPerFMA() (num, den int) { return 1, 1 }

// ShapeFields is rows, hidden (K), n.
func (Op) ShapeFields(s *spec.Shape, f ops.Fields) {
	f.Rows(&s.Rows)
	f.Hidden(&s.Hidden)
	f.Hidden(&s.N)
}

// OwnFields is none.
func (Op) OwnFields(*spec.Case, ops.Fields) {}

func (Op) ItemRows(in ops.In) *[]float32 { return &input(in).X }
func (Op) LazyBoundary() bool            { return true }

func (Op) FuzzWord() string { return "GEMM" }
