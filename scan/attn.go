package scan

import (
	"context"
	"fmt"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/ops/attention"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// The attention dimensions beyond the batch size: a co-resident request's
// length (neighbour), chunked prefill (chunk) and the paged cache's page
// size (page). Each draw makes its largest batch on the host once and, for
// every value v, runs the batch the dimension takes for v:
//
//	neighbour  items 0 (watched) and 1 (its neighbour); decode: request 0
//	           with its first Shape.KV tokens, request 1 with its first v;
//	           prefill: sequences cut to max(Shape.SeqLen, v) queries, the
//	           batch's max_seqlen_q (a varlen batch held padded to its
//	           longest sequence: a causal row sees only the tokens before
//	           it, so the watched rows are those of the varlen batch).
//	           Compared: the watched item's rows (prefill: its first
//	           Shape.SeqLen positions), against the step at v = From.
//	chunk      the Shape.Seqs prompts of Shape.SeqLen tokens prefilled in
//	           chunks of v queries: chunk [c0, c1) is the prompts cut to c1
//	           tokens with Layout.ChunkFrom = c0, its rows at positions
//	           c0..c1-1 taken. Compared: every prompt row, against the whole
//	           prompts prefilled at once (Layout zero).
//	page       the Shape.Rows requests of Shape.KV tokens with
//	           Layout.PageSize = v. Compared: every row, against the step at
//	           v = From.
//	prefix     the Shape.Seqs prompts of Shape.SeqLen tokens, the first v a
//	           cached prefix: one chunk [v, SeqLen) with Layout.ChunkFrom =
//	           v. Compared: the rows at positions v..SeqLen-1, against the
//	           whole prompts prefilled at once.
//
// A value's class is "A" when every compared row equals its reference;
// else, for neighbour and page, the digest of the compared rows' bits (two
// values of one schedule share it), and for chunk and prefix "B". A step runs once:
// a target nondeterministic on these batches is not told apart here.

// attnCase sets case c's sizes to those of the largest batch of an
// attention dimension: two items at the longest length swept
// (neighbour), the prompts (chunk), the requests (page).
func (sc *scanner) attnCase(c *spec.Case) {
	s := sc.s
	switch s.Dim {
	case spec.ScanNeighbour:
		c.SetBatchRows(2)
		sc.neighbour().NeighbourShape(&c.Shape, s.Shape, s.To)
	case spec.ScanChunk, spec.ScanPrefix:
		c.SetBatchRows(s.Shape.Seqs)
	case spec.ScanPage:
		c.SetBatchRows(s.Shape.Rows)
		c.Shape.KVLens = nil
	}
}

// drawAttn scans an attention dimension on draw k and returns each
// value's class.
func (sc *scanner) drawAttn(ctx context.Context, k int) ([]string, error) {
	b, err := inputs.Of(sc.caseFor(k))
	if err != nil {
		return nil, fmt.Errorf("scan: draw %s: %w", sc.draws[k], err)
	}
	fail := func(v int, err error) ([]string, error) {
		return nil, fmt.Errorf("scan: draw %s, %s = %d: %w", sc.draws[k], sc.s.Dim, v, err)
	}
	if sc.s.Dim == spec.ScanChunk || sc.s.Dim == spec.ScanPrefix {
		return sc.drawChunk(ctx, k, b)
	}
	cls := make([]string, len(sc.values))
	var ref *target.Output
	defer func() {
		if ref != nil {
			ref.Release()
		}
	}()
	against := fmt.Sprintf("%s = %d", sc.s.Dim, sc.s.From)
	for i, v := range sc.values {
		g := sc.attnBatch(b, v)
		sc.before(k, "%s = %d", sc.s.Dim, v)
		o, err := runChecked(ctx, sc.t, g)
		if err != nil {
			return fail(v, err)
		}
		n := sc.watchedRows(g)
		sc.res.Batches++
		if ref == nil {
			ref, cls[i] = o, "A"
			sc.step()
			continue
		}
		all := spec.Iota(n)
		d, err := differing(o, ref, all, all, sc.dt, sc.s.NoTaps)
		if err == nil && len(d) > 0 {
			cls[i], err = witness(o, 0, n)
		}
		o.Release()
		if err != nil {
			return fail(v, err)
		}
		if len(d) == 0 {
			cls[i] = "A"
		}
		sc.res.RowsCompared += int64(n)
		sc.res.Differing += int64(len(d))
		sc.record(k, v, all, d, against)
		sc.step()
	}
	return cls, nil
}

// attnBatch is the batch of value v of the neighbour or page dimension,
// cut from draw's largest batch b (ops.Neighbour.NeighbourCut).
func (sc *scanner) attnBatch(b *target.Batch, v int) *target.Batch {
	if sc.s.Dim == spec.ScanPage {
		g := *b
		g.Layout = target.Layout{PageSize: v}
		return &g
	}
	_, in, _ := b.Kind() // inputs.Of made it
	return b.With(sc.neighbour().NeighbourCut(in, sc.s.Shape, v))
}

// neighbour is the scan's op as an ops.Neighbour: an op whose ScanDims
// hold the neighbour dimension is one (Normalize checked the dimension).
func (sc *scanner) neighbour() ops.Neighbour {
	k, _ := all.Case(sc.s.Op)
	return k.(ops.Neighbour)
}

// watchedRows is the number of compared rows of a neighbour or page batch
// g, its first rows: the watched request's heads (decode neighbour), the
// watched sequence's first Shape.SeqLen positions (prefill neighbour),
// every row (page).
func (sc *scanner) watchedRows(g *target.Batch) int {
	if sc.s.Dim == spec.ScanPage {
		return g.Rows()
	}
	_, in, _ := g.Kind() // attnBatch made it
	return sc.neighbour().NeighbourRows(in, sc.s.Shape)
}

// chunks are the chunks [c0, c1) of the prompts of L tokens that value v
// of the chunk or prefix dimension prefills: chunks of v queries, or the
// one chunk past a cached prefix of v tokens.
func (sc *scanner) chunks(v, L int) [][2]int {
	if sc.s.Dim == spec.ScanPrefix {
		return [][2]int{{v, L}}
	}
	var cs [][2]int
	for c0 := 0; c0 < L; c0 += v {
		cs = append(cs, [2]int{c0, min(c0+v, L)})
	}
	return cs
}

// checkPrefix checks a prefix scan spec (Normalize): attn_prefill, at
// least one prompt (1 when zero), and a query past the longest prefix.
func checkPrefix(s *spec.ScanSpec) error {
	if !sweeps(s.Op, spec.ScanPrefix) {
		return fmt.Errorf("%w: the prefix dimension scans attn_prefill, not %s", ErrBadSpec, s.Op)
	}
	if s.Shape.Seqs == 0 {
		s.Shape.Seqs = 1
	}
	if s.Shape.Seqs < 1 {
		return fmt.Errorf("%w: prefix scan: %d prompts, want >= 1", ErrBadSpec, s.Shape.Seqs)
	}
	if s.Shape.SeqLen >= 1 && s.To >= s.Shape.SeqLen {
		return fmt.Errorf("%w: prefix scan: a prefix of up to %d tokens of a prompt of %d: want to < seq_len (a query past the prefix)", ErrBadSpec, s.To, s.Shape.SeqLen)
	}
	return nil
}

// drawChunk scans the chunk or prefix dimension on draw k, b the whole
// prompts.
func (sc *scanner) drawChunk(ctx context.Context, k int, b *target.Batch) ([]string, error) {
	p := b.Input.(*oracle.PrefillInput)
	L, H := p.SeqLen, p.Heads
	sc.before(k, "the whole prompts, seq_len = %d", L)
	ref, err := runChecked(ctx, sc.t, b)
	if err != nil {
		return nil, fmt.Errorf("scan: draw %s, the whole prompts: %w", sc.draws[k], err)
	}
	defer ref.Release()
	sc.res.Batches++
	cls := make([]string, len(sc.values))
	for i, v := range sc.values {
		differ, first := 0, -1
		for _, c := range sc.chunks(v, L) {
			c0, c1 := c[0], c[1]
			g := prefillCut(b, c1)
			g.Layout = target.Layout{ChunkFrom: c0}
			sc.before(k, "%s = %d, queries %d..%d", sc.s.Dim, v, c0, c1-1)
			o, err := runChecked(ctx, sc.t, g)
			if err != nil {
				return nil, fmt.Errorf("scan: draw %s, %s = %d, queries %d..%d: %w", sc.draws[k], sc.s.Dim, v, c0, c1-1, err)
			}
			var pa, pb []int // the chunk's rows in o and in the whole prompts
			for s := range p.Seqs {
				for r := c0 * H; r < c1*H; r++ {
					pa = append(pa, s*c1*H+r)
					pb = append(pb, s*L*H+r)
				}
			}
			d, err := differing(o, ref, pa, pb, sc.dt, sc.s.NoTaps)
			o.Release()
			if err != nil {
				return nil, fmt.Errorf("scan: draw %s, %s = %d, queries %d..%d: %w", sc.draws[k], sc.s.Dim, v, c0, c1-1, err)
			}
			sc.res.Batches++
			sc.res.RowsCompared += int64(len(pa))
			if len(d) > 0 && first < 0 {
				first = pb[d[0]]
			}
			differ += len(d)
		}
		cls[i] = "A"
		if differ > 0 {
			cls[i] = "B"
			sc.res.Differing += int64(differ)
			sc.res.Diffs = append(sc.res.Diffs, Diff{Draw: sc.draws[k], Value: v, Rows: differ, FirstRow: first, Against: "whole prompt"})
		}
		sc.step()
	}
	return cls, nil
}

// prefillCut is prefill batch b with every sequence cut to its first n
// positions (attention.CutPrefill).
func prefillCut(b *target.Batch, n int) *target.Batch {
	return &target.Batch{Op: b.Op, In: b.In, Out: b.Out, Input: attention.CutPrefill(b.Input.(*oracle.PrefillInput), n)}
}
