package verdict

import (
	"context"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Case checks the one case c (fuzz.Check, with sources among its targets)
// and returns its result: started now, c's seed, one case, the counts of
// each of c's registered targets, and the finding when there is one; env
// and args are the result's. An error is fuzz.Check's (relate.IsTargetFailure
// tells a target's failure from a bad case).
func Case(ctx context.Context, c spec.Case, env spec.Env, args []string, sources ...target.Target) (*spec.Result, error) {
	start := time.Now()
	f, err := fuzz.Check(ctx, c, sources...)
	if err != nil {
		return nil, err
	}
	res := &spec.Result{Version: spec.ResultVersion, Started: start.UTC(), Duration: spec.Duration(time.Since(start)),
		Seed: c.Seed, Cases: 1, Env: env, Args: args}
	for _, name := range c.Targets {
		if t, err := target.Lookup(name); err == nil {
			res.Targets = append(res.Targets, spec.TargetStats{Target: name, Cases: 1, Invariant: t.Info().Invariant,
				Op: t.Info().Op, Relations: []string{c.Relation}})
		}
	}
	if f != nil {
		res.Findings = []spec.Finding{*f}
	}
	return res, nil
}
