package scan

import (
	"errors"
	"fmt"

	"github.com/bitparity/bitparity/fuzz/driftmap"
)

// A target that answers one step two ways is a finding, not a failure: the
// step's value gets the class driftmap.Nondeterministic, is counted and
// recorded like any drift (against "same batch run again"), and the scan
// goes on. A step is asked twice where it drifts: a step with a row that
// differs from its item alone runs again, and the two outputs are
// compared on every compared row (checked in bulk, the check runs a
// flagged step twice and compares its two records: bulk.go). An adapter's
// witness fetch, which runs the step again, tells the same
// (digestRows.Fetch). A step whose rows all equal their items alone runs
// once: a target that answers it two ways is not seen there.

// errNondeterministic is wrapped by the errors of a step whose target
// answered it two ways.
var errNondeterministic = errors.New("the target answered the same batch two ways (nondeterministic)")

// sameTwice runs step p's batch again and compares its compared rows
// with p's output; an error wrapping errNondeterministic says how many
// differ.
func (st *steps) sameTwice(p *step) error {
	sc := st.sc
	again, err := st.h.run(st.ctx, p.ids)
	if err != nil {
		return fmt.Errorf("the same batch again: %w", err)
	}
	defer again.Release()
	sc.res.Batches++
	d, err := differing(p.o, again, p.pa, p.pa, sc.dt, sc.s.NoTaps)
	if err != nil {
		return fmt.Errorf("against the same batch run again: %w", err)
	}
	sc.res.RowsCompared += int64(len(p.pa))
	if len(d) > 0 {
		return &nondeterminism{rows: len(d), first: p.pa[d[0]]}
	}
	return nil
}

// nondeterminism is a step answered two ways: rows compared rows differ
// between the two answers, the first at row first (-1: not known).
type nondeterminism struct {
	rows, first int
	detail      string
}

func (e *nondeterminism) Error() string {
	if e.detail != "" {
		return fmt.Sprintf("%v: %s", errNondeterministic, e.detail)
	}
	return fmt.Sprintf("%v: %d row(s) differ between two runs, first row %d", errNondeterministic, e.rows, e.first)
}

func (e *nondeterminism) Unwrap() error { return errNondeterministic }

// nondeterministic records step p of draw k, answered two ways (err wraps
// errNondeterministic), and returns its class.
func (st *steps) nondeterministic(p *step, err error) string {
	sc := st.sc
	rows, first := 1, -1
	var nd *nondeterminism
	if errors.As(err, &nd) {
		rows, first = max(nd.rows, 1), nd.first
	}
	sc.res.Differing += int64(rows)
	sc.res.Diffs = append(sc.res.Diffs, Diff{Draw: sc.s.Dists[st.k], Value: p.v, Rows: rows, FirstRow: first, Against: againstItself})
	return driftmap.Nondeterministic
}

// againstItself is Diff.Against of a step answered two ways.
const againstItself = "same batch run again"
