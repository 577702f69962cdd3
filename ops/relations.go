package ops

import (
	"context"
	"fmt"

	"github.com/bitparity/bitparity/spec"
)

// Check is what one relation found on one batch: the batch it ran, the
// target's rows (Got), each row's reference (Want: the same item alone,
// or the same item with its neighbours' contents replaced) and the rows
// whose bits differ.
type Check struct {
	Batch Input
	Got   *Output
	Want  *Output
	Rows  []int
}

// Alone runs t on each item of in alone (a batch of one item) and returns
// the rows in the order of in: the reference of batch invariance.
func Alone(ctx context.Context, t Target, in Input) (*Output, error) {
	var out *Output
	for i := range in.Items() {
		one, err := in.Gather([]int{i})
		if err != nil {
			return nil, err
		}
		o, err := t.Run(ctx, one)
		if err != nil {
			return nil, fmt.Errorf("%s on item %d alone: %w", t.Name(), i, err)
		}
		if out == nil {
			out = NewOutput(o.Columns, in.Items())
		}
		if err := out.SameColumns(o); err != nil {
			return nil, err
		}
		out.CopyRow(i, o, 0)
	}
	return out, nil
}

// BatchInvariance runs t on the first v items of in and compares row r
// with row r of alone (Alone's output on in), r = 0..v-1: row r of a batch
// of v items must equal item r computed alone.
func BatchInvariance(ctx context.Context, t Target, in Input, alone *Output, v int) (*Check, error) {
	b, got, err := runFirst(ctx, t, in, v)
	if err != nil {
		return nil, err
	}
	want := NewOutput(alone.Columns, v)
	for r := range v {
		want.CopyRow(r, alone, r)
	}
	return compare(b, got, want)
}

// NeighbourReplacement runs t on the first v items of in (batch A) and on
// two batches of the same size in which the neighbours' contents are
// replaced by items of other: B keeps A's even positions and takes
// other's items at the odd ones, C keeps the odd positions and replaces
// the even ones. Row r of A must equal row r of B (r even) or C (r odd):
// a row's bits must not depend on other rows' values. At v = 1 there is
// no neighbour and the relation holds trivially.
func NeighbourReplacement(ctx context.Context, t Target, in, other Input, v int) (*Check, error) {
	a, got, err := runFirst(ctx, t, in, v)
	if err != nil {
		return nil, err
	}
	want := NewOutput(got.Columns, v)
	for keep := range 2 {
		var at []int
		for r := range v {
			if r%2 != keep {
				at = append(at, r)
			}
		}
		if len(at) == 0 { // v = 1: no neighbour, the row is its own reference
			want.CopyRow(0, got, 0)
			continue
		}
		repl, err := other.Gather(at) // other's item r replaces position r
		if err != nil {
			return nil, err
		}
		b, err := a.Replace(at, repl)
		if err != nil {
			return nil, err
		}
		o, err := t.Run(ctx, b)
		if err != nil {
			return nil, fmt.Errorf("%s on a batch of %d with its neighbours replaced: %w", t.Name(), v, err)
		}
		if err := got.SameColumns(o); err != nil {
			return nil, err
		}
		for r := keep; r < v; r += 2 {
			want.CopyRow(r, o, r)
		}
	}
	return compare(a, got, want)
}

// runFirst runs t on the batch of the first v items of in and returns
// the batch and t's output.
func runFirst(ctx context.Context, t Target, in Input, v int) (Input, *Output, error) {
	b, err := in.Gather(spec.Iota(v))
	if err != nil {
		return nil, nil, err
	}
	got, err := t.Run(ctx, b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s on a batch of %d: %w", t.Name(), v, err)
	}
	return b, got, nil
}

// compare lists the rows of got that differ from want.
func compare(b Input, got, want *Output) (*Check, error) {
	if err := got.SameColumns(want); err != nil {
		return nil, err
	}
	if got.Rows != want.Rows {
		return nil, fmt.Errorf("%d rows against %d", got.Rows, want.Rows)
	}
	ch := &Check{Batch: b, Got: got, Want: want}
	for r := range got.Rows {
		if !got.SameRow(r, want, r) {
			ch.Rows = append(ch.Rows, r)
		}
	}
	return ch, nil
}
