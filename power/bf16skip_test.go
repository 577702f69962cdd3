package power

import (
	"math"
	"math/rand"
	"testing"

	"github.com/bitparity/bitparity/oracle"
)

// TestBF16Margin: an RMSNorm output at an rstd near the declared one, in
// either order, is never more than bf16Margin fp32 ulps from the declared
// output (random rows, rstds 0..64 ulps apart, every pair of orders).
func TestBF16Margin(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	orders := []oracle.ScaleOrder{oracle.ScaleThenWeight, oracle.WeightedScale}
	for range 200000 {
		x := []float32{float32(rng.NormFloat64() * math.Exp(rng.NormFloat64()*3))}
		w := []float32{float32(rng.NormFloat64())}
		dr := float32(math.Exp(rng.NormFloat64() * 2))
		r := math.Float32frombits(math.Float32bits(dr) + uint32(rng.Intn(129)) - 64)
		o1, o2 := orders[rng.Intn(2)], orders[rng.Intn(2)]
		y := rmsnormY(x, w, 0, dr, o1)
		y2 := rmsnormY(x, w, 0, r, o2)
		if e := math.Float32bits(y) >> 23 & 0xff; e < 2 || e == 0xff {
			continue
		}
		ulp := ulpOf(y)
		if apart := math.Abs(float64(y2)-float64(y)) / ulp; apart > float64(bf16Margin(dr, r)) {
			t.Fatalf("x %g w %g rstd %g vs %g (%v, %v): %g ulps apart, margin %d", x[0], w[0], dr, r, o1, o2, apart, bf16Margin(dr, r))
		}
	}
}

// TestFarFromBF16Boundary: every fp32 value within margin ulps of a value
// the check calls far rounds to its bf16, and values at a rounding
// boundary are never far.
func TestFarFromBF16Boundary(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	far := 0
	for range 200000 {
		y := math.Float32frombits(rng.Uint32())
		margin := uint32(rng.Intn(40))
		if rng.Intn(8) == 0 {
			margin = uint32(rng.Intn(0x4100))
		}
		if rng.Intn(4) == 0 { // near a boundary or a binade's edge
			b := math.Float32bits(y)&^0xffff | 0x8000
			if rng.Intn(2) == 0 {
				b = math.Float32bits(y) &^ 0x7fffff
			}
			y = math.Float32frombits(b + uint32(rng.Intn(80)) - 40)
		}
		if !farFromBF16Boundary(y, margin) {
			continue
		}
		far++
		want := oracle.BF16FromF32(y)
		ulp := ulpOf(y)
		for _, k := range []float64{-1, 1} {
			z := float32(float64(y) + k*float64(margin)*ulp)
			if got := oracle.BF16FromF32(z); got != want {
				t.Fatalf("%g (%#08x) called far at margin %d, but %g (%#08x) rounds to %#04x, not %#04x",
					y, math.Float32bits(y), margin, z, math.Float32bits(z), got, want)
			}
		}
		if math.Float32bits(y)&0xffff == 0x8000 {
			t.Fatalf("%#08x sits on a boundary and was called far", math.Float32bits(y))
		}
	}
	if far == 0 {
		t.Fatal("no value was called far")
	}
}

// ulpOf is the fp32 ulp of normal y: 2^(exponent - 23).
func ulpOf(y float32) float64 {
	return math.Ldexp(1, int(math.Float32bits(y)>>23&0xff)-150)
}
