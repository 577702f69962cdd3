package oracle

import (
	"math"
	"testing"
)

// testReductions are schedules used across the op tests: plain loops,
// small and full warps, both lane orders, both cross orders, vectors.
var testReductions = []Reduction{
	Sequential,
	{Threads: 1, Vec: 8},
	{Threads: 4, Vec: 2, Warp: WarpSequential},
	{Threads: 32, Vec: 4, Warp: WarpButterfly},
	{Threads: 256, Vec: 8, Warp: WarpSequential, Cross: CrossTree},
	{Threads: 1024, Vec: 1, Warp: WarpButterfly, Cross: CrossSequential},
}

// TestRMSNormBound checks RMSNorm against a float64 reference.
//
// Bound: ss sums n = Hidden non-negative terms x², each through at most
// depth = reduceDepth roundings: |ŝs - ss| <= γ(depth)·ss. mean = ss/H,
// mean+eps, sqrt, 1/· add one rounding each (sqrt halves the incoming
// relative error): rstd is off by δr <= (γ(depth) + 2u)/2 + 2u relative.
// The two output multiplies add 2u: |ŷ - y| <= (δr + 2u)·|y|·1.01, and the
// bf16/fp16 output rounding adds half an ulp (withinBound).
func TestRMSNormBound(t *testing.T) {
	r := newRNG(10)
	worst := 0.0 // largest |error| / bound seen
	for _, c := range []struct {
		in, out DType
		hidden  int
	}{{BF16, BF16, 4096}, {BF16, FP32, 300}, {FP16, FP16, 1000}, {FP32, FP32, 4096}, {FP32, BF16, 7}, {BF16, BF16, 1}} {
		in := rmsnormInput(r, c.in, c.out, 6, c.hidden)
		in.Eps = 1e-5
		for _, red := range testReductions {
			for _, order := range []ScaleOrder{ScaleThenWeight, WeightedScale} {
				s := RMSNormSchedule{Reduce: red, Order: order}
				out, err := RMSNorm(in, s, nil)
				if err != nil {
					t.Fatal(err)
				}
				H := in.Hidden
				dr := (gamma(reduceDepth(red, H))+2*u32)/2 + 2*u32
				for row := range in.Rows {
					x := in.X[row*H : (row+1)*H]
					ss := 0.0
					for _, v := range x {
						ss += float64(v) * float64(v)
					}
					rstd := 1 / math.Sqrt(ss/float64(H)+float64(in.Eps))
					for j, v := range x {
						y := float64(v) * rstd * float64(in.W[j])
						ok, bound := withinBound(c.out, out[row*H+j], y, (dr+2*u32)*math.Abs(y)*1.01)
						if !ok {
							t.Fatalf("%s->%s H=%d %s row %d col %d: got %g, float64 %g, bound %g", c.in, c.out, H, s, row, j, out[row*H+j], y, bound)
						}
						if bound > 0 {
							worst = max(worst, math.Abs(float64(out[row*H+j])-y)/bound)
						}
					}
				}
			}
		}
	}
	t.Logf("largest error / bound: %.3f", worst)
}

// TestRMSNormTaps: the taps are the row's sum of squares and rstd, and the
// output is computed from exactly those.
func TestRMSNormTaps(t *testing.T) {
	in := rmsnormInput(newRNG(11), BF16, FP32, 3, 100)
	s := RMSNormSchedule{Reduce: Sequential}
	out, taps, err := RMSNormTaps(in, s, []int{2})
	if err != nil {
		t.Fatal(err)
	}
	x := in.X[200:300]
	ss := float32(0)
	for _, v := range x {
		ss = FMA32(v, v, ss)
	}
	rstd := Div32(1, Sqrt32(Add32(Div32(ss, 100), in.Eps)))
	if taps[0] != (RMSNormTap{SumSq: ss, Rstd: rstd}) {
		t.Errorf("taps %+v, want sumsq %g rstd %g", taps[0], ss, rstd)
	}
	for j, v := range x {
		if want := Mul32(Mul32(v, rstd), in.W[j]); out[j] != want {
			t.Fatalf("col %d: %g, want %g", j, out[j], want)
		}
	}
}
