package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/verdict"
)

// splitModelRoutes separates the model routes (adapters whose hello op is
// "transformer") from the other external targets.
func splitModelRoutes(names []string) (models, others []string) {
	for _, n := range names {
		if external.IsModel(n) {
			models = append(models, n)
		} else {
			others = append(others, n)
		}
	}
	return models, others
}

// modelRelations reads --relations for a model route: logprob_parity,
// path_parity or both (none given: both).
func modelRelations(rels []string) ([]string, error) {
	if len(rels) == 0 {
		return []string{spec.RelLogProbParity, spec.RelPathParity}, nil
	}
	for _, r := range rels {
		if r != spec.RelLogProbParity && r != spec.RelPathParity {
			return nil, usageErr("run: --relations %s: a model route runs %s and %s", r, spec.RelLogProbParity, spec.RelPathParity)
		}
	}
	return rels, nil
}

// modelRunOpts are the flags of `bitparity run` a model campaign uses.
type modelRunOpts struct {
	duration  time.Duration
	seed      uint64
	maxCases  int64
	relations []string
	known     *verdict.Known // --known: a finding of an open case there does not fail the run
	noShrink  bool
	jsonPath  string
	corpus    string
	args      []string
}

// runModelRoutes runs a campaign of a model route's source
// (external.ModelSource) on each
// route for an equal share of the duration and records its findings as
// the single-op campaign does (verdict.Recorder): each one goes to --corpus as a
// case file with its adapter, and to --json's journal, when found, and its
// shrunk form replaces it. It prints each finding and a summary, writes
// the result, and exits 1 when something was found that --known does not
// list as an open case.
func runModelRoutes(ctx context.Context, stdout, stderr io.Writer, models []string, o modelRunOpts) error {
	fmt.Fprintf(stdout, "bitparity run: seed %d, %s, model route(s) %v: train path vs inference path, %s\n",
		o.seed, o.duration, models, strings.Join(o.relations, " and "))
	start := time.Now()
	head := spec.Result{Version: spec.ResultVersion, Started: start.UTC(), Seed: o.seed, Env: hereEnv(),
		Args: append([]string{"run"}, o.args...)}
	rec, err := openRecorder(stderr, o.corpus, o.jsonPath, head)
	if err != nil {
		return usageErr("%v", err)
	}
	res := head
	for _, m := range models {
		c, err := external.RouteCampaign(m, o.relations, o.duration/time.Duration(len(models)), o.seed)
		if err != nil {
			rec.Finish(&res)
			return usageErr("run: %v", err)
		}
		c.MaxCases, c.NoShrink, c.OnFound, c.OnFinding = o.maxCases, o.noShrink, rec.Found, rec.Shrunk
		r, err := c.Run(ctx)
		if r != nil {
			res.Cases += r.Cases
			res.Targets = append(res.Targets, r.Targets...)
			res.Findings = append(res.Findings, r.Findings...)
		}
		if err != nil {
			rec.Finish(&res)
			return withCode(spec.ExitInternal, fmt.Errorf("run: model route %s: %w", m, err))
		}
	}
	res.Duration = spec.Duration(time.Since(start))
	res.Interrupted = ctx.Err() != nil
	recordAdapters(&res, models)
	if err := rec.Finish(&res); err != nil {
		return withCode(spec.ExitInternal, fmt.Errorf("run: %w", err))
	}
	v := verdict.Route(&res, o.known)
	for i, f := range res.Findings {
		runPrintFinding(stdout, i+1, f, v.Notes[i])
	}
	fmt.Fprintln(stdout, "summary")
	for _, t := range res.Targets {
		fmt.Fprintf(stdout, "  %-40s %6d cases %3d finding(s)  %v\n", t.Target, t.Cases, t.Findings, t.Relations)
	}
	if known := len(res.Findings) - len(v.Unexpected); known > 0 {
		fmt.Fprintf(stdout, "  known findings (--known, not failing the run): %d\n", known)
	}
	if o.corpus != "" && len(res.Findings) > 0 {
		fmt.Fprintf(stdout, "case files in %s: bitparity repro --exec CMD FILE replays one\n", o.corpus)
	}
	if o.jsonPath != "" {
		fmt.Fprintf(stdout, "result written to %s\n", o.jsonPath)
	}
	switch v.Status {
	case verdict.Pass:
		return nil
	case verdict.Fail:
		return &exitError{code: v.Code(), err: fmt.Errorf("%d unexpected finding(s) on the model route", len(v.Unexpected))}
	case verdict.Interrupted:
		fmt.Fprintf(stdout, "INTERRUPTED after %s: the verdict covers the %d cases run; not a pass\n",
			time.Duration(res.Duration).Round(time.Millisecond), res.Cases)
		return &exitError{code: v.Code(), err: fmt.Errorf("interrupted after %s", res.Duration)}
	}
	return verdictExit(v, &res)
}
