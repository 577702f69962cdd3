package boundary

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bitparity/bitparity/oracle"
)

func TestMidpoint(t *testing.T) {
	f := math.Float32frombits
	tests := []struct {
		name      string
		v         float32
		dt        oracle.DType
		want      float32
		evenBelow bool
		ok        bool
		ulps      uint32
	}{
		// 1.0 = 0x3f800000; bf16 neighbours 0x3f80 (even) and 0x3f81.
		{"bf16 1.0", 1, oracle.BF16, f(0x3f808000), true, true, 0x8000},
		{"bf16 exact tie", f(0x3f808000), oracle.BF16, f(0x3f808000), true, true, 0},
		{"bf16 above tie", f(0x3f808003), oracle.BF16, f(0x3f808000), true, true, 3},
		{"bf16 odd lower", f(0x3f817ffe), oracle.BF16, f(0x3f818000), false, true, 2},
		{"bf16 negative", f(0xbf808001), oracle.BF16, f(0xbf808000), true, true, 1},
		// fp16 1.0: 13 low bits; tie at 1 + 2^-11.
		{"fp16 tie", 1 + 0x1p-11, oracle.FP16, 1 + 0x1p-11, true, true, 0},
		{"fp16 subnormal", 1e-6, oracle.FP16, 0, false, false, math.MaxUint32},
		{"fp32 none", 1, oracle.FP32, 0, false, false, math.MaxUint32},
		{"zero", 0, oracle.BF16, 0, false, false, math.MaxUint32},
		{"nan", float32(math.NaN()), oracle.BF16, 0, false, false, math.MaxUint32},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, eb, ok := Midpoint(tc.v, tc.dt)
			if ok != tc.ok || (ok && (got != tc.want || eb != tc.evenBelow)) {
				t.Errorf("Midpoint(%#x) = %#x, %v, %v; want %#x, %v, %v", math.Float32bits(tc.v),
					math.Float32bits(got), eb, ok, math.Float32bits(tc.want), tc.evenBelow, tc.ok)
			}
			if d := ULPsToMidpoint(tc.v, tc.dt); d != tc.ulps {
				t.Errorf("ULPsToMidpoint = %d, want %d", d, tc.ulps)
			}
		})
	}
}

// TestMidpointIsTie checks the defining property against the dtype's own
// rounding: the midpoint rounds to the even neighbour, one fp32 ulp above
// it rounds up, one below rounds down.
func TestMidpointIsTie(t *testing.T) {
	for _, dt := range []oracle.DType{oracle.BF16, oracle.FP16} {
		for _, v := range []float32{1, 1.37, -2.5e-3, 300.7, -0.031} {
			m, evenBelow, ok := Midpoint(v, dt)
			if !ok {
				t.Fatalf("%v %v: no midpoint", dt, v)
			}
			up := math.Float32frombits(math.Float32bits(m) + 1)
			down := math.Float32frombits(math.Float32bits(m) - 1)
			lo, hi := oracle.Round(dt, down), oracle.Round(dt, up)
			if lo == hi {
				t.Errorf("%v %v: %g and %g round alike (%g): %g is not a boundary", dt, v, down, up, lo, m)
			}
			want := lo
			if !evenBelow {
				want = hi
			}
			if got := oracle.Round(dt, m); got != want {
				t.Errorf("%v %v: the tie %g rounds to %g, want the even neighbour %g", dt, v, m, got, want)
			}
		}
	}
}

func TestScore(t *testing.T) {
	f := math.Float32frombits
	vals := []float32{f(0x3f808000), f(0x3f808002), f(0x3f808004), f(0x3f808005), 1}
	if got, want := Score(vals, oracle.BF16, 4), 5+3+1; got != want {
		t.Errorf("Score = %d, want %d", got, want)
	}
	if got := Near(vals, oracle.BF16, 4); got != 3 {
		t.Errorf("Near = %d, want 3", got)
	}
}

// TestScoreIsULPsToMidpoint: Score's bit loop is its definition, the sum
// of max(0, k+1 - ULPsToMidpoint), on random bit patterns (zeros, NaN,
// Inf, subnormals, fp16's range edges included) and values near midpoints.
func TestScoreIsULPsToMidpoint(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 200_000 {
		u := r.Uint32()
		switch i % 4 {
		case 1:
			u = u&^0xffff | 0x8000 + uint32(r.IntN(11)) - 5 // near a bf16 midpoint
		case 2:
			u = u&^0x1fff | 0x1000 + uint32(r.IntN(11)) - 5 // near an fp16 midpoint
		case 3:
			u = []uint32{0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x38800000, 0x387fffff, 0x477fe000, 0x477fdfff, 1}[r.IntN(10)]
		}
		vals := []float32{math.Float32frombits(u)}
		for _, dt := range []oracle.DType{oracle.BF16, oracle.FP16, oracle.FP32} {
			for _, k := range []uint32{0, 4} {
				want := 0
				if d := ULPsToMidpoint(vals[0], dt); d <= k {
					want = int(k + 1 - d)
				}
				if got := Score(vals, dt, k); got != want {
					t.Fatalf("Score(%08x, %s, %d) = %d, ULPsToMidpoint gives %d", u, dt, k, got, want)
				}
			}
		}
	}
}

func TestStep(t *testing.T) {
	tests := []struct {
		dt   oracle.DType
		v    float32
		n    int
		want float32
	}{
		{oracle.BF16, 1, 1, 1 + 0x1p-7},
		{oracle.BF16, 1, -1, 1 - 0x1p-8},
		{oracle.FP16, 1, 2, 1 + 0x1p-9},
		{oracle.FP32, 1, 1, 1 + 0x1p-23},
		{oracle.BF16, 0x1p-133, -2, -0x1p-133}, // smallest bf16 subnormal, through ±0
	}
	for _, tc := range tests {
		if got := step(tc.dt, tc.v, tc.n); got != tc.want {
			t.Errorf("step(%v, %g, %d) = %g, want %g", tc.dt, tc.v, tc.n, got, tc.want)
		}
	}
}
