package verdict

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/spec"
)

// Run is one bitparity run: one result, recorded by one Recorder and
// judged once (Judge), from the single-op campaign and the composite
// sources' campaigns, each of which runs for its Duration, its time share
// of the run:
//
//   - Shares run first (the end-to-end transformer's share of a full
//     campaign, transformer.ShareCampaign); Main then gets what they left
//     of its Duration (at least 1 s). A share's jobs are controls judged
//     apart (Share); its unexpected findings are recorded as they come and
//     folded, with its jobs and cases, into the result.
//   - Main is the single-op campaign, run in this process or, with
//     Elsewhere, in worker processes (Launch).
//   - Routes, instead of Main, are model routes' campaigns
//     (external.RouteCampaign), run in turn; the result is judged as a
//     route (Route).
type Run struct {
	Recorder  *Recorder
	Shares    []*fuzz.Campaign
	Main      *fuzz.Campaign
	Elsewhere func(ctx context.Context) (*spec.Result, error)
	Routes    []*fuzz.Campaign
	// Progress, when set, gets the run's cases and findings so far.
	Progress func(cases int64, findings int)

	// Shared are the shares' results and verdicts, set by Start.
	Shared []Shared
}

// Shared is one share's part of a run: its result and its verdict
// (Share); the run's result holds its jobs, cases and unexpected findings.
type Shared struct {
	Name    string
	Result  *spec.Result
	Verdict *Verdict
}

// Start runs the run's campaigns and returns the result (marked
// Interrupted when ctx ended), with the error of a campaign that failed;
// a nil result is a run that could not start or failed before its result
// (fuzz.ErrNoPairs among the reasons).
func (r *Run) Start(ctx context.Context) (*spec.Result, error) {
	if len(r.Routes) > 0 {
		return r.routes(ctx)
	}
	var before int64 // the cases of the shares, run before Main
	for _, c := range r.Shares {
		s, took, err := r.share(ctx, c)
		if err != nil {
			return nil, err
		}
		if s != nil {
			r.Shared = append(r.Shared, *s)
			r.Main.Duration -= took
			before += s.Result.Cases
			r.progress(before, 0)
		}
	}
	r.Main.Duration = max(r.Main.Duration, time.Second)
	var res *spec.Result
	var err error
	if r.Elsewhere != nil {
		res, err = r.Elsewhere(ctx)
	} else {
		prog := r.Main.Progress
		r.Main.Progress = func(s fuzz.Stats) {
			r.progress(before+s.Cases, 0)
			if prog != nil {
				prog(s)
			}
		}
		res, err = r.Recorder.Run(ctx, r.Main, 0)
	}
	if res == nil {
		return nil, err
	}
	r.progress(before+res.Cases, len(res.Findings))
	for _, s := range r.Shared {
		res.Targets = append(res.Targets, s.Result.Targets...)
		res.Cases += s.Result.Cases
		res.InvariantCases += s.Result.InvariantCases
		res.Findings = append(res.Findings, s.Verdict.Unexpected...)
	}
	res.Interrupted = res.Interrupted || ctx.Err() != nil
	return res, err
}

// progress reports cases and at least findings to Progress.
func (r *Run) progress(cases int64, findings int) {
	if r.Progress != nil {
		r.Progress(cases, max(findings, r.Recorder.Findings()))
	}
}

// share runs one share's campaign c, recording its unexpected findings
// as they come, and returns its part (nil when ctx ended before it had a
// result) and the time it took; an error is a failure to run it.
func (r *Run) share(ctx context.Context, c *fuzz.Campaign) (*Shared, time.Duration, error) {
	start := time.Now()
	unexpected := func(keep func(spec.Finding)) func(spec.Finding) {
		return func(f spec.Finding) {
			if !f.Expected {
				keep(f)
			}
		}
	}
	c.OnFound, c.OnFinding = unexpected(r.Recorder.Found), unexpected(r.Recorder.Shrunk)
	c.Progress = func(s fuzz.Stats) { r.progress(s.Cases, 0) }
	name := strings.Join(c.Targets, ",")
	res, err := c.Run(ctx)
	if err != nil && ctx.Err() == nil {
		return nil, 0, fmt.Errorf("%s: %w", name, err)
	}
	if res == nil {
		return nil, 0, nil
	}
	v := Share(res)
	v.Missed = slices.DeleteFunc(jobNames(res), func(n string) bool { return !slices.Contains(v.Missed, n) })
	return &Shared{Name: name, Result: res, Verdict: v}, time.Since(start), nil
}

// jobNames are the names of res's per-target statistics, in order.
func jobNames(res *spec.Result) []string {
	var out []string
	for _, t := range res.Targets {
		out = append(out, t.Target)
	}
	return out
}

// routes runs the route campaigns in turn into one result.
func (r *Run) routes(ctx context.Context) (*spec.Result, error) {
	start := time.Now()
	res := r.Recorder.opts.Head
	for _, c := range r.Routes {
		got, err := r.Recorder.Run(ctx, c, 0)
		if got != nil {
			res.Cases += got.Cases
			res.Targets = append(res.Targets, got.Targets...)
			res.Findings = append(res.Findings, got.Findings...)
		}
		if err != nil {
			return &res, fmt.Errorf("model route %s: %w", strings.Join(c.Targets, ","), err)
		}
	}
	res.Duration = spec.Duration(time.Since(start))
	res.Interrupted = ctx.Err() != nil
	return &res, nil
}

// Judge is the verdict of the run's result res: a route's (Route, with
// opts.Known), or Of with opts, failed by a share that failed when the
// campaign itself passed (WithShare; Err then says what the share missed).
func (r *Run) Judge(res *spec.Result, opts Options) *Verdict {
	if len(r.Routes) > 0 {
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
