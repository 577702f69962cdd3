package scan

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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

// OpSpec says what a scan of an op package's target (ops/all) sweeps: one
// dimension over every batch size From..To, at fixed inner sizes, one
// input draw per entry of Dists (draw k from Seed+k).
type OpSpec struct {
	Target string    `json:"target"`
	Op     string    `json:"op"`
	Dim    string    `json:"dim"`
	From   int       `json:"from"`
	To     int       `json:"to"`
	Shape  ops.Shape `json:"shape"`
	In     string    `json:"in"`
	Dists  []string  `json:"dists"`
	Seed   uint64    `json:"seed"`
}

// OpResult is what a scan of an op found: the exact map of every batch
// size (one class when certified) and, per draw and class, the first
// batch size whose rows differ, in the op's words.
type OpResult struct {
	Spec OpSpec `json:"spec"`
	// Declared is the target's declared policy, whose oracle its rows
	// were compared with.
	Declared  string         `json:"declared"`
	Certified bool           `json:"certified"`
	Map       *spec.DriftMap `json:"map"`
	// Diffs lists, per draw, the first value of each run of values with
	// differing rows and the largest value (the onset and the last step).
	Diffs        []OpDiff `json:"diffs,omitempty"`
	Batches      int64    `json:"batches"`
	RowsCompared int64    `json:"rows_compared"`
	Differing    int64    `json:"differing"`
	Seconds      float64  `json:"seconds"`
}

// OpDiff is one step with differing rows: the draw, the batch size, how
// many rows differ, what they were compared with ("item alone", "other
// rows replaced", "oracle": the oracle of the declared policy on the
// largest batch) and the op's words for them.
type OpDiff struct {
	Draw    string `json:"draw"`
	Value   int    `json:"value"`
	Rows    int    `json:"rows"`
	Against string `json:"against"`
	Words   string `json:"words"`
}

// IsOpTarget reports whether name is a target of an op package.
func IsOpTarget(name string) bool {
	_, ok := all.Lookup(name)
	return ok
}

// NormalizeOp fills s's defaults from the target's op (its first input
// dtype, its draws, its dimensions' defaults; From 1, Dim items) and
// checks it.
func NormalizeOp(s OpSpec) (OpSpec, ops.Target, error) {
	t, ok := all.Lookup(s.Target)
	if !ok {
		return s, nil, fmt.Errorf("%w: no op package has target %q", ErrBadSpec, s.Target)
	}
	rec := t.Op().Record()
	s.Op = rec.Name
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
	shape := ops.Shape{}
	for _, d := range rec.Dims {
		shape[d.Name] = d.Default
	}
	for k, v := range s.Shape {
		if !slices.ContainsFunc(rec.Dims, func(d ops.Dim) bool { return d.Name == k }) {
			return s, nil, fmt.Errorf("%w: %s has no dimension %q", ErrBadSpec, rec.Name, k)
		}
		shape[k] = v
	}
	s.Shape = shape
	if _, err := t.Op().Columns(s.Shape); err != nil {
		return s, nil, fmt.Errorf("%w: %w", ErrBadSpec, err)
	}
	if s.In == "" {
		s.In = rec.In[0].String()
	}
	if len(s.Dists) == 0 {
		s.Dists = rec.Dists
	}
	for _, d := range s.Dists {
		if !slices.Contains(rec.Dists, d) {
			return s, nil, fmt.Errorf("%w: %s draws %s, not %q", ErrBadSpec, rec.Name, strings.Join(rec.Dists, ", "), d)
		}
	}
	if work := t.Op().Work(s.Shape) * int64(s.To) * int64(s.To); work > maxOpWork {
		return s, nil, fmt.Errorf("%w: %d items at %s is %d row operations, above the CPU budget %d", ErrBadSpec, s.To, s.Shape, work, int64(maxOpWork))
	}
	return s, t, nil
}

// MaxOpItems bounds the largest batch of a scan of an op; maxOpWork its
// CPU work (Work per row times To², the order of a scan's rows).
const (
	MaxOpItems = 1 << 16
	maxOpWork  = 1 << 40
)

// RunOp scans s: for each draw k, the largest batch in = items 0..To-1 of
// draw k (Op.Seeded), then for each batch size v:
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
func RunOp(ctx context.Context, s OpSpec) (*OpResult, error) {
	s, t, err := NormalizeOp(s)
	if err != nil {
		return nil, err
	}
	dt, err := oracle.ParseDType(s.In)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSpec, err)
	}
	start := time.Now()
	res := &OpResult{Spec: s, Declared: t.Declared()}
	var values []int
	for v := s.From; v <= s.To; v++ {
		values = append(values, v)
	}
	classify := make([]func(int) (string, error), len(s.Dists))
	for k, dist := range s.Dists {
		d := ops.Draw{Shape: s.Shape, DType: dt, Dist: dist, Seed: s.Seed + uint64(k)}
		cls, err := opDraw(ctx, t, d, s, values, res)
		if err != nil {
			return nil, err
		}
		classify[k] = func(v int) (string, error) {
			i, ok := slices.BinarySearch(values, v)
			if !ok {
				return "", fmt.Errorf("value %d was not scanned", v)
			}
			h := sha256.Sum256([]byte(cls[i]))
			return hex.EncodeToString(h[:6]), nil
		}
	}
	m, err := driftmap.Options{Runs: 1}.SweepDraws(ctx, "tokens", values, classify)
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	if s.Dim == DimNeighbours {
		m.At = "other rows' values replaced"
	}
	res.Map, res.Certified = m, res.Differing == 0
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// opDraw scans one draw and returns the class of each value.
func opDraw(ctx context.Context, t ops.Target, d ops.Draw, s OpSpec, values []int, res *OpResult) ([]string, error) {
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
			if len(ch.Rows) > 0 {
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
			res.Diffs = append(res.Diffs, OpDiff{Draw: d.Dist, Value: v, Rows: len(ch.Rows), Against: against,
				Words: op.Words(ch.Batch, ch.Want, ch.Got, ch.Rows)})
		}
		prev = differs
	}
	if err := oracleParity(ctx, t, in, d.Dist, s.To, res); err != nil {
		return nil, err
	}
	return classes, nil
}

// oracleParity compares t's rows of the largest batch in with the oracle
// of t's declared policy on the same batch.
func oracleParity(ctx context.Context, t ops.Target, in ops.Input, dist string, to int, res *OpResult) error {
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
		res.Diffs = append(res.Diffs, OpDiff{Draw: dist, Value: to, Rows: len(rows), Against: "oracle",
			Words: t.Op().Words(in, ref, got, rows)})
	}
	return nil
}

// panelClass is the class of v in a scan of items: panel items 0..P-1
// computed in batches of v items (the step's batch ch, then for v < P
// batches of items first..first+v-1 mod To, first = v, 2v, ...), each
// written "=" when equal to the item alone, else as its row digest.
func panelClass(ctx context.Context, t ops.Target, in ops.Input, alone *ops.Output, ch *ops.Check, v, to int, res *OpResult) (string, error) {
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
