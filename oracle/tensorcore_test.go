package oracle

import (
	"math"
	"testing"
)

func bits32(x float32) uint32 { return math.Float32bits(x) }

// TestTensorCoreDotAdd pins the model's steps on hand-made inputs.
func TestTensorCoreDotAdd(t *testing.T) {
	bf := TensorCoreH200(MMABF16)
	p2 := func(e int) float32 { return float32(math.Ldexp(1, e)) }
	ones := func(n int, v float32) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = v
		}
		return s
	}
	negZero := float32(math.Copysign(0, -1))
	for _, c := range []struct {
		name string
		tc   TensorCore
		a, b []float32
		c    float32
		want float32
	}{
		{"exact integers", bf, ones(16, 3), ones(16, 5), 7, 16*15 + 7},
		// 1 + 2^-24: exact sum is a midpoint; RZ keeps 1.
		{"midpoint truncates", bf, []float32{p2(-12)}, []float32{p2(-12)}, 1, 1},
		// 1 + 3·2^-24 rounds to nearest up, truncates down.
		{"rz not rn", bf, []float32{3 * p2(-12)}, []float32{p2(-12)}, 1, 1 + p2(-23)},
		// A term below 2^(E-25) vanishes: 1 + 2^-26 + 2^-26 + ... (16 of them) = 1 exactly in the model.
		{"alignment drops small terms", bf, ones(16, p2(-13)), ones(16, p2(-13)), 1, 1},
		// Terms at 2^-25 survive alignment: 16·2^-25 = 2^-21.
		{"25 fraction bits kept", bf, ones(16, p2(-12)), ones(16, p2(-13)), 1, 1 + p2(-21)},
		// Negative terms truncate toward zero: 1 - 2^-26 per term (16 of them) loses nothing.
		{"negative truncation toward zero", bf, ones(16, -p2(-13)), ones(16, p2(-13)), 1, 1},
		// Products cancel exactly; c survives alignment to 2^20 only down to 2^-5.
		{"cancellation", bf, []float32{1, -1}, []float32{p2(20), p2(20)}, 3 * p2(-6), p2(-5)},
		{"exact zero is +0", bf, []float32{1, -1}, []float32{1, 1}, negZero, 0},
		{"nan", bf, []float32{float32(math.NaN())}, []float32{1}, 0, math.Float32frombits(0x7fffffff)},
		{"inf times zero", bf, []float32{float32(math.Inf(1))}, []float32{0}, 0, math.Float32frombits(0x7fffffff)},
		{"inf", bf, []float32{float32(math.Inf(1))}, []float32{-2}, 1, float32(math.Inf(-1))},
		{"tf32 ignores low bits", TensorCoreH200(MMATF32), []float32{math.Float32frombits(0x3f801fff)}, []float32{1}, 0, 1},
	} {
		if got := c.tc.DotAdd(c.a, c.b, c.c); bits32(got) != bits32(c.want) {
			t.Errorf("%s: got %08x (%g), want %08x (%g)", c.name, bits32(got), got, bits32(c.want), c.want)
		}
	}
}

// TestGEMMTensorCoreLoop checks GEMM with a tensor core against its doc
// comment's loop written out: per chunk, DotAdd over blocks of K products
// from the chunk's start, then the combine.
func TestGEMMTensorCoreLoop(t *testing.T) {
	r := newRNG(22)
	for _, c := range []struct {
		in  DType
		mma MMAFormat
	}{{BF16, MMABF16}, {FP16, MMAFP16}, {FP32, MMATF32}} {
		in := gemmInput(r, c.in, FP32, 3, 100, 5)
		for _, s := range []GEMMSchedule{{SplitK: 1, MMA: c.mma}, {SplitK: 3, MMA: c.mma}, {SplitK: 4, Combine: CrossTree, MMA: c.mma}, {SplitK: 3, MMA: c.mma, KTile: 32}} {
			got, err := GEMM(in, s, []int{2})
			if err != nil {
				t.Fatal(err)
			}
			tc := TensorCoreH200(c.mma)
			chunk := (100 + s.SplitK - 1) / s.SplitK
			if s.KTile > 1 {
				chunk = (chunk + s.KTile - 1) / s.KTile * s.KTile // 3 chunks of 34 -> 64, 36, 0
			}
			for n := 0; n < 5; n++ {
				var parts []float32
				for ch := 0; ch < s.SplitK; ch++ {
					acc := float32(0)
					hi := min((ch+1)*chunk, 100)
					for k := min(ch*chunk, 100); k < hi; k += tc.K {
						e := min(k+tc.K, hi)
						var a, b []float32
						for j := k; j < e; j++ {
							a = append(a, in.X[200+j])
							b = append(b, in.W[j*5+n])
						}
						acc = tc.DotAdd(a, b, acc)
					}
					parts = append(parts, acc)
				}
				want := combineParts(s.Combine, parts, opAdd)
				if bits32(got[n]) != bits32(want) {
					t.Errorf("%s %s col %d: GEMM %08x, loop %08x", c.in, s, n, bits32(got[n]), bits32(want))
				}
			}
		}
	}
}
