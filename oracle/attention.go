package oracle

import (
	"fmt"
	"math"
)

// PrefillInput is a batch for causal attention prefill: Seqs sequences of
// SeqLen tokens. Q is [Seqs][SeqLen][Heads][HeadDim]; K and V are
// [Seqs][SeqLen][KVHeads][HeadDim]; all of the input dtype. Query head h
// reads KV head h / (Heads/KVHeads) (GQA).
type PrefillInput struct {
	Q, K, V                               []float32
	Seqs, SeqLen, Heads, KVHeads, HeadDim int
	Out                                   DType
}

// DecodeInput is a batch for attention decode: request b has one query
// Q[b] ([Heads][HeadDim]) and a KV cache K[b], V[b] of KVLen(b) tokens
// ([KVLen][KVHeads][HeadDim]).
type DecodeInput struct {
	Q                       []float32
	K, V                    [][]float32
	Heads, KVHeads, HeadDim int
	Out                     DType
}

// Rows returns the number of output rows of a prefill: Seqs·SeqLen·Heads;
// row ((s·SeqLen)+i)·Heads+h is query position i of sequence s, head h.
func (in PrefillInput) Rows() int { return in.Seqs * in.SeqLen * in.Heads }

// Rows returns the number of output rows of a decode: requests·Heads; row
// b·Heads+h is request b, head h.
func (in DecodeInput) Rows() int { return len(in.K) * in.Heads }

// Scale returns the softmax scale 1/sqrt(d) as div.rn(1, sqrt.rn(d)).
func Scale(headDim int) float32 { return Div32(1, Sqrt32(float32(headDim))) }

// partial is the online-softmax state of one query over a KV range.
type partial struct {
	m, l float32
	acc  []float32
	// record, when set, makes attendRange append the weights it applies
	// to acc, which depend on q and K only: per tile, alpha and then p of
	// each token (DecodeProbe).
	record  bool
	weights []float32
	// scores, when set, holds token j's score fma-dot(q, k[j]) · scale at
	// scores[j], the same under every schedule: attendRange reads it
	// instead of computing it (NewDecodeProbes).
	scores []float32
}

// attendRange runs the online softmax of query q over KV tokens [lo, hi)
// in tiles of tile tokens starting at lo:
//
//	m = -Inf, l = +0, acc[d] = +0
//	for each tile [t0, t1):
//		s[j]  = fma-dot(q, k[j]) · scale          // d ascending, from +0
//		mt    = max(m, max_j s[j])                // max.f32, j ascending
//		alpha = Exp32(m - mt)
//		l     = l · alpha;  acc[d] = acc[d] · alpha
//		for j ascending: p = Exp32(s[j] - mt); l = l + p; acc[d] = fma(p, v[j][d], acc[d])
//		m = mt
//
// kv(j) returns the key and value vectors of token j.
func attendRange(q []float32, lo, hi, tile int, scale float32, kv func(j int) ([]float32, []float32), st *partial, s []float32) {
	st.m = float32(math.Inf(-1))
	st.l = 0
	for d := range st.acc {
		st.acc[d] = 0
	}
	for t0 := lo; t0 < hi; t0 += tile {
		t1 := min(t0+tile, hi)
		mt := st.m
		for j := t0; j < t1; j++ {
			if st.scores != nil {
				s[j-t0] = st.scores[j]
			} else {
				k, _ := kv(j)
				s[j-t0] = Mul32(fmaChain(0, q, k), scale) // dot = fma(q[d], k[d], dot), d ascending from +0
			}
			mt = Max32(mt, s[j-t0])
		}
		alpha := Exp32(Sub32(st.m, mt))
		if st.record {
			st.weights = append(st.weights, alpha)
		}
		st.l = Mul32(st.l, alpha)
		for d := range st.acc {
			st.acc[d] = Mul32(st.acc[d], alpha)
		}
		for j := t0; j < t1; j++ {
			_, v := kv(j)
			p := Exp32(Sub32(s[j-t0], mt))
			if st.record {
				st.weights = append(st.weights, p)
			}
			st.l = Add32(st.l, p)
			axpy32(p, v, st.acc) // acc[d] = fma(p, v[d], acc[d])
		}
		st.m = mt
	}
}

