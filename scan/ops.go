package scan

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
)

// DimNeighbours is the scan dimension of an op package's target that
// replaces a row's neighbours' contents at each batch size
// (ops.NeighbourReplacement); ScanItems is batch invariance
// (ops.BatchInvariance).
const DimNeighbours = "neighbours"

// IsOpTarget reports whether name is a target of an op package.
func IsOpTarget(name string) bool {
	_, ok := all.Lookup(name)
	return ok
}

// NormalizeOp fills the defaults of a scan of an op package's target
// (ops/all) from its op and checks it: op the op's name, dim items, from
// 1, shape.dims every dimension of the op (given ones kept, the others at
// their defaults), in the op's first input dtype, dists every draw of the
// op, gen_version spec.GeneratorVersion. The op's outputs are the columns
// it declares: out and the dense ops' shape fields stay empty.
func NormalizeOp(s spec.ScanSpec) (spec.ScanSpec, ops.Target, error) {
	t, ok := all.Lookup(s.Target)
	if !ok {
		return s, nil, fmt.Errorf("%w: no op package has target %q", ErrBadSpec, s.Target)
	}
	rec := t.Op().Record()
	if s.Op == "" {
		s.Op = spec.Op(rec.Name)
	}
	if s.Op != spec.Op(rec.Name) {
		return s, nil, fmt.Errorf("%w: %s is a target of op %s, not %s", ErrBadSpec, s.Target, rec.Name, s.Op)
	}
	if s.Dim == "" {
		s.Dim = spec.ScanItems
	}
	if s.Dim != spec.ScanItems && s.Dim != DimNeighbours {
		return s, nil, fmt.Errorf("%w: %s scans --dim items or neighbours, not %q", ErrBadSpec, rec.Name, s.Dim)
	}
	if s.From == 0 {
		s.From = 1
	}
	if s.From < 1 || s.To < s.From {
		return s, nil, fmt.Errorf("%w: batch sizes %d..%d (want 1 <= --from <= --to)", ErrBadSpec, s.From, s.To)
	}
	if s.To > ops.MaxItems {
		return s, nil, fmt.Errorf("%w: --to %d is above %d items", ErrBadSpec, s.To, ops.MaxItems)
	}
	if dense := (spec.Shape{Dims: s.Shape.Dims}); !reflect.DeepEqual(s.Shape, dense) || s.Out != "" {
		return s, nil, fmt.Errorf("%w: %s takes its sizes by dimension name (--shape) and declares its outputs: no dense shape fields or out dtype", ErrBadSpec, rec.Name)
	}
	dims := map[string]int{}
	for _, d := range rec.Dims {
		dims[d.Name] = d.Default
	}
	for k, v := range s.Shape.Dims {
		if !slices.ContainsFunc(rec.Dims, func(d ops.Dim) bool { return d.Name == k }) {
			return s, nil, fmt.Errorf("%w: %s has no dimension %q", ErrBadSpec, rec.Name, k)
		}
		dims[k] = v
	}
	s.Shape.Dims = dims
	if _, err := t.Op().Columns(dims); err != nil {
		return s, nil, fmt.Errorf("%w: %w", ErrBadSpec, err)
	}
	if s.In == "" {
		s.In = spec.DType(rec.In[0].String())
	}
	if len(s.Dists) == 0 {
		for _, d := range rec.Dists {
			s.Dists = append(s.Dists, spec.Dist(d))
		}
	}
	for _, d := range s.Dists {
		if !slices.Contains(rec.Dists, string(d)) {
			return s, nil, fmt.Errorf("%w: %s draws %s, not %q", ErrBadSpec, rec.Name, strings.Join(rec.Dists, ", "), d)
		}
	}
	if s.Power < 0 { // scan's default: no power for an op without a family
		s.Power = 0
	}
	if s.Power != 0 || s.MaxDraws != 0 || s.NoTaps {
		return s, nil, fmt.Errorf("%w: %s measures no power and has no taps (no --power, --max-draws or --taps)", ErrBadSpec, rec.Name)
	}
	if s.GenVersion == 0 {
		s.GenVersion = spec.GeneratorVersion
	}
	if s.GenVersion != spec.GeneratorVersion {
		return s, nil, fmt.Errorf("%w: scan made with generator version %d, the op packages draw with version %d", ErrBadSpec, s.GenVersion, spec.GeneratorVersion)
	}
	if work := t.Op().Work(dims) * int64(s.To) * int64(s.To); work > maxOpWork {
		return s, nil, fmt.Errorf("%w: %d items at %s is %d row operations, above the CPU budget %d", ErrBadSpec, s.To, ops.Shape(dims), work, int64(maxOpWork))
	}
	return s, t, nil
}

// maxOpWork bounds the CPU work of a scan of an op (Work per row times
// To², the order of a scan's rows); ops.MaxItems its largest batch.
const maxOpWork = 1 << 40

