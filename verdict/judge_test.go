package verdict

import (
	"slices"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestCallersAgree: one result gets one status through every caller: bitparity
// run and slurm merge (Of with ExpectControls), a model route (Route), the
// transformer's share (Share) and report --fail-on any (FailOn.Status on
// the counts a report makes of the result: the findings not on negative
// controls). A report reads findings, not controls, so a missed control
// passes there; that row says so.
func TestCallersAgree(t *testing.T) {
	targets, found, bug := controlRun()
	for _, tc := range []struct {
		name        string
		findings    []spec.Finding
		interrupted bool
		want        Status
		report      Status // report --fail-on any, which sees no controls
	}{
		{"control found", []spec.Finding{found}, false, Pass, Pass},
		{"unexpected finding", []spec.Finding{found, bug}, false, Fail, Fail},
		{"interrupted after the control", []spec.Finding{found}, true, Interrupted, Interrupted},
		{"interrupted before the control", nil, true, Interrupted, Interrupted},
		{"interrupted with a bug", []spec.Finding{bug}, true, Fail, Fail},
		{"control missed", nil, false, ControlsMissing, Pass},
	} {
		res := &spec.Result{Targets: targets, Findings: tc.findings, Interrupted: tc.interrupted}
		unexpected := 0 // reports.Summary.Unexpected: the findings not on negative controls
		for _, f := range res.Findings {
			if !f.Expected {
				unexpected++
			}
		}
		got := map[string]Status{
			"run":         Of(res, Options{ExpectControls: true, Stalls: Stalls(res, 0, nil)}).Status,
			"slurm merge": Of(res, Options{ExpectControls: true}).Status,
			"model route": Route(res, nil).Status,
			"transformer": Share(res).Status,
		}
		for caller, s := range got {
			if s != tc.want {
				t.Errorf("%s through %s: %s, want %s", tc.name, caller, s, tc.want)
			}
		}
		if s := FailAny.Status(unexpected, unexpected, res.Interrupted); s != tc.report {
			t.Errorf("%s through report --fail-on any: %s, want %s", tc.name, s, tc.report)
		}
	}
}

// TestShareJobControls: in the transformer's share every job that is not
// invariant is a control, registered target or not: found by an expected
// finding, missed without one, not reached when interrupted; Of without
// JobControls takes no unregistered job as a control.
func TestShareJobControls(t *testing.T) {
	job := "transformer/drift/skip-rescale"
	targets := []spec.TargetStats{{Target: "transformer/invariant/path_parity", Invariant: true, Cases: 40}, {Target: job, Cases: 12}}
	planted := spec.Finding{Kind: spec.KindMismatch, TargetA: "transformer", TargetB: job, Expected: true, Signature: "a"}
	stray := spec.Finding{Kind: spec.KindMismatch, TargetA: "transformer", TargetB: "transformer/invariant/path_parity", Signature: "b"}
	for _, tc := range []struct {
		name        string
		findings    []spec.Finding
		interrupted bool
		want        Status
		missed      []string
		unexpected  int
	}{
		{"found", []spec.Finding{planted}, false, Pass, nil, 0},
		{"missed", nil, false, ControlsMissing, []string{job}, 0},
		{"missed and a stray finding", []spec.Finding{stray}, false, Fail, []string{job}, 1},
		{"interrupted", nil, true, Interrupted, nil, 0},
	} {
		res := &spec.Result{Targets: targets, Findings: tc.findings, Interrupted: tc.interrupted}
		v := Share(res)
		if v.Status != tc.want || !slices.Equal(v.Missed, tc.missed) || len(v.Unexpected) != tc.unexpected {
			t.Errorf("%s: %s, missed %v, %d unexpected; want %s, %v, %d", tc.name, v.Status, v.Missed, len(v.Unexpected), tc.want, tc.missed, tc.unexpected)
		}
	}
	// as the transformer's share reports it: the job's stats count its
	// finding, which names the backends it ran, not the job
	found := []spec.TargetStats{targets[0], {Target: job, Cases: 12, Findings: 1}}
	backends := spec.Finding{Kind: spec.KindMismatch, TargetA: "transformer:cpu", TargetB: "transformer:cpu", Expected: true, Signature: "c"}
	if v := Share(&spec.Result{Targets: found, Findings: []spec.Finding{backends}}); v.Status != Pass || len(v.Missed) != 0 || len(v.Unexpected) != 0 {
		t.Errorf("a job whose stats count its finding: %s, missed %v, %d unexpected; want pass", v.Status, v.Missed, len(v.Unexpected))
	}
	if v := Of(&spec.Result{Targets: targets}, Options{ExpectControls: true}); v.Status != Pass || len(v.Controls) != 0 {
		t.Errorf("Of without JobControls: %s, controls %v; want pass, none", v.Status, v.Controls)
	}
}

// TestFailOn: --fail-on none never fails; new fails on new unexpected
// findings only, any on every unexpected one; an interrupted night is
// Interrupted under new and any unless a finding fails it first; Judge
// gives the same status with its reason (a pass has none); a bad mode is
// an error naming the values.
func TestFailOn(t *testing.T) {
	const interrupted = "tonight's campaign (night.json) was interrupted: not a pass"
	for _, tc := range []struct {
		mode                      FailOn
		unexpected, newUnexpected int
		interrupted               bool
		want                      Status
		why                       string
	}{
		{FailNone, 3, 3, true, Pass, ""},
		{FailNew, 2, 0, false, Pass, ""},
		{FailNew, 2, 1, false, Fail, "1 new unexpected finding(s)"},
		{FailAny, 2, 0, false, Fail, "2 unexpected finding(s), 0 of them new"},
		{FailAny, 2, 1, false, Fail, "2 unexpected finding(s), 1 of them new"},
		{FailAny, 0, 0, false, Pass, ""},
		{FailNew, 0, 0, true, Interrupted, interrupted},
		{FailAny, 1, 0, true, Fail, "1 unexpected finding(s), 0 of them new"},
		{FailNew, 1, 0, true, Interrupted, interrupted},
	} {
		if got := tc.mode.Status(tc.unexpected, tc.newUnexpected, tc.interrupted); got != tc.want {
			t.Errorf("%s.Status(%d, %d, %v) = %s, want %s", tc.mode, tc.unexpected, tc.newUnexpected, tc.interrupted, got, tc.want)
		}
		st, err := tc.mode.Judge(tc.unexpected, tc.newUnexpected, tc.interrupted, "night.json")
		if st != tc.want || (err == nil) != (tc.why == "") || (err != nil && err.Error() != tc.why) {
			t.Errorf("%s.Judge(%d, %d, %v) = %s, %v; want %s, %q", tc.mode, tc.unexpected, tc.newUnexpected, tc.interrupted, st, err, tc.want, tc.why)
		}
	}
	for _, s := range []string{"none", "new", "any"} {
		if m, err := ParseFailOn(s); err != nil || string(m) != s {
			t.Errorf("ParseFailOn(%q) = %q, %v", s, m, err)
		}
	}
	if _, err := ParseFailOn("all"); err == nil || err.Error() != `--fail-on "all": want none, new or any` {
		t.Errorf("ParseFailOn(all): %v", err)
	}
}

// TestStalls: a process target below one case, or absent, stalls the run;
// --min-cases applies to every target; the result's own stalls come first.
func TestStalls(t *testing.T) {
	res := &spec.Result{Stalls: []string{"exec:a: stopped answering"},
		Targets: []spec.TargetStats{{Target: "exec:a", Cases: 0}, {Target: "oracle-rmsnorm", Cases: 5}}}
	got := Stalls(res, 0, []string{"exec:a", "exec:b"})
	want := []string{"exec:a: stopped answering", "exec:a: 0 case(s) run, fewer than the minimum of 1", "exec:b: no case run"}
	if !slices.Equal(got, want) {
		t.Errorf("Stalls, min 0: %q, want %q", got, want)
	}
	got = Stalls(&spec.Result{Targets: res.Targets[1:]}, 6, nil)
	if want := []string{"oracle-rmsnorm: 5 case(s) run, fewer than the minimum of 6"}; !slices.Equal(got, want) {
		t.Errorf("Stalls, min 6: %q, want %q", got, want)
	}
	if got := Stalls(&spec.Result{Targets: res.Targets[1:]}, 0, nil); got != nil {
		t.Errorf("Stalls with no minimum: %q, want none", got)
	}
}

// TestWithShare: the transformer's share fails only a campaign that
// passed; a campaign that failed, stalled or was interrupted keeps its
// status, and a share that passed (or none) changes nothing.
func TestWithShare(t *testing.T) {
	v := func(s Status) *Verdict { return &Verdict{Status: s} }
	for _, tc := range []struct {
		campaign Status
		share    *Verdict
		want     Status
	}{
		{Pass, nil, Pass},
		{Pass, v(Pass), Pass},
		{Pass, v(ControlsMissing), ControlsMissing},
		{Pass, v(Fail), Fail},
		{Interrupted, v(ControlsMissing), Interrupted},
		{Stalled, v(Fail), Stalled},
		{Fail, v(ControlsMissing), Fail},
	} {
		if got := WithShare(v(tc.campaign), tc.share); got != tc.want {
			t.Errorf("WithShare(%s, %v) = %s, want %s", tc.campaign, tc.share, got, tc.want)
		}
	}
}
