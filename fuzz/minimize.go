package fuzz

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/bitparity/bitparity/fuzz/driftmap"
	"github.com/bitparity/bitparity/fuzz/shrink"
	"github.com/bitparity/bitparity/spec"
)

// ShrinkTries bounds the Checks one shrink may run, MapBudget the time of
// one drift map, and LateShrinkBudget the shrinking of a finding still
// queued when the campaign's duration is over.
const (
	ShrinkTries      = 400
	MapBudget        = 30 * time.Second
	LateShrinkBudget = 3 * time.Second
)

// minimize shrinks f's case (fuzz/shrink) to the smallest that still fails
// with the same kind, then maps the dimension that decides the drift
// over several input draws (DriftMap); it records the original case, the steps and
// the drift map, and recomputes the finding on the minimal case. When
// shrinking or mapping fails the finding keeps what it had and its Message
// says why.
func minimize(ctx context.Context, f *spec.Finding) {
	orig := f.Case
	kind := f.Kind
	fails := func(k spec.Case) (bool, error) {
		g, err := Check(ctx, k)
		if err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			return false, err // counted as passing by shrink (Stats.Errors)
		}
		return g != nil && g.Kind == kind, nil
	}
	minCase, st, err := shrink.Options{MaxTries: ShrinkTries}.Shrink(ctx, orig, fails)
	if minCase.Op == "" {
		minCase = orig
	}
	if g, cerr := Check(context.WithoutCancel(ctx), minCase); cerr == nil && g != nil && g.Kind == kind {
		elapsed, before := f.Elapsed, f.CasesBefore
		*f = *g
		f.Elapsed, f.CasesBefore = elapsed, before
		if ReproLine(minCase) != ReproLine(orig) {
			o := orig
			f.Original = &o
		}
		f.ShrinkSteps = st.Steps
	}
	if err != nil {
		f.Message += fmt.Sprintf(" (shrinking stopped early: %v)", err)
	}
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), MapBudget)
	defer cancel()
	dm, err := DriftMap(mctx, f)
	if err != nil {
		f.Message += fmt.Sprintf(" (no drift map: %v)", err)
		return
	}
	if dm == nil {
		return
	}
	f.DriftMap = dm
	f.Signature = spec.Signature(*f)
}

// sweepValues is driftmap.Values plus, for the decode batch dimension, the
// batch sizes where decode heuristics switch: around multiples of the
// H200's 132 SMs and powers of two up to 1024 (a split heuristic's
// threshold is requests x heads against the SMs, so it can sit far above a
// minimal case's single request).
func sweepValues(dim string, onset int) []int {
	vs := driftmap.Values(dim, onset)
	if dim == "batch" {
		for _, m := range []int{SMs, 2 * SMs} {
			vs = append(vs, m-1, m, m+1)
		}
		for p := 8; p <= 1024; p *= 2 {
			vs = append(vs, p-1, p, p+1)
		}
	}
	sort.Ints(vs)
	out := vs[:0]
	for i, v := range vs {
		if i == 0 || v != vs[i-1] {
			out = append(out, v)
		}
	}
	return out
}