// newOp fills sc for s, a scan of an op package's target (NormalizeOp).
// Its loop (opDraw, for each draw k): the largest batch in = items
// 0..To-1 of draw k (Op.Seeded), then for each batch size v:
//
//	items       ops.BatchInvariance: row r of the first v items against
//	            item r alone; the class of v is the bits of panel items
//	            0..P-1 (P = min(To, PanelItems)) computed in batches of v,
//	            each "=" when equal to the item alone, else its digest
//	neighbours  ops.NeighbourReplacement against the items of keys
//	            2^40+i of the same draw; the class of v is whether a row
//	            differs
//
// and then the largest batch against the oracle of the target's declared
// policy on it (Op.Reference). A certificate's schedule is the declared
// policy; a diff says what differs in the op's words.
func (sc *scanner) newOp(s spec.ScanSpec) error {
	s, t, err := NormalizeOp(s)
	if err != nil {
		return err
	}
	if sc.dt, err = oracle.ParseDType(string(s.In)); err != nil {
		return fmt.Errorf("%w: %w", ErrBadSpec, err)
	}
	sc.s, sc.op = s, t
	return nil
}

// opDraw scans draw k of an op package's target's scan and returns the
// class of each value (driftmap.Label of its bits). Its batches run
// through newOpRunner's runner, on the draw's items (and for a scan of
// neighbours the replacements after them, withOther): held in an adapter
// that holds op scans, else a request a batch.
func (sc *scanner) opDraw(ctx context.Context, k int) ([]string, error) {
	s, t, res, values := sc.s, sc.op, sc.res, sc.values
	d := ops.Draw{Shape: s.Shape.Dims, DType: sc.dt, Dist: string(sc.draws[k]), Seed: s.Seed + uint64(k)}
	op := t.Op()
	in, err := op.Seeded(d, keys(0, s.To))
	if err != nil {
		return nil, fmt.Errorf("%w: inputs: %w", ErrBadSpec, err)
	}
	held, upTo := in, s.To      // the items the runner holds, the prefixes asked in turn
	if s.Dim == DimNeighbours { // in, then other's items; prefixes from the start only
		upTo = 0
		other, err := op.Seeded(d, keys(1<<40, s.To))
		if err != nil {
			return nil, err
		}
		if held, err = withOther(in, other); err != nil {
			return nil, err
		}
	}
	run := newOpRunner(t, held, upTo)
	alone, err := run.alone(ctx, s.To)
	if err != nil {
		return nil, err
	}
	res.Batches += int64(s.To)
	classes := make([]string, len(values))
	prev := false // the previous value differed
	for i, v := range values {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var rows []int
		var words func() (string, error) // the diff's words, when it is kept
		against := "item alone"
		if s.Dim == DimNeighbours {
			against = "other rows replaced"
			var err error
			if rows, words, err = neighbours(ctx, run, op, in, v, s.To); err != nil {
				return nil, err
			}
			res.Batches += 3
			classes[i] = "="
			if len(rows) > 0 {
				classes[i] = "differs"
			}
		} else {
			got, err := run.run(ctx, [][]int{spec.Iota(v)})
			if err != nil {
				return nil, err
			}
			res.Batches++
			for r := range v {
				if got[0].d[r] != alone.d[r] {
					rows = append(rows, r)
				}
			}
			if classes[i], err = panelClass(ctx, run, alone, got[0], v, s.To, res); err != nil {
				return nil, err
			}
			words = func() (string, error) { return itemsWords(ctx, op, in, alone, got[0], v, rows) }
		}
		res.RowsCompared += int64(v)
		res.Differing += int64(len(rows))
		differs := len(rows) > 0
		if differs && (!prev || v == s.To) {
			w, err := words()
			if err != nil {
				return nil, err
			}
			res.Diffs = append(res.Diffs, Diff{Draw: spec.Dist(d.Dist), Value: v, Rows: len(rows), FirstRow: rows[0],
				Against: against, Words: w})
		}
		prev = differs
		sc.step()
	}
	if err := oracleParity(ctx, t, run, in, d.Dist, s.To, res); err != nil {
		return nil, err
	}
	for i, c := range classes {
		classes[i] = driftmap.Label(c)
	}
	return classes, nil
}

// withOther is the batch of the items of in followed by those of other
// (as many): a scan of neighbours holds it, item to+r being other's item
// r.
func withOther(in, other ops.Input) (ops.Input, error) {
	n := in.Items()
	b, err := in.Gather(append(spec.Iota(n), spec.Iota(n)...))
	if err != nil {
		return nil, err
	}
	at := make([]int, n)
	for i := range at {
		at[i] = n + i
	}
	return b.Replace(at, other)
}

