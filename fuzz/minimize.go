package fuzz

import (
	"context"
	"fmt"
	"time"

	"github.com/bitparity/bitparity/fuzz/mapper"
	"github.com/bitparity/bitparity/fuzz/shrink"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// shrinkTries bounds the Checks one shrink may run by default, mapBudget the
// time of one drift map, and lateShrinkBudget the shrinking of a finding
// still queued when a campaign's duration is over.
const (
	shrinkTries      = 400
	mapBudget        = 30 * time.Second
	lateShrinkBudget = 3 * time.Second
)

// MinimizeOptions configures Minimize. The zero value is valid: 400
// tries, a drift map within 30 s, and "the same bug" meaning a finding
// of the same kind.
type MinimizeOptions struct {
	// Shrink bounds the shrinking; MaxTries 0 means 400.
	Shrink shrink.Options
	// MapBudget bounds the drift map; 0 means 30 s. KeepMap keeps f's
	// recorded drift map instead of sweeping again (its signature stays).
	MapBudget time.Duration
	KeepMap   bool
	// Same says whether finding g, seen on a candidate case, is the bug f
	// is; nil means g has f's kind and site (spec.SameSite).
	Same func(f, g *spec.Finding) bool
	// Targets, when set, are the case's targets, resolved by the caller
	// (as Check takes them); else the registered targets it names. A
	// composite op's case needs its Source here.
	Targets []target.Target
}

// Minimize shrinks and maps a finding. Campaigns (their composite sources
// included), native fuzz targets, fuzztest and the corpus call it; a
// scan's exact maps (package scan) map without shrinking, and explain maps
// a finding without a map with mapper.Map:
//
//  1. shrink f's case to the smallest case on which Check still finds the
//     same bug (opts.Same): with fuzz/shrink, or, for a composite op's
//     case, with its Source's Shrink steps (shrinkSteps);
//  2. Check that case again and take its finding, with Original set to
//     the case shrinking started from (f.Original when f was itself
//     minimized), ShrinkSteps added to f's, and f's Elapsed and
//     CasesBefore;
//  3. map each dimension the relation varies (mapper.Map: ranges, two runs a
//     value, bisected gaps; a crash maps the values that crash; a source's
//     Map, or the map its Check made) unless opts.KeepMap, and compute the
//     signature.
//
// When shrinking stops early (ctx done, tries spent) the smallest failing
// case so far is used and Message says so; a map that cannot be made is
// said in Message too. It returns an error only when no failing case could
// be checked again; f itself is never changed.
func Minimize(ctx context.Context, f *spec.Finding, opts MinimizeOptions) (*spec.Finding, shrink.Stats, error) {
	same := opts.Same
	if same == nil {
		same = func(f, g *spec.Finding) bool { return g.Kind == f.Kind && spec.SameSite(f.Site, g.Site) }
	}
	src := sourceFor(f.Case.Op, opts.Targets)
	if opts.Shrink.MaxTries == 0 {
		opts.Shrink.MaxTries = shrinkTries
	}
	fails := func(c spec.Case) (bool, error) {
		g, err := Check(ctx, c, opts.Targets...)
		if err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			return false, err // counted as passing by shrink (Stats.Errors)
		}
		return g != nil && same(f, g), nil
	}
	var minCase spec.Case
	var st shrink.Stats
	var shrinkErr error
	if src != nil {
		minCase, st, shrinkErr = shrinkSteps(ctx, f.Case, src.Shrink, fails, opts.Shrink.MaxTries)
	} else {
		minCase, st, shrinkErr = opts.Shrink.Shrink(ctx, f.Case, fails)
	}
	if minCase.Op == "" {
		minCase = f.Case
	}
	g, err := Check(context.WithoutCancel(ctx), minCase, opts.Targets...)
	switch {
	case err != nil:
		return nil, st, fmt.Errorf("minimize: the minimal case: %w", err)
	case g == nil || !same(f, g):
		return nil, st, fmt.Errorf("minimize: the minimal case no longer shows the finding (a flaky target?)")
	}
	g.Elapsed, g.CasesBefore = f.Elapsed, f.CasesBefore
	g.ShrinkSteps = f.ShrinkSteps + st.Steps
	g.Original = f.Original
	if g.Original == nil && spec.ReproLine(minCase) != spec.ReproLine(f.Case) {
		o := f.Case
		g.Original = &o
	}
	if shrinkErr != nil {
		g.Message += fmt.Sprintf(" (shrinking stopped early: %v)", shrinkErr)
	}
	if opts.KeepMap {
		g.DriftMap = f.DriftMap
	} else {
		budget := opts.MapBudget
		if budget == 0 {
			budget = mapBudget
		}
		mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), budget)
		defer cancel()
		switch {
		case src == nil:
			dm, err := mapper.Map(mctx, g, opts.Targets...)
			if err != nil {
				g.Message += fmt.Sprintf(" (no drift map: %v)", err)
			}
			g.DriftMap = dm
		case src.Map != nil:
			if err := src.Map(mctx, g); err != nil {
				g.Message += fmt.Sprintf(" (no drift map: %v)", err)
			}
		}
	}
	g.Signature = spec.Signature(*g)
	return g, st, nil
}

