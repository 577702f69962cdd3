package oracle

import (
	"math"
	"testing"
)

// TestLogProbBound checks LogProb against a float64 reference.
//
// Bound, with m the row max (exact: max.f32 does not round), t_j = x_j - m
// <= 0, S = Σ_j e^(t_j) >= 1, n = Vocab, E = exp32MaxULP·2^-23 and
// L = log32MaxULP·2^-23 (relative errors of Exp32 and Log32):
//
//	Sub32(x_j, m) = t_j(1+δ), so e^(t_j(1+δ)) = e^(t_j)(1 + ~u|t_j|)
//	each term:      relative error <= u·max|t_j| + E, plus 2^-149 absolute
//	the sum:        γ(depth) more, depth = reduceDepth(Reduce, n)
//	δS = γ(depth) + u·max|t_j| + E + n·2^-149
//	Log32(Ŝ) = log S + ~δS, plus L·|log S|
//	lp = ((x_t - m) - Log32(Ŝ)): u·|x_t - m| + u·|lp|
//
// |lp̂ - lp| <= (u|x_t-m| + δS + L·|log S| + u|lp|)·1.01. The output is fp32.
func TestLogProbBound(t *testing.T) {
	r := newRNG(30)
	worst := 0.0
	for _, c := range []struct {
		in    DType
		vocab int
		scale float64
	}{{BF16, 32000, 3}, {FP32, 5000, 10}, {FP16, 1000, 1}, {BF16, 1, 1}, {FP32, 300, 30}} {
		in := logprobInput(r, c.in, 4, c.vocab, c.scale)
		for _, red := range testReductions {
			s := LogProbSchedule{Reduce: red}
			out, err := LogProb(in, s, nil)
			if err != nil {
				t.Fatal(err)
			}
			for row := range in.Rows {
				x := in.Logits[row*c.vocab : (row+1)*c.vocab]
				m := math.Inf(-1)
				for _, v := range x {
					m = max(m, float64(v))
				}
				S, span := 0.0, 0.0
				for _, v := range x {
					S += math.Exp(float64(v) - m)
					span = max(span, m-float64(v))
				}
				xt := float64(x[in.Targets[row]]) - m
				lp := xt - math.Log(S)
				dS := gamma(reduceDepth(red, c.vocab)) + u32*span + exp32MaxULP*0x1p-23 + float64(c.vocab)*0x1p-149
				bound := (u32*math.Abs(xt) + dS + log32MaxULP*0x1p-23*math.Abs(math.Log(S)) + u32*math.Abs(lp)) * 1.01
				ok, bound := withinBound(FP32, out[row], lp, bound)
				if !ok {
					t.Fatalf("%s vocab %d scale %g %s row %d: got %g, float64 %g, bound %g", c.in, c.vocab, c.scale, s, row, out[row], lp, bound)
				}
				worst = max(worst, math.Abs(float64(out[row])-lp)/bound)
			}
		}
	}
	t.Logf("largest error / bound: %.3f", worst)
}

// TestLogProbTaps: the taps are the row max and the scheduled sum of
// Exp32(x - max), and the output is built from exactly those.
func TestLogProbTaps(t *testing.T) {
	in := logprobInput(newRNG(31), BF16, 2, 500, 4)
	out, taps, err := LogProbTaps(in, LogProbSchedule{Reduce: Sequential}, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	x := in.Logits[500:]
	m, sum := float32(math.Inf(-1)), float32(0)
	for _, v := range x {
		m = Max32(m, v)
	}
	for _, v := range x {
		sum = Add32(sum, Exp32(Sub32(v, m)))
	}
	if taps[0] != (LogProbTap{Max: m, SumExp: sum}) {
		t.Errorf("taps %+v, want max %g sum %g", taps[0], m, sum)
	}
	if want := Sub32(Sub32(x[in.Targets[1]], m), Log32(sum)); out[0] != want {
		t.Errorf("logprob %g, want %g", out[0], want)
	}
}