// neighbours is ops.NeighbourReplacement on the held items of a scan of
// neighbours (withOther: in, then other's items from to on): the batch A
// of the first v items, B keeping A's even positions and taking other's
// items at the odd ones (held item to+r at position r), C keeping the odd
// ones; it returns the rows of A that differ from B's (r even) or C's (r
// odd), and their words. At v = 1 no neighbour is replaced: only A runs.
func neighbours(ctx context.Context, run opRunner, op ops.Op, in ops.Input, v, to int) ([]int, func() (string, error), error) {
	a := spec.Iota(v)
	batches := [][]int{a}
	if v > 1 {
		for keep := range 2 {
			b := spec.Iota(v)
			for r := range b {
				if r%2 != keep {
					b[r] = to + r
				}
			}
			batches = append(batches, b)
		}
	}
	outs, err := run.run(ctx, batches)
	if err != nil {
		return nil, nil, fmt.Errorf("a batch of %d with its neighbours replaced: %w", v, err)
	}
	var kept [2][]int // the differing rows whose reference is B's (even) and C's (odd)
	var all []int
	for r := range v {
		if v > 1 && outs[0].d[r] != outs[1+r%2].d[r] {
			kept[r%2] = append(kept[r%2], r)
			all = append(all, r)
		}
	}
	words := func() (string, error) {
		got, err := outs[0].rows(ctx, all)
		if err != nil {
			return "", err
		}
		want := ops.NewOutput(got.Columns, v)
		for k, rs := range kept {
			if len(rs) == 0 {
				continue
			}
			o, err := outs[1+k].rows(ctx, rs)
			if err != nil {
				return "", err
			}
			for _, r := range rs {
				want.CopyRow(r, o, r)
			}
		}
		b, err := in.Gather(a)
		if err != nil {
			return "", err
		}
		return op.Words(b, want, got, all), nil
	}
	return all, words, nil
}

// itemsWords says how rows of the batch of the first v items of in (got)
// differ from the same items alone, in the op's words (Op.Words), from
// those rows fetched in full.
func itemsWords(ctx context.Context, op ops.Op, in ops.Input, alone, got *opRows, v int, rows []int) (string, error) {
	b, err := in.Gather(spec.Iota(v))
	if err != nil {
		return "", err
	}
	a, err := alone.rows(ctx, rows)
	if err != nil {
		return "", err
	}
	g, err := got.rows(ctx, rows)
	if err != nil {
		return "", err
	}
	want := ops.NewOutput(a.Columns, v)
	for _, r := range rows {
		want.CopyRow(r, a, r)
	}
	return op.Words(b, want, g, rows), nil
}

// oracleParity compares t's rows of the largest batch in (run by run)
// with the oracle of t's declared policy on the same batch, by their
// digests (external.OpRowDigest).
func oracleParity(ctx context.Context, t ops.Target, run opRunner, in ops.Input, dist string, to int, res *Result) error {
	got, err := run.run(ctx, [][]int{spec.Iota(to)})
	if err != nil {
		return err
	}
	ref, err := t.Op().Reference(in, t.Declared())
	if err != nil {
		return err
	}
	var rows []int
	for r := range to {
		if got[0].d[r] != external.OpRowDigest(ref, r) {
			rows = append(rows, r)
		}
	}
	res.Batches++
	res.RowsCompared += int64(to)
	if len(rows) > 0 {
		g, err := got[0].rows(ctx, rows)
		if err != nil {
			return err
		}
		if err := g.SameColumns(ref); err != nil {
			return fmt.Errorf("%s against its oracle: %w", t.Name(), err)
		}
		res.Differing += int64(len(rows))
		res.Diffs = append(res.Diffs, Diff{Draw: spec.Dist(dist), Value: to, Rows: len(rows), FirstRow: rows[0], Against: "oracle",
			Words: t.Op().Words(in, ref, g, rows)})
	}
	return nil
}

// panelClass is the class of v in a scan of items: panel items 0..P-1
// computed in batches of v items (got, the step's batch, then for v < P
// the batches panelBatches(v, to), run together), each written "=" when
// equal to the item alone, else as its row digest (external.OpRowDigest)
// in hex.
func panelClass(ctx context.Context, run opRunner, alone, got *opRows, v, to int, res *Result) (string, error) {
	p := min(to, PanelItems)
	bits := make([]string, 0, p)
	add := func(d uint64, item int) {
		if d == alone.d[item] {
			bits = append(bits, "=")
		} else {
			bits = append(bits, fmt.Sprintf("%016x", d))
		}
	}
	for r := range min(v, p) {
		add(got.d[r], r)
	}
	if bs := panelBatches(v, to); len(bs) > 0 {
		outs, err := run.run(ctx, bs)
		if err != nil {
			return "", err
		}
		res.Batches += int64(len(bs))
		for k, b := range bs {
			for i := range min(v, p-b[0]) {
				add(outs[k].d[i], b[i])
			}
		}
	}
	return strings.Join(bits, " "), nil
}

// keys is base, base+1, ..., base+n-1.
func keys(base uint64, n int) []uint64 {
	k := make([]uint64, n)
	for i := range k {
		k[i] = base + uint64(i)
	}
	return k
}
