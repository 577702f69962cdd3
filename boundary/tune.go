package boundary

import (
	"math"

	"github.com/bitparity/bitparity/oracle"
)

// K is the distance, in fp32 ulps, within which the targeted search and
// Score count an output as on a boundary.
const K = 4

// tuner moves knob elements of one row (values of dtype in, in place in x)
// so that the row's primary fp32 output lands on target, a dt rounding
// midpoint (or the fp32 value next to it on the odd side). eval recomputes
// the row's primary output with the oracle (one evaluation); score(f) is
// Score(every output the search scores, out, K) at the current x, whose
// primary output is f (a row with one output scores f alone; the others
// recompute what they need, which is not an evaluation). set, when not nil,
// stores a knob value (x[k] = v) and updates whatever eval keeps about x
// (the oracle probes' partial sums); nil stores into x. It stops after
// maxEvals evaluations.
type tuner struct {
	x        []float32
	in, out  oracle.DType
	eval     func() float32
	score    func(f float32) int
	set      func(k int, v float32)
	target   float32
	f        float32 // primary output at the current x
	evals    int
	maxEvals int
}

// probeTuner is newTuner (at most MaxEvals evaluations of eval on p) for
// x, each knob stored through the oracle probe p, made with err: no tuner
// (false) when the oracle refused the probe's schedule (err), as every
// evaluation would fail, or when newTuner makes none.
func probeTuner[P interface{ Set(k int, v float32) }](p P, err error, x []float32, in, out oracle.DType, odd bool, eval func(P) float32) (*tuner, bool) {
	if err != nil {
		return nil, false
	}
	tu, ok := newTuner(x, in, out, odd, MaxEvals, func() float32 { return eval(p) })
	if ok {
		tu.set = p.Set
	}
	return tu, ok
}

// newTuner evaluates the row once and picks the target: the dt midpoint t
// nearest the primary output when odd is false, else the fp32 value one ulp
// from t towards the odd neighbour (so that a drift of -1 ulp lands on t
// and rounds to even, the other way than t+1 did). ok is false when the
// primary output has no midpoint (fp32, NaN, Inf, zero). The row's score
// is that of its primary output alone until the caller sets score.
func newTuner(x []float32, in, out oracle.DType, odd bool, maxEvals int, eval func() float32) (*tuner, bool) {
	tu := &tuner{x: x, in: in, out: out, eval: eval, maxEvals: maxEvals}
	tu.score = func(f float32) int { return Score([]float32{f}, tu.out, K) }
	tu.f = eval()
	tu.evals = 1
	t, evenBelow, ok := Midpoint(tu.f, out)
	if !ok {
		return nil, false
	}
	if odd {
		b := math.Float32bits(t)
		if evenBelow {
			b++ // odd neighbour has the larger magnitude
		} else {
			b--
		}
		t = math.Float32frombits(b)
	}
	tu.target = t
	return tu, true
}

// dist is |f - target| in fp32 ulps.
func (tu *tuner) dist(f float32) uint64 {
	if math.IsNaN(float64(f)) {
		return math.MaxUint64
	}
	return oracle.ULPDistance(oracle.FP32, f, tu.target).ULPs
}

// put stores v in x[k] (through set when there is one).
func (tu *tuner) put(k int, v float32) {
	if tu.set != nil {
		tu.set(k, v)
		return
	}
	tu.x[k] = v
}

// try evaluates the row with x[k] = v (one evaluation).
func (tu *tuner) try(k int, v float32) float32 {
	tu.put(k, v)
	tu.evals++
	return tu.eval()
}

func finite(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }

// knob runs a secant search on x[k] (values of the input dtype, |x[k]| <=
// limit) for eval's primary output = target, from the current value and
// one 2^-5-relative step, at most 6 steps; it keeps the value with the
// smallest distance to the target.
func (tu *tuner) knob(k int, limit float32) {
	if tu.evals >= tu.maxEvals {
		return
	}
	x0, f0 := tu.x[k], tu.f
	bestX, bestF := x0, f0
	consider := func(x, f float32) {
		if tu.dist(f) < tu.dist(bestF) {
			bestX, bestF = x, f
		}
	}
	x1 := oracle.Round(tu.in, x0*(1+1.0/32))
	if x0 == 0 {
		x1 = oracle.Round(tu.in, limit/64)
	}
	if x1 == x0 {
		x1 = step(tu.in, x0, 1)
	}
	f1 := tu.try(k, x1)
	consider(x1, f1)
	slope := (float64(f1) - float64(f0)) / (float64(x1) - float64(x0))
	cur, fcur := x1, f1
	for i := 0; i < 6 && slope != 0 && !math.IsNaN(slope) && !math.IsInf(slope, 0) && tu.dist(bestF) > 0 && tu.evals < tu.maxEvals; i++ {
		nx := oracle.Round(tu.in, float32(float64(cur)+(float64(tu.target)-float64(fcur))/slope))
		if nx == cur || !finite(nx) || float32(math.Abs(float64(nx))) > limit {
			break
		}
		fn := tu.try(k, nx)
		consider(nx, fn)
		if fn != fcur {
			slope = (float64(fn) - float64(fcur)) / (float64(nx) - float64(cur))
		}
		cur, fcur = nx, fn
	}
	tu.put(k, bestX)
	tu.f = bestF
}

// scan is the targeted search (Hypothesis's target() in spirit): it tries
// x[k] at every input-dtype neighbour within radius steps and keeps the
// value that raises Score(all outputs, out, K) most, then the one closest
// to the target, while evaluations last.
func (tu *tuner) scan(k, radius int) {
	if tu.evals >= tu.maxEvals {
		return
	}
	base := tu.x[k]
	bestX, bestF := base, tu.f
	bestS := tu.score(tu.f)
	for i := -radius; i <= radius && tu.evals < tu.maxEvals; i++ {
		v := step(tu.in, base, i)
		if i == 0 || !finite(v) || v == base {
			continue
		}
		f := tu.try(k, v)
		s := tu.score(f)
		if s > bestS || (s == bestS && tu.dist(f) < tu.dist(bestF)) {
			bestX, bestF, bestS = v, f, s
		}
	}
	tu.put(k, bestX)
	tu.f = bestF
}

// step returns the value of dtype dt that is n representable values away
// from v (towards +Inf for n > 0), crossing zero through ±0 as one step.
func step(dt oracle.DType, v float32, n int) float32 {
	bits := uint(dt.Bits())
	sign := uint32(1) << (bits - 1)
	u := oracle.ToBits(dt, v)
	ord := int64(u &^ sign)
	if u&sign != 0 {
		ord = -ord
	}
	ord += int64(n)
	if ord < 0 {
		return oracle.FromBits(dt, sign|uint32(-ord))
	}
	return oracle.FromBits(dt, uint32(ord))
}

// Step returns the value of dtype dt that is n representable values away
// from v (towards +Inf for n > 0), crossing zero through ±0 as one step.
func Step(dt oracle.DType, v float32, n int) float32 { return step(dt, v, n) }
