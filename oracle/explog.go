package oracle

import "math"

// Constants of Exp32 and Log32, as fp32 bit patterns so a CUDA kernel can
// use the very same values (gpu/kernels/explog.cuh).
const (
	expMagic  = 12582912.0 // 1.5·2^23: adding it rounds to an integer
	log2eBits = 0x3fb8aa3b // log2(e) = 1.44269502
	ln2HiBits = 0x3f317200 // 0.693145752: ln2 with 8 trailing zero bits, so k·ln2Hi is exact
	ln2LoBits = 0x35bfbe8e // 1.42860677e-06: ln2 - ln2Hi
	sqrt2Bits = 0x3fb504f3 // sqrt(2) rounded
	expMaxArg = 89.0       // above: +Inf
	expMinArg = -104.0     // below: +0
)

var (
	log2e = math.Float32frombits(log2eBits)
	ln2Hi = math.Float32frombits(ln2HiBits)
	ln2Lo = math.Float32frombits(ln2LoBits)
)

// expCoeffs are 1/n! for n = 7 down to 2, rounded to fp32.
var expCoeffs = [...]float32{1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5}

// logCoeffs are 2/(2n+1) for n = 4 down to 1, rounded to fp32.
var logCoeffs = [...]float32{2.0 / 9, 2.0 / 7, 2.0 / 5, 2.0 / 3}

// pow2 returns 2^k for -126 <= k <= 127, built from bits.
func pow2(k int) float32 { return math.Float32frombits(uint32(k+127) << 23) }

// Exp32 is a portable fp32 e^x built only from correctly rounded fp32
// operations and bit manipulation, so a GPU kernel running the same steps
// gets the same bits. For finite x in [-104, 89]:
//
//	t  = fma(x, log2e, 1.5·2^23)          // round x·log2e to an integer
//	k  = t - 1.5·2^23                      // exact
//	r  = fma(-k, ln2Hi, x)
//	r  = fma(-k, ln2Lo, r)                 // |r| <= ~0.347
//	p  = 1/5040
//	p  = fma(p, r, c) for c = 1/720, 1/120, 1/24, 1/6, 1/2, 1, 1
//	e^x = p · 2^k                          // one multiply by a power of two,
//	                                       // two when 2^k is not normal:
//	k > 127:  (p · 2^(k-1)) · 2
//	k < -125: (p · 2^(k+100)) · 2^-100     // the second rounds once
//
// NaN gives the canonical NaN, x > 89 gives +Inf, x < -104 gives +0 (so
// e^-Inf = 0). The maximum error is documented in TestExp32Accuracy.
func Exp32(x float32) float32 {
	switch {
	case x != x:
		return math.Float32frombits(CanonicalNaN)
	case x > expMaxArg:
		return float32(math.Inf(1))
	case x < expMinArg:
		return 0
	}
	t := FMA32(x, log2e, expMagic)
	k := Sub32(t, expMagic)
	r := FMA32(-k, ln2Hi, x)
	r = FMA32(-k, ln2Lo, r)
	p := expCoeffs[0]
	for _, c := range expCoeffs[1:] {
		p = FMA32(p, r, c)
	}
	p = FMA32(p, r, 1)
	p = FMA32(p, r, 1)
	ki := int(k)
	switch {
	case ki > 127:
		return Mul32(Mul32(p, pow2(ki-1)), 2)
	case ki < -125:
		return Mul32(Mul32(p, pow2(ki+100)), pow2(-100))
	}
	return Mul32(p, pow2(ki))
}

// Log32 is a portable fp32 natural logarithm built only from correctly
// rounded fp32 operations and bit manipulation. For finite x > 0:
//
//	e = 0; if x is subnormal { x = x·2^23; e = -23 }
//	e += exponent(x); m = mantissa(x) in [1, 2)
//	if m > sqrt(2) { m = m/2; e++ }          // m in (0.707, 1.414]
//	f = m - 1                                // exact
//	s = f / (2 + f)
//	z = s·s
//	R = 2/9; R = fma(R, z, c) for c = 2/7, 2/5, 2/3; R = R·z
//	l = fma(s, R, 2s)                        // log(1+f) = 2·atanh(s)
//	log x = fma(e, ln2Hi, fma(e, ln2Lo, l))
//
// NaN and x < 0 give the canonical NaN, ±0 gives -Inf, +Inf gives +Inf.
// The maximum error is documented in TestLog32Accuracy.
func Log32(x float32) float32 {
	switch {
	case x != x || x < 0:
		return math.Float32frombits(CanonicalNaN)
	case x == 0:
		return float32(math.Inf(-1))
	case math.IsInf(float64(x), 1):
		return x
	}
	e := 0
	if x < SmallestNormal(FP32) {
		x = Mul32(x, pow2(23))
		e = -23
	}
	b := math.Float32bits(x)
	e += int(b>>23) - 127
	b = b&0x007fffff | 0x3f800000
	if b > sqrt2Bits {
		b -= 1 << 23
		e++
	}
	m := math.Float32frombits(b)
	f := Sub32(m, 1)
	s := Div32(f, Add32(2, f))
	z := Mul32(s, s)
	r := logCoeffs[0]
	for _, c := range logCoeffs[1:] {
		r = FMA32(r, z, c)
	}
	r = Mul32(r, z)
	l := FMA32(s, r, Add32(s, s))
	ef := float32(e)
	return FMA32(ef, ln2Hi, FMA32(ef, ln2Lo, l))
}
