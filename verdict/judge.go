package verdict

import (
	"fmt"
	"slices"

	"github.com/bitparity/bitparity/spec"
)

// The command's callers judge through these, so that one result gets one
// status whichever way it is read: bitparity run and slurm merge through
// Of, a model route through Route, the end-to-end transformer's share
// through Share, report --fail-on through FailOn.Status, and run's stalls
// are measured by Stalls.

// Route judges a model route's campaign (bitparity run --exec on a route
// whose op is transformer): Of with ExpectControls and the --known
// baseline. A route has no negative controls of its own, so its status is
// Fail (a finding --known does not list), Interrupted, or Pass.
func Route(res *spec.Result, known *Known) *Verdict {
	return Of(res, Options{ExpectControls: true, Known: known})
}

// Share judges the end-to-end transformer's share of a full campaign (a
// fuzz.Source's jobs run as one campaign): Of with ExpectControls, where
// every job that is not invariant is a control that must be found in its
// cases (a job's finding is Expected when it is the one it plants), so a
// control with no expected finding in a share that ended is Missed.
func Share(res *spec.Result) *Verdict {
	return Of(res, Options{ExpectControls: true, JobControls: true})
}

// FailOn is report --fail-on: what of tonight's report fails the exit.
type FailOn string

// The --fail-on values.
const (
	// FailNone: the report never fails the exit.
	FailNone FailOn = "none"
	// FailNew: a new unexpected finding fails; an interrupted campaign
	// tonight is Interrupted.
	FailNew FailOn = "new"
	// FailAny: any unexpected finding, new or still failing, fails; an
	// interrupted campaign tonight is Interrupted.
	FailAny FailOn = "any"
)

// ParseFailOn reads --fail-on: none, new or any.
func ParseFailOn(s string) (FailOn, error) {
	switch m := FailOn(s); m {
	case FailNone, FailNew, FailAny:
		return m, nil
	}
	return "", fmt.Errorf("--fail-on %q: want none, new or any", s)
}

// Status judges tonight's report: unexpected counts tonight's findings
// that are not on negative controls (reports.Summary.Unexpected),
// newUnexpected those of them no earlier night had, and interrupted says a
// signal stopped tonight's campaign. In Of's order: Fail when FailNew and
// newUnexpected > 0, or FailAny and unexpected > 0; else Interrupted when
// the mode is not FailNone and the campaign was interrupted; else Pass. A
// scan report passes unexpected = newUnexpected = the scans that drifted
// or faulted.
func (m FailOn) Status(unexpected, newUnexpected int, interrupted bool) Status {
	switch {
	case m == FailNew && newUnexpected > 0, m == FailAny && unexpected > 0:
		return Fail
	case m != FailNone && interrupted:
		return Interrupted
	}
	return Pass
}

// Stalls says why a run is Stalled (Options.Stalls), or nil: a target that
// stopped answering (res.Stalls), or one that ran fewer than minCases
// cases. With minCases 0 only the process targets (--kernel, --exec; names
// in procs) have a minimum, of one case; other targets have none. A
// process target with no TargetStats ran no case.
func Stalls(res *spec.Result, minCases int64, procs []string) []string {
	out := slices.Clone(res.Stalls)
	for _, ts := range res.Targets {
		least := minCases
		if least == 0 && slices.Contains(procs, ts.Target) {
			least = 1
		}
		if ts.Cases < least {
			out = append(out, fmt.Sprintf("%s: %d case(s) run, fewer than the minimum of %d", ts.Target, ts.Cases, least))
		}
	}
	for _, name := range procs {
		if !slices.ContainsFunc(res.Targets, func(ts spec.TargetStats) bool { return ts.Target == name }) {
			out = append(out, fmt.Sprintf("%s: no case run", name))
		}
	}
	return out
}

// WithShare is the status of a full campaign judged v whose end-to-end
// transformer share was judged apart (Share; nil: no share ran): v's,
// except that a campaign that passed takes its share's failure (an
// unexpected finding, Fail, or a missed control, ControlsMissing). A
// campaign that did not pass keeps its own status: an interrupted one
// never reached all of the share's controls, and the share's unexpected
// findings are among its own.
func WithShare(v, share *Verdict) Status {
	if v.Status != Pass || share == nil {
		return v.Status
	}
	if share.Status == Fail || share.Status == ControlsMissing {
		return share.Status
	}
	return Pass
}
