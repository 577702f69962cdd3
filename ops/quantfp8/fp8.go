package quantfp8

import (
	"fmt"
	"math"
)

// Format is an 8-bit float format.
type Format uint8

const (
	// E4M3 is OCP FP8 E4M3 ("fn"): bias 7, 3 mantissa bits, no infinity,
	// S.1111.111 is NaN; largest 448 (0x7e), smallest normal 2^-6,
	// subnormal step 2^-9.
	E4M3 Format = iota
	// E5M2 is OCP FP8 E5M2: bias 15, 2 mantissa bits, IEEE-like
	// (S.11111.00 is infinity, S.11111.xx NaN); largest 57344 (0x7b),
	// smallest normal 2^-14, subnormal step 2^-16.
	E5M2
)

func (f Format) String() string {
	if f == E5M2 {
		return "e5m2"
	}
	return "e4m3"
}

// ParseFormat parses "e4m3" or "e5m2".
func ParseFormat(s string) (Format, error) {
	switch s {
	case "e4m3":
		return E4M3, nil
	case "e5m2":
		return E5M2, nil
	}
	return 0, fmt.Errorf("fp8 format %q, want e4m3 or e5m2", s)
}

// params are f's mantissa bits, exponent bias and largest finite value.
func (f Format) params() (mant, bias int, max float64) {
	if f == E5M2 {
		return 2, 15, 57344
	}
	return 3, 7, 448
}

// Max is the largest finite value of f.
func (f Format) Max() float32 {
	_, _, m := f.params()
	return float32(m)
}

// NaN is the NaN f's encoder writes: 0x7f in both formats (exponent and
// mantissa all ones, sign clear).
const NaN uint8 = 0x7f

// Encode rounds x to f, to nearest with ties to even, saturating: a
// magnitude above f's largest finite value (infinity included) becomes
// the largest finite value of x's sign; NaN becomes NaN (0x7f); zero keeps
// its sign. With e = floor(log2 |x|) for |x| at least the smallest normal
// 2^(1-bias), else e = 1-bias (the subnormal step), and m mantissa bits:
//
//	n    = roundTiesToEven(|x| / 2^(e-m))       (exact in float64)
//	v    = n · 2^(e-m), then min(v, max)
//	bits = sign<<7 | n                           v subnormal (n <= 2^m: n = 2^m
//	                                             is 2^(1-bias), the first normal)
//	bits = sign<<7 | (e'+bias)<<m | (v/2^e' - 1)·2^m   otherwise, e' = floor(log2 v)
func Encode(f Format, x float32) uint8 {
	if x != x {
		return NaN
	}
	var sign uint8
	if math.Signbit(float64(x)) {
		sign = 0x80
	}
	m, bias, max := f.params()
	a := math.Abs(float64(x))
	emin := 1 - bias
	e := emin
	if a >= math.Ldexp(1, emin) {
		_, exp := math.Frexp(a) // a = frac · 2^exp, frac in [0.5, 1)
		e = exp - 1
	}
	n := math.RoundToEven(math.Ldexp(a, m-e))
	v := math.Ldexp(n, e-m)
	if v > max {
		v = max
	}
	if v < math.Ldexp(1, emin) {
		return sign | uint8(n)
	}
	_, exp := math.Frexp(v)
	ev := exp - 1
	frac := math.Ldexp(v, -ev) - 1 // in [0, 1), m bits
	return sign | uint8(ev+bias)<<m | uint8(math.Ldexp(frac, m))
}

// Decode is the value of bits b of f (NaN for its NaN codes, ±Inf for
// E5M2's infinities).
func Decode(f Format, b uint8) float32 {
	m, bias, _ := f.params()
	sign := 1.0
	if b&0x80 != 0 {
		sign = -1
	}
	ef := int(b&0x7f) >> m
	mf := int(b) & (1<<m - 1)
	top := 1<<(7-m) - 1 // all-ones exponent field
	switch {
	case f == E4M3 && ef == top && mf == 1<<m-1:
		return float32(math.NaN())
	case f == E5M2 && ef == top && mf != 0:
		return float32(math.NaN())
	case f == E5M2 && ef == top:
		return float32(math.Inf(int(sign)))
	case ef == 0:
		return float32(sign * math.Ldexp(float64(mf), 1-bias-m))
	}
	return float32(sign * math.Ldexp(float64(1<<m+mf), ef-bias-m))
}
