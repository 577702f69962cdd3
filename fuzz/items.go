package fuzz

import (
	"fmt"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// An item is the unit a batch is made of: a token for rmsnorm, gemm and
// logprob (one output row), a request for decode (Heads output rows), a
// sequence for prefill (SeqLen·Heads output rows). Relations build batches
// by copying items, so a row's inputs are the same bits in every batch.

// withItems returns c asking for n items (rows, requests or sequences).
func withItems(c spec.Case, n int) spec.Case {
	c.SetBatchRows(n)
	return c
}

// Gather returns a new batch whose item i is a copy of item ids[i] of b.
func Gather(b *target.Batch, ids []int) (*target.Batch, error) { return gather(b, ids) }

// Pad returns b followed by n-b.Items() filler items of kind filler (zeros,
// nan, huge, copy: see padded; "normal" needs the case and is refused).
func Pad(b *target.Batch, n int, filler string) (*target.Batch, error) {
	if filler == "normal" {
		return nil, fmt.Errorf("padding: normal filler needs the case's generator")
	}
	return padded(spec.Case{Op: b.Op}, b, n, filler)
}

// gather returns a new batch whose item i is a copy of item ids[i] of src.
func gather(src *target.Batch, ids []int) (*target.Batch, error) {
	n := src.Items()
	for _, id := range ids {
		if id < 0 || id >= n {
			return nil, fmt.Errorf("gather: item %d of a batch of %d", id, n)
		}
	}
	b := &target.Batch{Op: src.Op, In: src.In, Out: src.Out}
	rows := func(dst *[]float32, x []float32, width int) {
		out := make([]float32, 0, len(ids)*width)
		for _, id := range ids {
			out = append(out, x[id*width:(id+1)*width]...)
		}
		*dst = out
	}
	switch src.Op {
	case spec.OpRMSNorm:
		r := *src.RMSNorm
		rows(&r.X, src.RMSNorm.X, r.Hidden)
		r.Rows = len(ids)
		b.RMSNorm = &r
	case spec.OpGEMM:
		g := *src.GEMM
		rows(&g.X, src.GEMM.X, g.K)
		g.M = len(ids)
		b.GEMM = &g
	case spec.OpLogProb:
		l := *src.LogProb
		rows(&l.Logits, src.LogProb.Logits, l.Vocab)
		l.Targets = make([]int32, len(ids))
		for i, id := range ids {
			l.Targets[i] = src.LogProb.Targets[id]
		}
		l.Rows = len(ids)
		b.LogProb = &l
	case spec.OpAttnDecode:
		d := *src.Decode
		rows(&d.Q, src.Decode.Q, d.Heads*d.HeadDim)
		d.K = make([][]float32, len(ids))
		d.V = make([][]float32, len(ids))
		for i, id := range ids {
			d.K[i] = append([]float32(nil), src.Decode.K[id]...)
			d.V[i] = append([]float32(nil), src.Decode.V[id]...)
		}
		b.Decode = &d
	case spec.OpAttnPrefill:
		p := *src.Prefill
		rows(&p.Q, src.Prefill.Q, p.SeqLen*p.Heads*p.HeadDim)
		rows(&p.K, src.Prefill.K, p.SeqLen*p.KVHeads*p.HeadDim)
		rows(&p.V, src.Prefill.V, p.SeqLen*p.KVHeads*p.HeadDim)
		p.Seqs = len(ids)
		b.Prefill = &p
	default:
		return nil, fmt.Errorf("gather: unknown op %q", src.Op)
	}
	return b, nil
}

// view is gather for a batch nobody writes to: a decode request's KV
// cache, a slice of its own, is shared with src instead of copied (a decode
// sweep's batch of a thousand copies of one request then holds one cache);
// every other tensor is copied as gather does. The caller must not write to
// the batch it returns.
func view(src *target.Batch, ids []int) (*target.Batch, error) {
	if src.Op != spec.OpAttnDecode || src.Lazy() {
		return gather(src, ids)
	}
	n := src.Items()
	d := *src.Decode
	w := d.Heads * d.HeadDim
	d.Q = make([]float32, 0, len(ids)*w)
	d.K, d.V = make([][]float32, len(ids)), make([][]float32, len(ids))
	for i, id := range ids {
		if id < 0 || id >= n {
			return nil, fmt.Errorf("gather: item %d of a batch of %d", id, n)
		}
		d.Q = append(d.Q, src.Decode.Q[id*w:(id+1)*w]...)
		d.K[i], d.V[i] = src.Decode.K[id], src.Decode.V[id]
	}
	return &target.Batch{Op: src.Op, In: src.In, Out: src.Out, Decode: &d}, nil
}

// firstItems returns a batch of the first n items of src that shares
// src's memory (no copy): a drift map's batch of v items is the prefix of
// one built once at the largest v (grown), so a sweep over thousands of
// sizes does not copy thousands of batches. The caller must not write to
// it. A lazy batch, which has no values to share, is gathered.
func firstItems(src *target.Batch, n int) (*target.Batch, error) {
	if n < 0 || n > src.Items() {
		return nil, fmt.Errorf("first items: %d of a batch of %d", n, src.Items())
	}
	if src.Lazy() {
		return gather(src, identity(n))
	}
	b := &target.Batch{Op: src.Op, In: src.In, Out: src.Out}
	switch src.Op {
	case spec.OpRMSNorm:
		r := *src.RMSNorm
		r.X, r.Rows = r.X[:n*r.Hidden], n
		b.RMSNorm = &r
	case spec.OpGEMM:
		g := *src.GEMM
		g.X, g.M = g.X[:n*g.K], n
		b.GEMM = &g
	case spec.OpLogProb:
		l := *src.LogProb
		l.Logits, l.Targets, l.Rows = l.Logits[:n*l.Vocab], l.Targets[:n], n
		b.LogProb = &l
	case spec.OpAttnDecode:
		d := *src.Decode
		d.Q, d.K, d.V = d.Q[:n*d.Heads*d.HeadDim], d.K[:n], d.V[:n]
		b.Decode = &d
	case spec.OpAttnPrefill:
		p := *src.Prefill
		q, kv := p.SeqLen*p.Heads*p.HeadDim, p.SeqLen*p.KVHeads*p.HeadDim
		p.Q, p.K, p.V, p.Seqs = p.Q[:n*q], p.K[:n*kv], p.V[:n*kv], n
		b.Prefill = &p
	default:
		return nil, fmt.Errorf("first items: unknown op %q", src.Op)
	}
	return b, nil
}

// fillItems overwrites the input values of items [from, Items()) of b with
// v(j), j counting the values of those items; logprob target ids become 0.
// The weights of rmsnorm and gemm are shared by all items and stay.
func fillItems(b *target.Batch, from int, v func(j int) float32) {
	set := func(x []float32, width int) {
		for j := range x[from*width:] {
			x[from*width+j] = v(j)
		}
	}
	switch b.Op {
	case spec.OpRMSNorm:
		set(b.RMSNorm.X, b.RMSNorm.Hidden)
	case spec.OpGEMM:
		set(b.GEMM.X, b.GEMM.K)
	case spec.OpLogProb:
		set(b.LogProb.Logits, b.LogProb.Vocab)
		for i := from; i < len(b.LogProb.Targets); i++ {
			b.LogProb.Targets[i] = 0
		}
	case spec.OpAttnDecode:
		d := b.Decode
		set(d.Q, d.Heads*d.HeadDim)
		for i := from; i < len(d.K); i++ {
			for j := range d.K[i] {
				d.K[i][j] = v(j)
				d.V[i][j] = v(j + 1)
			}
		}
	case spec.OpAttnPrefill:
		p := b.Prefill
		set(p.Q, p.SeqLen*p.Heads*p.HeadDim)
		set(p.K, p.SeqLen*p.KVHeads*p.HeadDim)
		set(p.V, p.SeqLen*p.KVHeads*p.HeadDim)
	}
}

// padded returns c's batch b followed by pad-items filler items of kind
// filler:
//
//	zeros   every input value +0
//	normal  the next items of the case's own generator (items n, n+1, ...),
//	        or copies when the case has explicit data
//	nan     every input value a quiet NaN (0x7fc00000)
//	huge    ±MaxFinite of the input dtype, alternating
//	copy    copies of the real items, cyclically
//
// Filler decode requests get the KV length of the first request.
func padded(c spec.Case, b *target.Batch, pad int, filler string) (*target.Batch, error) {
	n := b.Items()
	if pad < n {
		return nil, fmt.Errorf("padding: pad %d is below the batch's %d items", pad, n)
	}
	if filler == "normal" && c.Data == nil {
		big, err := Inputs(withItems(c, pad))
		if err != nil {
			return nil, fmt.Errorf("padding filler: %w", err)
		}
		// big is ours, no copy needed; the real items are b's own (they
		// equal big's first n bit for bit, but b may have been built
		// another way).
		return overlay(big, b)
	}
	ids := make([]int, pad)
	for i := range ids {
		ids[i] = i % n
	}
	if c.Op == spec.OpAttnDecode {
		for i := n; i < pad; i++ {
			ids[i] = 0
		}
	}
	out, err := gather(b, ids)
	if err != nil {
		return nil, err
	}
	switch filler {
	case "copy", "normal":
	case "zeros", "", "nan", "huge":
		v, err := target.FillerValues(filler, b.In)
		if err != nil {
			return nil, err
		}
		fillItems(out, n, v)
	default:
		return nil, fmt.Errorf("padding: unknown filler %q (want one of %v)", filler, spec.Fillers)
	}
	return out, nil
}

// padBatch is padded for a lazy batch b of the token ops: a lazy batch of
// item numbers, whose filler items are the case's items (normal: items n,
// n+1, ...; copy: the real items cyclically) or filler rows
// (target.FillerItem) the target or materialize makes. Any other batch is
// padded on the host.
func padBatch(c spec.Case, b *target.Batch, pad int, filler string) (*target.Batch, error) {
	n := b.Items()
	if !b.Lazy() || pad < n {
		return padded(c, b, pad, filler)
	}
	src := b.Source
	items := make([]int, pad)
	for i := range n {
		items[i] = int(src.Key(i))
	}
	s := &target.Source{Case: src.Case, Items: items, Tensor: src.Tensor}
	switch filler {
	case "normal":
		for i := n; i < pad; i++ {
			items[i] = i
		}
	case "copy":
		for i := n; i < pad; i++ {
			items[i] = items[i%n]
		}
	case "zeros", "", "nan", "huge":
		for i := n; i < pad; i++ {
			items[i] = target.FillerItem
		}
		s.Filler = filler
	default:
		return nil, fmt.Errorf("padding: unknown filler %q (want one of %v)", filler, spec.Fillers)
	}
	return lazyBatch(s, pad, b)
}

// overlay copies the items of b over the first items of dst.
func overlay(dst, b *target.Batch) (*target.Batch, error) {
	n := b.Items()
	switch b.Op {
	case spec.OpRMSNorm:
		copy(dst.RMSNorm.X, b.RMSNorm.X)
	case spec.OpGEMM:
		copy(dst.GEMM.X, b.GEMM.X)
	case spec.OpLogProb:
		copy(dst.LogProb.Logits, b.LogProb.Logits)
		copy(dst.LogProb.Targets, b.LogProb.Targets)
	case spec.OpAttnDecode:
		copy(dst.Decode.Q, b.Decode.Q)
		for i := 0; i < n; i++ {
			dst.Decode.K[i], dst.Decode.V[i] = b.Decode.K[i], b.Decode.V[i]
		}
	case spec.OpAttnPrefill:
		copy(dst.Prefill.Q, b.Prefill.Q)
		copy(dst.Prefill.K, b.Prefill.K)
		copy(dst.Prefill.V, b.Prefill.V)
	}
	return dst, nil
}

// itemRows returns the output rows of items [lo, hi) of b.
func itemRows(b *target.Batch, lo, hi int) []int {
	k := b.RowsPerItem()
	rows := make([]int, 0, (hi-lo)*k)
	for r := lo * k; r < hi*k; r++ {
		rows = append(rows, r)
	}
	return rows
}
