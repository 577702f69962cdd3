package corpus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Verdict of one replay.
type Verdict int

const (
	// Reproduced: a finding file showed its finding again (same kind and
	// base signature), or a pass file found something (a regression).
	Reproduced Verdict = iota
	// NotReproduced: a finding file ran clean here.
	NotReproduced
	// Passed: a pass file still passes.
	Passed
	// Changed: a finding file showed a finding of another kind or
	// signature (another bug, or the same one described differently).
	Changed
	// Flaky: a crash finding did not show on the first replay; of the
	// FlakyReplays replays, Outcome.Crashes showed it. A crash that
	// depends on something besides the case (an adapter's state, its
	// request count, timing) is never taken as fixed.
	Flaky
)

// FlakyReplays is how many times Replay runs the case of a recorded crash
// that the first replay did not show.
const FlakyReplays = 5

func (v Verdict) String() string {
	switch v {
	case Reproduced:
		return "reproduced"
	case NotReproduced:
		return "not reproduced"
	case Passed:
		return "passed"
	case Changed:
		return "changed"
	case Flaky:
		return "flaky"
	}
	return fmt.Sprintf("verdict(%d)", int(v))
}

// Outcome is what one replay saw.
type Outcome struct {
	Verdict Verdict
	// Finding is what this replay found (nil when the case ran clean).
	Finding *spec.Finding
	// SameSpot is true when the replayed finding has the recorded first
	// row, column and both values bit for bit (CPU targets always should).
	SameSpot bool
	// Elapsed is the time the replay took.
	Elapsed time.Duration
	// Replays is how many times the case ran (1, or FlakyReplays for a
	// recorded crash the first run did not show); for a Flaky verdict,
	// Crashes is how many of those runs showed the recorded crash.
	Replays, Crashes int
}

// BaseSignature is spec.Signature of fd without its drift map: the part of
// a signature one fuzz.Check can reproduce (a drift map needs a sweep).
func BaseSignature(fd spec.Finding) string {
	fd.DriftMap = nil
	return spec.Signature(fd)
}

// Replay runs the case of f once through fuzz.Check on the targets the
// case names (those this build has registered) and judges the result
// against what f recorded:
//
//	f records a finding: a finding of the same kind and BaseSignature is
//	    Reproduced, another finding is Changed, none is NotReproduced;
//	f records a crash the first run does not show: the case runs
//	    FlakyReplays times in all, and the verdict is Flaky, with the
//	    number of runs that crashed as recorded (Crashes), never
//	    NotReproduced;
//	f records none: a finding is Reproduced (a regression), none Passed.
//
// sources are the composite ops' sources (fuzz.Source) the caller knows: a
// case of a composite op needs its own.
//
// An error means the case could not be run here (a target this build does
// not have, a case over the memory budget, a target failure): it is never
// a verdict.
func Replay(ctx context.Context, f *File, sources ...target.Target) (*Outcome, error) {
	start := time.Now()
	got, err := fuzz.Check(ctx, f.Case, sources...)
	if err != nil {
		return nil, err
	}
	o := &Outcome{Finding: got, Elapsed: time.Since(start), Replays: 1}
	if got == nil && f.Finding != nil && f.Finding.Kind == spec.KindCrash {
		for o.Replays < FlakyReplays {
			g, err := fuzz.Check(ctx, f.Case)
			if err != nil {
				return nil, err
			}
			o.Replays++
			if g != nil && g.Kind == spec.KindCrash && BaseSignature(*g) == BaseSignature(*f.Finding) {
				o.Crashes++
				o.Finding = g
			}
		}
		o.Verdict, o.Elapsed = Flaky, time.Since(start)
		return o, nil
	}
	switch {
	case f.Finding == nil && got == nil:
		o.Verdict = Passed
	case f.Finding == nil:
		o.Verdict = Reproduced
	case got == nil:
		o.Verdict = NotReproduced
	case got.Kind == f.Finding.Kind && BaseSignature(*got) == BaseSignature(*f.Finding):
		o.Verdict = Reproduced
	default:
		o.Verdict = Changed
	}
	if got != nil && f.Finding != nil {
		o.SameSpot = got.Row == f.Finding.Row && got.Col == f.Finding.Col &&
			got.A.Hex == f.Finding.A.Hex && got.B.Hex == f.Finding.B.Hex
	}
	return o, nil
}

