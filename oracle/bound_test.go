package oracle

import (
	"math"
	"testing"
)

// Error bounds used by the op tests against float64 references. u = 2^-24
// is the unit roundoff of fp32 (round to nearest); an fp32 operation gives
// op(a, b)·(1+δ) with |δ| <= u. A value that went through at most n
// roundings of a sum of non-negative terms (or of terms whose absolute
// values are summed into the bound) is off by at most γ(n)·Σ|terms|, with
// γ(n) = n·u / (1 - n·u) (Higham, Accuracy and Stability of Numerical
// Algorithms, §3.1 and §4.2). The float64 references carry errors below
// n·2^-53, which the slack factor 1.01 covers many times over.
const u32 = 0x1p-24

func gamma(n int) float64 { return float64(n) * u32 / (1 - float64(n)*u32) }

// ulpOf is the spacing of dtype d at magnitude v (its subnormal spacing
// below the smallest normal).
func ulpOf(d DType, v float64) float64 {
	v = math.Abs(v)
	mant, minExp := 24, -126 // significant bits, smallest normal exponent
	switch d {
	case BF16:
		mant = 8
	case FP16:
		mant, minExp = 11, -14
	}
	_, e := math.Frexp(v) // v in [2^(e-1), 2^e)
	e = max(e-1, minExp)
	return math.Ldexp(1, e-mant+1)
}

// withinBound reports whether got, an output of dtype d, is within the
// bound of the exact want: the fp32 result is within fp32Err of want, and
// rounding it to d (bf16, fp16) adds at most half an ulp of d at
// |want| + fp32Err. For fp32 outputs there is no extra rounding.
func withinBound(d DType, got float32, want, fp32Err float64) (ok bool, bound float64) {
	bound = fp32Err
	if d != FP32 {
		bound += ulpOf(d, math.Abs(want)+fp32Err) / 2
	}
	return math.Abs(float64(got)-want) <= bound, bound
}

// reduceDepth bounds how many roundings one term of a scheduled reduction
// of n terms goes through: at most ceil(n/(T·V))·V in its thread, then at
// most T-1 in the lane and warp-partial combines (log2 of it for
// butterflies and trees).
func reduceDepth(r Reduction, n int) int {
	per := (n + r.Threads*r.Vec - 1) / (r.Threads * r.Vec) * r.Vec
	return per + r.Threads
}

func TestUlpOf(t *testing.T) {
	for _, c := range []struct {
		d    DType
		v    float64
		want float64
	}{
		{FP32, 1, 0x1p-23}, {FP32, 1.5, 0x1p-23}, {FP32, 2, 0x1p-22}, {FP32, 0x1p-140, 0x1p-149},
		{BF16, 1, 0x1p-7}, {BF16, 3, 0x1p-6}, {BF16, 0x1p-130, 0x1p-133},
		{FP16, 1, 0x1p-10}, {FP16, 65504, 32}, {FP16, 0x1p-20, 0x1p-24},
	} {
		if got := ulpOf(c.d, c.v); got != c.want {
			t.Errorf("ulpOf(%s, %g) = %g, want %g", c.d, c.v, got, c.want)
		}
	}
}
