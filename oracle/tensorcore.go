package oracle

import (
	"fmt"
	"math"
	"math/bits"
)

// MMAFormat is the input format of a tensor-core MMA with fp32
// accumulation; MMANone means no tensor core (a plain fma chain).
type MMAFormat uint8

const (
	MMANone MMAFormat = iota
	// MMABF16: bf16 inputs, 16 products per step (mma.m16n8k16,
	// wgmma.m64nNk16).
	MMABF16
	// MMAFP16: fp16 inputs, 16 products per step.
	MMAFP16
	// MMATF32: fp32 registers of which the MMA reads the top 19 bits
	// (tf32: the low 13 mantissa bits are ignored), 8 products per step
	// (mma.m16n8k8).
	MMATF32
)

var mmaNames = []string{MMANone: "none", MMABF16: "bf16", MMAFP16: "fp16", MMATF32: "tf32"}

func (f MMAFormat) String() string { return enumName(mmaNames, uint8(f), "mma") }

// minExp is the exponent of the format's smallest normal value, which its
// subnormals are given.
func (f MMAFormat) minExp() int {
	if f == MMAFP16 {
		return -14
	}
	return -126
}

// TensorCore is a bit-level model of one tensor-core step with fp32
// accumulation, d = c + Σ_{k<K} a[k]·b[k], parameterised as in Khattak and
// Mikaitis, "Accurate Models of NVIDIA Tensor Cores" (arXiv 2512.07004) and
// MMA-Sim (arXiv 2511.10909). DotAdd computes:
//
//	every a[k], b[k] (tf32: its bits with the low 13 cleared) and c is
//	  written s·m·2^e with e = max(exponent, the format's smallest normal
//	  exponent), so subnormals have m < 1
//	products are exact and not normalised: p[k] = (s_a·s_b)·(m_a·m_b)·2^(e_a+e_b), m_a·m_b in (0, 4)
//	E = max(e_c, e_a[k]+e_b[k] over all k), over the nonzero terms only (a
//	  zero product or accumulator adds nothing and does not set E)
//	every term (the K products and c) is truncated toward zero to a
//	  multiple of 2^(E - FracBits)
//	the truncated terms are summed exactly
//	the sum is normalised and truncated toward zero to fp32 (24 bits;
//	  below 2^-126 to a multiple of 2^-149); a sum that is or truncates to
//	  zero is +0; a sum at or above 2^128 is ±Inf
//	any NaN input, Inf·0 or Inf - Inf gives the canonical NaN 0x7fffffff;
//	  otherwise an Inf input gives that Inf
//
// TestTensorCoreH200 holds the H200's parameters (TensorCoreH200) to the
// outputs recorded on the H200 itself (docs/oracle.md, "Tensor cores").
type TensorCore struct {
	Format MMAFormat
	// K is the number of products fused per step.
	K int
	// FracBits is the number of fraction bits each aligned term keeps
	// below the largest exponent E.
	FracBits int
}

// TensorCoreH200 returns the H200's (Hopper, sm_90) tensor-core step for
// format f: mma.sync and wgmma with fp32 accumulation, 16 products per
// step for bf16 and fp16, 8 for tf32, 25 fraction bits.
func TensorCoreH200(f MMAFormat) TensorCore {
	k := 16
	if f == MMATF32 {
		k = 8
	}
	return TensorCore{Format: f, K: k, FracBits: 25}
}

// Validate reports whether t is a step this model computes.
func (t TensorCore) Validate() error {
	if t.Format == MMANone || t.Format > MMATF32 {
		return fmt.Errorf("tensor core: unknown format %d", t.Format)
	}
	if err := inRange("tensor core: k", t.K, 1, 64); err != nil {
		return err
	}
	return inRange("tensor core: frac bits", t.FracBits, 1, 40)
}

func (t TensorCore) String() string {
	return fmt.Sprintf("%s k=%d frac=%d", t.Format, t.K, t.FracBits)
}

// tcTerm is one term of a fused step: (-1)^neg · sig · 2^(exp - frac).
type tcTerm struct {
	neg  bool
	sig  uint64
	frac int
	exp  int
}

