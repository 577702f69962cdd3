package verdict

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/bitparity/bitparity/reports/words"
	"github.com/bitparity/bitparity/spec"
)

// Text prints the judged result res as bitparity run does: every finding
// with its verdict note (words.Numbered), then the summary: the controls,
// the invariant targets, each target's counts and the status (STALLED,
// INTERRUPTED) when the run did not pass.
func (v *Verdict) Text(w io.Writer, res *spec.Result) {
	d := time.Duration(res.Duration)
	fmt.Fprintf(w, "\n%d cases in %s (%.0f cases/s), %d finding(s)\n\n", res.Cases,
		d.Round(time.Millisecond), float64(res.Cases)/max(1e-9, d.Seconds()), len(res.Findings))
	for i, f := range res.Findings {
		words.Numbered(w, i+1, f, v.Notes[i])
	}
	fmt.Fprintln(w, "summary")
	if len(v.Controls) > 0 {
		fmt.Fprintln(w, "  negative controls (drift models, must be found):")
	}
	for _, name := range v.Controls {
		fmt.Fprintf(w, "    %-30s %s\n", name, v.control(res, name))
	}
	fmt.Fprintf(w, "  invariant targets: %d cases (on pairs of invariant targets only), %d finding(s)\n", res.InvariantCases, v.InvariantFindings)
	fmt.Fprintln(w, "  per target (cases, findings, relations):")
	for _, ts := range res.Targets {
		fmt.Fprintf(w, "    %-30s %7d %3d  %s\n", ts.Target, ts.Cases, ts.Findings, strings.Join(ts.Relations, ", "))
	}
	if len(v.Known) > 0 {
		fmt.Fprintf(w, "  known findings (--known, not failing the run): %d\n", len(v.Known))
	}
	if len(v.Unexpected) > 0 {
		fmt.Fprintf(w, "  UNEXPECTED findings: %d\n", len(v.Unexpected))
	}
	for _, st := range v.Stalls {
		fmt.Fprintf(w, "STALLED: %s\n", st)
	}
	if res.Interrupted {
		fmt.Fprintf(w, "INTERRUPTED after %s: the verdict covers the %d cases run; not a pass\n", d.Round(time.Millisecond), res.Cases)
	}
}

// control says what became of the negative control name: not reached,
// out of time, NOT FOUND, or the relation that found it, when, and its
// drift in words.
func (v *Verdict) control(res *spec.Result, name string) string {
	fs := v.Expected[name]
	switch {
	case len(fs) == 0 && res.Interrupted:
		return "not reached (interrupted)"
	case len(fs) == 0 && slices.Contains(v.OutOfTime, name):
		return "ran out of time (STALLED below)"
	case len(fs) == 0:
		return "NOT FOUND"
	}
	f := fs[0]
	what := string(f.Kind)
	if f.DriftMap != nil {
		what = words.Drift(f.DriftMap)
	}
	return fmt.Sprintf("found by %s in %s (minimal after %s): %s", f.Relation,
		time.Duration(f.Elapsed).Round(time.Millisecond), time.Duration(f.Elapsed+f.ToMinimal).Round(time.Millisecond), what)
}

// Text prints the end-to-end transformer's share of a full campaign for
// people: the counts, each control's finding, each unexpected finding
// with its repro line, and the controls it missed.
func (s Shared) Text(w io.Writer) {
	r, el := s.Result, time.Duration(s.Result.Duration)
	fmt.Fprintf(w, "transformer: %d cases in %s (%.0f cases/s), %d invariant (train vs inference path, fixed kernels)\n",
		r.Cases, el.Round(time.Millisecond), float64(r.Cases)/max(1e-9, el.Seconds()), r.InvariantCases)
	for _, f := range r.Findings {
		if !f.Expected {
			continue
		}
		fmt.Fprintf(w, "  expected (negative control) %s %s after %d cases, %s: %s\n", f.Relation, f.TargetB,
			f.CasesBefore, time.Duration(f.Elapsed).Round(time.Millisecond), f.Message)
		if f.DriftMap != nil && f.DriftMap.Rule != "" {
			fmt.Fprintf(w, "    drift map (%s): %s\n", f.DriftMap.Dim, f.DriftMap.Rule)
		}
	}
	for _, f := range s.Verdict.Unexpected {
		fmt.Fprintf(w, "  UNEXPECTED %s %s: %s\n    repro: %s\n", f.Relation, f.Kind, f.Message, f.Repro)
	}
	for _, name := range s.Verdict.Missed {
		fmt.Fprintf(w, "  MISSED control %s\n", name)
	}
}

// RoutesText prints the judged result res of model routes as bitparity
// run --exec ROUTE does: every finding with its note, then the summary:
// each route's counts and the known findings.
func (v *Verdict) RoutesText(w io.Writer, res *spec.Result) {
	for i, f := range res.Findings {
		words.Numbered(w, i+1, f, v.Notes[i])
	}
	fmt.Fprintln(w, "summary")
	for _, t := range res.Targets {
		fmt.Fprintf(w, "  %-40s %6d cases %3d finding(s)  %v\n", t.Target, t.Cases, t.Findings, t.Relations)
	}
	if known := len(res.Findings) - len(v.Unexpected); known > 0 {
		fmt.Fprintf(w, "  known findings (--known, not failing the run): %d\n", known)
	}
}
