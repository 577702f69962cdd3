package oracle

import (
	"math"
	"runtime"
	"sync"
	"testing"
)

// ulp32 is the spacing of fp32 values at |v| (2^-149 for subnormals).
func ulp32(v float64) float64 {
	v = math.Abs(v)
	if v < 0x1p-126 {
		return 0x1p-149
	}
	_, e := math.Frexp(v) // v in [2^(e-1), 2^e)
	return math.Ldexp(1, e-1-23)
}

// errStats is the error of an fp32 function against a float64 reference.
type errStats struct {
	maxULP   float64 // max |got - ref| / ulp32(ref)
	worstX   float32
	n        int // inputs measured
	misround int // results that are not the fp32 nearest to ref
}

func (s *errStats) merge(o errStats) {
	if o.maxULP > s.maxULP {
		s.maxULP, s.worstX = o.maxULP, o.worstX
	}
	s.n += o.n
	s.misround += o.misround
}

// measure evaluates f against ref on the inputs gen(i) for i in [0, n),
// on every core. gen reports false to skip an input. math.Exp and math.Log
// are accurate to under 1 float64 ulp, 2^-29 fp32 ulps: far below what is
// measured.
func measure(n int, gen func(i int) (float32, bool), f func(float32) float32, ref func(float64) float64) errStats {
	workers := runtime.GOMAXPROCS(0)
	stats := make([]errStats, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := &stats[w]
			for i := w; i < n; i += workers {
				x, ok := gen(i)
				if !ok {
					continue
				}
				got, want := float64(f(x)), ref(float64(x))
				s.n++
				if float32(want) != float32(got) {
					s.misround++
				}
				if math.IsInf(got, 0) && float64(float32(want)) == got {
					continue // the exact result is past the overflow threshold
				}
				if e := math.Abs(got-want) / ulp32(want); e > s.maxULP || e != e {
					s.maxULP, s.worstX = e, x
				}
			}
		}()
	}
	wg.Wait()
	var all errStats
	for _, s := range stats {
		all.merge(s)
	}
	return all
}

// Bounds on the error of Exp32 and Log32 in fp32 ulps of the exact result
// (measured maxima are in docs/oracle.md and logged by the tests).
const (
	exp32MaxULP = 1.0
	log32MaxULP = 2.0
)

// mix32 is a bijective scramble of i (the low 32 bits of a 64-bit mix), so
// that i in [0, n) visits n distinct-looking fp32 bit patterns spread over
// the whole range.
func mix32(i int) uint32 {
	z := uint64(i)*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return uint32(z ^ z>>31)
}

// inputs is a named set of n fp32 inputs: gen(i) for i in [0, n), the
// ones where it reports false left out.
type inputs struct {
	name string
	n    int
	gen  func(i int) (float32, bool)
}

// checkAccuracy measures f against ref (in float64) on every set, logs
// each set's maximum error in ulps, and fails when the maximum over all
// of them is above maxULP.
func checkAccuracy(t *testing.T, name string, f func(float32) float32, ref func(float64) float64, maxULP float64, sets []inputs) {
	t.Helper()
	var all errStats
	for _, r := range sets {
		s := measure(r.n, r.gen, f, ref)
		t.Logf("%s %s: %d inputs, max error %.4f ulp at %08x (%g), %d not correctly rounded",
			name, r.name, s.n, s.maxULP, math.Float32bits(s.worstX), s.worstX, s.misround)
		all.merge(s)
	}
	if !(all.maxULP <= maxULP) {
		t.Errorf("%s max error %.4f ulp at %08x (%g), want <= %v", name, all.maxULP, math.Float32bits(all.worstX), all.worstX, maxULP)
	}
}

