package attention

import (
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/spec"
)

// The attention ops' steps in the case generator (ops.Drawer); decode's
// batch steps are ops.RowsBatch's.

func (attention) DrawDTypes(*spec.Case, ops.Gen) {}

// drawHeads draws kv_heads and the group (heads = kv_heads·group), each
// 1, 2, 4 or 8, then head_dim.
func drawHeads(s *spec.Shape, g ops.Gen) {
	s.KVHeads = g.SmallPow2()
	s.Heads = s.KVHeads * g.SmallPow2()
	s.HeadDim = g.HeadDim()
}

// DrawInner draws the heads, then the longest sequence length at most
// 1024 whose row Work fits budget, then seq_len up to it; minRow is a
// row's Work at that length.
func (Prefill) DrawInner(c *spec.Case, g ops.Gen, budget int) int {
	s := &c.Shape
	drawHeads(s, g)
	maxLen := 1
	for maxLen < 1024 {
		s.SeqLen = maxLen + 1
		if g.Work(*c) > budget {
			break
		}
		maxLen++
	}
	s.SeqLen = g.KV(maxLen)
	return g.Work(*c)
}

// MaxBatch is 8 sequences.
func (Prefill) MaxBatch() int { return 8 }

// DrawBatch is 1 sequence half the time, else uniform in [1, max].
func (Prefill) DrawBatch(g ops.Gen, max int) int {
	if g.Intn(2) == 0 {
		return 1 + g.Intn(max)
	}
	return 1
}

// OtherBatch is uniform in [1, max]: drawn (rows, as many tokens as
// sequences) is too large a batch of sequences.
func (Prefill) OtherBatch(g ops.Gen, _, max int) int { return 1 + g.Intn(max) }

func (Prefill) DrawPerRow(*spec.Case, ops.Gen, int, int) {}

// SetTokens draws the sequences (DrawBatch of MaxBatch), each of length
// ⌈tokens/seqs⌉.
func (p Prefill) SetTokens(s *spec.Shape, g ops.Gen, tokens int) {
	s.Seqs = p.DrawBatch(g, p.MaxBatch())
	s.SeqLen = (tokens + s.Seqs - 1) / s.Seqs
}

func (Prefill) FitTokens(*spec.Case, ops.Gen, int) {}

// ResidueShape is one head of the smallest head_dim, seq_len uniform in
// [1, 4].
func (Prefill) ResidueShape(s *spec.Shape, g ops.Gen) {
	s.Heads, s.KVHeads, s.HeadDim = 1, 1, g.MinHeadDim()
	s.SeqLen = 1 + g.Intn(4)
}

// ResidueSweep sweeps seq_len in a third of the cases: a prefill's cost
// grows with the square of its length, so it is not large together with
// the batch.
func (Prefill) ResidueSweep(s *spec.Shape, g ops.Gen, maxLen int) bool {
	if g.Intn(3) != 0 {
		return false
	}
	s.SeqLen = 1 + g.Intn(maxLen)
	return true
}

func (Prefill) ResidueDims(s spec.Shape, add func(string, int)) {
	add("seqs", s.Seqs)
	add("seq_len", s.SeqLen)
}

// DrawInner draws the heads, then kv (at most 8192, and budget over a
// row's heads·head_dim); minRow is a row's Work at that length.
func (Decode) DrawInner(c *spec.Case, g ops.Gen, budget int) int {
	s := &c.Shape
	drawHeads(s, g)
	s.KV = g.KV(min(8192, max(1, budget/(s.Heads*s.HeadDim))))
	return g.Work(*c)
}

// DrawPerRow draws per-request KV lengths (drawLens).
func (Decode) DrawPerRow(c *spec.Case, g ops.Gen, rows, _ int) { drawLens(&c.Shape, g, rows) }

// drawLens draws, in one case in five of at most 64 requests, a KV
// length in [1, kv] for each request.
func drawLens(s *spec.Shape, g ops.Gen, rows int) {
	if rows <= 64 && g.Intn(5) == 0 {
		s.KVLens = make([]int, rows)
		for i := range s.KVLens {
			s.KVLens[i] = g.KV(s.KV)
		}
	}
}

// FitTokens cuts kv so that items requests of (heads + 2·kv·kv_heads)·
// head_dim values fit spec.MaxElements, then draws the per-request KV
// lengths again (drawLens).
func (Decode) FitTokens(c *spec.Case, g ops.Gen, items int) {
	s := &c.Shape
	s.KVLens = nil
	perKV := spec.SatMul(2, s.KVHeads, s.HeadDim)
	if room := spec.MaxElements/max(1, items) - s.Heads*s.HeadDim; perKV > 0 {
		s.KV = max(1, min(s.KV, room/perKV))
	}
	drawLens(s, g, s.Rows)
}

// ResidueShape is one head of the smallest head_dim, kv uniform in
// [1, 8], every request at kv.
func (Decode) ResidueShape(s *spec.Shape, g ops.Gen) {
	s.Heads, s.KVHeads, s.HeadDim = 1, 1, g.MinHeadDim()
	s.KV, s.KVLens = 1+g.Intn(8), nil
}

func (Decode) ResidueDims(s spec.Shape, add func(string, int)) {
	add("rows", s.Rows)
	add("kv", s.KV)
	for _, l := range s.KVLens {
		add("kv_lens", l)
	}
}
