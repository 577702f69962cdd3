// Package shrink reduces a failing case to the smallest case that still
// fails: fewer rows, smaller dimensions, simpler values and relation
// parameters, always keeping the case valid (spec.Case.Validate). A shrink that
// holds a model profile (Options.HoldInner) changes only the batch and
// sequence dimensions, so the finding is stated at the model's shape.
package shrink

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bitparity/bitparity/fuzz/gen"
	"github.com/bitparity/bitparity/spec"
)

// DefaultMaxTries bounds the calls to fails when Options.MaxTries is zero.
const DefaultMaxTries = 2000

// ErrNotFailing is returned when the case given to Shrink does not fail.
var ErrNotFailing = errors.New("the case does not fail: nothing to shrink")

// Stats says what one Shrink did.
type Stats struct {
	// Steps counts the accepted (still failing, smaller) cases.
	Steps int
	// Tried counts the calls to fails, the first check of the input
	// included.
	Tried int
	// Elapsed is the time Shrink took.
	Elapsed time.Duration
	// Errors counts the candidates fails answered with an error; they
	// count as not failing.
	Errors int
}

// Options tune Shrink; the zero value is valid.
type Options struct {
	// MaxTries bounds the calls to fails; 0 means DefaultMaxTries.
	MaxTries int
	// HoldInner keeps the inner sizes (gen.Dim.Inner: hidden, n, vocab,
	// head_dim, group, kv_heads) as the case has them: a case drawn at a
	// model profile shrinks only along its batch and sequence dimensions
	// and relation parameters. Dtypes and Eps are never shrunk.
	HoldInner bool
}

// Shrink is Options{}.Shrink.
func Shrink(ctx context.Context, c spec.Case, fails func(spec.Case) (bool, error)) (spec.Case, Stats, error) {
	return Options{}.Shrink(ctx, c, fails)
}

// errBudget ends a shrink when MaxTries is spent.
var errBudget = errors.New("shrink: tries spent")

// Shrink returns the smallest case it finds that still fails, starting
// from c, which must fail (else ErrNotFailing). Only candidates that fails
// confirms are accepted, so the result always fails. It repeats, until a
// whole round changes nothing:
//
//	for each dimension d of gen.Dims(cur) (per-row dims, the batch dim,
//	relation parameters; with HoldInner only those not d.Inner):
//		try gen.Candidates(d, cur) ascending (d's minimum, the interesting
//		smaller values: powers of two and neighbours, multiples of 32 and
//		64 and neighbours, tile edges, 928/2274/4548, v/2, v-1); take the
//		first that fails;
//		then bisect between the largest candidate that passed and the
//		new value (so a threshold such as rows >= 256 or kv >= 49 ends at
//		its exact onset, while a periodic class such as rows % 32 == 0
//		ends at its smallest member found among the candidates, 32);
//	for each of gen.Simplifications(cur) (normal values, simpler filler,
//	no permutation, no mask, uniform KV, seed 0): take it if it fails.
//
// A candidate for which fails returns an error counts as passing (Stats.
// Errors). Shrink stops early when ctx is done or MaxTries calls were made
// and then returns the smallest failing case so far with a nil error when
// the tries ran out, or ctx's error. A case with explicit Data is returned
// unchanged: its values are bound to its shape.
func (o Options) Shrink(ctx context.Context, c spec.Case, fails func(spec.Case) (bool, error)) (spec.Case, Stats, error) {
	s := &shrinker{ctx: ctx, fails: fails, max: o.MaxTries, holdInner: o.HoldInner, start: time.Now()}
	if s.max <= 0 {
		s.max = DefaultMaxTries
	}
	done := func(c spec.Case, err error) (spec.Case, Stats, error) {
		s.stats.Elapsed = time.Since(s.start)
		if errors.Is(err, errBudget) {
			err = nil
		}
		return c, s.stats, err
	}
	ok, err := s.try(c)
	if err != nil {
		return done(c, err)
	}
	if !ok {
		return done(c, ErrNotFailing)
	}
	if c.Data != nil {
		return done(c, nil)
	}
	if err := c.Validate(); err != nil {
		return done(c, fmt.Errorf("shrink: %w", err))
	}
	s.cur = c
	for {
		changed, err := s.round()
		if err != nil || !changed {
			return done(s.cur, err)
		}
	}
}

type shrinker struct {
	ctx       context.Context
	fails     func(spec.Case) (bool, error)
	max       int
	holdInner bool
	start     time.Time
	stats     Stats
	cur       spec.Case
}

// try calls fails once, within the budget and the context.
func (s *shrinker) try(c spec.Case) (bool, error) {
	if err := s.ctx.Err(); err != nil {
		return false, err
	}
	if s.stats.Tried >= s.max {
		return false, errBudget
	}
	s.stats.Tried++
	ok, err := s.fails(c)
	if err != nil {
		if cerr := s.ctx.Err(); cerr != nil {
			return false, cerr
		}
		s.stats.Errors++
		return false, nil
	}
	return ok, nil
}

// accept makes n the current case.
func (s *shrinker) accept(n spec.Case) {
	s.cur = n
	s.stats.Steps++
}

// round runs one pass over every dimension and simplification.
func (s *shrinker) round() (bool, error) {
	changed := false
	for i := 0; ; i++ {
		dims := gen.Dims(s.cur) // recomputed: a step may change them (kv_lens)
		if i >= len(dims) {
			break
		}
		if s.holdInner && dims[i].Inner {
			continue
		}
		ch, err := s.dim(dims[i])
		changed = changed || ch
		if err != nil {
			return changed, err
		}
	}
	for again := true; again; {
		again = false
		for _, n := range gen.Simplifications(s.cur) {
			ok, err := s.try(n)
			if err != nil {
				return changed, err
			}
			if ok {
				s.accept(n)
				changed, again = true, true
				break
			}
		}
	}
	return changed, nil
}

// trySet runs the current case with dimension d set to v, and accepts it
// when it still fails. valid is false, and nothing runs, when no valid
// case has d = v.
func (s *shrinker) trySet(d gen.Dim, v int) (valid, fails bool, err error) {
	n, ok := d.Set(s.cur, v)
	if !ok || n.Validate() != nil {
		return false, false, nil
	}
	if fails, err = s.try(n); fails && err == nil {
		s.accept(n)
	}
	return true, fails, err
}

// dim shrinks one dimension: candidates ascending, then bisection above
// the largest passing candidate.
func (s *shrinker) dim(d gen.Dim) (bool, error) {
	lo := d.Min(s.cur) - 1 // the largest value known (or assumed) to pass
	hit := false
	for _, v := range gen.Candidates(d, s.cur) {
		valid, f, err := s.trySet(d, v)
		if err != nil {
			return hit, err
		}
		if !valid {
			continue
		}
		if f {
			hit = true
			break
		}
		lo = v
	}
	if !hit {
		return false, nil
	}
	for hi := d.Get(s.cur); hi-lo > 1; {
		mid := lo + (hi-lo)/2
		_, f, err := s.trySet(d, mid)
		if err != nil {
			return true, err
		}
		if f {
			hi = mid
		} else {
			lo = mid // an invalid value counts as passing
		}
	}
	return true, nil
}
