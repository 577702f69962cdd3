package ops

import (
	"math"
	"math/rand/v2"

	"github.com/bitparity/bitparity/oracle"
)

// SpreadExponents sets every value x of xs to round_dt(x · 2^u), u drawn
// uniform in lo..hi from r, value by value in order (explain's probes of
// rmsnorm, gemm and logprob).
func SpreadExponents(xs []float32, dt oracle.DType, r *rand.Rand, lo, hi int) {
	for i, x := range xs {
		xs[i] = oracle.Round(dt, float32(math.Ldexp(float64(x), lo+r.IntN(hi-lo+1))))
	}
}

// Ramp sets k[j·width+d], a KV sequence of len(k)/width positions L, to
// round_dt(|k[j·width+d]|/4 + 2j/L): scores rise along the sequence, so
// every tile raises the running max and rescales (explain's attention
// probes).
func Ramp(k []float32, width int, dt oracle.DType) {
	L := len(k) / width
	for j := 0; j < L; j++ {
		for d := 0; d < width; d++ {
			x := &k[j*width+d]
			*x = oracle.Round(dt, float32(math.Abs(float64(*x))/4+2*float64(j)/float64(max(L, 1))))
		}
	}
}

// Abs sets every value of xs to its absolute value.
func Abs(xs []float32) {
	for i, x := range xs {
		xs[i] = float32(math.Abs(float64(x)))
	}
}