// RecheckResult is one file of a recheck.
type RecheckResult struct {
	Name    string
	Outcome *Outcome // nil when Err is set
	Err     error    // the case could not be run here; its status is unchanged
	// Fixed is true when this recheck marked the file fixed; Reopened when
	// it found a file marked fixed failing again and marked it open.
	Fixed, Reopened bool
}

// Rechecks reports whether a recheck replays f: every open finding; every
// case imported from another corpus that no recheck here has replayed
// (Status.Imported), fixed and passing ones too; and, with all, every case.
func Rechecks(f *File, all bool) bool {
	return all || f.Status.Imported || (f.Finding != nil && f.Status.State == StateOpen)
}

// Recheck replays the cases of s that Rechecks selects (the nightly
// re-check) and sets each one's status from what it showed, checked now:
//
//	a finding that no longer reproduces: fixed, with env, its kernel hash
//	    and the time (a file fixed before keeps when it was first fixed);
//	anything else (reproduced, changed, flaky, a pass file's pass or
//	    regression): open, so a fixed finding that fails again is reopened;
//	the imported mark is cleared: this corpus has replayed the case.
//
// A file that cannot run here (an unknown target, a failure) keeps its
// status and is reported with its error; so is a file that does not
// decode. sources are passed to Replay.
func Recheck(ctx context.Context, s Store, env spec.Env, all bool, sources ...target.Target) ([]RecheckResult, error) {
	names, err := s.List()
	if err != nil {
		return nil, err
	}
	var out []RecheckResult
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		f, err := s.Get(name)
		if err != nil {
			out = append(out, RecheckResult{Name: name, Err: err})
			continue
		}
		if !Rechecks(f, all) {
			continue
		}
		o, err := Replay(ctx, f, sources...)
		r := RecheckResult{Name: name, Outcome: o, Err: err}
		if err == nil {
			fixed := f.Finding != nil && o.Verdict == NotReproduced
			wasFixed := f.Status.State == StateFixed && !f.Status.Imported
			now := time.Now().UTC().Truncate(time.Second)
			e := env
			uerr := s.Update(name, func(g *File) error {
				g.Status.Checked, g.Status.Imported = now, false
				switch {
				case fixed && wasFixed:
					// fixed before, still fixed: when it was first fixed stands
				case fixed:
					g.Status.State, g.Status.FixedAt = StateFixed, now
					g.Status.FixedEnv, g.Status.FixedKernelHash = &e, e.KernelHash
				default:
					g.Status.State, g.Status.FixedAt = StateOpen, time.Time{}
					g.Status.FixedEnv, g.Status.FixedKernelHash = nil, ""
				}
				return nil
			})
			if uerr != nil {
				r.Err = fmt.Errorf("update status: %w", uerr)
			} else {
				r.Fixed = fixed && !wasFixed
				r.Reopened = !fixed && wasFixed
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// EnvDiff lists, one line each, how the environment here differs from the
// recorded one: "gpu: recorded NVIDIA H200, here none". Empty when they
// agree on every field both know.
func EnvDiff(recorded, here spec.Env) []string {
	var d []string
	for _, f := range []struct{ name, a, b string }{
		{"bitparity", recorded.Bitparity, here.Bitparity},
		{"go", recorded.GoVersion, here.GoVersion},
		{"os", recorded.OS, here.OS},
		{"arch", recorded.Arch, here.Arch},
		{"cpu", recorded.CPU, here.CPU},
		{"gpu", recorded.GPU, here.GPU},
		{"compute capability", recorded.CC, here.CC},
		{"driver", recorded.Driver, here.Driver},
		{"cuda", recorded.CUDA, here.CUDA},
		{"kernel hash", recorded.KernelHash, here.KernelHash},
	} {
		if f.a != f.b {
			d = append(d, fmt.Sprintf("%s: recorded %s, here %s", f.name, orNone(f.a), orNone(f.b)))
		}
	}
	return d
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// ErrNoFinding is returned by Minimize for a file that records no finding.
var ErrNoFinding = errors.New("the case file records no finding: nothing to minimize")

// ErrModelCase is returned by Minimize for a model-route case: the model
// campaign that found it shrank it on its adapter (fewer and shorter
// requests, fewer layers, a narrower model) while it kept its first
// divergent site; fuzz/shrink knows the single ops only.
var ErrModelCase = errors.New("a model-route case is shrunk by the model campaign that found it (bitparity run --exec), not by corpus minimize")
