package inputs

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

// WithItems returns c asking for n items (rows, requests or sequences).
func WithItems(c spec.Case, n int) spec.Case {
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

// View is gather for a batch nobody writes to: a decode request's KV
// cache, a slice of its own, is shared with src instead of copied (a decode
// sweep's batch of a thousand copies of one request then holds one cache);
// every other tensor is copied as gather does. The caller must not write to
// the batch it returns.
func View(src *target.Batch, ids []int) (*target.Batch, error) {
	if src.Lazy() {
		return gather(src, ids)
	}
	return pick(src, ids, ops.CaseOp.View)
}

// pick is gather and View: src with the input take makes of items ids of
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

// FirstItems returns a batch of the first n items of src that shares
// src's memory (no copy): a drift map's batch of v items is the prefix of
// one built once at the largest v (grown), so a sweep over thousands of
// sizes does not copy thousands of batches. The caller must not write to
// it. A lazy batch, which has no values to share, is gathered.
func FirstItems(src *target.Batch, n int) (*target.Batch, error) {
	if n < 0 || n > src.Items() {
		return nil, fmt.Errorf("first items: %d of a batch of %d", n, src.Items())
	}
	if src.Lazy() {
		return gather(src, spec.Iota(n))
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
		big, err := Of(WithItems(c, pad))
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

// PadCase returns case c's batch b followed by pad-b.Items() filler items
// of kind filler (see padded). A lazy batch b of the token ops stays lazy:
// a lazy batch of item numbers, whose filler items are the case's items
// (normal: items n, n+1, ...; copy: the real items cyclically) or filler
// rows (target.FillerItem) the target or materialize makes. Any other batch
// is padded on the host (padded).
func PadCase(c spec.Case, b *target.Batch, pad int, filler string) (*target.Batch, error) {
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

// ItemRows returns the output rows of items [lo, hi) of b.
func ItemRows(b *target.Batch, lo, hi int) []int {
	k := b.RowsPerItem()
	rows := make([]int, 0, (hi-lo)*k)
	for r := lo * k; r < hi*k; r++ {
		rows = append(rows, r)
	}
	return rows
}

// Permutation returns a permutation of 0..n-1 drawn by Fisher-Yates from a
// splitmix64 stream seeded with seed; n > 1 never gives the identity (it is
// rotated by one when the draw is the identity).
func Permutation(n int, seed uint64) []int {
	p := spec.Iota(n)
	r := &rowRNG{s: Splitmix(seed ^ 0x5045524d)}
	for i := n - 1; i > 0; i-- {
		j := int(r.next() % uint64(i+1))
		p[i], p[j] = p[j], p[i]
	}
	if n > 1 {
		same := true
		for i, v := range p {
			same = same && v == i
		}
		if same {
			p = append(p[1:], p[0])
		}
	}
	return p
}

// Items returns a batch of the items ids of case c, each a copy of the
// case's own item with that index: from b when it holds them, else from the
// case's generator asked for more items (rows are derived from (seed,
// tensor, row) only, so they are the same bits). A case with explicit data
// has only its own items: ids wrap modulo its item count, and the returned
// uids say which item each copy is.
func Items(c spec.Case, b *target.Batch, ids []int) (*target.Batch, []int, error) {
	if b.Lazy() {
		g, err := lazyItems(b, ids)
		return g, append([]int(nil), ids...), err
	}
	n := b.Items()
	maxID := 0
	for _, id := range ids {
		maxID = max(maxID, id)
	}
	uids := append([]int(nil), ids...)
	src := b
	if maxID >= n {
		if c.Data != nil {
			for i := range uids {
				uids[i] %= n
			}
		} else {
			big, err := Of(WithItems(c, maxID+1))
			if err != nil {
				return nil, nil, fmt.Errorf("a batch of %d items: %w", maxID+1, err)
			}
			src = big
		}
	}
	g, err := gather(src, uids)
	if err != nil {
		return nil, nil, err
	}
	return g, uids, nil
}
