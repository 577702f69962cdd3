package oracle

import (
	"math"
	"slices"
	"testing"
)

// TestRMSNormProbe: after every Set of random elements (the last ones most
// often, as boundary nudging tunes them), the probe's taps and outputs are
// bitwise RMSNormTaps on the row, for sequential, warp and multi-warp
// schedules of both scale orders, hidden sizes that leave threads idle.
func TestRMSNormProbe(t *testing.T) {
	r := newRNG(17)
	reds := []Reduction{Sequential, {Threads: 32, Vec: 4, Warp: WarpButterfly, Cross: CrossSequential},
		{Threads: 64, Vec: 8, Warp: WarpButterfly, Cross: CrossSequential}, {Threads: 1024, Vec: 1, Warp: WarpSequential, Cross: CrossTree},
		{Threads: 128, Vec: 2, Warp: WarpButterfly, Cross: CrossTree}}
	for _, red := range reds {
		for _, order := range []ScaleOrder{ScaleThenWeight, WeightedScale} {
			s := RMSNormSchedule{Reduce: red, Order: order}
			for _, h := range []int{1, 7, 64, 1000, 4096} {
				in := rmsnormInput(r, BF16, FP32, 1, h)
				x := slices.Clone(in.X)
				p, err := NewRMSNormProbe(x, in.W, in.Eps, s)
				if err != nil {
					t.Fatal(err)
				}
				var got []float32
				for step := range 20 {
					j := h - 1 - r.IntN(min(h, 3))
					if step%4 == 3 {
						j = r.IntN(h)
					}
					p.Set(j, Round(BF16, float32(r.NormFloat64())))
					in.X = x
					want, taps, err := RMSNormTaps(in, s, nil)
					if err != nil {
						t.Fatal(err)
					}
					if tap := p.Tap(); tap != taps[0] && !(tap.SumSq != tap.SumSq && taps[0].SumSq != taps[0].SumSq) {
						t.Fatalf("%s h=%d step %d: probe tap %+v, RMSNormTaps %+v", s, h, step, tap, taps[0])
					}
					got = p.Row(got)
					for c := range want {
						if math.Float32bits(got[c]) != math.Float32bits(want[c]) || math.Float32bits(p.Y(c)) != math.Float32bits(want[c]) {
							t.Fatalf("%s h=%d step %d: y[%d] = %08x, RMSNormTaps %08x", s, h, step, c, math.Float32bits(got[c]), math.Float32bits(want[c]))
						}
					}
				}
			}
		}
	}
}

// TestDecodeProbe: after random changes of the V cache (the knob elements
// of boundary nudging and others), every column of the probe is bitwise
// Decode's output of the row, for one and several splits, tiles that do
// and do not divide the KV length, GQA, and a KV length of 1.
func TestDecodeProbe(t *testing.T) {
	r := newRNG(18)
	for _, s := range []AttentionSchedule{{Tile: 64, Splits: 1}, {Tile: 48, Splits: 1}, {Tile: 16, Splits: 4}, {Tile: 1, Splits: 3}} {
		for _, L := range []int{1, 3, 70, 300} {
			in := decodeInput(r, BF16, FP32, []int{5, L}, 4, 2, 16)
			for _, row := range []int{4, 5, 7} { // request 1, heads 0, 1, 3
				p, err := NewDecodeProbe(in, s, row)
				if err != nil {
					t.Fatal(err)
				}
				start, err := Decode(in, s, []int{row})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.EqualFunc(p.Start(), start, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
					t.Fatalf("tile %d splits %d L %d row %d: Start %v, Decode %v", s.Tile, s.Splits, L, row, p.Start(), start)
				}
				var got []float32
				for step := range 12 {
					v := in.V[1]
					v[r.IntN(len(v))] = Round(BF16, float32(r.NormFloat64()))
					want, err := Decode(in, s, []int{row})
					if err != nil {
						t.Fatal(err)
					}
					got = p.Row(got)
					for d := range want {
						if math.Float32bits(got[d]) != math.Float32bits(want[d]) || math.Float32bits(p.Col(d)) != math.Float32bits(want[d]) {
							t.Fatalf("tile %d splits %d L %d row %d step %d: col %d = %08x, Decode %08x",
								s.Tile, s.Splits, L, row, step, d, math.Float32bits(got[d]), math.Float32bits(want[d]))
						}
					}
				}
			}
		}
	}
	if _, err := NewDecodeProbe(decodeInput(r, BF16, FP32, []int{4}, 2, 1, 8), AttentionSchedule{Tile: 64, Splits: 1}, 2); err == nil {
		t.Error("row 2 of 1 request x 2 heads: no error")
	}
}

