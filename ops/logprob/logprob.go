// Package logprob is the log-prob op (spec.OpLogProb): logits[target] -
// logsumexp(logits) per token, in fp32, its batch an *oracle.LogProbInput
// of Rows tokens of Vocab logits and one target id each.
package logprob

import (
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// Op is the logprob op; it implements ops.CaseOp.
type Op struct{ ops.TokenOp }

var _ ops.CaseOp = Op{}

// OracleSchedule is the fixed schedule of the oracle target, which the
// exact CUDA kernel implements too: one warp per row.
var OracleSchedule = oracle.LogProbSchedule{Reduce: oracle.Reduction{Threads: 32, Vec: 4,
	Warp: oracle.WarpButterfly, Cross: oracle.CrossSequential}}

func input(in ops.In) *oracle.LogProbInput { return in.(*oracle.LogProbInput) }

func (Op) Name() spec.Op                      { return spec.OpLogProb }
func (Op) Rows(in ops.In) int                 { return input(in).Rows }
func (Op) Cols(ops.In) int                    { return 1 }
func (Op) OutDType(oracle.DType) oracle.DType { return oracle.FP32 }
func (Op) Items(in ops.In) int                { return input(in).Rows }
func (Op) ItemValues(in ops.In, _ int) int    { return input(in).Vocab }
func (Op) Schedule() oracle.Schedule          { return OracleSchedule }
func (Op) Balance(c spec.Case, n int) int     { return min(n, c.Shape.Vocab) }

// Cost is 18 a logit (an exp, a max and a sum step, a generated value)
// and 500 a row.
func (Op) Cost(c spec.Case) int64 { return 18*int64(c.Shape.Vocab) + 500 }

func (Op) ParseSchedule(s string) (oracle.Schedule, error) { return oracle.ParseLogProbSchedule(s) }

func (Op) Holds(in ops.In) bool {
	x, ok := in.(*oracle.LogProbInput)
	return ok && x != nil
}

// Reference runs oracle.LogProbTaps (its outputs are fp32); the taps are
// each row's max and sum of exponentials.
func (Op) Reference(in ops.In, s oracle.Schedule, sel []int) (y, taps []float32, tapCols int, err error) {
	sch, err := ops.ScheduleOf[oracle.LogProbSchedule](spec.OpLogProb, s)
	if err != nil {
		return nil, nil, 0, err
	}
	y, ts, err := oracle.LogProbTaps(*input(in), sch, sel)
	if err != nil {
		return nil, nil, 0, err
	}
	taps = make([]float32, 0, 2*len(ts))
	for _, t := range ts {
		taps = append(taps, t.Max, t.SumExp)
	}
	return y, taps, 2, nil
}

func (Op) Gather(in ops.In, ids []int) ops.In {
	src := input(in)
	l := *src
	l.Logits = ops.GatherRows(src.Logits, ids, l.Vocab)
	l.Targets = make([]int32, len(ids))
	for i, id := range ids {
		l.Targets[i] = src.Targets[id]
	}
	l.Rows = len(ids)
	return &l
}

func (o Op) View(in ops.In, ids []int) ops.In { return o.Gather(in, ids) }

func (Op) First(in ops.In, n int) ops.In {
	l := *input(in)
	l.Logits, l.Targets, l.Rows = l.Logits[:n*l.Vocab], l.Targets[:n], n
	return &l
}

func (Op) Fill(in ops.In, from int, v func(int) float32) {
	l := input(in)
	ops.FillRows(l.Logits, from, l.Vocab, v)
	for i := from; i < len(l.Targets); i++ {
		l.Targets[i] = 0
	}
}

func (Op) Overlay(dst, src ops.In) {
	d, s := input(dst), input(src)
	copy(d.Logits, s.Logits)
	copy(d.Targets, s.Targets)
}

func (Op) ModelShapes(m spec.Shape, _ []spec.Shape) []spec.Shape {
	return []spec.Shape{{Vocab: m.Vocab}}
}

// AtModel: the outputs stay fp32; a declared Compare becomes dt.
func (Op) AtModel(c *spec.Case, dt spec.DType, _ float32, inner spec.Shape) {
	c.In, c.Out = dt, spec.FP32
	if c.Compare != "" {
		c.Compare = dt
	}
	c.Shape.Vocab = inner.Vocab
}

// WorkPerFMA is 2/1 (an exp and a reduction step cost four RMSNorm values: 4·vocab).
func (Op) WorkPerFMA() (num, den int) { return 2, 1 }

// ShapeFields is rows, vocab.
func (Op) ShapeFields(s *spec.Shape, f ops.Fields) { f.Rows(&s.Rows); f.Vocab(&s.Vocab) }

// OwnFields is none.
func (Op) OwnFields(*spec.Case, ops.Fields) {}

func (Op) ItemRows(in ops.In) *[]float32 { return &input(in).Logits }
func (Op) LazyBoundary() bool            { return false }

func (Op) FuzzWord() string { return "LogProb" }