// checkAttention checks what every attention entry point shares: a
// schedule a kernel can run, and heads a positive multiple of kvHeads.
func checkAttention(s AttentionSchedule, heads, kvHeads, headDim int) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if heads < 1 || kvHeads < 1 || headDim < 1 || heads%kvHeads != 0 {
		return fmt.Errorf("attention: heads %d kv heads %d head dim %d: heads must be a positive multiple of kv heads: %w",
			heads, kvHeads, headDim, ErrShape)
	}
	return nil
}

// Prefill computes causal attention for each selected row (all rows when
// rows is nil), into out[i*HeadDim : (i+1)*HeadDim] for the i-th selected
// row (sequence s, position i, head h):
//
//	attendRange(q[s][i][h], 0, i+1, Tile)    // KV tokens 0..i of sequence s
//	o[d] = round_out(acc[d] / l)             // div.rn
//
// where attendRange(q, lo, hi, Tile), the online softmax over KV tokens
// [lo, hi) of KV head h/(Heads/KVHeads), in tiles starting at lo, is
//
//	m = -Inf, l = +0, acc[d] = +0
//	for each tile [t0, t1):
//		s[j]  = fma-dot(q, k[j]) · scale          // d ascending from +0; scale = Scale(HeadDim)
//		mt    = max(m, max_j s[j])                // max.f32, j ascending
//		alpha = Exp32(m - mt)
//		l     = l · alpha;  acc[d] = acc[d] · alpha
//		for j ascending: p = Exp32(s[j] - mt); l = l + p; acc[d] = fma(p, v[j][d], acc[d])
//		m = mt
//
// s.Splits is ignored: a prefill row is one split.
func Prefill(in PrefillInput, s AttentionSchedule, rows []int) ([]float32, error) {
	if err := checkAttention(s, in.Heads, in.KVHeads, in.HeadDim); err != nil {
		return nil, err
	}
	if in.Seqs < 0 || in.SeqLen < 1 {
		return nil, fmt.Errorf("prefill: seqs %d seq len %d: %w", in.Seqs, in.SeqLen, ErrShape)
	}
	D, H, KH := in.HeadDim, in.Heads, in.KVHeads
	if err := checkLen("prefill q", len(in.Q), in.Seqs*in.SeqLen*H*D); err != nil {
		return nil, err
	}
	for name, t := range map[string][]float32{"prefill k": in.K, "prefill v": in.V} {
		if err := checkLen(name, len(t), in.Seqs*in.SeqLen*KH*D); err != nil {
			return nil, err
		}
	}
	sel, err := SelectRows(rows, in.Rows())
	if err != nil {
		return nil, fmt.Errorf("prefill: %w", err)
	}
	scale := Scale(D)
	group := H / KH
	out := make([]float32, len(sel)*D)
	parallelRows(len(sel), func(i int) {
		r := sel[i]
		h := r % H
		pos := (r / H) % in.SeqLen
		seq := r / H / in.SeqLen
		q := in.Q[r*D : (r+1)*D]
		kvh := h / group
		kv := func(j int) ([]float32, []float32) {
			off := ((seq*in.SeqLen+j)*KH + kvh) * D
			return in.K[off : off+D], in.V[off : off+D]
		}
		st := partial{acc: make([]float32, D)}
		attendRange(q, 0, pos+1, s.Tile, scale, kv, &st, make([]float32, s.Tile))
		o := out[i*D : (i+1)*D]
		for d := range o {
			o[d] = Div32(st.acc[d], st.l)
		}
		RoundSlice(in.Out, o)
	})
	return out, nil
}

