package relate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/fuzz/internal/taps"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Relation is what must hold between runs of one or two targets on batches
// built from a case (docs/architecture.md, words).
type Relation interface {
	// Name is one of the spec.Rel* constants.
	Name() string
	// Ops lists the ops the relation applies to.
	Ops() []spec.Op
	// Targets is how many targets the relation takes: 1 or 2.
	Targets() int
	// Check runs the relation on case c, whose batch is b, with targets
	// ts. It returns nil when the relation holds, a finding when it does
	// not, and an error for a bad case or a target that failed.
	Check(ctx context.Context, c spec.Case, b *target.Batch, ts []target.Target) (*spec.Finding, error)
}

var relations = []Relation{batchInvariance{}, padding{}, oracleParity{}, pathParity{}, logprobParity{}, determinism{}, crossDevice{}}

// ByName returns the relation named name (a spec.Rel* constant).
func ByName(name string) (Relation, error) {
	for _, r := range relations {
		if r.Name() == name {
			return r, nil
		}
	}
	return nil, fmt.Errorf("unknown relation %q (want one of %s)", name, strings.Join(spec.Relations, ", "))
}

// targetError is a target's Run failure, naming the target.
type targetError struct {
	target string
	err    error
}

func (e *targetError) Error() string { return "target " + e.target + ": " + e.err.Error() }
func (e *targetError) Unwrap() error { return e.err }

// IsTargetFailure reports whether err, an error of Check, is a target's
// Run failure (an internal or device error: exit 3) rather than a case
// that cannot run (bad input: exit 2).
func IsTargetFailure(err error) bool {
	var te *targetError
	return errors.As(err, &te)
}

// Check runs relation c.Relation with the targets named c.Targets on case
// c: ts when given (a caller's own targets, in the order of c.Targets,
// never registered), else the registered targets of those names. It
// returns nil when the relation holds and a finding when it does not;
// the finding carries the case, the first diverging row and column, both
// values, the ulp distance, a repro line, its signature and the
// environment. A target whose Run error wraps ErrTargetCrashed gives a
// finding of kind "crash"; any other failure, and a bad case, is an error.
//
// A case of a composite op is not a relation's: fuzz.Check hands it to
// its fuzz.Source.
func Check(ctx context.Context, c spec.Case, ts ...target.Target) (*spec.Finding, error) {
	if !slices.Contains(spec.Ops, c.Op) {
		return nil, fmt.Errorf("case: op %q: no relation here runs it (a composite op's case needs its fuzz.Source among the targets)", c.Op)
	}
	rel, err := ByName(c.Relation)
	if err != nil {
		return nil, fmt.Errorf("case: %w", err)
	}
	if len(c.Targets) != rel.Targets() {
		return nil, fmt.Errorf("case: relation %s takes %d target(s), the case names %d (%v)",
			rel.Name(), rel.Targets(), len(c.Targets), c.Targets)
	}
	if !hasOp(rel.Ops(), c.Op) {
		return nil, fmt.Errorf("case: relation %s does not apply to op %s", rel.Name(), c.Op)
	}
	if ts, err = Resolve(c.Targets, ts); err != nil {
		return nil, fmt.Errorf("case: %w", err)
	}
	if op := ts[0].Info().Op; op != c.Op {
		return nil, fmt.Errorf("case: target %s runs %s, the case is %s", c.Targets[0], op, c.Op)
	}
	b, err := inputsFor(c, rel, ts)
	if err != nil {
		return nil, fmt.Errorf("case inputs: %w", err)
	}
	f, err := rel.Check(ctx, c, b, ts)
	var te *targetError
	if err != nil && errors.Is(err, target.ErrTargetCrashed) && errors.As(err, &te) {
		f, err = &spec.Finding{Kind: spec.KindCrash, TargetA: te.target, Error: te.err.Error(),
			Message: "the target crashed (faulted, hung or answered garbage) on this case"}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", c.Relation, strings.Join(c.Targets, ", "), err)
	}
	if f == nil {
		return nil, nil
	}
	Complete(f, c)
	f.Expected = expectedBy(f, ts)
	return f, nil
}

