package oracle

import (
	"math"
	"strings"
	"testing"
)

// fmt16 describes a 16-bit format for the exhaustive rounding test.
type fmt16 struct {
	d     DType
	inf   uint16 // bits of +Inf
	quiet uint16 // the quiet bit of a NaN
	from  func(float32) uint16
	to    func(uint16) float32
}

var formats16 = []fmt16{
	{d: BF16, inf: 0x7f80, quiet: 0x0040, from: BF16FromF32, to: BF16ToF32},
	{d: FP16, inf: 0x7c00, quiet: 0x0200, from: FP16FromF32, to: FP16ToF32},
}

// TestRound16Exhaustive checks rounding fp32 to bf16 and fp16 at every
// rounding boundary of the format: for each pair of neighbours lo < hi
// (all positive and negative finite values, subnormals included, and the
// pair largest finite / Inf), the exact midpoint rounds to the one with an
// even last bit, the fp32 value just below the midpoint rounds to lo, just
// above to hi, and lo itself is exact.
func TestRound16Exhaustive(t *testing.T) {
	for _, f := range formats16 {
		bad := 0
		check := func(x float32, want uint16, what string) {
			if got := f.from(x); got != want {
				if bad < 10 {
					t.Errorf("%s: %s %08x (%g) -> %04x, want %04x", f.d, what, math.Float32bits(x), x, got, want)
				}
				bad++
			}
		}
		for lo := uint16(0); lo < f.inf; lo++ {
			for _, sgn := range []uint16{0, 0x8000} {
				l, h := lo|sgn, (lo+1)|sgn
				lv, hv := float64(f.to(l)), float64(f.to(h))
				if lo+1 == f.inf {
					// the pair largest finite / Inf: the boundary is the
					// midpoint between the largest finite value and
					// 2^(emax+1), one ulp further.
					hv = lv + (lv - float64(f.to(l-1)))
				}
				mid := float32((lv + hv) / 2) // exact: 1 bit more than the format
				even := l
				if l&1 == 1 {
					even = h
				}
				check(float32(lv), l, "value")
				check(mid, even, "midpoint")
				below := math.Nextafter32(mid, 0)
				above := math.Nextafter32(mid, float32(math.Copysign(math.Inf(1), float64(mid))))
				check(below, l, "below midpoint")
				check(above, h, "above midpoint")
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d wrong roundings", f.d, bad)
		}
	}
}

// TestRound16Specials pins NaN (stays a NaN, quiet, sign kept), ±Inf,
// overflow, signed zeros and tiny values.
func TestRound16Specials(t *testing.T) {
	for _, c := range []struct {
		d    DType
		in   uint32
		want uint16
	}{
		{BF16, 0x3f808000, 0x3f80}, // tie, to even
		{BF16, 0x3f818000, 0x3f82}, // tie, to even (up)
		{BF16, 0x3f808001, 0x3f81},
		{BF16, 0x3f807fff, 0x3f80},
		{BF16, 0x7f800000, 0x7f80},
		{BF16, 0xff800000, 0xff80},
		{BF16, 0x7f7fffff, 0x7f80}, // overflow to Inf
		{BF16, 0x7f7f7fff, 0x7f7f},
		{BF16, 0x7f7f8000, 0x7f80}, // tie past the largest finite: even is Inf
		{BF16, 0x00000000, 0x0000},
		{BF16, 0x80000000, 0x8000},
		{BF16, 0x00008000, 0x0000}, // subnormal tie to even 0
		{BF16, 0x00018000, 0x0002},
		{BF16, 0x80000001, 0x8000}, // tiny negative to -0
		{BF16, 0x7f800001, 0x7fc0}, // signalling NaN with a low payload: must not become Inf
		{BF16, 0xff800001, 0xffc0},
		{BF16, 0x7fc00000, 0x7fc0},
		{BF16, 0x7fffffff, 0x7fff},
		{BF16, 0xffa12345, 0xffe1},
		{FP16, 0x3f801000, 0x3c00}, // 1+2^-11: tie, to even
		{FP16, 0x3f803000, 0x3c02},
		{FP16, 0x477fe000, 0x7bff}, // 65504
		{FP16, 0x477ff000, 0x7c00}, // 65520: tie, to even is Inf
		{FP16, 0x477fefff, 0x7bff},
		{FP16, 0x7f800000, 0x7c00},
		{FP16, 0x33800000, 0x0001}, // 2^-24, smallest subnormal
		{FP16, 0x33000000, 0x0000}, // 2^-25: tie to even 0
		{FP16, 0xb3000001, 0x8001},
		{FP16, 0x7f800001, 0x7e00},
		{FP16, 0xffc00000, 0xfe00},
	} {
		x := math.Float32frombits(c.in)
		got := uint16(ToBits(c.d, x))
		if got != c.want {
			t.Errorf("%s(%08x) = %04x, want %04x", c.d, c.in, got, c.want)
		}
		if IsNaN(FP32, c.in) {
			q := formats16[0].quiet
			if c.d == FP16 {
				q = formats16[1].quiet
			}
			if !IsNaN(c.d, uint32(got)) || got&q == 0 || got>>15 != uint16(c.in>>31) {
				t.Errorf("%s(%08x) = %04x: want a quiet NaN of the same sign", c.d, c.in, got)
			}
		}
	}
}

// TestHexRoundTrip: every bf16 and fp16 bit pattern widens to fp32 exactly
// and comes back through Hex and ParseHex with the same bits (a signalling
// NaN comes back quiet); fp32 bit patterns round-trip unchanged.
func TestHexRoundTrip(t *testing.T) {
	for _, d := range []DType{BF16, FP16} {
		for b := uint32(0); b < 1<<16; b++ {
			x := FromBits(d, b)
			h := Hex(d, x)
			if len(h) != 4 {
				t.Fatalf("%s Hex(%04x) = %q, want 4 digits", d, b, h)
			}
			y, err := ParseHex(d, "0x"+h)
			if err != nil {
				t.Fatal(err)
			}
			got := ToBits(d, y)
			switch {
			case IsNaN(d, b):
				if !IsNaN(d, got) {
					t.Fatalf("%s %04x: NaN came back as %04x", d, b, got)
				}
			case got != b:
				t.Fatalf("%s %04x: came back as %04x (hex %q)", d, b, got, h)
			}
			if !IsNaN(d, b) && Round(d, x) != x {
				t.Fatalf("%s %04x: widened value %g is not exact", d, b, x)
			}
		}
	}
	r := newRNG(3)
	for range 100_000 {
		b := r.Uint32()
		h := Hex(FP32, f32(b))
		y, err := ParseHex(FP32, h)
		if err != nil || math.Float32bits(y) != b || len(h) != 8 {
			t.Fatalf("fp32 %08x -> %q -> %08x, %v", b, h, math.Float32bits(y), err)
		}
	}
	for _, c := range []struct {
		d DType
		s string
	}{{BF16, "12345"}, {BF16, "zz"}, {FP32, ""}, {FP16, "0x"}, {FP32, "123456789"}} {
		if _, err := ParseHex(c.d, c.s); err == nil || !strings.Contains(err.Error(), c.d.String()) {
			t.Errorf("ParseHex(%s, %q) error = %v, want an error naming the dtype", c.d, c.s, err)
		}
	}
}

func TestParseDType(t *testing.T) {
	for _, d := range []DType{FP32, BF16, FP16} {
		got, err := ParseDType(d.String())
		if err != nil || got != d {
			t.Errorf("ParseDType(%q) = %v, %v", d, got, err)
		}
	}
	if _, err := ParseDType("fp8"); err == nil {
		t.Error("ParseDType(fp8) gave no error")
	}
}

func TestLimits(t *testing.T) {
	for _, c := range []struct {
		d              DType
		max, minNormal float64
	}{
		{FP32, math.MaxFloat32, math.Ldexp(1, -126)},
		{BF16, math.Ldexp(0xff, 127-7), math.Ldexp(1, -126)},
		{FP16, 65504, math.Ldexp(1, -14)},
	} {
		if got := float64(MaxFinite(c.d)); got != c.max {
			t.Errorf("MaxFinite(%s) = %g, want %g", c.d, got, c.max)
		}
		if got := float64(SmallestNormal(c.d)); got != c.minNormal {
			t.Errorf("SmallestNormal(%s) = %g, want %g", c.d, got, c.minNormal)
		}
	}
}
