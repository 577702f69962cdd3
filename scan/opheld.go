package scan

import (
	"context"
	"fmt"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/spec"
)

// A scan of an op package's target runs its batches through an
// opRunner: a request a batch (opRequests, the op's CPU targets and
// adapters that hold no op scan), or, for an adapter that holds op scans
// (opHolder), the draw's items (a scan of neighbours: and their
// replacements) held once in the adapter's process and each batch a
// step naming held items (opHeld), answered with a digest a row
// (external.OpRowDigest). Rows travel in full only as witnesses, the
// differing rows whose words a diff gives. Both give the same digests,
// so the scan's map, classes, diffs, counts and certificate are the same.

// opHolder is an op target whose process holds a scan's batch and runs
// steps on its items (external.OpTarget).
type opHolder interface {
	// Holds reports whether the adapter holds op scans (its hello).
	Holds() bool
	Hold(ctx context.Context, in ops.Input) error
	Step(ctx context.Context, batches [][]int, each bool, fetch []int) ([]*external.OpStep, error)
}

var _ opHolder = (*external.OpTarget)(nil)

// opRunner runs the batches of a scan of an op on the items of its
// largest batch.
type opRunner interface {
	// alone runs items 0..n-1 each alone.
	alone(ctx context.Context, n int) (*opRows, error)
	// run runs each of batches, a batch of the items ids batches[k].
	run(ctx context.Context, batches [][]int) ([]*opRows, error)
}

// newOpRunner is the runner of a scan of t on the items of in: held in
// t's adapter when t holds op scans, else a request a batch. The one
// place that decides. The scan asks for the prefixes 1, 2, ..., upTo
// in turn (0: it does not), which a held runner asks for ahead.
func newOpRunner(t ops.Target, in ops.Input, upTo int) opRunner {
	if h, ok := t.(opHolder); ok && h.Holds() {
		return &opHeld{h: h, in: in, upTo: upTo}
	}
	return &opRequests{t: t, in: in}
}

// opRows is the output of one batch: every row's digest
// (external.OpRowDigest), and the rows in full on demand.
type opRows struct {
	d []uint64
	// out holds every row (a request's reply); fetch, when out is nil,
	// gets the rows asked for from the adapter.
	out   *ops.Output
	fetch func(ctx context.Context, rows []int) (*ops.Output, error)
}

// rows returns an output of the batch's rows in which rows are the
// batch's in full (the others zero when they were fetched).
func (r *opRows) rows(ctx context.Context, rows []int) (*ops.Output, error) {
	if r.out != nil {
		return r.out, nil
	}
	return r.fetch(ctx, rows)
}

// digested is o's rows with their digests.
func digested(o *ops.Output) *opRows {
	d := make([]uint64, o.Rows)
	for r := range d {
		d[r] = external.OpRowDigest(o, r)
	}
	return &opRows{d: d, out: o}
}

// opRequests runs every batch as a request of its items' inputs
// (Target.Run on in.Gather).
type opRequests struct {
	t  ops.Target
	in ops.Input
}

func (q *opRequests) alone(ctx context.Context, n int) (*opRows, error) {
	in := q.in
	if n != in.Items() {
		var err error
		if in, err = in.Gather(spec.Iota(n)); err != nil {
			return nil, err
		}
	}
	o, err := ops.Alone(ctx, q.t, in)
	if err != nil {
		return nil, err
	}
	return digested(o), nil
}

func (q *opRequests) run(ctx context.Context, batches [][]int) ([]*opRows, error) {
	out := make([]*opRows, len(batches))
	for k, ids := range batches {
		b := q.in
		if len(ids) != b.Items() || !spec.IsIota(ids) {
			var err error
			if b, err = q.in.Gather(ids); err != nil {
				return nil, err
			}
		}
		o, err := q.t.Run(ctx, b)
		if err != nil {
			return nil, fmt.Errorf("%s on a batch of %d: %w", q.t.Name(), len(ids), err)
		}
		out[k] = digested(o)
	}
	return out, nil
}