// shrinkSteps shrinks c with a source's steps, in rounds:
//
//	for each group g of steps(c), recomputed from the current c:
//		take the first candidate of g that fails as c
//
// until a round changes nothing, maxTries calls of fails are spent or ctx
// ends (then the error says so). c itself must fail (else
// shrink.ErrNotFailing); a candidate fails answers with an error counts as
// passing.
func shrinkSteps(ctx context.Context, c spec.Case, steps func(spec.Case) [][]spec.Case,
	fails func(spec.Case) (bool, error), maxTries int) (_ spec.Case, st shrink.Stats, _ error) {
	start := time.Now()
	defer func() { st.Elapsed = time.Since(start) }()
	try := func(k spec.Case) (bool, error) {
		st.Tried++
		ok, err := fails(k)
		if err != nil && ctx.Err() == nil {
			st.Errors++
			return false, nil
		}
		return ok, err
	}
	if ok, err := try(c); err != nil || !ok {
		if err == nil {
			err = shrink.ErrNotFailing
		}
		return c, st, err
	}
	if steps == nil {
		return c, st, nil
	}
	for changed := true; changed; {
		changed = false
		for g := 0; ; g++ {
			groups := steps(c) // of the current c
			if g >= len(groups) {
				break
			}
			for _, k := range groups[g] {
				if st.Tried >= maxTries {
					return c, st, fmt.Errorf("%d tries spent", maxTries)
				}
				if err := ctx.Err(); err != nil {
					return c, st, err
				}
				ok, err := try(k)
				if err != nil {
					return c, st, err
				}
				if ok {
					c, changed = k, true
					st.Steps++
					break
				}
			}
		}
	}
	return c, st, nil
}

// mapInPlace maps f with source s's Map within mapBudget, f's case as
// found; a map that cannot be made is said in Message.
func mapInPlace(ctx context.Context, f *spec.Finding, s *Source) {
	mctx, cancel := context.WithTimeout(ctx, mapBudget)
	defer cancel()
	if err := s.Map(mctx, f); err != nil {
		f.Message += fmt.Sprintf(" (no drift map: %v)", err)
	}
	f.Signature = spec.Signature(*f)
}

// minimizeInPlace replaces f by its minimal finding (Minimize with opts);
// when none can be made, f stays as found and its Message says why.
func minimizeInPlace(ctx context.Context, f *spec.Finding, opts MinimizeOptions) {
	g, _, err := Minimize(ctx, f, opts)
	if err != nil {
		f.Message += fmt.Sprintf(" (not minimized: %v)", err)
		return
	}
	*f = *g
}
