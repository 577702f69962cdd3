package scan

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/bitparity/bitparity/fuzz/driftmap"
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
	if s.To > MaxOpItems {
		return s, nil, fmt.Errorf("%w: --to %d is above %d items", ErrBadSpec, s.To, MaxOpItems)
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

// MaxOpItems bounds the largest batch of a scan of an op; maxOpWork its
// CPU work (Work per row times To², the order of a scan's rows).
const (
	MaxOpItems = 1 << 16
	maxOpWork  = 1 << 40
)

// RunOp scans s, a scan of an op package's target (NormalizeOp): for each
// draw k, the largest batch in = items 0..To-1 of draw k (Op.Seeded),
// then for each batch size v:
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
// policy on it (Op.Reference). The map is driftmap's over the classes
// of every draw (a value's class is the tuple of its draws' classes).
// Its result is a Result as Run's: a certificate (schedule: the declared
// policy) when no row differed, else the map and each onset's diff in the
// op's words; Rerun and Recheck run it again.
func RunOp(ctx context.Context, s spec.ScanSpec, opt Options) (*Result, error) {
	s, t, err := NormalizeOp(s)
	if err != nil {
		return nil, err
	}
	dt, err := oracle.ParseDType(string(s.In))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSpec, err)
	}
	if opt.Env == (spec.Env{}) {
		opt.Env = spec.HostEnv()
	}
	start := time.Now()
	res := &Result{Spec: s, Draws: s.Dists}
	var values []int
	for v := s.From; v <= s.To; v++ {
		values = append(values, v)
	}
	p := opProgress{opt: opt, total: len(values) * len(s.Dists)}
	classify := make([]func(int) (string, error), len(s.Dists))
	for k, dist := range s.Dists {
		d := ops.Draw{Shape: s.Shape.Dims, DType: dt, Dist: string(dist), Seed: s.Seed + uint64(k)}
		cls, err := opDraw(ctx, t, d, s, values, res, &p)
		if err != nil {
			return nil, err
		}
		classify[k] = func(v int) (string, error) {
			i, ok := slices.BinarySearch(values, v)
			if !ok {
				return "", fmt.Errorf("value %d was not scanned", v)
			}
			return driftmap.Label(cls[i]), nil
		}
	}
	m, err := driftmap.Options{Runs: 1}.SweepDraws(ctx, t.Op().Record().Item+"s", values, classify)
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	if s.Dim == DimNeighbours {
		m.At = "other rows' values replaced"
	}
	res.Map = m
	res.Elapsed = time.Since(start)
	if res.Differing == 0 {
		now := time.Now().UTC().Truncate(time.Second)
		res.Certificate = &spec.Certificate{Format: spec.CertificateFormat, Version: spec.CertificateVersion,
			Scan: s, Schedule: t.Declared(), Env: opt.Env, Batches: res.Batches, RowsCompared: res.RowsCompared,
			Draws: s.Dists, Elapsed: spec.Duration(res.Elapsed), Created: now,
			Status: spec.CertificateStatus{State: spec.CertValid, Checked: now}}
	}
	return res, nil
}

// recheckOp is Recheck of a certificate of an op package's target: its
// scan again (RunOp), invalid when a row differs or the target now
// declares another policy.
func recheckOp(ctx context.Context, c spec.Certificate, opt Options) (spec.Certificate, *Result, error) {
	res, err := RunOp(ctx, c.Scan, opt)
	if err != nil {
		return c, nil, fmt.Errorf("recheck: %w", err)
	}
	var why []string
	if t, _ := all.Lookup(c.Scan.Target); t.Declared() != c.Schedule {
		why = append(why, fmt.Sprintf("the target now declares policy %q, the certificate %q", t.Declared(), c.Schedule))
	}
	env := opt.Env
	if env == (spec.Env{}) {
		env = spec.HostEnv()
	}
	return judged(c, append(why, rowsWhy(res)...), env), res, nil
}

// opProgress counts the steps of a scan of an op for Options.Progress.
type opProgress struct {
	opt         Options
	done, total int
}

func (p *opProgress) step() {
	p.done++
	if p.opt.Progress != nil {
		p.opt.Progress(p.done, p.total)
	}
}

