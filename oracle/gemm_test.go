package oracle

import (
	"math"
	"testing"
)

var testGEMMSchedules = []GEMMSchedule{
	{SplitK: 1, Combine: CrossSequential}, {SplitK: 2, Combine: CrossTree}, {SplitK: 3, Combine: CrossSequential}, {SplitK: 4, Combine: CrossTree},
	{SplitK: 7, Combine: CrossSequential}, {SplitK: 64, Combine: CrossSequential}, {SplitK: 64, Combine: CrossTree},
}

// gemmDepth bounds the roundings one product goes through: its chunk's fma
// chain (chunk = ceil(K/SplitK) fmas, the first rounding the product
// itself) and the combine (SplitK-1 sequential adds, log2 SplitK for a
// tree).
func gemmDepth(s GEMMSchedule, K int) int {
	chunk := (K + s.SplitK - 1) / s.SplitK
	if s.Combine == CrossTree {
		return chunk + int(math.Log2(float64(s.SplitK)))
	}
	return chunk + s.SplitK - 1
}

// TestGEMMBound checks GEMM against a float64 reference.
//
// Bound: y = Σ_k x_k·W_kn; every product enters through at most
// depth = gemmDepth roundings, so |ŷ - y| <= γ(depth)·Σ_k |x_k·W_kn|·1.01
// (Higham §3.1, any order), plus half an ulp of the output dtype.
func TestGEMMBound(t *testing.T) {
	r := newRNG(20)
	worst := 0.0
	for _, c := range []struct {
		in, out DType
		m, k, n int
	}{{BF16, BF16, 4, 4096, 8}, {BF16, FP32, 3, 130, 17}, {FP16, FP16, 2, 1000, 5}, {FP32, FP32, 3, 777, 4}, {FP32, BF16, 2, 1, 3}} {
		in := gemmInput(r, c.in, c.out, c.m, c.k, c.n)
		for _, s := range testGEMMSchedules {
			out, err := GEMM(in, s, nil)
			if err != nil {
				t.Fatal(err)
			}
			g := gamma(gemmDepth(s, c.k))
			for m := range c.m {
				for n := range c.n {
					y, abs := 0.0, 0.0
					for k := range c.k {
						p := float64(in.X[m*c.k+k]) * float64(in.W[k*c.n+n])
						y += p
						abs += math.Abs(p)
					}
					got := out[m*c.n+n]
					ok, bound := withinBound(c.out, got, y, g*abs*1.01)
					if !ok {
						t.Fatalf("%s->%s %dx%dx%d %s [%d][%d]: got %g, float64 %g, bound %g", c.in, c.out, c.m, c.k, c.n, s, m, n, got, y, bound)
					}
					worst = max(worst, math.Abs(float64(got)-y)/bound)
				}
			}
		}
	}
	t.Logf("largest error / bound: %.3f", worst)
}

// TestGEMMSplitKLoop checks GEMM's bits against the documented loop written
// out for one element.
func TestGEMMSplitKLoop(t *testing.T) {
	in := gemmInput(newRNG(21), FP32, FP32, 2, 100, 3)
	for _, s := range testGEMMSchedules {
		out, err := GEMM(in, s, []int{1})
		if err != nil {
			t.Fatal(err)
		}
		chunk := (100 + s.SplitK - 1) / s.SplitK
		var p []float32
		for c := 0; c < s.SplitK; c++ {
			acc := float32(0)
			for k := c * chunk; k < min((c+1)*chunk, 100); k++ {
				acc = FMA32(in.X[100+k], in.W[k*3+2], acc)
			}
			p = append(p, acc)
		}
		if s.Combine == CrossTree {
			for off := len(p) / 2; off >= 1; off /= 2 {
				q := make([]float32, len(p))
				for i := range p {
					q[i] = Add32(p[i], p[i^off])
				}
				p = q
			}
		} else {
			for c := 1; c < len(p); c++ {
				p[0] = Add32(p[0], p[c])
			}
		}
		if math.Float32bits(out[2]) != math.Float32bits(p[0]) {
			t.Errorf("%s: %08x, documented loop %08x", s, math.Float32bits(out[2]), math.Float32bits(p[0]))
		}
	}
}
