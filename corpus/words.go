package corpus

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/spec"
)

// Describe is a case in one line: op, relation, targets and the case in
// words (words.Case), as corpus ls, corpus show and repro print it.
func Describe(c spec.Case) string {
	return fmt.Sprintf("%s %s on %s %s", c.Op, c.Relation, strings.Join(c.Targets, ","), words.Case(c))
}

// Line is the entry as `bitparity corpus ls` lists it: name, state, the
// finding's kind and signature (or pass), and Describe of the case.
func (e Entry) Line() string {
	f := e.File
	what := "pass"
	if f.Finding != nil {
		what = fmt.Sprintf("%s sig %s", f.Finding.Kind, f.Signature)
	}
	return fmt.Sprintf("%s  %-5s  %-22s  %s", e.Name, f.Status.State, what, Describe(f.Case))
}

// JSON is the entry as `bitparity corpus ls -json` prints it: one object
// with its name, status, imported mark, signature, case and note.
func (e Entry) JSON() []byte {
	f := e.File
	b, _ := json.Marshal(map[string]any{"name": e.Name, "status": f.Status.State, "imported": f.Status.Imported,
		"signature": f.Signature, "case": f.Case, "note": f.Note}) // plain values: Marshal cannot fail
	return b
}

// Words is the entry's case file in words, as `bitparity corpus show`
// prints it: the case, its note, inputs, finding, drift map and
// signature, where it was recorded and its status.
func (e Entry) Words() string {
	var b strings.Builder
	f, c := e.File, e.File.Case
	fmt.Fprintf(&b, "case %s: %s\n", e.Name, Describe(c))
	if f.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", f.Note)
	}
	if c.Data != nil {
		fmt.Fprintf(&b, "inputs: explicit data (%d tensors)\n", len(c.Data.Tensors))
	} else {
		fmt.Fprintf(&b, "inputs: seed %d, %s values, generator v%d\n", c.Seed, c.Dist, c.GenVersion)
	}
	if fd := f.Finding; fd != nil {
		fmt.Fprintf(&b, "finding: %s\n", words.Finding(*fd))
		if fd.DriftMap != nil {
			fmt.Fprintf(&b, "drift map: %s\n", words.Drift(fd.DriftMap))
		}
		fmt.Fprintf(&b, "signature: %s\n", f.Signature)
	} else {
		fmt.Fprintln(&b, "finding: none (a regression case that must keep passing)")
	}
	fmt.Fprintf(&b, "recorded in: %s\n", words.Env(f.Env))
	fmt.Fprintf(&b, "status: %s\n", f.Status.words())
	return b.String()
}

// words is the status as corpus show says it: fixed since when, with
// which kernel, in which environment; or open, imported, last rechecked.
func (s Status) words() string {
	if s.State == StateFixed {
		w := "fixed since " + s.FixedAt.Format(time.RFC3339)
		if s.FixedKernelHash != "" {
			w += ", kernel " + s.FixedKernelHash
		}
		if s.FixedEnv != nil {
			w += ", in " + words.Env(*s.FixedEnv)
		}
		return w
	}
	w := "open"
	if s.Imported {
		w += ", imported from another corpus and not yet rechecked here"
	}
	if !s.Checked.IsZero() {
		w += ", last rechecked " + s.Checked.Format(time.RFC3339)
	}
	return w
}

// Line is the rechecked file as `bitparity corpus recheck` prints it: what
// the replay showed, in one line.
func (r RecheckResult) Line() string {
	switch {
	case r.Err != nil:
		return fmt.Sprintf("could not run %s: %v", r.Name, r.Err)
	case r.Fixed:
		return "fixed         " + r.Name
	case r.Outcome.Verdict == NotReproduced:
		return "still fixed   " + r.Name
	case r.Outcome.Verdict == Passed:
		return "passes        " + r.Name
	case r.Reopened:
		return fmt.Sprintf("reopened      %s (marked fixed, fails again: %s)", r.Name, r.Outcome.Verdict)
	case r.Outcome.Verdict == Flaky:
		return fmt.Sprintf("flaky         %s (the recorded crash showed on %d of %d replays; kept open)", r.Name, r.Outcome.Crashes, r.Outcome.Replays)
	}
	return fmt.Sprintf("still failing %s (%s)", r.Name, r.Outcome.Verdict)
}

// WriteRecheck writes one Line per rechecked file and the counts on w,
// and returns the files still failing (a flaky crash stays open: never a
// pass, so it counts) and those that could not run.
func WriteRecheck(w io.Writer, res []RecheckResult) (failing, broken int) {
	var still, flaky, fixed, passed int
	for _, r := range res {
		fmt.Fprintln(w, r.Line())
		switch {
		case r.Err != nil:
			broken++
		case r.Fixed || r.Outcome.Verdict == NotReproduced:
			fixed++
		case r.Outcome.Verdict == Passed:
			passed++
		case !r.Reopened && r.Outcome.Verdict == Flaky:
			flaky++
		default:
			still++
		}
	}
	fmt.Fprintf(w, "rechecked %d case(s): %d still failing, %d flaky, %d fixed, %d passing, %d could not run\n", len(res), still, flaky, fixed, passed, broken)
	return still + flaky, broken
}

