package fuzz

import (
	"fmt"

	"github.com/bitparity/bitparity/ops"
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
	return pick(src, ids, ops.CaseOp.Gather)
}

// view is gather for a batch nobody writes to: a decode request's KV
// cache, a slice of its own, is shared with src instead of copied (a decode
// sweep's batch of a thousand copies of one request then holds one cache);
// every other tensor is copied as gather does. The caller must not write to
// the batch it returns.
func view(src *target.Batch, ids []int) (*target.Batch, error) {
	if src.Lazy() {
		return gather(src, ids)
	}
	return pick(src, ids, ops.CaseOp.View)
}

// pick is gather and view: src with the input take makes of items ids of
// src's, each checked to be one of its items.
func pick(src *target.Batch, ids []int, take func(ops.CaseOp, ops.In, []int) ops.In) (*target.Batch, error) {
	k, in, err := src.Kind()
	if err != nil {
		return nil, fmt.Errorf("gather: %w", err)
	}
	n := k.Items(in)
	for _, id := range ids {
		if id < 0 || id >= n {
			return nil, fmt.Errorf("gather: item %d of a batch of %d", id, n)
		}
	}
	return src.With(take(k, in, ids)), nil
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
	k, in, err := src.Kind()
	if err != nil {
		return nil, fmt.Errorf("first items: %w", err)
	}
	return src.With(k.First(in, n)), nil
}

// fillItems overwrites the input values of items [from, Items()) of b with
// v(j), j counting the values of those items; logprob target ids become 0.
// The weights of rmsnorm and gemm are shared by all items and stay.
func fillItems(b *target.Batch, from int, v func(j int) float32) {
	if k, in, err := b.Kind(); err == nil {
		k.Fill(in, from, v)
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
	if k, _, err := b.Kind(); err == nil && k.PadFirst() {
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
	k, in, err := b.Kind()
	if err != nil {
		return nil, fmt.Errorf("padding: %w", err)
	}
	_, to, err := dst.Kind()
	if err != nil {
		return nil, fmt.Errorf("padding: %w", err)
	}
	k.Overlay(to, in)
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
