package fuzz

import (
	"fmt"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Lazy batches let a GPU campaign move nothing but a case to the device:
// Check hands a relation a batch that has sizes and a target.Source but no
// values when every target makes the values itself (target.Generator),
// relations build their other batches from it by item numbers
// (itemsFrom), and execute materializes a batch on the host, once, only
// for a target that does not generate (a CPU oracle, a process). The bits
// are those of Inputs either way: an item's values depend only on (seed,
// tensor, item).

// lazyRelations are the relations that touch a batch's values only through
// execute and itemsFrom, and so can run on lazy batches.
var lazyRelations = map[string]bool{
	spec.RelBatchInvariance: true,
	spec.RelDeterminism:     true,
	spec.RelOracleParity:    true,
}

// lazyOps are the ops whose sizes a lazy batch holds (sizesOf).
var lazyOps = map[spec.Op]bool{spec.OpRMSNorm: true, spec.OpGEMM: true, spec.OpLogProb: true}

// inputsFor returns the batch of case c for relation rel on targets ts:
// lazy when the relation allows it and every target generates c's values,
// else Inputs(c).
func inputsFor(c spec.Case, rel Relation, ts []target.Target) (*target.Batch, error) {
	if !lazyRelations[rel.Name()] || !lazyOps[c.Op] || c.Data != nil {
		return Inputs(c)
	}
	src := &target.Source{Case: c}
	for _, t := range ts {
		g, ok := t.(target.Generator)
		if !ok || !g.Generates(src) {
			return Inputs(c)
		}
	}
	b, err := sizesOf(c, caseItems(c))
	if err != nil {
		return nil, err
	}
	return target.NewLazy(b, src, materialize), nil
}

// sizesOf returns a batch of n items of case c with sizes only (no values),
// after the checks Inputs makes of the shape and the memory budget.
func sizesOf(c spec.Case, n int) (*target.Batch, error) {
	in, err := oracle.ParseDType(string(c.In))
	if err != nil {
		return nil, fmt.Errorf("case input dtype: %w", err)
	}
	out, err := oracle.ParseDType(string(c.Out))
	if err != nil {
		return nil, fmt.Errorf("case output dtype: %w", err)
	}
	s := c.Shape
	b := &target.Batch{Op: c.Op, In: in, Out: out}
	switch c.Op {
	case spec.OpRMSNorm:
		if err := firstErr(positive("rows", n), positive("hidden", s.Hidden), budget(c, elems(n, s.Hidden), s.Hidden)); err != nil {
			return nil, err
		}
		b.RMSNorm = &oracle.RMSNormInput{Rows: n, Hidden: s.Hidden, Eps: c.Eps, Out: out}
	case spec.OpGEMM:
		if err := firstErr(positive("rows", n), positive("hidden (K)", s.Hidden), positive("n", s.N),
			budget(c, elems(n, s.Hidden), elems(s.Hidden, s.N), elems(n, s.N))); err != nil {
			return nil, err
		}
		b.GEMM = &oracle.GEMMInput{M: n, K: s.Hidden, N: s.N, Out: out}
	case spec.OpLogProb:
		if err := firstErr(positive("rows", n), positive("vocab", s.Vocab), budget(c, elems(n, s.Vocab))); err != nil {
			return nil, err
		}
		b.LogProb = &oracle.LogProbInput{Rows: n, Vocab: s.Vocab}
	default:
		return nil, fmt.Errorf("lazy batch: op %s: %w", c.Op, target.ErrUnsupported)
	}
	return b, nil
}

// materialize fills lazy batch b with the values Inputs makes for its
// source: the case's batch, or the items Source.Items of a batch of
// max(Items)+1 items.
func materialize(b *target.Batch) error {
	src := b.Source
	c := src.Case
	var ids []int
	if src.Items != nil {
		ids = src.Items
		top := 0
		for _, id := range ids {
			top = max(top, id)
		}
		c = withItems(c, top+1)
	}
	full, err := Inputs(c)
	if err != nil {
		return err
	}
	if ids != nil {
		if full, err = gather(full, ids); err != nil {
			return err
		}
	}
	b.RMSNorm, b.GEMM, b.LogProb, b.Prefill, b.Decode = full.RMSNorm, full.GEMM, full.LogProb, full.Prefill, full.Decode
	return nil
}

// lazyItems returns a lazy batch whose item i is item ids[i] of lazy batch
// b's source (an item beyond b's own is the case generator's next item,
// as itemsFrom makes it).
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
	g, err := sizesOf(src.Case, len(ids))
	if err != nil {
		return nil, err
	}
	return target.NewLazy(g, &target.Source{Case: src.Case, Items: items}, materialize), nil
}

// ready returns b as target t takes it: b itself when it holds values or t
// generates them, else b materialized on the host.
func ready(t target.Target, b *target.Batch) error {
	if !b.Lazy() {
		return nil
	}
	if g, ok := t.(target.Generator); ok && g.Generates(b.Source) {
		return nil
	}
	return b.Materialize()
}
