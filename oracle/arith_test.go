package oracle

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// exactPrec is enough bits to hold a·b+c exactly for any finite fp32 a, b,
// c: the product has at most 48 significant bits and the operands' bits
// span at most 2^256 (the largest product) down to 2^-298 (the smallest
// product's last bit), under 600 bits.
const exactPrec = 1100

// refFMA computes the correctly rounded fp32 a·b+c with math/big: the exact
// sum, then big.Float.Float32, which rounds to nearest even including
// subnormal results and overflow to ±Inf. NaN and Inf operands follow IEEE
// 754 (NaN results are the canonical NaN). The big.Floats are scratch space
// owned by one goroutine.
type refFMA struct{ x, y, z, p, s big.Float }

func newRefFMA() *refFMA {
	r := &refFMA{}
	for _, f := range []*big.Float{&r.x, &r.y, &r.z, &r.p, &r.s} {
		f.SetPrec(exactPrec).SetMode(big.ToNearestEven)
	}
	return r
}

func (r *refFMA) fma(a, b, c float32) uint32 {
	switch {
	case a != a || b != b || c != c:
		return CanonicalNaN
	case isInf32(a) || isInf32(b):
		if a == 0 || b == 0 {
			return CanonicalNaN // Inf·0
		}
		neg := math.Signbit(float64(a)) != math.Signbit(float64(b))
		if isInf32(c) && math.Signbit(float64(c)) != neg {
			return CanonicalNaN // Inf - Inf
		}
		return math.Float32bits(float32(math.Inf(sign(neg))))
	case isInf32(c):
		return math.Float32bits(c)
	}
	r.x.SetFloat64(float64(a))
	r.y.SetFloat64(float64(b))
	r.z.SetFloat64(float64(c))
	r.p.Mul(&r.x, &r.y)
	if r.p.Acc() != big.Exact {
		panic("inexact product")
	}
	r.s.Add(&r.p, &r.z)
	if r.s.Acc() != big.Exact {
		panic("inexact sum")
	}
	f, _ := r.s.Float32()
	return math.Float32bits(f)
}

func sign(neg bool) int {
	if neg {
		return -1
	}
	return 1
}

func isInf32(f float32) bool { return math.IsInf(float64(f), 0) }

func f32(b uint32) float32 { return math.Float32frombits(b) }

// fmaCase is one fma32 input.
type fmaCase struct{ a, b, c float32 }

