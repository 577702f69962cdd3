package oracle

import "math"

// CanonicalNaN is the NaN that PTX fp32 arithmetic (add, mul, fma, div,
// sqrt .rn) returns for any NaN result: 0x7fffffff.
const CanonicalNaN = 0x7fffffff

func canon(f float32) float32 {
	if f != f {
		return math.Float32frombits(CanonicalNaN)
	}
	return f
}

// Add32 is fp32 a+b rounded to nearest even (PTX add.rn.f32). The float64
// sum of two fp32 values rounded to fp32 is correctly rounded (53 >= 2·24+2).
func Add32(a, b float32) float32 { return canon(float32(float64(a) + float64(b))) }

// Sub32 is fp32 a-b rounded to nearest even (PTX sub.rn.f32).
func Sub32(a, b float32) float32 { return canon(float32(float64(a) - float64(b))) }

// Mul32 is fp32 a·b rounded to nearest even (PTX mul.rn.f32).
func Mul32(a, b float32) float32 { return canon(float32(float64(a) * float64(b))) }

// Div32 is fp32 a/b rounded to nearest even (PTX div.rn.f32, CUDA's
// __fdiv_rn and the default '/' without -prec-div=false).
func Div32(a, b float32) float32 { return canon(float32(float64(a) / float64(b))) }

// Sqrt32 is the fp32 square root rounded to nearest even (PTX sqrt.rn.f32,
// CUDA's __fsqrt_rn).
func Sqrt32(a float32) float32 { return canon(float32(math.Sqrt(float64(a)))) }

// Max32 is PTX max.f32: the larger of a and b; if one is NaN the other is
// returned; if both are NaN, the canonical NaN. max(-0, +0) is +0.
func Max32(a, b float32) float32 {
	switch {
	case a != a && b != b:
		return math.Float32frombits(CanonicalNaN)
	case a != a:
		return b
	case b != b:
		return a
	case a == 0 && b == 0:
		if math.Signbit(float64(a)) {
			return b
		}
		return a
	case a > b:
		return a
	}
	return b
}

// FMA32 is the fp32 fused multiply-add a·b+c with a single rounding to
// nearest even (PTX fma.rn.f32), correct for subnormal results, overflow to
// Inf and signed zeros; any NaN result is the canonical NaN.
//
// Fast path: float32(s) with s = float64(a·b) + float64(c), taken when
// fp32Safe(s). The product of two fp32 values is exact in float64 (24+24 =
// 48 bits, exponents far inside float64's range), so s = RN64(x) for the
// exact x = a·b+c, and the fast path rounds twice: RN32(RN64(x)). That
// equals RN32(x) unless s is an fp32 rounding midpoint: every fp32 midpoint
// m (25 significant bits, at least 2^-150) is a float64, so no midpoint
// lies strictly between x and s (it would be a float64 closer to x than
// s). When s is not a midpoint, x and s lie in the same open interval
// between two neighbouring midpoints (x is not a midpoint either: a
// midpoint x would be a float64 and s = x), the interval around one fp32
// value (or beyond the overflow threshold MaxFloat32+2^103, itself such a
// midpoint), and both round to it. fp32Safe checks that s is not a
// midpoint where that is one mask compare: |s| in [2^-126, Inf) (float64
// exponent field 897..2046), where fp32's grid is 24 bits and the
// midpoints are exactly the float64s whose low 29 fraction bits are
// 1<<28. Everything else (a midpoint, whether s is exact or not; |s| below
// 2^-126, where fp32's grid is coarser, zero included; Inf; NaN) takes the
// exact path fma32Odd. TestFMA32 checks FMA32 and fma32Odd against
// math/big; TestFMA32FastPath checks the fast path on constructed
// midpoints (every one must be sent to fma32Odd) and random inputs.
func FMA32(a, b, c float32) float32 {
	s := float64(float64(a)*float64(b)) + float64(c) // the conversion forbids fusing the multiply into the add
	if fp32Safe(s) {
		return float32(s)
	}
	return fma32Odd(a, b, c)
}

// fp32Safe reports whether float32(s) is RN32 of any real that s is the
// float64 rounding of (FMA32 says why): s is finite, |s| >= 2^-126, and s
// is not an fp32 rounding midpoint (low 29 fraction bits != 1<<28).
func fp32Safe(s float64) bool {
	bits := math.Float64bits(s)
	return bits&(1<<29-1) != 1<<28 && (bits>>52&0x7ff)-897 < 2047-897
}

// fma32Odd is FMA32's exact path, correct for every input.
//
// Method: the float64 sum s = p+c (p = a·b exact) is rounded once; its
// exact error e comes from TwoSum. If e != 0 and s's last bit is even, s
// moves one float64 ulp toward e, which makes s the sum rounded to odd.
// Rounding an odd-rounded value with 53 bits to fp32 (24 bits, or fewer
// for subnormals) is then correctly rounded. The naive
// float32(math.FMA(...)) rounds twice and is wrong (TestFMA32DoubleRounding).
func fma32Odd(a, b, c float32) float32 {
	p := float64(float64(a) * float64(b)) // exact; the conversion forbids fusing it into the add
	cc := float64(c)
	s := p + cc
	bb := s - p
	e := (p - (s - bb)) + (cc - bb) // TwoSum: s + e = p + cc exactly (NaN if s is not finite)
	if e != 0 && s-s == 0 {
		// s was rounded: round to odd instead. The odd neighbour is the
		// truncation (s, or s one ulp toward zero when e points toward
		// zero, i.e. e's sign differs from s's) with its last bit set.
		bits := math.Float64bits(s)
		s = math.Float64frombits((bits - (math.Float64bits(e)^bits)>>63) | 1)
	}
	return canon(float32(s))
}

// axpy32 does y[i] = FMA32(alpha, x[i], y[i]) for every i (len(x) <=
// len(y)), with FMA32's fast path written inline: the hot loops of GEMM
// and attention. Bitwise the same as calling FMA32 (TestAxpy32).
func axpy32(alpha float32, x, y []float32) {
	y = y[:len(x)]
	a := float64(alpha)
	for i, xv := range x {
		s := float64(a*float64(xv)) + float64(y[i])
		if fp32Safe(s) {
			y[i] = float32(s)
		} else {
			y[i] = fma32Odd(alpha, xv, y[i])
		}
	}
}

// fmaChain does acc = FMA32(x[i], y[i], acc) for i ascending (len(x) <=
// len(y)) and returns acc, with FMA32's fast path inline. Bitwise the
// same as the loop of FMA32 calls (TestFMAChain).
func fmaChain(acc float32, x, y []float32) float32 {
	y = y[:len(x)]
	for i, xv := range x {
		s := float64(float64(xv)*float64(y[i])) + float64(acc)
		if fp32Safe(s) {
			acc = float32(s)
		} else {
			acc = fma32Odd(xv, y[i], acc)
		}
	}
	return acc
}
