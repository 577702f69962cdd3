package corpus

import (
	"context"
	"fmt"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/shrink"
	"github.com/bitparity/bitparity/spec"
)

// Minimize shrinks the case of a finding file again with package
// fuzz/shrink (useful after the shrinker improved, or for a case found
// without shrinking). A candidate counts as failing when fuzz.Check finds
// a finding of the recorded kind and BaseSignature: the same bug, never
// another one. The result is a new file (another name) whose finding is the
// one fuzz.Check reports on the minimal case, carrying the recorded drift
// map, so its signature stays the recorded one; Original keeps the case it
// started from. f itself is not changed.
func Minimize(ctx context.Context, f *File, opts shrink.Options) (*File, shrink.Stats, error) {
	if f.Finding == nil {
		return nil, shrink.Stats{}, ErrNoFinding
	}
	want, kind := BaseSignature(*f.Finding), f.Finding.Kind
	fails := func(c spec.Case) (bool, error) {
		got, err := fuzz.Check(ctx, c)
		if err != nil || got == nil {
			return false, err
		}
		return got.Kind == kind && BaseSignature(*got) == want, nil
	}
	min, st, err := opts.Shrink(ctx, f.Case, fails)
	if err != nil {
		return nil, st, fmt.Errorf("minimize: %w", err)
	}
	got, err := fuzz.Check(ctx, min)
	if err != nil {
		return nil, st, fmt.Errorf("minimize: the minimal case: %w", err)
	}
	if got == nil {
		return nil, st, fmt.Errorf("minimize: the minimal case no longer fails (a flaky target?)")
	}
	got.DriftMap = f.Finding.DriftMap
	got.Signature = spec.Signature(*got)
	orig := f.Case
	if f.Finding.Original != nil {
		orig = *f.Finding.Original
	}
	got.Original = &orig
	got.ShrinkSteps = f.Finding.ShrinkSteps + st.Steps
	g := NewFile(min, got, f.Env, f.Source)
	g.Created, g.Note = f.Created, f.Note
	return g, st, nil
}

// MapDrift returns the drift map of fd over several input draws
// (fuzz.DriftMap): the dimension fuzz.SweepFor names, over the values the
// campaign sweeps, on the finding's own data and random normal draws. It
// returns nil, nil for relations without such a dimension (log-prob
// parity, determinism).
func MapDrift(ctx context.Context, fd *spec.Finding) (*spec.DriftMap, error) {
	return fuzz.DriftMap(ctx, fd)
}
