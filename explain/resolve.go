package explain

import (
	"context"
	"fmt"
	"strings"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Case returns the finding to explain of case c, recorded with finding f
// (nil when none): f when it has a drift map; else what fuzz.Check of c
// with sources finds, with its drift map (Map) when the check gave none.
// A case that holds, and a finding that is not a mismatch (only a
// mismatch has a schedule to infer), are errors; so is a check that
// failed (relate.IsTargetFailure tells a target's failure from a bad case).
func Case(ctx context.Context, c spec.Case, f *spec.Finding, sources ...target.Target) (*spec.Finding, error) {
	if f == nil || f.DriftMap == nil {
		g, err := fuzz.Check(ctx, c, sources...)
		if err != nil {
			return nil, err
		}
		if g == nil {
			return nil, fmt.Errorf("explain: %s holds on %s: nothing to explain", c.Relation, strings.Join(c.Targets, ", "))
		}
		if g.DriftMap == nil {
			if g.DriftMap, err = Map(ctx, g); err != nil {
				return nil, err
			}
		}
		f = g
	}
	if f.Kind != "mismatch" {
		return nil, fmt.Errorf("explain: a %s finding has no schedule to infer (only mismatches do)", f.Kind)
	}
	return f, nil
}

// All sets the Explanation of every mismatch finding of fs (bitparity run
// --explain), computing the drift map (Map) of one that has none, and
// returns an error for each that could not be explained, naming it by its
// number (from 1).
func All(ctx context.Context, fs []spec.Finding) []error {
	var errs []error
	for i := range fs {
		f := &fs[i]
		if f.Kind != "mismatch" {
			continue
		}
		if err := explainOne(ctx, f); err != nil {
			errs = append(errs, fmt.Errorf("explain: finding %d: %w", i+1, err))
		}
	}
	return errs
}

// explainOne sets f's Explanation, and its drift map when it has none.
func explainOne(ctx context.Context, f *spec.Finding) error {
	if f.DriftMap == nil {
		dm, err := Map(ctx, f)
		if err != nil {
			return err
		}
		f.DriftMap = dm
	}
	ex, err := Finding(ctx, f, Options{})
	if err != nil {
		return err
	}
	f.Explanation = ex.Words
	return nil
}
