package attention

import (
	"fmt"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/values"
)

// Tensors are Q, K and V, in that order, every tensor σ 1: tensors q and
// k in the case's dist, v normal.
func (attention) Tensors(c spec.Case) []ops.Tensor {
	return []ops.Tensor{
		{ID: values.TensorQ, Dist: c.Dist, Scale: 1},
		{ID: values.TensorK, Dist: c.Dist, Scale: 1},
		{ID: values.TensorV, Dist: spec.DistNormal, Scale: 1},
	}
}

// groups refuses heads that are not a multiple of kv_heads.
func groups(s spec.Shape) error {
	if s.Heads%s.KVHeads != 0 {
		return fmt.Errorf("shape: heads %d is not a multiple of kv_heads %d", s.Heads, s.KVHeads)
	}
	return nil
}

// FromSeed makes q (Heads·HeadDim wide), k and v (KVHeads·HeadDim wide)
// (Tensors), SeqLen rows a sequence, row key = item<<32 | position.
func (a Prefill) FromSeed(c spec.Case, _, out oracle.DType, s ops.Seeded, _ ops.In) (ops.In, error) {
	sh, n := c.Shape, s.Items()
	if err := ops.FirstErr(s.Positive("seqs", n), s.Positive("seq_len", sh.SeqLen), s.Positive("heads", sh.Heads),
		s.Positive("kv_heads", sh.KVHeads), s.Positive("head_dim", sh.HeadDim)); err != nil {
		return nil, err
	}
	if err := groups(sh); err != nil {
		return nil, err
	}
	tokens := spec.SatMul(n, sh.SeqLen)
	if err := s.Budget(spec.SatMul(tokens, sh.Heads, sh.HeadDim), spec.SatMul(2, tokens, sh.KVHeads, sh.HeadDim)); err != nil {
		return nil, err
	}
	qkv := a.Tensors(c)
	key := func(i int) uint64 { return s.Item(i/sh.SeqLen)<<32 | uint64(i%sh.SeqLen) }
	q, err := s.PerItem(qkv[0], tokens, sh.Heads*sh.HeadDim, key)
	if err != nil {
		return nil, err
	}
	k, err := s.PerItem(qkv[1], tokens, sh.KVHeads*sh.HeadDim, key)
	if err != nil {
		return nil, err
	}
	v, err := s.PerItem(qkv[2], tokens, sh.KVHeads*sh.HeadDim, key)
	if err != nil {
		return nil, err
	}
	return &oracle.PrefillInput{Q: q, K: k, V: v, Seqs: n, SeqLen: sh.SeqLen,
		Heads: sh.Heads, KVHeads: sh.KVHeads, HeadDim: sh.HeadDim, Out: out}, nil
}

// FromSeed makes q (Heads·HeadDim values a request, row key = item) and
// the request's k and v caches (Tensors): Shape.KVLen(item) rows of
// KVHeads·HeadDim, row key = item<<32 | position.
func (a Decode) FromSeed(c spec.Case, _, out oracle.DType, s ops.Seeded, _ ops.In) (ops.In, error) {
	sh, n := c.Shape, s.Items()
	if err := ops.FirstErr(s.Positive("rows (requests)", n), s.Positive("heads", sh.Heads),
		s.Positive("kv_heads", sh.KVHeads), s.Positive("head_dim", sh.HeadDim)); err != nil {
		return nil, err
	}
	if err := groups(sh); err != nil {
		return nil, err
	}
	if err := s.Budget(spec.SatMul(n, sh.Heads, sh.HeadDim)); err != nil {
		return nil, err // q alone: refused before a length a request is allocated
	}
	lens := make([]int, n)
	total := 0
	for i := range lens {
		lens[i] = sh.KVLen(int(s.Item(i)))
		if err := s.Positive("kv", lens[i]); err != nil {
			return nil, err
		}
		if lens[i] > spec.MaxElements {
			return nil, s.Budget(lens[i])
		}
		total += lens[i]
		if err := s.Budget(spec.SatMul(2, total, sh.KVHeads, sh.HeadDim)); err != nil {
			return nil, err
		}
	}
	qkv := a.Tensors(c)
	q, err := s.PerItem(qkv[0], n, sh.Heads*sh.HeadDim, s.Item)
	if err != nil {
		return nil, err
	}
	d := &oracle.DecodeInput{Q: q, K: make([][]float32, n), V: make([][]float32, n),
		Heads: sh.Heads, KVHeads: sh.KVHeads, HeadDim: sh.HeadDim, Out: out}
	for i := range lens {
		key := func(j int) uint64 { return s.Item(i)<<32 | uint64(j) }
		if d.K[i], err = s.PerItem(qkv[1], lens[i], sh.KVHeads*sh.HeadDim, key); err != nil {
			return nil, err
		}
		if d.V[i], err = s.PerItem(qkv[2], lens[i], sh.KVHeads*sh.HeadDim, key); err != nil {
			return nil, err
		}
	}
	return d, nil
}
