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

// TestRunShare: a share runs first, its jobs and cases are folded into the
// one result, and a campaign that passed takes the share's failure: its
// control that found nothing is named by Err, in the order of its jobs.
func TestRunShare(t *testing.T) {
	rec, err := NewRecorder(RecorderOptions{Head: spec.Result{Version: spec.ResultVersion, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	share := &fuzz.Campaign{Duration: 200 * time.Millisecond, Seed: 1, Workers: 1, NoShrink: true,
		Sources: []*fuzz.Source{plantSource()}, Targets: []string{"plant"}}
	main := &fuzz.Campaign{Duration: 2 * time.Second, Seed: 1, Workers: 1, MaxCases: 20, NoShrink: true,
		Targets: []string{"oracle-rmsnorm"}, Relations: []string{spec.RelDeterminism}}
	var last int64
	run := &Run{Recorder: rec, Shares: []*fuzz.Campaign{share}, Main: main, Progress: func(cases int64, _ int) { last = cases }}
	res, err := run.Start(context.Background())
	if err != nil || res == nil {
		t.Fatalf("Start: %v", err)
	}
	if len(run.Shared) != 1 {
		t.Fatalf("%d shares ran, want 1", len(run.Shared))
	}
	s := run.Shared[0]
	if res.Cases != 20+s.Result.Cases || last != res.Cases {
		t.Errorf("cases %d, want the campaign's 20 and the share's %d; progress last said %d", res.Cases, s.Result.Cases, last)
	}
	if len(res.Targets) != 1+len(s.Result.Targets) || len(res.Findings) != 0 {
		t.Errorf("result: %d targets, %d findings; want the oracle and the share's %d jobs, no unexpected finding",
			len(res.Targets), len(res.Findings), len(s.Result.Targets))
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

// TestRunRoutes: route campaigns run in turn into one result (cases and
// targets summed, every finding recorded), judged as a route.
func TestRunRoutes(t *testing.T) {
	rec, err := NewRecorder(RecorderOptions{Head: spec.Result{Version: spec.ResultVersion, Seed: 7}})
	if err != nil {
		t.Fatal(err)
	}
	route := func() *fuzz.Campaign {
		src := plantSource()
		src.Jobs = src.Jobs[2:] // the invariant job: nothing to find
		return &fuzz.Campaign{Duration: time.Second, Seed: 7, Workers: 1, MaxCases: 5, Sources: []*fuzz.Source{src}, Targets: []string{"plant"}}
	}
	run := &Run{Recorder: rec, Routes: []*fuzz.Campaign{route(), route()}}
	res, err := run.Start(context.Background())
	if err != nil || res == nil || res.Seed != 7 || res.Cases != 10 || len(res.Targets) != 2 {
		t.Fatalf("Start: %v; result %+v", err, res)
	}
	if v := run.Judge(res, Options{}); v.Status != Pass {
		t.Errorf("status %s, want pass", v.Status)
	}
}