// opHeld runs every batch as a step of the adapter that holds in, sent
// with the first step (Hold). A prefix of n <= upTo held items asked for
// alone is asked with the prefixes that follow it up to upTo (the scan
// asks for them next), within aheadSteps steps and aheadRows rows, and
// answered from those.
type opHeld struct {
	h     opHolder
	in    ops.Input
	upTo  int
	sent  bool
	ahead map[int]*opRows // answers to prefixes asked for ahead, by size
}

func (q *opHeld) hold(ctx context.Context) error {
	if q.sent {
		return nil
	}
	if err := q.h.Hold(ctx, q.in); err != nil {
		return fmt.Errorf("hold the largest batch in the adapter: %w", err)
	}
	q.sent = true
	return nil
}

func (q *opHeld) alone(ctx context.Context, n int) (*opRows, error) {
	if err := q.hold(ctx); err != nil {
		return nil, err
	}
	ids := spec.Iota(n)
	st, err := q.h.Step(ctx, [][]int{ids}, true, nil)
	if err != nil {
		return nil, err
	}
	return q.rowsOf(st[0], ids, true), nil
}

func (q *opHeld) run(ctx context.Context, batches [][]int) ([]*opRows, error) {
	if err := q.hold(ctx); err != nil {
		return nil, err
	}
	if len(batches) == 1 && spec.IsIota(batches[0]) && len(batches[0]) <= q.upTo {
		r, err := q.prefix(ctx, len(batches[0]))
		return []*opRows{r}, err
	}
	sts, err := q.h.Step(ctx, batches, false, nil)
	if err != nil {
		return nil, err
	}
	out := make([]*opRows, len(sts))
	for k, st := range sts {
		out[k] = q.rowsOf(st, batches[k], false)
	}
	return out, nil
}

// prefix answers the batch of the first n held items: from the prefixes
// asked for ahead, else in one step with the prefixes n+1, n+2, ... that
// follow it.
func (q *opHeld) prefix(ctx context.Context, n int) (*opRows, error) {
	if r, ok := q.ahead[n]; ok {
		delete(q.ahead, n)
		return r, nil
	}
	batches := [][]int{spec.Iota(n)}
	rows := n
	for m := n + 1; m <= q.upTo && len(batches) < aheadSteps && rows+m <= aheadRows; m++ {
		batches = append(batches, spec.Iota(m))
		rows += m
	}
	sts, err := q.h.Step(ctx, batches, false, nil)
	if err != nil {
		return nil, err
	}
	q.ahead = make(map[int]*opRows, len(sts)-1)
	for k, st := range sts[1:] {
		q.ahead[len(batches[k+1])] = q.rowsOf(st, batches[k+1], false)
	}
	return q.rowsOf(sts[0], batches[0], false), nil
}

// rowsOf is the answer st to the batch ids (each: every id alone),
// whose rows in full a step with the same batch fetches; that step must
// give the same digests (else the target is not deterministic).
func (q *opHeld) rowsOf(st *external.OpStep, ids []int, each bool) *opRows {
	r := &opRows{d: st.Digests}
	r.fetch = func(ctx context.Context, rows []int) (*ops.Output, error) {
		again, err := q.h.Step(ctx, [][]int{ids}, each, rows)
		if err != nil {
			return nil, err
		}
		for _, p := range rows {
			if again[0].Digests[p] != r.d[p] {
				return nil, fmt.Errorf("fetch: %w", &nondeterminism{rows: 1, first: p,
					detail: fmt.Sprintf("row %d of a batch of %d items has another digest the second time", p, len(ids))})
			}
		}
		f := again[0].Fetched
		o := ops.NewOutput(f.Columns, len(ids))
		for i, p := range rows {
			o.CopyRow(p, f, i)
		}
		return o, nil
	}
	return r
}
