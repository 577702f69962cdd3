package fuzz

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bitparity/bitparity/fuzz/relate"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// A Source is a composite op's own cases and checker: the end-to-end
// transformer (fuzz/transformer.Source) or a model route
// (fuzz/external.ModelSource). The relations of this package do not apply
// to its cases; a caller passes the source as a value:
//
//   - to Check and Minimize among their targets (a *Source is a
//     target.Target whose Run refuses batches), which then hand a case of
//     the source's Op to Check, shrink it with Shrink and map it with Map;
//   - to Campaign.Sources, whose Jobs then run beside the single-op pairs.
//
// Nothing registers a source: a case of a composite op checked without
// its source is an error.
type Source struct {
	// Name is what Campaign.Targets selects the source's jobs by (as it
	// selects a target by its name).
	Name string
	Op   spec.Op
	// Check checks one case of Op: nil when its relation holds, a finding
	// (with Site set where the paths first diverged) when it does not.
	Check func(ctx context.Context, c spec.Case) (*spec.Finding, error)
	// Shrink lists the smaller neighbours of c in groups (a group per
	// dimension, say), each most reducing first; Minimize takes, group by
	// group, the first neighbour that still fails, in rounds until a round
	// changes nothing (shrinkSteps). One group is plain greedy descent. Nil:
	// a finding of this source is not shrunk.
	Shrink func(c spec.Case) [][]spec.Case
	// Map, when set, maps the drift of f (its DriftMap, and what it found
	// in Message); nil keeps the map Check made.
	Map func(ctx context.Context, f *spec.Finding) error
	// Planted, when set, returns the site a case declares its drift at (a
	// drift model planted at one site), or nil: a control's finding is
	// expected only at that site (Job.Expected).
	Planted func(c spec.Case) *spec.Site
	// Jobs are the case streams a campaign runs (each a pair of its own).
	Jobs []Job
	// Share, above 0, is the fraction of a campaign's worker time its jobs
	// get: the campaign's scheduler (runner.pick) gives the next case to
	// the group whose time so far, over its share, is least, where a group
	// is one source with a Share, or the pairs and the sources without one
	// together, which share the rest (1 - the shares). A group with nothing
	// left to run leaves its time to the others. The shares of a campaign
	// sum to at most 1, below 1 when it has pairs or sources without one.
	// In a share, the controls not yet found take their turns before the
	// other jobs. 0: its jobs run among the pairs.
	Share float64
	// ShrinkBudget, above 0, bounds the shrinking of one finding of its
	// jobs in a campaign (0: the campaign's ShrinkBudget).
	ShrinkBudget time.Duration
}

// Job is one case stream of a Source in a campaign.
type Job struct {
	// Name is the job's entry in the result's per-target statistics (jobs
	// of one name share an entry); Relation is its cases' relation.
	Name     string
	Relation string
	// Invariant says the job's cases must all hold (its statistics count
	// as invariant cases).
	Invariant bool
	// Draw makes the case of seed, or false to skip the seed. The n-th
	// seed of job j of a source's J jobs is inputs.Splitmix(Seed ^ inputs.Splitmix(j +
	// J*n)) for a campaign of Seed: the seeds of jobs taken in turn.
	Draw func(seed uint64) (spec.Case, bool)
	// Expect, for a control, is the kind of finding it must give: its
	// findings are judged by the one rule (Job.Expected), and a control
	// that gives none is missed (its statistics count no finding). Empty:
	// any finding is unexpected.
	Expect spec.Kind
	// MinCases: a control not yet found runs that many cases even past
	// the campaign's Duration or MaxCases (so whether it is found depends
	// on the seed, not on the machine's speed).
	MinCases int64
	// Repeat keeps the job drawing after a finding: it keeps one finding
	// per kind and site. Otherwise the job retires at its first finding.
	Repeat bool
}

// Expected is the one rule that decides spec.Finding.Expected for a
// finding f of job j: j is a control (Expect, the kind it must give), f
// has that kind, and f diverged first at the site the case planted its
// drift at, when it planted one (Source.Planted). No message text is read.
func (j *Job) Expected(f *spec.Finding, planted *spec.Site) bool {
	return j.Expect != "" && f.Kind == j.Expect && (planted == nil || spec.SameSite(f.Site, planted))
}

// Info makes a *Source a target.Target, so that Check and Minimize take it
// among their targets.
func (s *Source) Info() target.Info {
	return target.Info{Name: s.Name, Op: s.Op, Device: "composite"}
}

// Run refuses every batch: a source checks whole cases (Check).
func (s *Source) Run(context.Context, *target.Batch, []int) (*target.Output, error) {
	return nil, fmt.Errorf("%s: a composite source checks whole cases, not batches: %w", s.Name, target.ErrUnsupported)
}

// Check runs case c: a case of a composite op with the Source among ts
// that checks its op (Source.Check; there is no other way to check one),
// any other case with relate.Check on ts without their sources, so a
// caller may pass the sources it knows with every case. A crash of the
// process behind a source (target.ErrTargetCrashed) is a finding of kind
// crash, as in relate.Check.
func Check(ctx context.Context, c spec.Case, ts ...target.Target) (*spec.Finding, error) {
	if s := sourceFor(c.Op, ts); s != nil {
		return checkComposite(ctx, s, c)
	}
	return relate.Check(ctx, c, withoutSources(ts)...)
}

// sourceFor returns the source among ts that checks op, or nil.
func sourceFor(op spec.Op, ts []target.Target) *Source {
	for _, t := range ts {
		if s, ok := t.(*Source); ok && s.Op == op {
			return s
		}
	}
	return nil
}

// withoutSources returns ts without its sources (all of ts when it has
// none).
func withoutSources(ts []target.Target) []target.Target {
	out := ts[:0:0]
	for _, t := range ts {
		if _, ok := t.(*Source); !ok {
			out = append(out, t)
		}
	}
	if len(out) == len(ts) {
		return ts
	}
	return out
}

// checkComposite checks c with source s: a crash of the process behind it
// (target.ErrTargetCrashed) is a finding of kind crash, as in Check.
func checkComposite(ctx context.Context, s *Source, c spec.Case) (*spec.Finding, error) {
	f, err := s.Check(ctx, c)
	if err != nil && errors.Is(err, target.ErrTargetCrashed) && ctx.Err() == nil {
		f = &spec.Finding{Kind: spec.KindCrash, TargetA: s.Name, Error: err.Error(),
			Message: "the target crashed (faulted, hung or answered garbage) on this case"}
		relate.Complete(f, c)
		return f, nil
	}
	return f, err
}