// SplitBounds returns the KV ranges of a decode over L tokens with the
// given tile and split count: the chunk is ceil(ceil(L/splits)/tile)·tile
// tokens; split c covers [c·chunk, min((c+1)·chunk, L)); empty splits are
// dropped.
func SplitBounds(L, tile, splits int) [][2]int {
	per := (L + splits - 1) / splits
	chunk := (per + tile - 1) / tile * tile
	if chunk < 1 {
		chunk = 1
	}
	var b [][2]int
	for lo := 0; lo < L; lo += chunk {
		b = append(b, [2]int{lo, min(lo+chunk, L)})
	}
	return b
}

// Decode computes attention of each request's query against its KV cache
// for each selected row (all when rows is nil; row b·Heads+h), into
// out[i*HeadDim : (i+1)*HeadDim]:
//
//	for each split c of SplitBounds(L, Tile, Splits): attendRange(q, lo_c, hi_c, Tile) -> (m_c, l_c, acc_c)
//	                                                // attendRange: see Prefill
//	M = max_c m_c                                   // max.f32, c ascending
//	num[d] = -0, den = -0                           // -0, not +0: see below
//	for c ascending: w = Exp32(m_c - M); den = fma(w, l_c, den); num[d] = fma(w, acc_c[d], num[d])
//	o[d] = round_out(num[d] / den)
//
// With Splits = 1 this is bitwise the prefill row of the last position:
// w = Exp32(+0) = 1 and fma(1, x, -0) = x for every x, -0 included (from
// +0 an acc[d] of -0 would come out +0).
// A request with an empty cache gives NaN (0/0), as a kernel would.
func Decode(in DecodeInput, s AttentionSchedule, rows []int) ([]float32, error) {
	if err := checkAttention(s, in.Heads, in.KVHeads, in.HeadDim); err != nil {
		return nil, err
	}
	B, D, H, KH := len(in.K), in.HeadDim, in.Heads, in.KVHeads
	if len(in.V) != B {
		return nil, fmt.Errorf("decode: %d key caches but %d value caches: %w", B, len(in.V), ErrShape)
	}
	if err := checkLen("decode q", len(in.Q), B*H*D); err != nil {
		return nil, err
	}
	for b := range in.K {
		if len(in.K[b])%(KH*D) != 0 || len(in.V[b]) != len(in.K[b]) {
			return nil, fmt.Errorf("decode: request %d cache sizes k %d v %d not a multiple of kv heads x head dim %d: %w",
				b, len(in.K[b]), len(in.V[b]), KH*D, ErrShape)
		}
	}
	sel, err := SelectRows(rows, in.Rows())
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	scale := Scale(D)
	group := H / KH
	out := make([]float32, len(sel)*D)
	parallelRows(len(sel), func(i int) {
		r := sel[i]
		b, h := r/H, r%H
		q := in.Q[r*D : (r+1)*D]
		kvh := h / group
		L := len(in.K[b]) / (KH * D)
		kv := func(j int) ([]float32, []float32) {
			off := (j*KH + kvh) * D
			return in.K[b][off : off+D], in.V[b][off : off+D]
		}
		bounds := SplitBounds(L, s.Tile, s.Splits)
		parts := make([]partial, len(bounds))
		scratch := make([]float32, s.Tile)
		M := float32(math.Inf(-1))
		for c, bd := range bounds {
			parts[c].acc = make([]float32, D)
			attendRange(q, bd[0], bd[1], s.Tile, scale, kv, &parts[c], scratch)
			M = Max32(M, parts[c].m)
		}
		negZero := float32(math.Copysign(0, -1))
		num := make([]float32, D)
		for d := range num {
			num[d] = negZero
		}
		den := negZero
		for _, p := range parts {
			w := Exp32(Sub32(p.m, M))
			den = FMA32(w, p.l, den)
			axpy32(w, p.acc, num) // num[d] = fma(w, acc_c[d], num[d])
		}
		o := out[i*D : (i+1)*D]
		for d := range o {
			o[d] = Div32(num[d], den)
		}
		RoundSlice(in.Out, o)
	})
	return out, nil
}