// split writes the fp32 value with bits u (already cut to the format) as a
// term with the format's smallest exponent minExp.
func split(u uint32, minExp int) tcTerm {
	t := tcTerm{neg: u>>31 != 0}
	e := int(u>>23) & 0xff
	m := uint64(u & 0x7fffff)
	if e == 0 { // fp32 subnormal or zero: m·2^-149
		t.sig, t.frac, t.exp = m, 23, -126
		if minExp > -126 {
			t.frac += minExp + 126
			t.exp = minExp
		}
		return t
	}
	t.sig, t.frac, t.exp = m|1<<23, 23, e-127
	if t.exp < minExp {
		t.frac += minExp - t.exp
		t.exp = minExp
	}
	return t
}

// DotAdd computes one step d = c + Σ a[k]·b[k] as the type's doc comment
// states. a and b hold K values (fewer are zero-padded) exact in the
// format (tf32: any fp32 value, of which the low 13 bits are ignored).
func (t TensorCore) DotAdd(a, b []float32, c float32) float32 {
	var terms [65]tcTerm
	n := 0
	minExp := t.Format.minExp()
	cut := uint32(0xffffffff)
	if t.Format == MMATF32 {
		cut = 0xffffe000
	}
	nan, pinf, ninf := false, false, false
	special := func(x float32) {
		switch {
		case x != x:
			nan = true
		case math.IsInf(float64(x), 1):
			pinf = true
		case math.IsInf(float64(x), -1):
			ninf = true
		}
	}
	special(c)
	terms[n] = split(math.Float32bits(c), -126)
	n++
	E := math.MinInt32 // the largest exponent of a nonzero term
	if terms[0].sig != 0 {
		E = terms[0].exp
	}
	for k := 0; k < t.K; k++ {
		var ua, ub uint32
		if k < len(a) {
			ua, ub = math.Float32bits(a[k])&cut, math.Float32bits(b[k])&cut
		}
		x, y := math.Float32frombits(ua), math.Float32frombits(ub)
		if x != x || y != y {
			nan = true
			continue
		}
		xi, yi := math.IsInf(float64(x), 0), math.IsInf(float64(y), 0)
		if xi || yi {
			if x == 0 || y == 0 {
				nan = true
			} else if (x < 0) != (y < 0) {
				ninf = true
			} else {
				pinf = true
			}
			continue
		}
		ta, tb := split(ua, minExp), split(ub, minExp)
		p := tcTerm{neg: ta.neg != tb.neg, sig: ta.sig * tb.sig, frac: ta.frac + tb.frac, exp: ta.exp + tb.exp}
		if p.sig == 0 {
			continue // a zero product adds nothing and does not set E
		}
		terms[n] = p
		n++
		E = max(E, p.exp)
	}
	switch {
	case nan || pinf && ninf:
		return math.Float32frombits(0x7fffffff)
	case pinf:
		return float32(math.Inf(1))
	case ninf:
		return float32(math.Inf(-1))
	}
	var sum int64
	for _, tm := range terms[:n] {
		if tm.sig == 0 {
			continue
		}
		sh := t.FracBits + tm.exp - E - tm.frac
		var v uint64
		switch {
		case sh >= 0:
			v = tm.sig << sh
		case sh > -64:
			v = tm.sig >> -sh
		}
		if tm.neg {
			sum -= int64(v)
		} else {
			sum += int64(v)
		}
	}
	return normaliseRZ(sum, E-t.FracBits)
}

// normaliseRZ returns s·2^scale truncated toward zero to fp32: 24
// significant bits, multiples of 2^-149 below 2^-126, ±Inf from 2^128 on,
// +0 for a zero s.
func normaliseRZ(s int64, scale int) float32 {
	if s == 0 {
		return 0
	}
	neg := s < 0
	mag := uint64(s)
	if neg {
		mag = uint64(-s)
	}
	lead := bits.Len64(mag) - 1 + scale // exponent of the leading bit
	var f float64
	switch {
	case lead > 127:
		f = math.Inf(1)
	case lead >= -126:
		if drop := bits.Len64(mag) - 24; drop > 0 {
			mag >>= drop
			scale += drop
		}
		f = math.Ldexp(float64(mag), scale)
	default: // subnormal: keep multiples of 2^-149
		if sh := scale + 149; sh >= 0 {
			mag <<= sh
		} else if sh > -64 {
			mag >>= -sh
		} else {
			mag = 0
		}
		f = math.Ldexp(float64(mag), -149)
	}
	if neg && f != 0 { // a sum truncated to zero is +0 too
		f = -f
	}
	return float32(f)
}