// Resolve returns ts when given (as many as names), else the registered
// targets named names.
func Resolve(names []string, ts []target.Target) ([]target.Target, error) {
	if len(ts) > 0 {
		if len(ts) != len(names) {
			return nil, fmt.Errorf("%d target(s) given for %d named (%v)", len(ts), len(names), names)
		}
		return ts, nil
	}
	out := make([]target.Target, len(names))
	for i, name := range names {
		t, err := target.Lookup(name)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// expectedBy decides spec.Finding.Expected: f is not a crash and one of its
// targets lists f.Relation among the relations it must be found by
// (target.Info.Expect).
func expectedBy(f *spec.Finding, ts []target.Target) bool {
	if f.Kind == spec.KindCrash {
		return false
	}
	for _, t := range ts {
		name := t.Info().Name
		if (name == f.TargetA || name == f.TargetB) && slices.Contains(t.Info().Expect, f.Relation) {
			return true
		}
	}
	return false
}

// Complete fills the fields every finding of case c shares: the case,
// relation, targets, repro line, environment, time and signature.
func Complete(f *spec.Finding, c spec.Case) {
	f.Case = c
	f.Relation = c.Relation
	if f.TargetA == "" && len(c.Targets) > 0 {
		f.TargetA = c.Targets[0]
	}
	if f.TargetB == "" && len(c.Targets) > 1 {
		f.TargetB = c.Targets[1]
	}
	f.Repro = spec.ReproLine(c)
	f.Env = spec.HostEnv()
	f.FoundAt = time.Now().UTC()
	f.Signature = spec.Signature(*f)
}

func hasOp(ops []spec.Op, op spec.Op) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}

// run is one target's output on one batch built from the case. uids[i] is
// the case item that item i of the batch copies (-1 for filler), so runs
// compare on the items they share.
type run struct {
	what   string
	target target.Target
	batch  *target.Batch
	uids   []int
	out    *target.Output
}

// execute runs t on b, computing the rows of every item with uid >= 0.
func execute(ctx context.Context, t target.Target, b *target.Batch, uids []int, what string) (*run, error) {
	var rows []int // nil: all rows
	for _, u := range uids {
		if u < 0 {
			rows = []int{}
			break
		}
	}
	if rows != nil {
		for i, u := range uids {
			if u >= 0 {
				rows = append(rows, inputs.ItemRows(b, i, i+1)...)
			}
		}
		if len(rows) == 0 {
			return nil, fmt.Errorf("%s: no rows to compute", what)
		}
	}
	if err := ready(t, b); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out, err := t.Run(ctx, b, rows)
	if err != nil {
		return nil, &targetError{target: t.Info().Name, err: fmt.Errorf("%s: %w", what, err)}
	}
	if want := len(b.Rows0(rows)); !shapeOK(out, want, b.Cols()) {
		return nil, &targetError{target: t.Info().Name, err: fmt.Errorf("%s: output has %d rows (%d values), want %d rows of %d: %w",
			what, len(out.Rows), len(out.Values), want, b.Cols(), target.ErrTargetCrashed)}
	}
	return &run{what: what, target: t, batch: b, uids: uids, out: out}, nil
}

// release returns a device output's memory; host outputs need nothing.
func (r *run) release() {
	if r != nil && r.out != nil {
		r.out.Release()
	}
}

// shared pairs the output rows of the items ref and other have in common
// (other's items whose uid ref also holds, ref's first such item).
func shared(ref, other *run) (ra, rb []int) {
	top := -1
	for _, u := range ref.uids {
		top = max(top, u)
	}
	at := make([]int, top+1) // at[u] = ref's first item of uid u, + 1
	for i, u := range ref.uids {
		if u >= 0 && at[u] == 0 {
			at[u] = i + 1
		}
	}
	k := ref.batch.RowsPerItem()
	ra, rb = make([]int, 0, len(other.uids)*k), make([]int, 0, len(other.uids)*k)
	for i, u := range other.uids {
		if u < 0 || u > top || at[u] == 0 {
			continue
		}
		j := at[u] - 1
		for r := 0; r < k; r++ {
			ra = append(ra, j*k+r)
			rb = append(rb, i*k+r)
		}
	}
	return ra, rb
}

// differ compares rows ra of ref with rows rb of other in dt and returns a
// mismatch finding for the first differing row, or, when the outputs are
// equal and both carry taps (and ctx is not taps.Off), a finding on the
// fp32 taps; nil when equal.
// bound > 0 ignores rows whose largest distance is within bound ulps and
// whose differing columns are finite on both sides (an infinity or a NaN
// against another value is never within a bound).
//
// When both outputs hold their taps on a device, the taps compare is
// queued ahead of the outputs compare (and its result dropped when the
// outputs differ), so the check waits for the device once, not twice.
func differ(ctx context.Context, ref, other *run, ra, rb []int, dt oracle.DType, bound uint64) (*spec.Finding, error) {
	return startDiffer(ctx, ref, other, ra, rb, dt, bound)()
}

// startDiffer is differ in two halves: it queues the compares of outputs
// that live on a device (values and taps: no wait) and returns the wait
// for the verdict, which must be called once, before either output is
// released. Outputs on the host are compared when the wait is called.
func startDiffer(ctx context.Context, ref, other *run, ra, rb []int, dt oracle.DType, bound uint64) func() (*spec.Finding, error) {
	pa, pb, _, err := comparedPositions(ref.out, other.out, ra, rb)
	if err != nil {
		return func() (*spec.Finding, error) { return nil, err }
	}
	wantTaps := bound == 0 && taps.On(ctx)
	var waitTaps func() ([]target.RowDiff, error)
	if wantTaps {
		waitTaps = startDeviceTaps(ref.out, other.out, pa, pb)
	}
	waitValues := startValues(ref.out, other.out, pa, pb, dt)
	return func() (*spec.Finding, error) {
		diffs, err := waitValues()
		var tapDiffs []target.RowDiff
		var tapErr error
		if waitTaps != nil {
			tapDiffs, tapErr = waitTaps() // always: the outputs may be released once the verdict is in
		}
		if err != nil {
			return nil, err
		}
		if bound > 0 {
			kept := diffs[:0]
			for _, d := range diffs {
				if d.MaxULPs > bound || d.NonFinite {
					kept = append(kept, d)
				}
			}
			diffs = kept
		}
		if len(diffs) > 0 {
			return mismatchFinding(ref, other, diffs, dt, false, len(ra))
		}
		if !wantTaps {
			return nil, nil
		}
		if waitTaps == nil {
			tapDiffs, tapErr = compareHostTaps(ref.out, other.out, pa, pb)
		}
		if tapErr != nil {
			return nil, tapErr
		}
		if len(tapDiffs) > 0 {
			return mismatchFinding(ref, other, tapDiffs, oracle.FP32, true, len(ra))
		}
		return nil, nil
	}
}

// tapName names tap column col of op (Taps of its record, Op.Info, repeating; the
// fp32 output columns before rounding for an op without named taps).
func tapName(op spec.Op, col int) string {
	if o, ok := op.Info(); ok && len(o.Taps) > 0 {
		return o.Taps[col%len(o.Taps)]
	}
	return fmt.Sprintf("fp32 output column %d before rounding", col)
}

// mismatchFinding builds the finding of the first diff (batch rows of ref)
// at that row's column of largest distance (worstColumn): the finding's
// ulps and its first row summary's max_ulps are one number.
func mismatchFinding(ref, other *run, diffs []target.RowDiff, dt oracle.DType, taps bool, compared int) (*spec.Finding, error) {
	d := diffs[0]
	ra, err := rowAt(ref.out, taps, d.PosA)
	if err != nil {
		return nil, err
	}
	rb, err := rowAt(other.out, taps, d.PosB)
	if err != nil {
		return nil, err
	}
	col := worstColumn(ra, rb, dt, d)
	a, b := ra[col], rb[col]
	dist := oracle.ULPDistance(dt, a, b)
	rowA, rowB := ref.out.Rows[d.PosA], other.out.Rows[d.PosB]
	cols := ref.out.Cols
	if taps {
		cols = ref.out.TapCols
	}
	f := &spec.Finding{
		Kind:          spec.KindMismatch,
		OnTaps:        taps,
		TargetA:       ref.target.Info().Name,
		Row:           rowA,
		Col:           col,
		A:             specValue(dt, a),
		B:             specValue(dt, b),
		ULPs:          dist.ULPs,
		SignedZero:    dist.SignedZero,
		RowsDiffering: len(diffs),
		Mismatches:    summarize(ref.out, diffs, cols),
	}
	if n := other.target.Info().Name; n != f.TargetA {
		f.TargetB = n
	}
	f.Message = fmt.Sprintf("%s (A) vs %s (B): %d of %d shared rows differ in %s; first: row %d of A = row %d of B, column %d, %d ulps",
		ref.what, other.what, len(diffs), compared, dt, rowA, rowB, col, dist.ULPs)
	if col != d.FirstCol {
		f.Message += fmt.Sprintf(" (the row's largest distance; it first differs at column %d)", d.FirstCol)
	}
	if dist.SignedZero {
		f.Message += " (+0 vs -0: 0 ulps, different bits)"
	}
	if taps {
		f.Message = fmt.Sprintf("outputs are bitwise equal but the fp32 intermediates differ (tap %q): the reduction order changed, and it flips output bits wherever a value sits near a rounding boundary; ",
			tapName(ref.batch.Op, col)) + f.Message
	}
	return f, nil
}

// shapeOK says whether the output has want rows of cols values (on the
// host or the device) and want rows of taps.
func shapeOK(o *target.Output, want, cols int) bool {
	taps := len(o.Taps) == want*o.TapCols || o.Taps == nil && o.DeviceTaps != nil && o.TapCols > 0
	return len(o.Rows) == want && o.Cols == cols && (o.Values == nil || len(o.Values) == want*o.Cols) && taps
}

// lazyRelations are the relations that touch a batch's values only through
// execute and inputs.Items, and so can run on lazy batches.
var lazyRelations = map[string]bool{
	spec.RelBatchInvariance: true,
	spec.RelPadding:         true,
	spec.RelDeterminism:     true,
	spec.RelOracleParity:    true,
	spec.RelCrossDevice:     true,
}

// inputsFor returns the batch of case c for relation rel on targets ts:
// lazy when the relation allows it and every target generates c's values,
// else inputs.Of(c). Attention pads on the host (padded), so its padding
// batches are not lazy; of the boundary cases only those of an op whose
// nudge a device runs (ops.CaseOp.LazyBoundary) are.
func inputsFor(c spec.Case, rel Relation, ts []target.Target) (*target.Batch, error) {
	if !lazyRelations[rel.Name()] || (!tokenOp(c.Op) && rel.Name() == spec.RelPadding) {
		return inputs.Of(c)
	}
	return inputs.Lazy(c, ts...)
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

// tokenOp reports whether op's items are one row of one tensor each (the
// token ops), rather than spanning several tensors (attention's Q, K, V).
func tokenOp(op spec.Op) bool {
	k, ok := all.Case(op)
	return !ok || k.Token()
}
