package verdict

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// Status is what a campaign's result says, in one word.
type Status string

// The statuses, in the order Of decides them: the first that applies wins.
const (
	// Fail: a finding that is neither an expected negative control nor a
	// known open case (a regression of a case marked fixed included).
	Fail Status = "fail"
	// Interrupted: a signal stopped the campaign (Result.Interrupted);
	// nothing unexpected was found in the cases it ran.
	Interrupted Status = "interrupted"
	// Stalled: a target ran fewer cases than its minimum, or stopped
	// answering.
	Stalled Status = "stalled"
	// ControlsMissing: a negative control (drift model) in the run was not
	// found, with Options.ExpectControls.
	ControlsMissing Status = "controls_missing"
	// Pass: the campaign ran to its end and found only what it expected.
	Pass Status = "pass"
)

// Code is the exit code of the status (spec's exit codes).
func (s Status) Code() int {
	switch s {
	case Fail, ControlsMissing:
		return spec.ExitFinding
	case Interrupted:
		return spec.ExitInterrupted
	case Stalled:
		return spec.ExitStalled
	}
	return spec.ExitOK
}

// Options say what a verdict knows besides the result. The zero value
// judges every finding unexpected and asks nothing of the controls.
type Options struct {
	// ExpectControls takes findings on drift models (negative controls)
	// as expected and requires every control in the run to be found
	// (bitparity run --expect-controls, its default). Without it every
	// finding fails the run.
	ExpectControls bool
	// Known is the --known baseline; nil: none.
	Known *Known
	// Stalls are the targets that ran too few cases or stopped answering,
	// as the caller measured them (run's --min-cases).
	Stalls []string
	// ControlCases, when above 0, is the work each control is given, in
	// cases per relation: a control without a finding in a run that ended,
	// whose target ran fewer than ControlCases x (the relations it ran)
	// cases, ran out of time (Verdict.OutOfTime) rather than being missed,
	// and the run is Stalled: a busy machine ran too few of its cases to
	// say it cannot be found. 0: every such control is missed. A run bounded
	// by its cases (run --max-cases) gives 0: its work was the user's.
	ControlCases int64
	// JobControls takes every target that is not invariant as a control,
	// registered drift model or not: a source's jobs that must find (the
	// end-to-end transformer's; Share). Such a job is found when its own
	// stats count a finding (its findings name the targets it ran).
	JobControls bool
}

// DefaultControlCases is run's --control-cases: above the most cases any
// CPU drift model needed on its relation to be found with boundary inputs
// (docs/detection.md: 2698, drift-rmsnorm-vllm-256 at seed 1).
const DefaultControlCases = 3000

// Verdict is a campaign result judged once: every finding sorted into
// expected, known or unexpected, every control found, missed or not
// reached, and the status that decides the exit code.
type Verdict struct {
	Status Status
	// Notes has one entry per Result.Findings: "expected: negative
	// control", "known (--known CASE)", "UNEXPECTED" or "UNEXPECTED:
	// regression of CASE, marked fixed".
	Notes []string
	// Expected maps each drift model to its expected findings; Known the
	// signature of a finding matched by the baseline to its case file.
	Expected   map[string][]spec.Finding
	Known      map[string]string
	Unexpected []spec.Finding
	// Controls are the drift models in the run. Missed are those without a
	// finding in a run that ended, after the cases Options.ControlCases
	// gives them; OutOfTime those without a finding that ran fewer (each
	// also a line of Stalls); Unreached those without a finding in an
	// interrupted run, which are not failures: the run stopped first.
	Controls  []string
	Missed    []string
	OutOfTime []string
	Unreached []string
	// InvariantFindings counts the findings on invariant targets.
	InvariantFindings int
	Stalls            []string

	// share is the share of a Run that failed a campaign that passed
	// (Run.Judge): Err says what it missed.
	share *Shared
}

