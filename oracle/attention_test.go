package oracle

import (
	"math"
	"testing"
)

// lastRowsAsDecode turns sequence s of a prefill into a one-request decode
// batch: the query of the last position against the whole sequence as KV
// cache.
func lastRowsAsDecode(p PrefillInput, s int) DecodeInput {
	L, H, KH, D := p.SeqLen, p.Heads, p.KVHeads, p.HeadDim
	q := p.Q[((s*L+L-1)*H)*D : ((s*L+L)*H)*D]
	k := p.K[s*L*KH*D : (s+1)*L*KH*D]
	v := p.V[s*L*KH*D : (s+1)*L*KH*D]
	return DecodeInput{Q: q, K: [][]float32{k}, V: [][]float32{v}, Heads: H, KVHeads: KH, HeadDim: D, Out: p.Out}
}

// lastRows returns the prefill row indices of the last position of
// sequence s, heads in order.
func lastRows(p PrefillInput, s int) []int {
	rows := make([]int, p.Heads)
	for h := range rows {
		rows[h] = (s*p.SeqLen+p.SeqLen-1)*p.Heads + h
	}
	return rows
}

// TestDecodeOneSplitIsPrefillNegativeZero is the case that showed the
// combine must start from -0: tile 1, scores 0 then 200, values -1 then -0.
// After the second tile acc = (-1·Exp32(-200))·... = -0 and p = 1 adds
// -0, so the prefill row is -0/1 = -0. A combine starting from +0 gave
// fma(1, -0, +0) = +0.
func TestDecodeOneSplitIsPrefillNegativeZero(t *testing.T) {
	nz := f32(0x80000000)
	p := PrefillInput{Q: []float32{0, 1}, K: []float32{0, 200}, V: []float32{-1, nz},
		Seqs: 1, SeqLen: 2, Heads: 1, KVHeads: 1, HeadDim: 1, Out: FP32}
	s := AttentionSchedule{Tile: 1, Splits: 1}
	po, err := Prefill(p, s, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	do, err := Decode(lastRowsAsDecode(p, 0), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if math.Float32bits(po[0]) != 0x80000000 || math.Float32bits(do[0]) != 0x80000000 {
		t.Errorf("prefill %08x, decode %08x: want both -0 (80000000)", math.Float32bits(po[0]), math.Float32bits(do[0]))
	}
}

// attnRef is softmax attention of one query over tokens in float64 with
// the exact scale 1/sqrt(D), and the quantities the error bound needs.
type attnRef struct {
	o     []float64 // exact output
	w     []float64 // Σ p_j·|v_j[d]| / Σ p_j: the weighted mean of |v|
	sigma float64   // bound on the error of one computed score
	span  float64   // max - min score, plus 2·sigma
}

func attention64(q []float32, n int, kv func(j int) ([]float32, []float32)) attnRef {
	D := len(q)
	scale := 1 / math.Sqrt(float64(D))
	s := make([]float64, n)
	ref := attnRef{o: make([]float64, D), w: make([]float64, D)}
	smax, smin := math.Inf(-1), math.Inf(1)
	for j := range n {
		k, _ := kv(j)
		dot, abs := 0.0, 0.0
		for d, qd := range q {
			dot += float64(qd) * float64(k[d])
			abs += math.Abs(float64(qd) * float64(k[d]))
		}
		s[j] = dot * scale
		// the fma dot (γ(D)), then Scale's two roundings and the multiply.
		ref.sigma = max(ref.sigma, scale*gamma(D)*abs*(1+3*u32)+3*u32*math.Abs(s[j]))
		smax, smin = max(smax, s[j]), min(smin, s[j])
	}
	ref.span = smax - smin + 2*ref.sigma
	l := 0.0
	for j := range n {
		_, v := kv(j)
		p := math.Exp(s[j] - smax)
		l += p
		for d := range D {
			ref.o[d] += p * float64(v[d])
			ref.w[d] += p * math.Abs(float64(v[d]))
		}
	}
	for d := range D {
		ref.o[d] /= l
		ref.w[d] /= l
	}
	return ref
}

// attentionBound is the bound on |ô[d] - o[d]| in fp32 for n tokens in
// tiles of tile, over splits splits (1 for prefill).
//
// A token's weight p_j = e^(s_j - M) is computed as Exp32 of rounded score
// differences, then multiplied by one alpha per later tile and, in decode,
// by its split's weight w_c. Each of these (at most ntiles + 2) factors is
// an Exp32 (relative error E = exp32MaxULP·2^-23) of a Sub32 whose
// argument is at most span (relative error u·span after exp), and every
// alpha multiply rounds once more (u); the computed scores are each off by
// at most sigma, which moves e^(s_j - M) by a factor e^(±2σ). So each
// weight has a relative error ε <= 2σ + (ntiles+2)(u·span + E) + ntiles·u
// (then e^ε - 1 <= ε(1+ε)), and the sums l and acc add γ(n + ntiles +
// splits). With ε_t the total, numerator and denominator are each off by
// at most ε_t relative (to Σ p|v| and Σ p), so the quotient is off by
// 2ε_t/(1-ε_t)·w[d], and the final div.rn by u·|o|.
func attentionBound(ref attnRef, d, n, tile, splits int) float64 {
	ntiles := (n+tile-1)/tile + splits
	e := 2*ref.sigma + float64(ntiles+2)*(u32*ref.span+exp32MaxULP*0x1p-23) + float64(ntiles)*u32
	et := e*(1+e) + gamma(n+ntiles+splits)
	return (2*et/(1-et)*ref.w[d] + u32*math.Abs(ref.o[d])) * 1.01
}

// TestPrefillBound checks Prefill against float64 softmax attention within
// attentionBound, with GQA and several tiles.
func TestPrefillBound(t *testing.T) {
	r := newRNG(40)
	worst := 0.0
	for _, c := range []struct {
		in, out                    DType
		seqLen, heads, kvHeads, hd int
		qScale                     float32
	}{{BF16, BF16, 100, 4, 2, 64, 1}, {FP16, FP32, 70, 3, 1, 16, 4}, {FP32, FP32, 60, 2, 2, 128, 1}, {BF16, FP16, 50, 8, 1, 8, 8}} {
		p := prefillInput(r, c.in, c.out, 2, c.seqLen, c.heads, c.kvHeads, c.hd)
		for i := range p.Q {
			p.Q[i] = Round(c.in, p.Q[i]*c.qScale)
		}
		D, H, KH := c.hd, c.heads, c.kvHeads
		refs := make([]attnRef, p.Rows())
		for row := range refs {
			h, pos, seq := row%H, (row/H)%c.seqLen, row/H/c.seqLen
			refs[row] = attention64(p.Q[row*D:(row+1)*D], pos+1, func(j int) ([]float32, []float32) {
				off := ((seq*c.seqLen+j)*KH + h/(H/KH)) * D
				return p.K[off : off+D], p.V[off : off+D]
			})
		}
		for _, tile := range []int{1, 16, 48, 64, 128} {
			s := AttentionSchedule{Tile: tile, Splits: 1}
			out, err := Prefill(p, s, nil)
			if err != nil {
				t.Fatal(err)
			}
			worst = max(worst, checkAttentionBound(t, c.in, c.out, s, out, refs, D, func(row int) int { return (row/H)%c.seqLen + 1 }))
		}
	}
	t.Logf("largest error / bound: %.3f", worst)
}

// checkAttentionBound fails the test at the first value of out (rows of
// D values, computed in dtype in and rounded to out under schedule s)
// outside attentionBound of its float64 reference, row having kvLen(row)
// KV tokens; it returns the largest error / bound.
func checkAttentionBound(t *testing.T, in, outDT DType, s AttentionSchedule, out []float32, refs []attnRef, D int, kvLen func(row int) int) float64 {
	t.Helper()
	worst := 0.0
	for row, ref := range refs {
		n := kvLen(row)
		for d := range D {
			got := out[row*D+d]
			ok, bound := withinBound(outDT, got, ref.o[d], attentionBound(ref, d, n, s.Tile, s.Splits))
			if !ok {
				t.Fatalf("%s->%s %s row %d (kv %d) d %d: got %g, float64 %g, bound %g",
					in, outDT, s, row, n, d, got, ref.o[d], bound)
			}
			worst = max(worst, math.Abs(float64(got)-ref.o[d])/bound)
		}
	}
	return worst
}

// TestDecodeBound checks Decode against float64 softmax attention within
// attentionBound, with GQA, several tiles and split counts.
func TestDecodeBound(t *testing.T) {
	r := newRNG(41)
	worst := 0.0
	for _, c := range []struct {
		in, out            DType
		heads, kvHeads, hd int
	}{{BF16, BF16, 8, 2, 128}, {FP16, FP32, 4, 4, 64}, {FP32, FP32, 2, 1, 32}} {
		in := decodeInput(r, c.in, c.out, []int{1, 49, 300, 1000}, c.heads, c.kvHeads, c.hd)
		D, H, KH := c.hd, c.heads, c.kvHeads
		refs := make([]attnRef, in.Rows())
		for row := range refs {
			b, h := row/H, row%H
			refs[row] = attention64(in.Q[row*D:(row+1)*D], len(in.K[b])/(KH*D), func(j int) ([]float32, []float32) {
				off := (j*KH + h/(H/KH)) * D
				return in.K[b][off : off+D], in.V[b][off : off+D]
			})
		}
		for _, tile := range []int{16, 48, 64} {
			for _, splits := range []int{1, 2, 3, 16} {
				s := AttentionSchedule{Tile: tile, Splits: splits}
				out, err := Decode(in, s, nil)
				if err != nil {
					t.Fatal(err)
				}
				worst = max(worst, checkAttentionBound(t, c.in, c.out, s, out, refs, D, func(row int) int { return len(in.K[row/H]) / (KH * D) }))
			}
		}
	}
	t.Logf("largest error / bound: %.3f", worst)
}

// spike makes attention inputs harder: some keys much larger (so a later
// tile's max jumps and alpha underflows to 0) and some values ±0.
func spike(r interface{ IntN(int) int }, p *PrefillInput) {
	for i := range p.K {
		if r.IntN(50) == 0 {
			p.K[i] = Round(BF16, p.K[i]*64)
		}
	}
	for i := range p.V {
		switch r.IntN(20) {
		case 0:
			p.V[i] = 0
		case 1:
			p.V[i] = f32(0x80000000)
		}
	}
}

// TestDecodeOneSplitIsPrefill: decode with Splits = 1 and tile T is bitwise
// the prefill row of the last position with tile T, over random shapes
// (GQA included), tiles and dtypes, with spiky inputs.
func TestDecodeOneSplitIsPrefill(t *testing.T) {
	r := newRNG(42)
	heads := [][2]int{{1, 1}, {4, 2}, {8, 1}, {6, 3}, {4, 4}}
	dims := []int{1, 3, 16, 64}
	tiles := []int{1, 7, 16, 48, 64, 100, 256}
	dts := []DType{BF16, FP16, FP32}
	for i := range 300 {
		hk := heads[r.IntN(len(heads))]
		L, D, tile := 1+r.IntN(200), dims[r.IntN(len(dims))], tiles[r.IntN(len(tiles))]
		in, out := dts[r.IntN(3)], dts[r.IntN(3)]
		p := prefillInput(r, in, out, 2, L, hk[0], hk[1], D)
		if i%2 == 1 {
			spike(r, &p)
		}
		s := AttentionSchedule{Tile: tile, Splits: 1}
		po, err := Prefill(p, s, lastRows(p, 1))
		if err != nil {
			t.Fatal(err)
		}
		do, err := Decode(lastRowsAsDecode(p, 1), s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if j := firstDiff(po, do); j >= 0 {
			t.Fatalf("case %d: L %d heads %d/%d D %d %s %s->%s: element %d prefill %08x decode %08x",
				i, L, hk[0], hk[1], D, s, in, out, j, math.Float32bits(po[j]), math.Float32bits(do[j]))
		}
	}
}

// TestTile48vs64: for KV lengths up to 48 tiles of 48 and 64 are one tile
// and give the same bits (prefill and decode, any split count). Past 48 the
// online-softmax rescale happens at token 48 for tile 48 only; it changes
// bits when token 48 raises the running max (otherwise alpha = Exp32(0) = 1
// and the loops coincide). The search runs over seeds until an input shows
// it at kv = 49 exactly. Outputs are fp32: rounding to bf16 hides most
// one-ulp drifts.
func TestTile48vs64(t *testing.T) {
	t48, t64 := AttentionSchedule{Tile: 48, Splits: 1}, AttentionSchedule{Tile: 64, Splits: 1}
	for seed := uint64(0); seed < 1000; seed++ {
		p := prefillInput(newRNG(100+seed), BF16, FP32, 1, 49, 2, 1, 32)
		a, err := Prefill(p, t48, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Prefill(p, t64, nil)
		if err != nil {
			t.Fatal(err)
		}
		D, H := p.HeadDim, p.Heads
		if j := firstDiff(a[:48*H*D], b[:48*H*D]); j >= 0 {
			t.Fatalf("seed %d kv %d: prefill tiles 48 and 64 differ", seed, j/(H*D)+1)
		}
		if seed < 20 {
			d := decodeInput(newRNG(200+seed), FP16, FP32, []int{1, 17, 48, 49, 64, 100}, 4, 2, 16)
			for _, splits := range []int{1, 2, 5} {
				da, err := Decode(d, AttentionSchedule{Tile: 48, Splits: splits}, nil)
				if err != nil {
					t.Fatal(err)
				}
				db, err := Decode(d, AttentionSchedule{Tile: 64, Splits: splits}, nil)
				if err != nil {
					t.Fatal(err)
				}
				// requests 0..2 have kv <= 48: 3 requests x 4 heads x 16
				if j := firstDiff(da[:3*4*16], db[:3*4*16]); j >= 0 {
					t.Fatalf("seed %d splits %d: decode with kv <= 48 differs between tiles 48 and 64 at %d", seed, splits, j)
				}
			}
		}
		if j := firstDiff(a[48*H*D:], b[48*H*D:]); j >= 0 {
			t.Logf("seed %d: tiles 48 and 64 differ at kv = 49, head %d, d %d: %08x vs %08x",
				seed, j/D, j%D, math.Float32bits(a[48*H*D+j]), math.Float32bits(b[48*H*D+j]))
			return
		}
	}
	t.Fatal("no input where tiles 48 and 64 differ at kv 49: the tile is not part of the schedule")
}
