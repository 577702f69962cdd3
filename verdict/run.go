package verdict

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/spec"
)

// Run is one bitparity run: one campaign, its result recorded by one
// Recorder and judged once (Judge). The campaign (Campaign) runs its
// single-op pairs and its composite sources, each source's jobs in its
// time share (fuzz.Source.Share), under the campaign's one scheduler, so
// they interleave; or, with Elsewhere, its pairs run in worker processes
// (Launch) instead.
//
//   - Shares are sources added to the campaign whose jobs are controls
//     judged apart (Share): the end-to-end transformer
//     (transformer.SharedSource). A share's findings (those of its Op)
//     and its jobs' statistics make its part of the result (Shared); the
//     run's result keeps its jobs, cases and only its unexpected findings,
//     and records only those.
//   - Routes says the campaign's sources are model routes
//     (external.RouteCampaign): the result, on the recorder's head, is
//     judged as a route (Route).
type Run struct {
	Recorder  *Recorder
	Campaign  *fuzz.Campaign
	Shares    []*fuzz.Source
	Elsewhere func(ctx context.Context) (*spec.Result, error)
	Routes    bool
	// Progress, when set, gets the run's cases and findings so far.
	Progress func(cases int64, findings int)

	// Shared are the shares' parts of the result and their verdicts, set
	// by Start.
	Shared []Shared
}

// Shared is one share's part of a run: its result and its verdict
// (Share); the run's result holds its jobs, cases and unexpected findings.
type Shared struct {
	Name    string
	Result  *spec.Result
	Verdict *Verdict
}

// Start runs the run's campaign (or Elsewhere) and returns the result
// (marked Interrupted when ctx ended), with the error of a campaign that
// failed; a nil result is a run, not of routes, that could not start or
// failed before its result (fuzz.ErrNoPairs among the reasons).
func (r *Run) Start(ctx context.Context) (*spec.Result, error) {
	var res *spec.Result
	var err error
	if r.Elsewhere != nil {
		if len(r.Shares) > 0 {
			return nil, errors.New("a run's shares run in its one campaign, in this process, not in worker processes")
		}
		res, err = r.Elsewhere(ctx)
	} else {
		res, err = r.campaign(ctx)
	}
	if res == nil && r.Routes {
		res = &spec.Result{} // a route's run always has a result (onHead)
	}
	if res == nil {
		return nil, err
	}
	r.progress(res.Cases, len(res.Findings))
	res.Interrupted = res.Interrupted || ctx.Err() != nil
	for _, s := range r.Shares {
		r.Shared = append(r.Shared, split(res, s))
	}
	if r.Routes {
		res = r.onHead(res)
	}
	return res, err
}

// campaign runs the one campaign, the shares among its sources, with the
// recorder keeping every finding but a share's expected ones.
func (r *Run) campaign(ctx context.Context) (*spec.Result, error) {
	c := r.Campaign
	c.Sources = append(c.Sources, r.Shares...)
	prog := c.Progress
	c.Progress = func(s fuzz.Stats) {
		r.progress(s.Cases, 0)
		if prog != nil {
			prog(s)
		}
	}
	return r.Recorder.run(ctx, c, 0, func(f spec.Finding) bool { return !f.Expected || r.shareOf(f) == nil })
}

// shareOf returns the share whose finding f is (the share of f's op), or
// nil.
func (r *Run) shareOf(f spec.Finding) *fuzz.Source {
	for _, s := range r.Shares {
		if f.Case.Op == s.Op {
			return s
		}
	}
	return nil
}

// split takes share s's part out of the run's result res: its jobs'
// statistics (which res keeps), their cases and every finding of its op,
// of which res keeps the unexpected ones; its verdict (Share) names the
// controls it missed in the order of its jobs.
func split(res *spec.Result, s *fuzz.Source) Shared {
	part := &spec.Result{Version: res.Version, Started: res.Started, Seed: res.Seed, Env: res.Env,
		Duration: res.Duration, Interrupted: res.Interrupted}
	var names []string
	for _, j := range s.Jobs {
		if !slices.Contains(names, j.Name) {
			names = append(names, j.Name)
		}
	}
	for _, ts := range res.Targets {
		if slices.Contains(names, ts.Target) {
			part.Targets = append(part.Targets, ts)
			part.Cases += ts.Cases
			if ts.Invariant {
				part.InvariantCases += ts.Cases
			}
		}
	}
	res.Findings = slices.DeleteFunc(res.Findings, func(f spec.Finding) bool {
		if f.Case.Op != s.Op {
			return false
		}
		part.Findings = append(part.Findings, f)
		return f.Expected
	})
	v := Share(part)
	v.Missed = slices.DeleteFunc(jobNames(part), func(n string) bool { return !slices.Contains(v.Missed, n) })
	return Shared{Name: s.Name, Result: part, Verdict: v}
}

// progress reports cases and at least findings to Progress.
func (r *Run) progress(cases int64, findings int) {
	if r.Progress != nil {
		r.Progress(cases, max(findings, r.Recorder.Findings()))
	}
}

// jobNames are the names of res's per-target statistics, in order.
func jobNames(res *spec.Result) []string {
	var out []string
	for _, t := range res.Targets {
		out = append(out, t.Target)
	}
	return out
}

// onHead is the routes' result res on the recorder's head (its start,
// environment and arguments): res's cases, statistics, findings,
// duration and interruption.
func (r *Run) onHead(res *spec.Result) *spec.Result {
	h := r.Recorder.opts.Head
	h.Cases, h.Targets, h.Findings = res.Cases, res.Targets, res.Findings
	h.Duration, h.Interrupted = res.Duration, res.Interrupted
	return &h
}

// Judge is the verdict of the run's result res: a route's (Route, with
// opts.Known), or Of with opts, failed by a share that failed when the
// campaign itself passed (WithShare; Err then says what the share missed).
func (r *Run) Judge(res *spec.Result, opts Options) *Verdict {
	if r.Routes {
		return Route(res, opts.Known)
	}
	v := Of(res, opts)
	for i := range r.Shared {
		if st := WithShare(v, r.Shared[i].Verdict); st != v.Status {
			v.Status, v.share = st, &r.Shared[i]
		}
	}
	return v
}

// err says why share s failed a campaign that passed: its unexpected
// findings and the controls it missed, in the order of its jobs.
func (s *Shared) err() error {
	var msgs []string
	if n := len(s.Verdict.Unexpected); n > 0 {
		msgs = append(msgs, fmt.Sprintf("%d unexpected %s finding(s)", n, s.Name))
	}
	if m := s.Verdict.Missed; len(m) > 0 {
		msgs = append(msgs, s.Name+" control(s) not found: "+strings.Join(m, ", "))
	}
	return fmt.Errorf("%s: %w", s.Name, errors.New(strings.Join(msgs, "; ")))
}
