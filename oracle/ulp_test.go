package oracle

import (
	"math"
	"testing"
)

func TestULPDistance(t *testing.T) {
	nz := f32(0x80000000)
	inf := float32(math.Inf(1))
	maxU := ^uint64(0)
	for _, c := range []struct {
		name                   string
		d                      DType
		a, b                   float32
		ulps                   uint64
		same, signedZero, anan bool
	}{
		{"equal", FP32, 1, 1, 0, true, false, false},
		{"+0 -0", FP32, 0, nz, 0, false, true, false},
		{"-0 +0 bf16", BF16, nz, 0, 0, false, true, false},
		{"-0 +0 fp16", FP16, nz, 0, 0, false, true, false},
		{"neighbours", FP32, 1, math.Nextafter32(1, 2), 1, false, false, false},
		{"binade edge", FP32, 1, math.Nextafter32(1, 0), 1, false, false, false},
		{"across zero", FP32, f32(1), f32(0x80000001), 2, false, false, false},
		{"subnormal to -0", FP32, f32(1), nz, 1, false, false, false},
		{"max to inf", FP32, math.MaxFloat32, inf, 1, false, false, false},
		{"-inf to inf", FP32, -inf, inf, 2 * 0x7f800000, false, false, false},
		{"bf16 neighbours", BF16, 1, 1 + 1.0/128, 1, false, false, false},
		{"bf16 rounds first", BF16, 1, 1 + 1.0/1024, 0, true, false, false},
		{"bf16 across zero", BF16, -1, 1, 2 * 0x3f80, false, false, false},
		{"fp16 neighbours", FP16, 1, 1 + 1.0/1024, 1, false, false, false},
		{"fp16 max to inf", FP16, 65504, inf, 1, false, false, false},
		{"nan same bits", FP32, f32(0x7fc00001), f32(0x7fc00001), 0, true, false, true},
		{"nan other bits", FP32, f32(0x7fc00001), f32(0x7fc00002), maxU, false, false, true},
		{"nan vs number", FP32, f32(CanonicalNaN), 1, maxU, false, false, true},
		{"number vs nan", BF16, 1, f32(0xffc00000), maxU, false, false, true},
	} {
		got := ULPDistance(c.d, c.a, c.b)
		want := Distance{ULPs: c.ulps, SameBits: c.same, SignedZero: c.signedZero, NaN: c.anan}
		if got != want {
			t.Errorf("%s: ULPDistance(%s, %08x, %08x) = %+v, want %+v", c.name, c.d, math.Float32bits(c.a), math.Float32bits(c.b), got, want)
		}
		if rev := ULPDistance(c.d, c.b, c.a); rev != got {
			t.Errorf("%s: not symmetric: %+v vs %+v", c.name, rev, got)
		}
	}
}

// TestULPDistanceSteps: stepping k times with math.Nextafter32 from a
// random finite value (through zero too) is k ulps.
func TestULPDistanceSteps(t *testing.T) {
	r := newRNG(4)
	for i := range 100_000 {
		a := f32(r.Uint32()&^0x7f800000 | uint32(r.IntN(255))<<23)
		if i%10 == 0 {
			a = f32(r.Uint32() & 0x8000000f) // around zero
		}
		k := r.IntN(40)
		dir := float32(math.Inf(1 - 2*r.IntN(2)))
		b := a
		for range k {
			b = math.Nextafter32(b, dir)
		}
		if isInf32(b) {
			continue
		}
		got := ULPDistance(FP32, a, b)
		// Nextafter32 steps from -min subnormal to -0 and then to
		// +min subnormal: -0 and +0 are one value, so crossing zero passes
		// through exactly one of them, as the count assumes.
		if got.ULPs != uint64(k) {
			t.Fatalf("%08x stepped %d times to %08x: ULPDistance = %d", math.Float32bits(a), k, math.Float32bits(b), got.ULPs)
		}
	}
}

func TestIsNaN(t *testing.T) {
	for _, c := range []struct {
		d    DType
		bits uint32
		want bool
	}{
		{FP32, 0x7f800000, false}, {FP32, 0x7f800001, true}, {FP32, 0xffffffff, true}, {FP32, 0x7f7fffff, false},
		{BF16, 0x7f80, false}, {BF16, 0x7f81, true}, {BF16, 0xffc0, true},
		{FP16, 0x7c00, false}, {FP16, 0x7c01, true}, {FP16, 0xfe00, true}, {FP16, 0x7bff, false},
	} {
		if got := IsNaN(c.d, c.bits); got != c.want {
			t.Errorf("IsNaN(%s, %x) = %v", c.d, c.bits, got)
		}
	}
}

// TestFiniteULPs: the ulps from 0 to the largest finite value, and the
// finite values' edge in each dtype.
func TestFiniteULPs(t *testing.T) {
	for _, tc := range []struct {
		d        DType
		ulps     uint64
		max, inf uint32 // bits of the largest finite value and of +Inf
	}{
		{BF16, 32639, 0x7f7f, 0x7f80},
		{FP16, 31743, 0x7bff, 0x7c00},
		{FP32, 2139095039, 0x7f7fffff, 0x7f800000},
	} {
		if got := FiniteULPs(tc.d); got != tc.ulps {
			t.Errorf("FiniteULPs(%s) = %d, want %d", tc.d, got, tc.ulps)
		}
		sign := uint32(1) << (tc.d.Bits() - 1)
		for _, b := range []uint32{0, sign, 1, tc.max, tc.max | sign} {
			if !IsFinite(tc.d, b) {
				t.Errorf("IsFinite(%s, %#x) = false", tc.d, b)
			}
		}
		for _, b := range []uint32{tc.inf, tc.inf | sign, tc.inf + 1, tc.inf | sign + 1} {
			if IsFinite(tc.d, b) {
				t.Errorf("IsFinite(%s, %#x) = true", tc.d, b)
			}
		}
	}
}
