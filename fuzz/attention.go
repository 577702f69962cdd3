package fuzz

import (
	"fmt"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// The attention ops have one item per decode request or prefill sequence.
// Their recipe, for the case's generator version (every tensor σ 1):
//
//	attn_decode   q: tensor q, the case's dist, Heads·HeadDim values a
//	              request, row key = item;
//	              k: tensor k, the case's dist, and v: tensor v, normal:
//	              Shape.KVLen(item) rows of KVHeads·HeadDim, row key =
//	              item<<32 | position
//	attn_prefill  q (Heads·HeadDim wide), k and v (KVHeads·HeadDim wide):
//	              tensors q and k (the case's dist) and v (normal), SeqLen
//	              rows a sequence, row key = item<<32 | position

// attnTensors returns the recipes of attention's Q, K and V, in that order.
func attnTensors(c spec.Case) []target.ItemTensor {
	return []target.ItemTensor{
		{ID: tensorQ, Dist: c.Dist, Scale: 1},
		{ID: tensorK, Dist: c.Dist, Scale: 1},
		{ID: tensorV, Dist: spec.DistNormal, Scale: 1},
	}
}

// attnInputs sets b's op field for attention case c with len(ids) items,
// item i being the case's item ids[i] (nil ids: the case's own items): the
// sizes, after the shape and memory-budget checks, and, unless lazy, Q, K
// and V. Boundary nudging is the caller's.
func attnInputs(c spec.Case, b *target.Batch, ids []int, lazy bool) error {
	s := c.Shape
	n, item := c.BatchRows(), func(i int) uint64 { return uint64(i) }
	if ids != nil {
		n, item = len(ids), func(i int) uint64 { return uint64(ids[i]) }
	}
	qkv := attnTensors(c)
	gen := func(t target.ItemTensor, rows, cols int, key func(i int) uint64) ([]float32, error) {
		if lazy {
			return nil, nil
		}
		return fill(c, t.ID, t.Dist, b.In, t.Scale, rows, cols, key)
	}
	switch c.Op {
	case spec.OpAttnPrefill:
		if err := firstErr(positive("seqs", n), positive("seq_len", s.SeqLen), positive("heads", s.Heads),
			positive("kv_heads", s.KVHeads), positive("head_dim", s.HeadDim)); err != nil {
			return err
		}
		if s.Heads%s.KVHeads != 0 {
			return fmt.Errorf("shape: heads %d is not a multiple of kv_heads %d", s.Heads, s.KVHeads)
		}
		tokens := spec.SatMul(n, s.SeqLen)
		if err := budget(c, spec.SatMul(tokens, s.Heads, s.HeadDim), spec.SatMul(2, tokens, s.KVHeads, s.HeadDim)); err != nil {
			return err
		}
		key := func(i int) uint64 { return item(i/s.SeqLen)<<32 | uint64(i%s.SeqLen) }
		q, err := gen(qkv[0], tokens, s.Heads*s.HeadDim, key)
		if err != nil {
			return err
		}
		k, err := gen(qkv[1], tokens, s.KVHeads*s.HeadDim, key)
		if err != nil {
			return err
		}
		v, err := gen(qkv[2], tokens, s.KVHeads*s.HeadDim, key)
		if err != nil {
			return err
		}
		b.Prefill = &oracle.PrefillInput{Q: q, K: k, V: v, Seqs: n, SeqLen: s.SeqLen,
			Heads: s.Heads, KVHeads: s.KVHeads, HeadDim: s.HeadDim, Out: b.Out}
	case spec.OpAttnDecode:
		if err := firstErr(positive("rows (requests)", n), positive("heads", s.Heads),
			positive("kv_heads", s.KVHeads), positive("head_dim", s.HeadDim)); err != nil {
			return err
		}
		if s.Heads%s.KVHeads != 0 {
			return fmt.Errorf("shape: heads %d is not a multiple of kv_heads %d", s.Heads, s.KVHeads)
		}
		lens := make([]int, n)
		total := 0
		for i := range lens {
			lens[i] = s.KVLen(int(item(i)))
			if err := positive("kv", lens[i]); err != nil {
				return err
			}
			if lens[i] > spec.MaxElements {
				return budget(c, lens[i])
			}
			total += lens[i]
			if err := budget(c, spec.SatMul(2, total, s.KVHeads, s.HeadDim)); err != nil {
				return err
			}
		}
		q, err := gen(qkv[0], n, s.Heads*s.HeadDim, item)
		if err != nil {
			return err
		}
		d := &oracle.DecodeInput{Q: q, K: make([][]float32, n), V: make([][]float32, n),
			Heads: s.Heads, KVHeads: s.KVHeads, HeadDim: s.HeadDim, Out: b.Out}
		for i := range lens {
			key := func(j int) uint64 { return item(i)<<32 | uint64(j) }
			if d.K[i], err = gen(qkv[1], lens[i], s.KVHeads*s.HeadDim, key); err != nil {
				return err
			}
			if d.V[i], err = gen(qkv[2], lens[i], s.KVHeads*s.HeadDim, key); err != nil {
				return err
			}
		}
		b.Decode = d
	default:
		return fmt.Errorf("op %s is not an attention op", c.Op)
	}
	return nil
}
