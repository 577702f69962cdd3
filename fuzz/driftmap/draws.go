package driftmap

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/bitparity/bitparity/spec"
)

// SweepDraws is Options{}.SweepDraws.
func SweepDraws(ctx context.Context, dim string, values []int, classify []func(v int) (string, error)) (*spec.DriftMap, error) {
	return Options{}.SweepDraws(ctx, dim, values, classify)
}

// SweepDraws is Sweep over several input draws: classify[k] classifies a
// value on draw k, and a value's class is the tuple of its digests over
// all draws. Two values share a class only when every draw gives them the
// same bits, so a class boundary seen in any one draw splits the class
// (the partition is the common refinement of the draws' partitions): a
// map is never coarser than what any draw shows. A low-entropy draw (a
// constant row, whose sums come out exact in every order) can hide a
// schedule change; a random draw beside it shows it. When every draw
// answers with a verdict (agree, differ, crash, ...), the value's class is
// the most severe of them (a value that differs on one draw differs); a
// value that crashed, or was answered two ways, on one draw is a crash, or
// nondeterministic, whatever the other draws say. The map's Draws is
// len(classify).
//
// Each run of a value runs the first draw again (the finding's own data:
// values whose runs differ there are nondeterministic); the other draws run
// once a value and their classes are reused by its later runs (running
// them again too would show a kernel nondeterministic in a few rows more
// surely, at 70% more time a map: TestPlantedMaps took 19.6 s, not 11.7).
func (o Options) SweepDraws(ctx context.Context, dim string, values []int, classify []func(v int) (string, error)) (*spec.DriftMap, error) {
	if len(classify) == 0 {
		return nil, fmt.Errorf("drift map of %s: no draws", dim)
	}
	seen := map[int][]string{} // the classes of draws 1.. of each value
	tuple := func(v int) (string, error) {
		ds := make([]string, len(classify))
		for k, c := range classify {
			if k > 0 && seen[v] != nil {
				ds[k] = seen[v][k]
				continue
			}
			d, err := c(v)
			if err != nil {
				return "", fmt.Errorf("draw %d: %w", k, err)
			}
			ds[k] = d
		}
		seen[v] = ds
		if len(ds) == 1 {
			return ds[0], nil
		}
		if worst, ok := mostSevere(ds); ok {
			return worst, nil
		}
		for _, v := range []string{Crash, Nondeterministic} {
			if slices.Contains(ds, v) {
				return v, nil // a value that crashed or was answered two ways on one draw is that
			}
		}
		return Label(strings.Join(ds, "\x00")), nil
	}
	m, err := o.Sweep(ctx, dim, values, tuple)
	if err != nil {
		return nil, err
	}
	m.Draws = len(classify)
	return m, nil
}

// mostSevere returns the first of verdicts that one of ds is, when every
// one of ds is a verdict.
func mostSevere(ds []string) (string, bool) {
	best := len(verdicts)
	for _, d := range ds {
		i := slices.Index(verdicts, d)
		if i < 0 {
			return "", false
		}
		best = min(best, i)
	}
	return verdicts[best], true
}
