package detect

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/internal/taps"
	"github.com/bitparity/bitparity/fuzz/relate"
	"github.com/bitparity/bitparity/ops"
	"github.com/bitparity/bitparity/ops/all"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Options says what one detection run measures. The zero value of Dist,
// Out, Relation and MaxCases is valid (see there).
type Options struct {
	// Model is the drift model's target name.
	Model string
	// Relation is the relation that must find it; empty: the first relation
	// of the model's Info.Expect.
	Relation string
	// Dist is forced on every case (empty: spec.DistNormal).
	Dist spec.Dist
	// Out is forced as the output dtype, and as the compare dtype of
	// cases of an op whose outputs have one dtype (ops.FixedOut: log-prob
	// cases) (empty: bf16).
	Out spec.DType
	// Seed seeds the case stream (math/rand, as the campaign's per-pair
	// streams are).
	Seed uint64
	// MaxCases bounds the run (0: 20000).
	MaxCases int
	// Taps compares the fp32 intermediates too (default off: outputs only,
	// taps.Off).
	Taps bool
}

// Run is the outcome of one detection run.
type Run struct {
	Found   bool
	Cases   int           // cases checked, the finding's included
	Elapsed time.Duration // wall time to the finding (or to MaxCases)
	Finding *spec.Finding
}

// pairFor returns the targets of the campaign pair that runs model under
// relation.
func pairFor(model, relation string) (spec.Op, []string, error) {
	for _, p := range relate.Pairs() {
		if p.Relation == relation && slices.Contains(p.Targets, model) {
			return p.Op, p.Targets, nil
		}
	}
	return "", nil, fmt.Errorf("no campaign pair runs %s under %s", model, relation)
}

// RelationFor is the relation a detection run of model uses by default: the
// first of its Info.Expect.
func RelationFor(model string) (string, error) {
	t, err := target.Lookup(model)
	if err != nil {
		return "", err
	}
	if e := t.Info().Expect; len(e) > 0 {
		return e[0], nil
	}
	return "", fmt.Errorf("%s is not a drift model (it expects no relation to find it)", model)
}

// Measure draws cases of the model's op under the relation from the
// campaign's own stream (fuzz.Stream, seeded with Seed), forces Dist and Out, and runs fuzz.Check on
// each until one gives a finding or MaxCases have run:
//
//	for n := 1; n <= MaxCases; n++ {
//		c := next case; c.Dist, c.Out = Dist, Out; c.Compare = Out (ops.FixedOut: logprob)
//		if Check(c) finds: return {Found, n, elapsed}
//	}
func Measure(ctx context.Context, o Options) (Run, error) {
	rel := o.Relation
	if rel == "" {
		var err error
		if rel, err = RelationFor(o.Model); err != nil {
			return Run{}, err
		}
	}
	op, targets, err := pairFor(o.Model, rel)
	if err != nil {
		return Run{}, err
	}
	dist, out, maxCases := o.Dist, o.Out, o.MaxCases
	if dist == "" {
		dist = spec.DistNormal
	}
	if out == "" {
		out = spec.BF16
	}
	if maxCases <= 0 {
		maxCases = 20000
	}
	if !o.Taps {
		ctx = taps.Off(ctx)
	}
	k, ok := all.Case(op)
	fixedOut := ok && ops.FixedOut(k) // log-probs: compared in Out
	next := fuzz.Stream(int64(o.Seed), op, rel)
	start := time.Now()
	for n := 1; n <= maxCases; n++ {
		if err := ctx.Err(); err != nil {
			return Run{Cases: n - 1, Elapsed: time.Since(start)}, err
		}
		c := next()
		c.Dist, c.Out = dist, out
		if fixedOut {
			c.Compare = out
		}
		c.Targets = targets
		f, err := fuzz.Check(ctx, c)
		if err != nil {
			return Run{}, fmt.Errorf("case %d: %w", n, err)
		}
		if f != nil {
			return Run{Found: true, Cases: n, Elapsed: time.Since(start), Finding: f}, nil
		}
	}
	return Run{Cases: maxCases, Elapsed: time.Since(start)}, nil
}

// Line is one drift model's row of the detection table: the medians over
// seeds of cases and seconds to the first finding, for each distribution.
type Line struct {
	Model, Relation  string
	Normal, Boundary Median
}

// Median summarises the runs of one (model, distribution): the median of
// cases and of seconds over the runs (a run that found nothing counts as
// MaxCases and its time, so Found < Runs makes the median a lower bound).
type Median struct {
	Cases   int
	Seconds float64
	Found   int
	Runs    int
}

func median(runs []Run) Median {
	cs := make([]int, len(runs))
	ss := make([]float64, len(runs))
	m := Median{Runs: len(runs)}
	for i, r := range runs {
		cs[i], ss[i] = r.Cases, r.Elapsed.Seconds()
		if r.Found {
			m.Found++
		}
	}
	sort.Ints(cs)
	sort.Float64s(ss)
	if n := len(runs); n > 0 {
		if n%2 == 1 {
			m.Cases, m.Seconds = cs[n/2], ss[n/2]
		} else {
			m.Cases, m.Seconds = (cs[n/2-1]+cs[n/2])/2, (ss[n/2-1]+ss[n/2])/2
		}
	}
	return m
}

// Model names a drift model and the relation a table measures it on
// (empty: RelationFor).
type Model struct{ Name, Relation string }

// Table measures every model with seeds 1..seeds for Dist normal and Dist
// boundary (other fields of base apply to every run) and returns one line
// per model. progress, when set, is called after each run.
func Table(ctx context.Context, models []Model, seeds int, base Options, progress func(model string, dist spec.Dist, seed uint64, r Run)) ([]Line, error) {
	var lines []Line
	for _, mm := range models {
		m, rel := mm.Name, mm.Relation
		if rel == "" {
			var err error
			if rel, err = RelationFor(m); err != nil {
				return nil, err
			}
		}
		l := Line{Model: m, Relation: rel}
		for _, d := range []spec.Dist{spec.DistNormal, spec.DistBoundary} {
			var runs []Run
			for s := 1; s <= seeds; s++ {
				o := base
				o.Model, o.Relation, o.Dist, o.Seed = m, rel, d, uint64(s)
				r, err := Measure(ctx, o)
				if err != nil {
					return nil, fmt.Errorf("%s %s seed %d: %w", m, d, s, err)
				}
				if progress != nil {
					progress(m, d, uint64(s), r)
				}
				runs = append(runs, r)
			}
			if d == spec.DistNormal {
				l.Normal = median(runs)
			} else {
				l.Boundary = median(runs)
			}
		}
		lines = append(lines, l)
	}
	return lines, nil
}

// RowsDiffering runs case c (its relation and targets) comparing outputs
// only and returns how many compared rows differ (0 when the relation
// holds) and the finding's message.
func RowsDiffering(ctx context.Context, c spec.Case) (int, string, error) {
	f, err := fuzz.Check(taps.Off(ctx), c)
	if err != nil || f == nil {
		return 0, "", err
	}
	return f.RowsDiffering, f.Message, nil
}
