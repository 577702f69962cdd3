package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/verdict"
)

// routes is `bitparity run --exec` on model routes: one campaign
// (external.RouteCampaign) of every route's jobs, each route in an equal
// time share of --duration, in one verdict.Run that records every finding
// (--corpus with its adapter, --json's journal) and judges the result as
// a route (verdict.Route). It prints each finding and a summary.
func (r *runState) routes(ctx context.Context, models []string) error {
	c, err := external.RouteCampaign(models, runSplitList(*r.rels), *r.dur, *r.seed)
	if err != nil {
		return usageErr("run: %v", err)
	}
	c.MaxCases, c.NoShrink = *r.maxCases, *r.noShrink
	run := &verdict.Run{Campaign: c, Routes: true}
	var rels []string
	for _, j := range c.Sources[0].Jobs {
		rels = append(rels, j.Relation)
	}
	fmt.Fprintf(r.stdout, "bitparity run: seed %d, %s, model route(s) %v: train path vs inference path, %s\n",
		*r.seed, *r.dur, models, strings.Join(rels, " and "))
	rec, err := r.recorder(r.head())
	if err != nil {
		return usageErr("%v", err)
	}
	run.Recorder = rec
	res, err := run.Start(ctx)
	if err != nil {
		rec.Finish(res)
		return withCode(spec.ExitInternal, fmt.Errorf("run: %w", err))
	}
	external.RecordAdapters(res, models)
	if err := rec.Finish(res); err != nil {
		return withCode(spec.ExitInternal, fmt.Errorf("run: %w", err))
	}
	v := run.Judge(res, verdict.Options{Known: r.known})
	printRoutes(r, res, v)
	return verdictExit(v, res)
}

// printRoutes prints a model-route run's findings and summary
// (verdict.Verdict.RoutesText), where its files are, and whether a signal
// interrupted it.
func printRoutes(r *runState, res *spec.Result, v *verdict.Verdict) {
	v.RoutesText(r.stdout, res)
	if r.par.corpus != "" && len(res.Findings) > 0 {
		fmt.Fprintf(r.stdout, "case files in %s: bitparity repro --exec CMD FILE replays one\n", r.par.corpus)
	}
	if *r.jsonPath != "" {
		fmt.Fprintf(r.stdout, "result written to %s\n", *r.jsonPath)
	}
	if v.Status == verdict.Interrupted {
		fmt.Fprintf(r.stdout, "INTERRUPTED after %s: the verdict covers the %d cases run; not a pass\n",
			time.Duration(res.Duration).Round(time.Millisecond), res.Cases)
	}
}