// opDraw scans one draw and returns the class of each value.
func opDraw(ctx context.Context, t ops.Target, d ops.Draw, s spec.ScanSpec, values []int, res *Result, p *opProgress) ([]string, error) {
	op := t.Op()
	in, err := op.Seeded(d, keys(0, s.To))
	if err != nil {
		return nil, fmt.Errorf("%w: inputs: %w", ErrBadSpec, err)
	}
	alone, err := ops.Alone(ctx, t, in)
	if err != nil {
		return nil, err
	}
	res.Batches += int64(s.To)
	var other ops.Input
	if s.Dim == DimNeighbours {
		if other, err = op.Seeded(d, keys(1<<40, s.To)); err != nil {
			return nil, err
		}
	}
	classes := make([]string, len(values))
	prev := false // the previous value differed
	for i, v := range values {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var ch *ops.Check
		against := "item alone"
		if s.Dim == DimNeighbours {
			against = "other rows replaced"
			ch, err = ops.NeighbourReplacement(ctx, t, in, other, v)
			res.Batches += 3
			classes[i] = "="
			if err == nil && len(ch.Rows) > 0 {
				classes[i] = "differs"
			}
		} else {
			ch, err = ops.BatchInvariance(ctx, t, in, alone, v)
			res.Batches++
			if err == nil {
				classes[i], err = panelClass(ctx, t, in, alone, ch, v, s.To, res)
			}
		}
		if err != nil {
			return nil, err
		}
		res.RowsCompared += int64(v)
		res.Differing += int64(len(ch.Rows))
		differs := len(ch.Rows) > 0
		if differs && (!prev || v == s.To) {
			res.Diffs = append(res.Diffs, Diff{Draw: spec.Dist(d.Dist), Value: v, Rows: len(ch.Rows), FirstRow: ch.Rows[0],
				Against: against, Words: op.Words(ch.Batch, ch.Want, ch.Got, ch.Rows)})
		}
		prev = differs
		p.step()
	}
	if err := oracleParity(ctx, t, in, d.Dist, s.To, res); err != nil {
		return nil, err
	}
	return classes, nil
}

// oracleParity compares t's rows of the largest batch in with the oracle
// of t's declared policy on the same batch.
func oracleParity(ctx context.Context, t ops.Target, in ops.Input, dist string, to int, res *Result) error {
	got, err := t.Run(ctx, in)
	if err != nil {
		return fmt.Errorf("%s on a batch of %d: %w", t.Name(), to, err)
	}
	ref, err := t.Op().Reference(in, t.Declared())
	if err != nil {
		return err
	}
	if err := got.SameColumns(ref); err != nil {
		return fmt.Errorf("%s against its oracle: %w", t.Name(), err)
	}
	var rows []int
	for r := range to {
		if !got.SameRow(r, ref, r) {
			rows = append(rows, r)
		}
	}
	res.Batches++
	res.RowsCompared += int64(to)
	if len(rows) > 0 {
		res.Differing += int64(len(rows))
		res.Diffs = append(res.Diffs, Diff{Draw: spec.Dist(dist), Value: to, Rows: len(rows), FirstRow: rows[0], Against: "oracle",
			Words: t.Op().Words(in, ref, got, rows)})
	}
	return nil
}

// panelClass is the class of v in a scan of items: panel items 0..P-1
// computed in batches of v items (the step's batch ch, then for v < P
// batches of items first..first+v-1 mod To, first = v, 2v, ...), each
// written "=" when equal to the item alone, else as its row digest.
func panelClass(ctx context.Context, t ops.Target, in ops.Input, alone *ops.Output, ch *ops.Check, v, to int, res *Result) (string, error) {
	p := min(to, PanelItems)
	bits := make([]string, 0, p)
	add := func(o *ops.Output, r, item int) {
		if o.SameRow(r, alone, item) {
			bits = append(bits, "=")
		} else {
			bits = append(bits, o.Digest(r))
		}
	}
	for r := range min(v, p) {
		add(ch.Got, r, r)
	}
	for first := v; first < p; first += v {
		ids := make([]int, v)
		for i := range ids {
			ids[i] = (first + i) % to
		}
		b, err := in.Gather(ids)
		if err != nil {
			return "", err
		}
		o, err := t.Run(ctx, b)
		if err != nil {
			return "", fmt.Errorf("%s on a batch of %d: %w", t.Name(), v, err)
		}
		res.Batches++
		for i := range min(v, p-first) {
			add(o, i, ids[i])
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
