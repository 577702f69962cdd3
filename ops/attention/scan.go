package attention

import (
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// ScanDims is a prefill's neighbour, chunk and prefix dimensions.
func (Prefill) ScanDims() []string {
	return []string{spec.ScanNeighbour, spec.ScanChunk, spec.ScanPrefix}
}

// ScanDims is a decode's kv, neighbour and page dimensions.
func (Decode) ScanDims() []string { return []string{spec.ScanKV, spec.ScanNeighbour, spec.ScanPage} }

// SensitiveWork is heads x head_dim x seq_len·(seq_len+1)/2, a
// sequence's rows' KV lengths x head dim summed: the prefill draw tunes
// every query position's row and checks it against the family at its own
// KV length, about 30 + 9 x (groups of the family) single-row passes of
// KV length x head dim a row (fuzz/inputs/sensitive_prefill.go,
// docs/detection.md).
func (Prefill) SensitiveWork(s spec.Shape) int {
	return s.Heads * s.HeadDim * s.SeqLen * (s.SeqLen + 1) / 2
}

// SensitiveWork is heads x kv x head_dim (kv at least 1): the decode
// draw costs about 4 x heads x (family + 1) single-row decodes a request
// (docs/detection.md).
func (Decode) SensitiveWork(s spec.Shape) int { return s.Heads * max(s.KV, 1) * s.HeadDim }

var (
	_ ops.Neighbour = Prefill{}
	_ ops.Neighbour = Decode{}
)

// NeighbourShape is the longest sequence, max(s.SeqLen, to) positions.
func (Prefill) NeighbourShape(c *spec.Shape, s spec.Shape, to int) {
	c.SeqLen = max(s.SeqLen, to)
}

// NeighbourCut is in with every sequence cut to max(s.SeqLen, v)
// queries, the batch's max_seqlen_q: a varlen batch held padded to its
// longest sequence (a causal row sees only the tokens before it, so the
// watched rows are those of the varlen batch).
func (Prefill) NeighbourCut(in ops.In, s spec.Shape, v int) ops.In {
	return CutPrefill(prefill(in), max(s.SeqLen, v))
}

// NeighbourRows is the watched sequence's first s.SeqLen positions, every
// head.
func (Prefill) NeighbourRows(in ops.In, s spec.Shape) int { return s.SeqLen * prefill(in).Heads }

// NeighbourShape is both requests' caches at the longest length,
// max(s.KV, to) tokens.
func (Decode) NeighbourShape(c *spec.Shape, s spec.Shape, to int) {
	c.KV, c.KVLens = max(s.KV, to), nil
}

// NeighbourCut is request 0 with its first s.KV tokens and request 1
// with its first v.
func (Decode) NeighbourCut(in ops.In, s spec.Shape, v int) ops.In {
	src := decode(in)
	d := *src
	w := d.KVHeads * d.HeadDim
	d.K = [][]float32{src.K[0][:s.KV*w], src.K[1][:v*w]}
	d.V = [][]float32{src.V[0][:s.KV*w], src.V[1][:v*w]}
	return &d
}

// NeighbourRows is the watched request's heads.
func (Decode) NeighbourRows(in ops.In, _ spec.Shape) int { return decode(in).Heads }

// CutPrefill returns prefill p with every sequence cut to its first v
// positions (v <= p.SeqLen), in new slices.
func CutPrefill(p *oracle.PrefillInput, v int) *oracle.PrefillInput {
	c := *p
	c.SeqLen = v
	qw, kw := p.Heads*p.HeadDim, p.KVHeads*p.HeadDim
	c.Q, c.K, c.V = nil, nil, nil
	for s := range p.Seqs {
		base := s * p.SeqLen
		c.Q = append(c.Q, p.Q[base*qw:(base+v)*qw]...)
		c.K = append(c.K, p.K[base*kw:(base+v)*kw]...)
		c.V = append(c.V, p.V[base*kw:(base+v)*kw]...)
	}
	return &c
}