// checkFMA compares FMA32 with the math/big reference on every case, in
// parallel, and reports at most 10 mismatches; so too its exact path
// fma32Odd (the FMA32 of every golden before the fast path) and, where
// fp32Safe takes it, its fast path float32(float64(a·b) + c).
func checkFMA(t *testing.T, class string, cases []fmaCase) {
	t.Helper()
	workers := runtime.GOMAXPROCS(0)
	var mu sync.Mutex
	bad := 0
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ref := newRefFMA()
			for i := w; i < len(cases); i += workers {
				c := cases[i]
				want := ref.fma(c.a, c.b, c.c)
				s := float64(float64(c.a)*float64(c.b)) + float64(c.c)
				for _, p := range []struct {
					name string
					got  uint32
					ok   bool
				}{
					{"FMA32", math.Float32bits(FMA32(c.a, c.b, c.c)), true},
					{"fma32Odd", math.Float32bits(fma32Odd(c.a, c.b, c.c)), true},
					{"fast path", math.Float32bits(float32(s)), fp32Safe(s)},
				} {
					if p.ok && p.got != want {
						mu.Lock()
						if bad < 10 {
							t.Errorf("%s: %s(%08x, %08x, %08x) = %08x, math/big says %08x",
								class, p.name, math.Float32bits(c.a), math.Float32bits(c.b), math.Float32bits(c.c), p.got, want)
						}
						bad++
						mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	if bad > 0 {
		t.Errorf("%s: %d of %d cases wrong", class, bad, len(cases))
	}
}

// randFinite returns a finite fp32 with a random sign and mantissa and the
// given biased exponent (0 gives a subnormal or zero).
func randWithExp(r *rand.Rand, biased int) float32 {
	return f32(r.Uint32()&0x807fffff | uint32(biased)<<23)
}

// odd returns a random odd integer in [lo, hi).
func oddIn(r *rand.Rand, lo, hi int) int { return (lo + r.IntN(hi-lo)) | 1 }

// ldexp32 returns m·2^e exactly (m·2^e must be an fp32).
func ldexp32(m int, e int) float32 { return float32(math.Ldexp(float64(m), e)) }

// fmaClasses returns the FMA32 proof inputs by class: 10^6 random inputs and
// the adversarial classes.
func fmaClasses() map[string][]fmaCase {
	r := newRNG(1)
	cl := map[string][]fmaCase{}
	add := func(k string, a, b, c float32) { cl[k] = append(cl[k], fmaCase{a, b, c}) }

	// Random bit patterns: every class of value, NaN and Inf included.
	for range 400_000 {
		add("random bits", f32(r.Uint32()), f32(r.Uint32()), f32(r.Uint32()))
	}
	// Random values whose exponents are close: c's exponent within ±26 of
	// a·b's, where the sum needs every bit of the product.
	for range 500_000 {
		ea, eb := 1+r.IntN(254), 1+r.IntN(254)
		ep := ea + eb - 127
		if ep < -20 || ep > 275 {
			ep = 127
		}
		ec := min(max(ep+r.IntN(53)-26, 0), 254)
		add("close exponents", randWithExp(r, ea), randWithExp(r, eb), randWithExp(r, ec))
	}
	// Exact midpoints: a = ma·2^ea, b = mb·2^eb with odd 13-bit ma, mb, so
	// a·b is an odd integer of 25 or 26 bits times a power of two: with 25
	// bits it lies exactly halfway between two fp32 values. c = ±0 leaves
	// it there (ties to even), c = ±2^-k·ulp nudges it just above or below
	// (the sticky bit), c = a multiple of the ulp keeps it a midpoint.
	for range 100_000 {
		ma, mb := oddIn(r, 1<<12, 1<<13), oddIn(r, 1<<12, 1<<13)
		ea, eb := r.IntN(100)-60, r.IntN(100)-60
		a, b := ldexp32(ma, ea), ldexp32(mb, eb)
		if r.IntN(2) == 0 {
			a = -a
		}
		p := float64(a) * float64(b)
		_, pe := math.Frexp(p) // |p| in [2^(pe-1), 2^pe)
		ulp := pe - 24         // fp32 ulp exponent of |p| (normal range)
		switch r.IntN(4) {
		case 0:
			add("midpoints", a, b, f32(uint32(r.IntN(2))<<31))
		case 1:
			add("midpoints", a, b, ldexp32(sign(r.IntN(2) == 0), ulp-1-1-r.IntN(60)))
		case 2:
			add("midpoints", a, b, ldexp32(r.IntN(64)-32, ulp))
		case 3:
			// the double-rounding shape of docs/oracle.md: 1+2^-12 squared plus a tiny c.
			add("midpoints", a, a, ldexp32(sign(r.IntN(2) == 0), 2*ea+24-1-1-r.IntN(100)))
		}
	}
	// Subnormal midpoints: a·b = odd·2^-150 < 2^-126 is halfway between two
	// subnormals; c = 0 or a subnormal keeps it there. Nudged midpoints:
	// a·b = ±2^-150·(1+x)(1-x) = ±(2^-150 - x²·2^-150) with x = j·2^-23 is
	// a hair below the midpoint 2^-150; c = k·2^-149 (or (k+1)·2^-149 with
	// the product negated, a hair above) makes the float64 sum drop the
	// hair when c is large, which the naive float64 route gets wrong.
	for range 100_000 {
		ma, mb := oddIn(r, 1<<11, 1<<12), oddIn(r, 1<<11, 1<<12)
		ea := r.IntN(60) - 100
		a, b := ldexp32(ma, ea), ldexp32(mb, -150-ea)
		var c float32
		k := r.IntN(1 << 23)
		switch r.IntN(4) {
		case 1:
			c = ldexp32(k-1<<22, -149)
		case 2:
			j := 1 + r.IntN(1<<10)
			a, b = ldexp32(1<<23+j, ea-23), ldexp32(1<<23-j, -150-ea-23)
			c = ldexp32(k, -149)
		case 3:
			j := 1 + r.IntN(1<<10)
			a, b = ldexp32(-(1<<23+j), ea-23), ldexp32(1<<23-j, -150-ea-23)
			c = ldexp32(k+1, -149)
		}
		if r.IntN(2) == 0 {
			a, c = -a, -c
		}
		add("subnormal midpoints", a, b, c)
	}
	// Heavy cancellation: c is -(a·b) rounded to fp32, plus or minus a few
	// ulps, so the result is the tiny residual (exact or nearly).
	for range 100_000 {
		a, b := randWithExp(r, 1+r.IntN(254)), randWithExp(r, 64+r.IntN(126))
		p := Mul32(a, b)
		if isInf32(p) {
			continue
		}
		c := f32(math.Float32bits(-p) + uint32(r.IntN(7)) - 3)
		add("cancellation", a, b, c)
	}
	// Subnormal results: tiny products and subnormal or tiny c.
	for range 100_000 {
		ea := 1 + r.IntN(100)
		eb := max(1, 127-126-ea+127-r.IntN(30)) // a·b around 2^-126 .. 2^-156
		add("subnormal results", randWithExp(r, ea), randWithExp(r, eb), randWithExp(r, r.IntN(3)))
	}
	// Overflow: results around the largest finite value, including the
	// exact midpoint MaxFloat32 + 2^103 (rounds to Inf) and just below.
	mx := float32(math.MaxFloat32)
	for _, c := range []float32{ldexp32(1, 103), ldexp32(1<<24-1, 103-24), ldexp32(1, 102), -ldexp32(1, 103), ldexp32(1, 104), 0} {
		add("overflow", mx, 1, c)
		add("overflow", -mx, 1, -c)
		add("overflow", mx, -1, -c)
	}
	for range 100_000 {
		ea := 127 + r.IntN(128)
		eb := 254 - ea + 127 + r.IntN(3) - 1
		add("overflow", randWithExp(r, ea), randWithExp(r, min(max(eb, 1), 254)), randWithExp(r, 250+r.IntN(5)))
	}
	// Signed zeros: every sign combination of a zero product and c = ±0,
	// and exact cancellation (which gives +0).
	vals := []float32{0, f32(0x80000000), 1, -1, 3, -3, f32(1), f32(0x80000001)}
	for _, a := range vals {
		for _, b := range vals {
			for _, c := range []float32{0, f32(0x80000000)} {
				add("signed zeros", a, b, c)
			}
			add("signed zeros", a, b, -Mul32(a, b))
		}
	}
	// Specials: NaN (quiet, signalling, negative, payloads) and Inf with
	// everything.
	spec := []float32{0, f32(0x80000000), 1, -1, 2, f32(1), f32(0x807fffff), mx, -mx,
		float32(math.Inf(1)), float32(math.Inf(-1)), f32(0x7fc00000), f32(0xffc00000), f32(0x7f800001), f32(0x7fbfffff), f32(0xff812345)}
	for _, a := range spec {
		for _, b := range spec {
			for _, c := range spec {
				add("nan and inf", a, b, c)
			}
		}
	}
	return cl
}

// TestFMA32 proves FMA32 against math/big on 10^6 random inputs and the
// adversarial classes (exact midpoints, subnormal midpoints, heavy
// cancellation, subnormal results, overflow to Inf, signed zeros, NaN and
// Inf operands). A NaN result must be the canonical NaN 0x7fffffff.
func TestFMA32(t *testing.T) {
	total := 0
	for class, cases := range fmaClasses() {
		total += len(cases)
		t.Run(class, func(t *testing.T) { checkFMA(t, class, cases) })
	}
	if total < 1_000_000 {
		t.Fatalf("only %d inputs, want at least 10^6", total)
	}
	t.Logf("%d inputs checked", total)
}

// fp64Midpoints is a constructed family where the float64 sum rounds onto
// an fp32 midpoint: a = (1+j·2^-12)·2^ea and b = (1+j·2^-12)·2^eb for every
// odd j < 1696 make a·b = (1 + j·2^-11 + j²·2^-24)·2^(ea+eb), an exact
// fp32 midpoint while it stays below 2 (j < 1696; j² odd: half an ulp of
// [1, 2)), and c = ±2^-k of it for
// every k in 54..80 is lost in the float64 sum (below half its ulp), so s
// is the midpoint and inexact: double rounding would go to even, the
// correct result goes away from the midpoint toward c. Also c = 0 (an exact
// tie). Binades: ea+eb in {-120, -60, -1, 0, 1, 60, 120}.
func fp64Midpoints() []fmaCase {
	var out []fmaCase
	for _, ep := range []int{-120, -60, -1, 0, 1, 60, 120} {
		ea := ep / 2
		eb := ep - ea
		for j := 1; j < 1696; j += 2 {
			a, b := ldexp32(1<<12+j, ea-12), ldexp32(1<<12+j, eb-12)
			out = append(out, fmaCase{a, b, 0}, fmaCase{-a, b, 0})
			for k := 54; k <= 80; k++ {
				c := ldexp32(1, ep-k)
				out = append(out, fmaCase{a, b, c}, fmaCase{a, b, -c}, fmaCase{-a, b, c}, fmaCase{-a, b, -c})
			}
		}
	}
	return out
}

// TestFMA32FastPath checks the fast path's argument (FMA32's doc) where it
// matters: on the constructed family fp64Midpoints, every input's float64
// sum is an fp32 midpoint, fp32Safe sends it to the exact path, and FMA32
// is right (math/big). TestFMA32 checks the fast path, wherever it is
// taken, on every class; here it must also be the common path on them.
func TestFMA32FastPath(t *testing.T) {
	ref := newRefFMA()
	fam := fp64Midpoints()
	for _, c := range fam {
		s := float64(float64(c.a)*float64(c.b)) + float64(c.c)
		if fp32Safe(s) {
			t.Fatalf("fp64 midpoint (%08x, %08x, %08x): s = %x taken by the fast path",
				math.Float32bits(c.a), math.Float32bits(c.b), math.Float32bits(c.c), s)
		}
		if got, want := math.Float32bits(FMA32(c.a, c.b, c.c)), ref.fma(c.a, c.b, c.c); got != want {
			t.Fatalf("FMA32(%08x, %08x, %08x) = %08x, math/big says %08x",
				math.Float32bits(c.a), math.Float32bits(c.b), math.Float32bits(c.c), got, want)
		}
	}
	if len(fam) < 100_000 {
		t.Fatalf("only %d constructed midpoints", len(fam))
	}
	fast, total := 0, 0
	for _, cases := range fmaClasses() {
		for _, c := range cases {
			total++
			if fp32Safe(float64(float64(c.a)*float64(c.b)) + float64(c.c)) {
				fast++
			}
		}
	}
	if fast < total/2 {
		t.Errorf("fast path taken on %d of %d inputs, want most", fast, total)
	}
}

// TestFMA32DoubleRounding is the counterexample of docs/oracle.md: a = b = 1+2^-12,
// c = 2^-80. The exact a·b+c = 1 + 2^-11 + 2^-24 + 2^-80 is just above the
// midpoint between 0x3f801000 and 0x3f801001, so fma.rn.f32 gives
// 0x3f801001; the float64 route drops 2^-80, lands on the midpoint and
// rounds to even: 0x3f801000.
func TestFMA32DoubleRounding(t *testing.T) {
	a, c := f32(0x3f800800), f32(0x17800000)
	if got := math.Float32bits(FMA32(a, a, c)); got != 0x3f801001 {
		t.Errorf("FMA32 = %08x, want 3f801001", got)
	}
	if got := math.Float32bits(float32(math.FMA(float64(a), float64(a), float64(c)))); got != 0x3f801000 {
		t.Errorf("naive float32(math.FMA) = %08x, want the double-rounded 3f801000", got)
	}
	if got := newRefFMA().fma(a, a, c); got != 0x3f801001 {
		t.Errorf("math/big reference = %08x, want 3f801001", got)
	}
}

// TestFMA32Specials pins the IEEE rules for special operands and the sign
// of zero results.
func TestFMA32Specials(t *testing.T) {
	inf, ninf := float32(math.Inf(1)), float32(math.Inf(-1))
	nz := f32(0x80000000)
	for _, c := range []struct {
		a, b, c float32
		want    uint32
	}{
		{inf, 0, 1, CanonicalNaN},
		{inf, 1, ninf, CanonicalNaN},
		{inf, -1, inf, CanonicalNaN},
		{inf, 2, inf, 0x7f800000},
		{1, 1, ninf, 0xff800000},
		{f32(0x7f800001), 1, 1, CanonicalNaN}, // signalling NaN in, canonical out
		{f32(0xffc00123), 1, 1, CanonicalNaN},
		{0, 1, nz, 0x00000000},
		{nz, 1, nz, 0x80000000},
		{nz, nz, nz, 0x00000000},
		{3, 1, -3, 0x00000000},                             // exact cancellation is +0
		{f32(0x00000001), f32(0x00000001), nz, 0x00000000}, // +2^-298 + -0 rounds to +0
		{f32(0x80000001), f32(0x00000001), 0, 0x80000000},  // -2^-298 + +0 rounds to -0
		{math.MaxFloat32, 2, -math.MaxFloat32, 0x7f7fffff}, // no intermediate overflow
		{math.MaxFloat32, 1, ldexp32(1, 103), 0x7f800000},  // midpoint: ties to even is Inf
		{math.MaxFloat32, 1, ldexp32(1, 102), 0x7f7fffff},  // below the midpoint
		{ldexp32(1, -75), ldexp32(3, -75), 0, 0x00000002},  // 3·2^-150: ties to even 2·2^-149
		{ldexp32(1, -75), ldexp32(1, -75), 0, 0x00000000},  // 2^-150: ties to even +0
		{ldexp32(1, -75), ldexp32(1, -75), ldexp32(1, -100), 0x0d800000},
	} {
		want := c.want
		if got := math.Float32bits(FMA32(c.a, c.b, c.c)); got != want {
			t.Errorf("FMA32(%08x, %08x, %08x) = %08x, want %08x",
				math.Float32bits(c.a), math.Float32bits(c.b), math.Float32bits(c.c), got, want)
		}
	}
}

// refBasic computes a correctly rounded fp32 +, -, ×, ÷ with math/big
// (exact result, then one rounding to nearest even with subnormals).
func refBasic(op byte, a, b float32) uint32 {
	fa, fb := float64(a), float64(b)
	if a != a || b != b {
		return CanonicalNaN
	}
	// Zero and Inf operands give exact results (±0, ±Inf, the other
	// operand, or NaN) by the same IEEE 754 rules in float64 and fp32.
	if isInf32(a) || isInf32(b) || a == 0 || b == 0 {
		var v float64
		switch op {
		case '+':
			v = fa + fb
		case '-':
			v = fa - fb
		case '*':
			v = fa * fb
		case '/':
			v = fa / fb
		}
		if v != v {
			return CanonicalNaN
		}
		return math.Float32bits(float32(v)) // exact: no rounding happens here
	}
	if op == '/' {
		q := new(big.Rat).Quo(new(big.Rat).SetFloat64(fa), new(big.Rat).SetFloat64(fb))
		f, _ := q.Float32()
		if f == 0 && (fa < 0) != (fb < 0) {
			f = f32(0x80000000)
		}
		return math.Float32bits(f)
	}
	x := new(big.Float).SetPrec(exactPrec).SetFloat64(fa)
	y := new(big.Float).SetPrec(exactPrec).SetFloat64(fb)
	z := new(big.Float).SetPrec(exactPrec)
	switch op {
	case '+':
		z.Add(x, y)
	case '-':
		z.Sub(x, y)
	case '*':
		z.Mul(x, y)
	}
	f, _ := z.Float32()
	return math.Float32bits(f)
}

// sqrtCorrect reports whether r is the correctly rounded fp32 square root
// of a finite a > 0: the exact squares of the midpoints around r bracket a
// (a square root is never exactly a midpoint of fp32 values).
func sqrtCorrect(a, r float32) bool {
	rb := math.Float32bits(r)
	lo := (float64(r) + float64(f32(rb-1))) / 2 // exact in float64
	hi := (float64(r) + float64(f32(rb+1))) / 2
	sq := func(v float64) *big.Float {
		x := new(big.Float).SetPrec(200).SetFloat64(v)
		return x.Mul(x, x)
	}
	av := new(big.Float).SetPrec(200).SetFloat64(float64(a))
	return sq(lo).Cmp(av) < 0 && av.Cmp(sq(hi)) < 0
}

// TestBasicOps checks Add32, Sub32, Mul32, Div32 and Sqrt32 against math/big
// on random bit patterns and on values with close exponents.
func TestBasicOps(t *testing.T) {
	r := newRNG(2)
	ops := []struct {
		op byte
		f  func(a, b float32) float32
	}{{'+', Add32}, {'-', Sub32}, {'*', Mul32}, {'/', Div32}}
	for _, o := range ops {
		bad := 0
		for i := range 100_000 {
			var a, b float32
			if i%2 == 0 {
				a, b = f32(r.Uint32()), f32(r.Uint32())
			} else {
				e := r.IntN(256)
				a, b = randWithExp(r, e), randWithExp(r, min(max(e+r.IntN(50)-25, 0), 254))
				if o.op == '*' || o.op == '/' {
					b = randWithExp(r, r.IntN(255))
				}
			}
			got, want := math.Float32bits(o.f(a, b)), refBasic(o.op, a, b)
			if got != want {
				if bad < 10 {
					t.Errorf("%08x %c %08x = %08x, math/big says %08x", math.Float32bits(a), o.op, math.Float32bits(b), got, want)
				}
				bad++
			}
		}
	}
	for i := range 100_000 {
		a := f32(r.Uint32() &^ (1 << 31))
		if i%4 == 0 {
			a = f32(r.Uint32() & 0x007fffff) // subnormal inputs
		}
		got := Sqrt32(a)
		switch {
		case a != a:
			if math.Float32bits(got) != CanonicalNaN {
				t.Errorf("Sqrt32(%08x) = %08x, want canonical NaN", math.Float32bits(a), math.Float32bits(got))
			}
		case a == 0 || isInf32(a):
			if math.Float32bits(got) != math.Float32bits(a) {
				t.Errorf("Sqrt32(%08x) = %08x", math.Float32bits(a), math.Float32bits(got))
			}
		case !sqrtCorrect(a, got):
			t.Fatalf("Sqrt32(%08x) = %08x is not correctly rounded", math.Float32bits(a), math.Float32bits(got))
		}
	}
	for _, c := range []struct{ a, want uint32 }{
		{0x80000000, 0x80000000}, {0xbf800000, CanonicalNaN}, {0xff800000, CanonicalNaN}, {0x7f800000, 0x7f800000},
	} {
		if got := math.Float32bits(Sqrt32(f32(c.a))); got != c.want {
			t.Errorf("Sqrt32(%08x) = %08x, want %08x", c.a, got, c.want)
		}
	}
}

// TestMax32 pins PTX max.f32: NaN loses to a number, two NaNs give the
// canonical NaN, +0 beats -0 in either order.
func TestMax32(t *testing.T) {
	nan, nz := f32(0x7fc00001), f32(0x80000000)
	for _, c := range []struct {
		a, b float32
		want uint32
	}{
		{1, 2, 0x40000000}, {2, 1, 0x40000000}, {-1, -2, 0xbf800000},
		{nan, 1, 0x3f800000}, {1, nan, 0x3f800000}, {nan, nan, CanonicalNaN},
		{0, nz, 0}, {nz, 0, 0}, {nz, nz, 0x80000000},
		{float32(math.Inf(-1)), -3, 0xc0400000},
	} {
		if got := math.Float32bits(Max32(c.a, c.b)); got != c.want {
			t.Errorf("Max32(%08x, %08x) = %08x, want %08x", math.Float32bits(c.a), math.Float32bits(c.b), got, c.want)
		}
	}
}

func ExampleFMA32() {
	a, c := f32(0x3f800800), f32(0x17800000) // 1+2^-12 and 2^-80
	fmt.Printf("%08x\n", math.Float32bits(FMA32(a, a, c)))
	// Output: 3f801001
}

// TestAxpy32: the inlined loop is bitwise FMA32 on random bit patterns
// (NaN and Inf included), on close exponents and on the midpoint class.
func TestAxpy32(t *testing.T) {
	cl := fmaClasses()
	for _, class := range []string{"random bits", "close exponents", "midpoints", "subnormal midpoints", "nan and inf", "signed zeros", "overflow"} {
		for _, c := range cl[class] {
			y := []float32{c.c}
			axpy32(c.a, []float32{c.b}, y)
			if got, want := math.Float32bits(y[0]), math.Float32bits(FMA32(c.a, c.b, c.c)); got != want {
				t.Fatalf("%s: axpy32(%08x, %08x, %08x) = %08x, FMA32 %08x", class,
					math.Float32bits(c.a), math.Float32bits(c.b), math.Float32bits(c.c), got, want)
			}
		}
	}
}

// TestFMAChain: the inlined loop is bitwise a loop of FMA32 calls, on
// random vectors, random bit patterns (NaN and Inf included) and spiky
// values, from +0, -0 and random starting values.
func TestFMAChain(t *testing.T) {
	r := newRNG(5)
	for i := range 20_000 {
		n := r.IntN(200)
		x, y := randVals(r, FP32, n, 1), randVals(r, FP32, n, 1)
		for j := range x {
			switch {
			case i%3 == 1:
				x[j], y[j] = f32(r.Uint32()), f32(r.Uint32())
			case i%3 == 2 && r.IntN(8) == 0:
				x[j] = ldexp32(1+r.IntN(1<<20), r.IntN(200)-100)
			}
		}
		start := []float32{0, f32(0x80000000), float32(r.NormFloat64())}[i%3]
		want := start
		for j := range x {
			want = FMA32(x[j], y[j], want)
		}
		if got := fmaChain(start, x, y); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("case %d: fmaChain = %08x, FMA32 loop %08x", i, math.Float32bits(got), math.Float32bits(want))
		}
	}
}

// FuzzFMA32 compares FMA32 with the math/big reference on fuzzed bit
// patterns: go test ./oracle -run '^$' -fuzz FuzzFMA32 -fuzztime 1m.
// Plain go test runs the seeds.
func FuzzFMA32(f *testing.F) {
	f.Add(uint32(0x3f800800), uint32(0x3f800800), uint32(0x17800000)) // docs/oracle.md double rounding
	f.Add(uint32(0x7f7fffff), uint32(0x3f800000), uint32(0x73000000)) // MaxFloat32 + 2^103: to Inf
	f.Add(uint32(0x1a000000), uint32(0x1a400000), uint32(0))          // 3·2^-150: subnormal tie
	f.Add(uint32(0x80000001), uint32(0x00000001), uint32(0))          // -2^-298 + 0 = -0
	f.Add(uint32(0x7f800000), uint32(0), uint32(0x3f800000))          // Inf·0: canonical NaN
	ref := newRefFMA()
	f.Fuzz(func(t *testing.T, a, b, c uint32) {
		got, want := math.Float32bits(FMA32(f32(a), f32(b), f32(c))), ref.fma(f32(a), f32(b), f32(c))
		if got != want {
			t.Errorf("FMA32(%08x, %08x, %08x) = %08x, math/big says %08x", a, b, c, got, want)
		}
	})
}