// TestExp32Accuracy measures Exp32 against math.Exp on 2·10^7 fp32 bit
// patterns spread uniformly over all patterns (the 10^7 of them in
// [-104, 89]), on every fp32 in [1, 2) and [-2, -1), and on every fp32 in
// [64, 89] and [-104, -64] (results near overflow and subnormal results),
// and asserts the maximum error is at most exp32MaxULP.
func TestExp32Accuracy(t *testing.T) {
	inDomain := func(x float32) (float32, bool) { return x, x >= expMinArg && x <= expMaxArg }
	checkAccuracy(t, "Exp32", Exp32, math.Exp, exp32MaxULP, []inputs{
		{"2·10^7 scrambled bit patterns", 20_000_000, func(i int) (float32, bool) { return inDomain(f32(mix32(i))) }},
		{"all of [1,2)", 1 << 23, func(i int) (float32, bool) { return f32(0x3f800000 + uint32(i)), true }},
		{"all of [-2,-1)", 1 << 23, func(i int) (float32, bool) { return f32(0xbf800000 + uint32(i)), true }},
		{"all of [64,89]", 1 << 23, func(i int) (float32, bool) { return inDomain(f32(0x42800000 + uint32(i))) }},
		{"all of [-104,-64]", 1 << 23, func(i int) (float32, bool) { return inDomain(f32(0xc2800000 + uint32(i))) }},
	})
}

// TestLog32Accuracy measures Log32 against math.Log on 10^7 scrambled
// positive finite fp32 bit patterns, on every fp32 in [0.5, 2) (results
// near 0, where cancellation would show) and on every subnormal, and
// asserts the maximum error is at most log32MaxULP.
func TestLog32Accuracy(t *testing.T) {
	checkAccuracy(t, "Log32", Log32, math.Log, log32MaxULP, []inputs{
		{"10^7 scrambled bit patterns", 10_000_000, func(i int) (float32, bool) {
			b := mix32(i) &^ (1 << 31)
			return f32(b), b > 0 && b < 0x7f800000
		}},
		{"all of [0.5,2)", 1 << 24, func(i int) (float32, bool) { return f32(0x3f000000 + uint32(i)), true }},
		{"all subnormals", 1<<23 - 1, func(i int) (float32, bool) { return f32(uint32(i) + 1), true }},
	})
}

// TestExpLogSpecials pins the documented special values.
func TestExpLogSpecials(t *testing.T) {
	inf, ninf := float32(math.Inf(1)), float32(math.Inf(-1))
	for _, c := range []struct {
		name string
		f    func(float32) float32
		x    float32
		want uint32
	}{
		{"exp", Exp32, 0, 0x3f800000},
		{"exp", Exp32, f32(0x80000000), 0x3f800000},
		{"exp", Exp32, 1, math.Float32bits(float32(math.E))},
		{"exp", Exp32, f32(0x7fc00001), CanonicalNaN},
		{"exp", Exp32, inf, 0x7f800000},
		{"exp", Exp32, ninf, 0},
		{"exp", Exp32, 89, 0x7f800000},
		{"exp", Exp32, 88.72, math.Float32bits(float32(math.Exp(float64(float32(88.72)))))},
		{"exp", Exp32, -104, 0},
		{"exp", Exp32, -103.9, 1}, // e^-103.9 = 1.07·2^-149 rounds to the smallest subnormal
		{"log", Log32, 1, 0},
		{"log", Log32, 0, 0xff800000},
		{"log", Log32, f32(0x80000000), 0xff800000},
		{"log", Log32, -1, CanonicalNaN},
		{"log", Log32, ninf, CanonicalNaN},
		{"log", Log32, f32(0xffc00000), CanonicalNaN},
		{"log", Log32, inf, 0x7f800000},
		{"log", Log32, float32(math.E), 0x3f800000},
		{"log", Log32, 2, math.Float32bits(float32(math.Ln2))},
		{"log", Log32, f32(1), math.Float32bits(float32(math.Log(0x1p-149)))},
	} {
		if got := math.Float32bits(c.f(c.x)); got != c.want {
			t.Errorf("%s(%08x) = %08x, want %08x", c.name, math.Float32bits(c.x), got, c.want)
		}
	}
}
