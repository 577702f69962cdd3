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