// Words is the replay's outcome o of the case file f in one word and its
// reading, as `bitparity repro` prints it; envDiffers says this machine's
// environment is not the recorded one.
func (o *Outcome) Words(f *File, envDiffers bool) string {
	ms := o.Elapsed.Round(time.Millisecond)
	switch o.Verdict {
	case Reproduced:
		if f.Finding == nil {
			return fmt.Sprintf("REGRESSION: the case should pass but shows a %s (%v)\n", o.Finding.Kind, ms)
		}
		return fmt.Sprintf("REPRODUCED: the %s shows here too, signature %s (%v)\n", o.Finding.Kind, spec.FindingID(*f.Finding), ms)
	case Changed:
		return fmt.Sprintf("REPRODUCED, CHANGED: a %s here where the %s with signature %s was recorded (another bug, or the same one described differently)\n",
			o.Finding.Kind, f.Finding.Kind, spec.FindingID(*f.Finding))
	case Flaky:
		return fmt.Sprintf("FLAKY: the recorded crash showed on %d of %d replays here (%v): it depends on more than the case (the adapter's state or request count, timing); not fixed.\n",
			o.Crashes, o.Replays, ms)
	case NotReproduced:
		w := fmt.Sprintf("COULD NOT REPRODUCE: every compared row is bitwise equal here (%v).\n", ms)
		if f.Finding != nil && f.Finding.OnTaps {
			w += "The recorded difference was in fp32 intermediates (taps), not in the output bits: a target that exposes no taps here (GPU kernels, external processes) can show it only where it flips an output bit.\n"
		}
		if envDiffers {
			return w + "The environment differences above may explain it (another adapter, GPU, driver or kernel build).\n"
		}
		return w + "The environment is as recorded: the finding may be fixed, or depend on something not fingerprinted.\n"
	}
	return fmt.Sprintf("PASSED: the case passes, as recorded (%v)\n", ms)
}

// Code is the exit code of a replay's outcome (spec's exit codes): a
// finding for a reproduced, changed or regressed case and for a flaky
// crash that showed; not reproduced for a finding that ran clean (or a
// flaky crash that showed on no replay); OK for a pass case that passes.
func (o *Outcome) Code() int {
	switch {
	case o.Verdict == Reproduced || o.Verdict == Changed || (o.Verdict == Flaky && o.Crashes > 0):
		return spec.ExitFinding
	case o.Verdict == NotReproduced || o.Verdict == Flaky:
		return spec.ExitNotReproduced
	}
	return spec.ExitOK
}

// Write writes what Unbundle did with each member of the bundle from,
// unbundled into the store into: added and reopened cases on out, refused
// members on warn, then the counts on out.
func (r *UnbundleReport) Write(out, warn io.Writer, from, into string) {
	for _, n := range r.Added {
		fmt.Fprintf(out, "added %s\n", n)
	}
	for _, n := range r.Reopened {
		fmt.Fprintf(out, "open  %s: the bundle says fixed; open here until corpus recheck shows it fixed\n", n)
	}
	for _, b := range r.Bad {
		fmt.Fprintf(warn, "refused %s\n", b.Error())
	}
	fmt.Fprintf(out, "unbundled %s into %s: %d added, %d already there, %d refused\n", from, into, len(r.Added), len(r.Existing), len(r.Bad))
}

// Write writes what Merge did into the store into: the cases added on
// out, the files it could not read on warn, then the counts on out.
func (r *MergeReport) Write(out, warn io.Writer, into string) {
	for _, err := range r.Bad {
		fmt.Fprintln(warn, "warning:", err)
	}
	for _, n := range r.Added {
		fmt.Fprintf(out, "added %s\n", n)
	}
	fmt.Fprintf(out, "merged into %s: %d added, %d already there, %d unreadable\n", into, len(r.Added), len(r.Existing), len(r.Bad))
}

// Recorded says what the case file f records, as `bitparity repro` prints
// it before replaying: the finding with its signature, or that the case
// must pass.
func (f *File) Recorded() string {
	if f.Finding == nil {
		return "recorded: no finding (a case that must pass)"
	}
	return fmt.Sprintf("recorded, signature %s: %s", spec.FindingID(*f.Finding), words.Finding(*f.Finding))
}

// EnvWords says how this machine differs from a case's recorded
// environment (diff: EnvDiff and the adapters'), or that it is as
// recorded, then each of the case's targets it lacks (missing), a line
// each.
func EnvWords(diff, missing []string) string {
	w := "environment: as recorded\n"
	if len(diff) > 0 {
		w = "environment differs from the recorded one:\n"
		for _, d := range diff {
			w += "  " + d + "\n"
		}
	}
	for _, m := range missing {
		w += "  " + m + "\n"
	}
	return w
}

// WriteList writes every readable case of s on out, a Line each (with
// asJSON, a JSON object each), warns on warn about each file that does
// not read, and returns how many did not.
func WriteList(out, warn io.Writer, s Store, asJSON bool) (unreadable int) {
	entries, errs := Load(s)
	for _, err := range errs {
		fmt.Fprintln(warn, "warning:", err)
	}
	for _, e := range entries {
		if asJSON {
			fmt.Fprintln(out, string(e.JSON()))
		} else {
			fmt.Fprintln(out, e.Line())
		}
	}
	return len(errs)
}
