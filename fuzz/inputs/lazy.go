package inputs

import (
	"fmt"

	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Lazy batches let a GPU campaign move nothing but a case to the device:
// Check hands a relation a batch that has sizes and a target.Source but no
// values when every target makes the values itself (target.Generator),
// relations build their other batches from it by item numbers
// (Items), and execute materializes a batch on the host, once, only
// for a target that does not generate (a CPU oracle, a process). The bits
// are those of Of either way: an item's values depend only on (seed,
// tensor, item).

// attnOp reports whether op's items span several tensors (attnInputs:
// attention's Q, K and V) rather than one row of one tensor each
// (tokenInputs).
func attnOp(op spec.Op) bool {
	k, ok := all.Case(op)
	return ok && !k.Token()
}

// OnHost reports whether Lazy makes the batch of case c on the host
// (Of(c)) whatever its targets: an op with no lazy batch, explicit data, a
// boundary case of an op whose nudge no device runs, a sensitive case.
func OnHost(c spec.Case) bool {
	k, ok := all.Case(c.Op) // every op package's batch may be lazy (tokenInputs and attnInputs set its sizes)
	return !ok || c.Data != nil || (c.Dist == spec.DistBoundary && !k.LazyBoundary()) || c.Dist == spec.DistSensitive
}

// Lazy returns the batch of case c: lazy (sizes and shared tensors,
// the per-item tensor left to the targets) when every target of ts makes
// c's values on its device (target.Generator), else Of(c). Either way
// its bits are those of Of(c). A sensitive case is never lazy: its rows
// are chosen by the CPU oracle (sensitiveInputs), made on the host and
// uploaded. A scan holds a GPU target's largest
// batch from it without making its rows on the host.
func Lazy(c spec.Case, ts ...target.Target) (*target.Batch, error) {
	if OnHost(c) {
		return Of(c)
	}
	src := &target.Source{Case: c}
	if attnOp(c.Op) {
		src.QKV = attnTensors(c)
	} else {
		src.Tensor = itemTensor(c)
	}
	for _, t := range ts {
		g, ok := t.(target.Generator)
		if !ok || !g.Generates(src) {
			return Of(c)
		}
	}
	return lazyBatch(src, c.BatchRows(), nil)
}

// lazyBatch returns a lazy batch of n items from src: sizes and shared
// tensors set (like's, when not nil), the per-item tensor left to the
// target or to Materialize.
func lazyBatch(src *target.Source, n int, like *target.Batch) (*target.Batch, error) {
	c := src.Case
	in, out, err := caseDTypes(c)
	if err != nil {
		return nil, err
	}
	b := &target.Batch{Op: c.Op, In: in, Out: out}
	ids := src.Items
	if ids == nil {
		ids = spec.Iota(n)
	}
	if attnOp(c.Op) {
		err = attnInputs(c, b, ids, true)
	} else {
		err = tokenInputs(c, b, ids, true, like)
	}
	if err != nil {
		return nil, err
	}
	return target.NewLazy(b, src, materialize), nil
}

// materialize fills the per-item tensor of lazy batch b on the host, by
// the recipe of its source (tokenInputs, then nudgeBoundary by item for a
// boundary case): the bits Of makes for those items, and padded's for
// filler rows.
func materialize(b *target.Batch) error {
	src := b.Source
	c, rt := src.Case, src.Tensor
	k, in, err := b.Kind()
	if err != nil {
		return fmt.Errorf("lazy batch: %w", err)
	}
	n := b.Items()
	if !k.Token() {
		full := &target.Batch{Op: b.Op, In: b.In, Out: b.Out}
		if err := attnInputs(c, full, src.Items, false); err != nil {
			return err
		}
		b.Input = full.Input
		return nil
	}
	x, cols := k.ItemRows(in), k.ItemValues(in, -1)
	vals, err := fill(c, rt.ID, rt.Dist, b.In, rt.Scale, n, cols, src.Key)
	if err != nil {
		return err
	}
	*x = vals
	if c.Dist == spec.DistBoundary {
		if err := nudgeBoundary(c, b, src); err != nil {
			return fmt.Errorf("lazy batch: %w", err)
		}
	}
	if src.Filler != "" {
		v, err := target.FillerValues(src.Filler, b.In)
		if err != nil {
			return err
		}
		for i := range n {
			if src.Filled(i) {
				for j := range cols {
					vals[i*cols+j] = v(j)
				}
			}
		}
	}
	return nil
}

// lazyItems returns a lazy batch whose item i is item ids[i] of lazy batch
// b's source (an item beyond b's own is the case generator's next item,
// as Items makes it).
func lazyItems(b *target.Batch, ids []int) (*target.Batch, error) {
	src := b.Source
	items := make([]int, len(ids))
	for i, id := range ids {
		switch {
		case id < 0:
			return nil, fmt.Errorf("lazy batch: item %d", id)
		case src.Items == nil:
			items[i] = id
		case id < len(src.Items):
			items[i] = src.Items[id]
		default:
			return nil, fmt.Errorf("lazy batch: item %d of a batch of %d", id, len(src.Items))
		}
	}
	s := *src
	s.Items = items
	return lazyBatch(&s, len(ids), b)
}
