package corpus

import (
	"context"

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
//
// A model-route case (op model) is refused with ErrModelCase: the model
// campaign that found it shrank it on its adapter already.
func Minimize(ctx context.Context, f *File, opts shrink.Options) (*File, shrink.Stats, error) {
	if f.Finding == nil {
		return nil, shrink.Stats{}, ErrNoFinding
	}
	if f.Case.Op == spec.OpModel {
		return nil, shrink.Stats{}, ErrModelCase
	}
	want := BaseSignature(*f.Finding)
	got, st, err := fuzz.Minimize(ctx, f.Finding, fuzz.MinimizeOptions{Shrink: opts, KeepMap: true,
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
