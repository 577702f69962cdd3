package corpus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/fuzz/shrink"
	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Minimize shrinks the case of a finding file again with package
// fuzz/shrink (useful after the shrinker improved, or for a case found
// without shrinking). A candidate counts as failing when fuzz.Check finds
// a finding of the recorded kind and BaseSignature: the same bug, never
// another one. The result is a new file (another name) whose finding is the
// one fuzz.Check reports on the minimal case, carrying the recorded drift
// map, so its signature stays the recorded one; Original keeps the case it
// started from. f itself is not changed.
//
// A model-route case (op model) is refused with ErrModelCase: the model
// campaign that found it shrank it on its adapter already. sources are
// what fuzz.Check takes beside a case: a case of an op package's op
// shrinks through its checker among them (scan.OpCheckers), with the op's
// own steps (smaller batches); a case of spec's ops on the registered
// targets it names.
func Minimize(ctx context.Context, f *File, opts shrink.Options, sources ...target.Target) (*File, shrink.Stats, error) {
	if f.Finding == nil {
		return nil, shrink.Stats{}, ErrNoFinding
	}
	if f.Case.Op == external.ModelOp {
		return nil, shrink.Stats{}, ErrModelCase
	}
	want := BaseSignature(*f.Finding)
	got, st, err := fuzz.Minimize(ctx, f.Finding, fuzz.MinimizeOptions{Shrink: opts, KeepMap: true, Targets: sources,
		Same: func(f, g *spec.Finding) bool { return g.Kind == f.Kind && BaseSignature(*g) == want }})
	if err != nil {
		return nil, st, err
	}
	if got.Original == nil {
		orig := f.Case
		got.Original = &orig
	}
	g := NewFile(got.Case, got, f.Env, f.Source)
	g.Created, g.Note = f.Created, f.Note
	return g, st, nil
}

// MinimizeAll minimizes the case of each entry (Minimize, with sources)
// and stores the
// result in s; unless keep, it then deletes the entry's own file from s
// when the minimal case has another name (a file s cannot delete is kept,
// with a line on warn). It writes one line per entry on out: both names,
// both cases, the steps, tries and time it took. It stops at the first
// entry that cannot be minimized or stored, with an error naming it
// (wrapping ErrNoFinding or ErrModelCase for a file that Minimize refuses).
func MinimizeAll(ctx context.Context, s Store, entries []Entry, opts shrink.Options, keep bool, out, warn io.Writer, sources ...target.Target) error {
	for _, e := range entries {
		g, stats, err := Minimize(ctx, e.File, opts, sources...)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name, err)
		}
		name, _, err := s.Put(g)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s -> %s: %s -> %s (%d steps, %d tries, %s)\n", e.Name, name,
			words.Case(e.File.Case), words.Case(g.Case), stats.Steps, stats.Tried, stats.Elapsed.Round(time.Millisecond))
		if keep || name == e.Name {
			continue
		}
		if err := s.Delete(e.Name); err != nil && !errors.Is(err, ErrNotFound) {
			fmt.Fprintf(warn, "warning: kept %s: %v\n", e.Name, err)
		}
	}
	return nil
}