// Of judges res. A finding whose Expected field is set (the relation that
// made it lists it for a drift model among its targets) counts for that
// control; every other finding is known when opts.Known holds an open case
// of the same drift (Known.Match), else unexpected. The status is the
// first of these that holds: an unexpected finding (or, without
// ExpectControls, any finding) is Fail; an interrupted run Interrupted; a
// stall (a control that ran out of time among them) Stalled; a control
// with no finding after its cases in a run that ended ControlsMissing;
// else Pass. An interrupted run is never a Pass.
func Of(res *spec.Result, opts Options) *Verdict {
	v := &Verdict{Expected: map[string][]spec.Finding{}, Known: map[string]string{}, Stalls: slices.Clone(opts.Stalls),
		Notes: make([]string, len(res.Findings))}
	drift := map[string]spec.TargetStats{}
	for _, ts := range res.Targets {
		if ts.Invariant {
			v.InvariantFindings += ts.Findings
			continue
		}
		if _, err := target.Lookup(ts.Target); err == nil || opts.JobControls {
			drift[ts.Target] = ts
			v.Controls = append(v.Controls, ts.Target)
		}
	}
	for i, f := range res.Findings {
		model := ""
		if f.Expected {
			model = f.TargetA
			if _, ok := drift[f.TargetB]; ok {
				model = f.TargetB
			}
		}
		switch at, known := opts.Known.Match(f); {
		case model != "":
			v.Expected[model] = append(v.Expected[model], f)
			v.Notes[i] = "expected: negative control"
		case known:
			v.Known[f.Signature] = at
			v.Notes[i] = "known (--known " + at + ")"
		default:
			v.Unexpected = append(v.Unexpected, f)
			v.Notes[i] = "UNEXPECTED"
			if at, ok := opts.Known.Regression(f); ok {
				v.Notes[i] = "UNEXPECTED: regression of " + at + ", marked fixed"
			}
		}
	}
	for _, name := range v.Controls {
		ts := drift[name]
		// a source's job names its findings by the targets it ran, not by
		// the job: its own count says whether it found (JobControls)
		if len(v.Expected[name]) > 0 || opts.JobControls && ts.Findings > 0 {
			continue
		}
		given := opts.ControlCases * int64(max(1, len(ts.Relations))) // the cases it is owed
		switch {
		case res.Interrupted:
			v.Unreached = append(v.Unreached, name)
		case ts.Cases < given:
			v.OutOfTime = append(v.OutOfTime, name)
		default:
			v.Missed = append(v.Missed, name)
		}
	}
	sort.Strings(v.Missed)
	sort.Strings(v.OutOfTime)
	sort.Strings(v.Unreached)
	if opts.ExpectControls {
		for _, name := range v.OutOfTime {
			ts := drift[name]
			n := max(1, len(ts.Relations))
			v.Stalls = append(v.Stalls, fmt.Sprintf("%s: ran out of time: not found in %d case(s), fewer than the %d its %d relation(s) are given (%d each)",
				name, ts.Cases, opts.ControlCases*int64(n), n, opts.ControlCases))
		}
	}
	switch {
	case len(v.Unexpected) > 0 || !opts.ExpectControls && len(res.Findings) > 0:
		v.Status = Fail
	case res.Interrupted:
		v.Status = Interrupted
	case len(v.Stalls) > 0:
		v.Status = Stalled
	case opts.ExpectControls && len(v.Missed) > 0:
		v.Status = ControlsMissing
	default:
		v.Status = Pass
	}
	return v
}

// Code is the exit code of the verdict.
func (v *Verdict) Code() int { return v.Status.Code() }

// Err is nil for a pass, else the verdict in one line for the exit.
func (v *Verdict) Err(res *spec.Result) error {
	if v.share != nil {
		return v.share.err()
	}
	switch v.Status {
	case Fail:
		if len(v.Unexpected) == 0 {
			return fmt.Errorf("%d finding(s)", len(res.Findings))
		}
		return fmt.Errorf("%d unexpected finding(s)", len(v.Unexpected))
	case Interrupted:
		return fmt.Errorf("interrupted after %s: %d cases run, nothing unexpected in them; not a pass", res.Duration, res.Cases)
	case Stalled:
		return fmt.Errorf("stalled: %d target(s) ran too few cases, ran out of time or stopped answering", len(v.Stalls))
	case ControlsMissing:
		return fmt.Errorf("negative control(s) not found: %s", strings.Join(v.Missed, ", "))
	}
	return nil
}