// TestGEMMProbe: after random changes of x, the probe is bitwise GEMM's
// output of the row and column, for split-K with both combines, K tiles,
// tensor-core chains, and K that leaves splits empty.
func TestGEMMProbe(t *testing.T) {
	r := newRNG(19)
	scheds := []GEMMSchedule{{SplitK: 1, Combine: CrossSequential}, {SplitK: 4, Combine: CrossTree}, {SplitK: 3, Combine: CrossSequential, KTile: 16},
		{SplitK: 8, Combine: CrossSequential}, {SplitK: 2, Combine: CrossSequential, MMA: MMABF16}, {SplitK: 5, Combine: CrossSequential, MMA: MMATF32, KTile: 16}}
	for _, s := range scheds {
		for _, K := range []int{1, 5, 64, 1000} {
			const N, col = 3, 1
			in := gemmInput(r, BF16, FP32, 1, K, N)
			w := make([]float32, K)
			for k := range w {
				w[k] = in.W[k*N+col]
			}
			p, err := NewGEMMProbe(in.X, w, s)
			if err != nil {
				t.Fatal(err)
			}
			for step := range 16 {
				p.Set(r.IntN(K), Round(BF16, float32(r.NormFloat64())))
				want, err := GEMM(in, s, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := p.Y(); math.Float32bits(got) != math.Float32bits(want[col]) {
					t.Fatalf("%s K=%d step %d: probe %08x, GEMM %08x", s, K, step, math.Float32bits(got), math.Float32bits(want[col]))
				}
			}
		}
	}
}

// TestLogProbProbe: after changes of the target's logit (which moves the
// row's max) and of other logits, the probe is bitwise LogProb of the row,
// for sequential, warp and multi-warp schedules.
func TestLogProbProbe(t *testing.T) {
	r := newRNG(20)
	reds := []Reduction{Sequential, {Threads: 32, Vec: 4, Warp: WarpButterfly, Cross: CrossSequential},
		{Threads: 1024, Vec: 1, Warp: WarpSequential, Cross: CrossTree}, {Threads: 64, Vec: 8, Warp: WarpButterfly, Cross: CrossTree}}
	for _, red := range reds {
		s := LogProbSchedule{Reduce: red}
		for _, n := range []int{1, 9, 500, 5000} {
			x := randVals(r, BF16, n, 3)
			tgt := r.IntN(n)
			in := LogProbInput{Logits: x, Targets: []int32{int32(tgt)}, Rows: 1, Vocab: n}
			p, err := NewLogProbProbe(x, tgt, s)
			if err != nil {
				t.Fatal(err)
			}
			for step := range 20 {
				j := r.IntN(n)
				if step%3 == 0 {
					j = tgt
				}
				p.Set(j, Round(BF16, float32(r.NormFloat64()*4)))
				want, err := LogProb(in, s, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := p.LP(); math.Float32bits(got) != math.Float32bits(want[0]) {
					t.Fatalf("%s n=%d step %d: probe %08x, LogProb %08x", red, n, step, math.Float32bits(got), math.Float32bits(want[0]))
				}
			}
		}
	}
}
