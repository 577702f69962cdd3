package attention

import (
	"fmt"

	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// FromData reads tensors q (tokens·heads·head_dim values), k and v
// (tokens·kv_heads·head_dim each), tokens = seqs·seq_len.
func (Prefill) FromData(c spec.Case, out oracle.DType, e ops.Explicit) (ops.In, error) {
	s := c.Shape
	tokens := spec.SatMul(s.Seqs, s.SeqLen)
	if err := e.Budget(spec.SatMul(tokens, s.Heads, s.HeadDim), spec.SatMul(2, tokens, s.KVHeads, s.HeadDim)); err != nil {
		return nil, err
	}
	p := &oracle.PrefillInput{Seqs: s.Seqs, SeqLen: s.SeqLen, Heads: s.Heads, KVHeads: s.KVHeads, HeadDim: s.HeadDim, Out: out}
	var err error
	if p.Q, err = e.Tensor("q", tokens*s.Heads*s.HeadDim); err != nil {
		return nil, err
	}
	if p.K, err = e.Tensor("k", tokens*s.KVHeads*s.HeadDim); err != nil {
		return nil, err
	}
	if p.V, err = e.Tensor("v", tokens*s.KVHeads*s.HeadDim); err != nil {
		return nil, err
	}
	return p, nil
}

// FromData reads tensors q (rows·heads·head_dim values), then k and v:
// each request's cache (its KV length · kv_heads·head_dim values)
// concatenated in request order, the lengths from the shape.
func (Decode) FromData(c spec.Case, out oracle.DType, e ops.Explicit) (ops.In, error) {
	s := c.Shape
	lens := make([]int, s.Rows)
	total := 0
	for r := range lens {
		lens[r] = s.KV
		if len(s.KVLens) > 0 {
			lens[r] = s.KVLens[r%len(s.KVLens)]
		}
		if lens[r] < 1 || lens[r] > spec.MaxElements {
			return nil, fmt.Errorf("explicit data: request %d kv length %d out of range", r, lens[r])
		}
		total += lens[r]
	}
	width := spec.SatMul(s.KVHeads, s.HeadDim)
	if err := e.Budget(spec.SatMul(s.Rows, s.Heads, s.HeadDim), spec.SatMul(2, total, width)); err != nil {
		return nil, err
	}
	d := &oracle.DecodeInput{Heads: s.Heads, KVHeads: s.KVHeads, HeadDim: s.HeadDim, Out: out,
		K: make([][]float32, s.Rows), V: make([][]float32, s.Rows)}
	var err error
	if d.Q, err = e.Tensor("q", s.Rows*s.Heads*s.HeadDim); err != nil {
		return nil, err
	}
	k, err := e.Tensor("k", total*width)
	if err != nil {
		return nil, err
	}
	v, err := e.Tensor("v", total*width)
	if err != nil {
		return nil, err
	}
	off := 0
	for r, L := range lens {
		d.K[r], d.V[r] = k[off:off+L*width], v[off:off+L*width]
		off += L * width
	}
	return d, nil
}
