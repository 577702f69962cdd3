package verdict

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/spec"
)

// plantSource is a composite source whose cases fail from rows >= 4 on:
// job "found" (a control) draws rows 1..8, job "missed" (a control)
// rows 1..3, job "holds" (invariant) rows 1..3.
func plantSource() *fuzz.Source {
	job := func(name string, rows uint64, expect spec.Kind, inv bool) fuzz.Job {
		return fuzz.Job{Name: name, Relation: "toy", Expect: expect, Invariant: inv,
			Draw: func(seed uint64) (spec.Case, bool) {
				return spec.Case{Version: 1, Op: "toy", Relation: "toy", Targets: []string{name}, Shape: spec.Shape{Rows: int(1 + seed%rows)}}, true
			}}
	}
	return &fuzz.Source{Name: "plant", Op: "toy",
		Check: func(_ context.Context, c spec.Case) (*spec.Finding, error) {
			if c.Shape.Rows < 4 {
				return nil, nil
			}
			return &spec.Finding{Case: c, Kind: spec.KindMismatch, Relation: c.Relation, TargetA: c.Targets[0], Message: "planted"}, nil
		},
		Jobs: []fuzz.Job{job("found", 8, spec.KindMismatch, false), job("missed", 3, spec.KindMismatch, false), job("holds", 3, "", true)}}
}

// TestRunShare: a share runs inside the one campaign, in its time share,
// beside the single-op pairs; its jobs and cases are in the one result,
// its expected findings only in its part, and a campaign that passed takes
// the share's failure: its control that found nothing is named by Err, in
// the order of its jobs.
func TestRunShare(t *testing.T) {
	rec, err := NewRecorder(RecorderOptions{Head: spec.Result{Version: spec.ResultVersion, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	share := plantSource()
	share.Share = 0.5
	for i := range share.Jobs {
		share.Jobs[i].MinCases = 8
	}
	c := &fuzz.Campaign{Duration: 2 * time.Second, Seed: 1, Workers: 1, MaxCases: 40, NoShrink: true,
		Targets: []string{"oracle-rmsnorm", "plant"}}
	var last int64
	run := &Run{Recorder: rec, Shares: []*fuzz.Source{share}, Campaign: c, Progress: func(cases int64, _ int) { last = cases }}
	res, err := run.Start(context.Background())
	if err != nil || res == nil {
		t.Fatalf("Start: %v", err)
	}
	if len(run.Shared) != 1 {
		t.Fatalf("%d shares ran, want 1", len(run.Shared))
	}
	s := run.Shared[0]
	if s.Result.Cases == 0 || res.Cases < 40 || res.Cases <= s.Result.Cases || last != res.Cases {
		t.Errorf("cases %d, the share's %d; progress last said %d: want both the campaign's pairs and the share", res.Cases, s.Result.Cases, last)
	}
	if len(res.Targets) != 1+len(s.Result.Targets) || len(s.Result.Targets) != 3 || len(res.Findings) != 0 {
		t.Errorf("result: %d targets, %d findings; want the oracle and the share's 3 jobs, no unexpected finding",
			len(res.Targets), len(res.Findings))
	}
	if len(s.Result.Findings) != 1 || !s.Result.Findings[0].Expected || rec.Findings() != 0 {
		t.Errorf("share: %d findings, recorded %d; want the control's one, expected, not recorded", len(s.Result.Findings), rec.Findings())
	}
	v := run.Judge(res, Options{ExpectControls: true})
	if v.Status != ControlsMissing || v.Code() != spec.ExitFinding {
		t.Fatalf("status %s, want %s from the share", v.Status, ControlsMissing)
	}
	if err := v.Err(res); err == nil || !strings.Contains(err.Error(), "plant control(s) not found: missed") {
		t.Errorf("Err = %v, want the share's missed control", err)
	}
	res.Interrupted = true // an interrupted campaign keeps its own status
	if v := run.Judge(res, Options{ExpectControls: true}); v.Status != Interrupted {
		t.Errorf("interrupted: status %s", v.Status)
	}
}

// TestRunRoutes: routes are sources of one campaign, each in its share,
// into one result on the recorder's head (cases and targets of both),
// judged as a route.
func TestRunRoutes(t *testing.T) {
	rec, err := NewRecorder(RecorderOptions{Head: spec.Result{Version: spec.ResultVersion, Seed: 7, Args: []string{"run"}}})
	if err != nil {
		t.Fatal(err)
	}
	route := func(name string) *fuzz.Source {
		src := plantSource()
		src.Name, src.Share = name, 0.5
		src.Jobs = src.Jobs[2:] // the invariant job: nothing to find
		src.Jobs[0].Name = name
		return src
	}
	c := &fuzz.Campaign{Duration: time.Second, Seed: 7, Workers: 1, MaxCases: 10,
		Sources: []*fuzz.Source{route("a"), route("b")}, Targets: []string{"a", "b"}}
	run := &Run{Recorder: rec, Campaign: c, Routes: true}
	res, err := run.Start(context.Background())
	if err != nil || res == nil || res.Seed != 7 || len(res.Args) != 1 || res.Cases != 10 || len(res.Targets) != 2 {
		t.Fatalf("Start: %v; result %+v", err, res)
	}
	for _, ts := range res.Targets {
		if ts.Cases == 0 {
			t.Errorf("route %s ran no case: want the routes interleaved", ts.Target)
		}
	}
	if v := run.Judge(res, Options{}); v.Status != Pass {
		t.Errorf("status %s, want pass", v.Status)
	}
}
