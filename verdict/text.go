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
