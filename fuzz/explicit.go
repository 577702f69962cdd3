package fuzz

import (
	"fmt"
	"strconv"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// explicitInputs builds the batch of a case that carries its tensors as hex
// bits (spec.Data). Tensor names: rmsnorm x, w; gemm x, w; logprob logits,
// targets (decimal); attention q, k, v (decode: k and v concatenated over
// requests in request order, lengths from the shape).
func explicitInputs(c spec.Case, in, out oracle.DType) (*target.Batch, error) {
	s := c.Shape
	get := func(name string, want int) ([]float32, error) {
		hex, ok := c.Data.Tensors[name]
		if !ok {
			return nil, fmt.Errorf("explicit data: tensor %q missing", name)
		}
		if len(hex) != want {
			return nil, fmt.Errorf("explicit data: tensor %q has %d values, shape %+v needs %d", name, len(hex), s, want)
		}
		vals := make([]float32, want)
		for i, h := range hex {
			v, err := oracle.ParseHex(in, h)
			if err != nil {
				return nil, fmt.Errorf("explicit data: tensor %q value %d: %w", name, i, err)
			}
			vals[i] = v
		}
		return vals, nil
	}
	b := &target.Batch{Op: c.Op, In: in, Out: out}
	var err error
	switch c.Op {
	case spec.OpRMSNorm:
		if err := budget(c, spec.SatMul(s.Rows, s.Hidden)); err != nil {
			return nil, err
		}
		r := &oracle.RMSNormInput{Rows: s.Rows, Hidden: s.Hidden, Eps: c.Eps, Out: out}
		if r.X, err = get("x", s.Rows*s.Hidden); err != nil {
			return nil, err
		}
		if r.W, err = get("w", s.Hidden); err != nil {
			return nil, err
		}
		b.RMSNorm = r
	case spec.OpGEMM:
		if err := budget(c, spec.SatMul(s.Rows, s.Hidden), spec.SatMul(s.Hidden, s.N)); err != nil {
			return nil, err
		}
		g := &oracle.GEMMInput{M: s.Rows, K: s.Hidden, N: s.N, Out: out}
		if g.X, err = get("x", s.Rows*s.Hidden); err != nil {
			return nil, err
		}
		if g.W, err = get("w", s.Hidden*s.N); err != nil {
			return nil, err
		}
		b.GEMM = g
	case spec.OpLogProb:
		if err := budget(c, spec.SatMul(s.Rows, s.Vocab)); err != nil {
			return nil, err
		}
		l := &oracle.LogProbInput{Rows: s.Rows, Vocab: s.Vocab}
		if l.Logits, err = get("logits", s.Rows*s.Vocab); err != nil {
			return nil, err
		}
		ids := c.Data.Tensors["targets"]
		if len(ids) != s.Rows {
			return nil, fmt.Errorf("explicit data: tensor \"targets\" has %d ids, want %d", len(ids), s.Rows)
		}
		l.Targets = make([]int32, s.Rows)
		for i, id := range ids {
			v, err := strconv.ParseInt(id, 10, 32)
			if err != nil || v < 0 || int(v) >= s.Vocab {
				return nil, fmt.Errorf("explicit data: target %d = %q: want an id in [0,%d)", i, id, s.Vocab)
			}
			l.Targets[i] = int32(v)
		}
		b.LogProb = l
	case spec.OpAttnPrefill:
		tokens := spec.SatMul(s.Seqs, s.SeqLen)
		if err := budget(c, spec.SatMul(tokens, s.Heads, s.HeadDim), spec.SatMul(2, tokens, s.KVHeads, s.HeadDim)); err != nil {
			return nil, err
		}
		p := &oracle.PrefillInput{Seqs: s.Seqs, SeqLen: s.SeqLen, Heads: s.Heads, KVHeads: s.KVHeads, HeadDim: s.HeadDim, Out: out}
		if p.Q, err = get("q", tokens*s.Heads*s.HeadDim); err != nil {
			return nil, err
		}
		if p.K, err = get("k", tokens*s.KVHeads*s.HeadDim); err != nil {
			return nil, err
		}
		if p.V, err = get("v", tokens*s.KVHeads*s.HeadDim); err != nil {
			return nil, err
		}
		b.Prefill = p
	case spec.OpAttnDecode:
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
		if err := budget(c, spec.SatMul(s.Rows, s.Heads, s.HeadDim), spec.SatMul(2, total, width)); err != nil {
			return nil, err
		}
		d := &oracle.DecodeInput{Heads: s.Heads, KVHeads: s.KVHeads, HeadDim: s.HeadDim, Out: out,
			K: make([][]float32, s.Rows), V: make([][]float32, s.Rows)}
		if d.Q, err = get("q", s.Rows*s.Heads*s.HeadDim); err != nil {
			return nil, err
		}
		k, err := get("k", total*width)
		if err != nil {
			return nil, err
		}
		v, err := get("v", total*width)
		if err != nil {
			return nil, err
		}
		off := 0
		for r, L := range lens {
			d.K[r], d.V[r] = k[off:off+L*width], v[off:off+L*width]
			off += L * width
		}
		b.Decode = d
	default:
		return nil, fmt.Errorf("unknown op %q", c.Op)
	}
	return b, nil
}
