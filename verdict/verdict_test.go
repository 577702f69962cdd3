package verdict

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/spec"
)

const control = "drift-rmsnorm-te-mod32" // a registered drift model

func finding(target string, expected bool, rows int) spec.Finding {
	c := spec.Case{Version: spec.CaseVersion, Op: spec.OpRMSNorm, Relation: spec.RelBatchInvariance, Targets: []string{target},
		Shape: spec.Shape{Rows: rows, Hidden: 64}, In: spec.BF16, Out: spec.BF16, Eps: 1e-6, Dist: spec.DistNormal, Seed: 1, GenVersion: 1,
		Rel: spec.RelParams{Batch: 1}}
	f := spec.Finding{Case: c, Kind: spec.KindMismatch, Relation: c.Relation, TargetA: target, Expected: expected}
	f.Signature = spec.Signature(f)
	return f
}

// controlRun is a run of two targets, an invariant one and the negative
// control: found is the control's expected finding, bug one on the
// invariant target.
func controlRun() (targets []spec.TargetStats, found, bug spec.Finding) {
	targets = []spec.TargetStats{{Target: "oracle-rmsnorm", Invariant: true, Cases: 10}, {Target: control, Cases: 10}}
	return targets, finding(control, true, 32), finding("oracle-rmsnorm", false, 3)
}

// TestOf: the status is the first that holds of fail, interrupted,
// stalled, controls_missing and pass, with its exit code; an interrupted
// run is never a pass, and its controls without a finding are not reached
// rather than missed.
func TestOf(t *testing.T) {
	targets, found, bug := controlRun()
	for _, tc := range []struct {
		name        string
		findings    []spec.Finding
		interrupted bool
		opts        Options
		want        Status
		code        int
		missed      []string
		unreached   []string
	}{
		{"pass", []spec.Finding{found}, false, Options{ExpectControls: true}, Pass, spec.ExitOK, nil, nil},
		{"control missed", nil, false, Options{ExpectControls: true}, ControlsMissing, spec.ExitFinding, []string{control}, nil},
		{"controls not asked for", nil, false, Options{}, Pass, spec.ExitOK, []string{control}, nil},
		{"unexpected", []spec.Finding{found, bug}, false, Options{ExpectControls: true}, Fail, spec.ExitFinding, nil, nil},
		{"any finding without controls", []spec.Finding{found}, false, Options{}, Fail, spec.ExitFinding, nil, nil},
		{"interrupted before the control", nil, true, Options{ExpectControls: true}, Interrupted, spec.ExitInterrupted, nil, []string{control}},
		{"interrupted after the control", []spec.Finding{found}, true, Options{ExpectControls: true}, Interrupted, spec.ExitInterrupted, nil, nil},
		{"interrupted with a bug", []spec.Finding{bug}, true, Options{ExpectControls: true}, Fail, spec.ExitFinding, nil, []string{control}},
		{"stalled", []spec.Finding{found}, false, Options{ExpectControls: true, Stalls: []string{"exec:x: 0 cases"}}, Stalled, spec.ExitStalled, nil, nil},
		{"interrupted and stalled", []spec.Finding{found}, true, Options{ExpectControls: true, Stalls: []string{"exec:x: 0 cases"}}, Interrupted, spec.ExitInterrupted, nil, nil},
	} {
		res := &spec.Result{Targets: targets, Findings: tc.findings, Interrupted: tc.interrupted}
		v := Of(res, tc.opts)
		if v.Status != tc.want || v.Code() != tc.code || !slices.Equal(v.Missed, tc.missed) || !slices.Equal(v.Unreached, tc.unreached) {
			t.Errorf("%s: %s (exit %d), missed %v, unreached %v; want %s (exit %d), %v, %v", tc.name, v.Status, v.Code(),
				v.Missed, v.Unreached, tc.want, tc.code, tc.missed, tc.unreached)
		}
		if (v.Err(res) == nil) != (tc.want == Pass) {
			t.Errorf("%s: Err %v for %s", tc.name, v.Err(res), v.Status)
		}
	}
}

// TestOfControlOutOfTime: a control not found in fewer cases than
// ControlCases per relation ran out of time: the run is Stalled (exit 5)
// and says so, never NOT FOUND; with its cases run it is missed
// (ControlsMissing); without ExpectControls neither is asked for.
func TestOfControlOutOfTime(t *testing.T) {
	rels := []string{spec.RelBatchInvariance, spec.RelPadding}
	for _, tc := range []struct {
		name      string
		cases     int64
		opts      Options
		want      Status
		missed    []string
		outOfTime []string
	}{
		{"busy machine", 1999, Options{ExpectControls: true, ControlCases: 1000}, Stalled, nil, []string{control}},
		{"its cases run", 2000, Options{ExpectControls: true, ControlCases: 1000}, ControlsMissing, []string{control}, nil},
		{"no budget", 10, Options{ExpectControls: true}, ControlsMissing, []string{control}, nil},
		{"controls not asked for", 10, Options{ControlCases: 1000}, Pass, nil, []string{control}},
	} {
		res := &spec.Result{Targets: []spec.TargetStats{{Target: control, Cases: tc.cases, Relations: rels}}}
		v := Of(res, tc.opts)
		if v.Status != tc.want || !slices.Equal(v.Missed, tc.missed) || !slices.Equal(v.OutOfTime, tc.outOfTime) {
			t.Errorf("%s: %s, missed %v, out of time %v; want %s, %v, %v", tc.name, v.Status, v.Missed, v.OutOfTime, tc.want, tc.missed, tc.outOfTime)
		}
		if tc.want == Stalled {
			want := control + ": ran out of time: not found in 1999 case(s), fewer than the 2000 its 2 relation(s) are given (1000 each)"
			if !slices.Contains(v.Stalls, want) || v.Code() != spec.ExitStalled {
				t.Errorf("%s: exit %d, stalls %q; want %d and %q", tc.name, v.Code(), v.Stalls, spec.ExitStalled, want)
			}
		}
	}
}

// rowsMap is a drift map over rows: B for the values v with v % mod == 0.
func rowsMap(mod int, values ...int) *spec.DriftMap {
	m := &spec.DriftMap{Dim: "rows", Classes: []spec.DriftClass{{Label: "A"}, {Label: "B"}}, Values: values}
	for _, v := range values {
		k := 0
		if v%mod == 0 {
			k = 1
		}
		m.Classes[k].Values = append(m.Classes[k].Values, v)
	}
	return m
}

func TestSameDrift(t *testing.T) {
	a := finding("vendor-rmsnorm", false, 32)
	with := func(f spec.Finding, m *spec.DriftMap) spec.Finding { f.DriftMap = m; return f }
	other := a
	other.Relation = spec.RelPadding
	fp16 := a
	fp16.Case.In, fp16.Case.Out, fp16.Case.Shape.Rows = spec.FP16, spec.FP16, 64
	for _, tc := range []struct {
		name string
		a, b spec.Finding
		want bool
	}{
		{"the same map", with(a, rowsMap(32, 1, 31, 32, 64)), with(a, rowsMap(32, 1, 31, 32, 64)), true},
		{"another sample, another dtype", with(a, rowsMap(32, 1, 31, 32, 64)), with(fp16, rowsMap(32, 2, 32, 63, 64, 96)), true},
		{"another rule", with(a, rowsMap(32, 1, 7, 14, 32, 64)), with(a, rowsMap(7, 1, 7, 14, 32, 64)), false},
		{"another dimension", with(a, rowsMap(32, 1, 32)), with(a, &spec.DriftMap{Dim: "hidden", Classes: rowsMap(32, 1, 32).Classes}), false},
		{"one shared value, same rule", with(a, &spec.DriftMap{Dim: "rows", Rule: "r", Classes: []spec.DriftClass{{Values: []int{1, 2}}}}),
			with(a, &spec.DriftMap{Dim: "rows", Rule: "r", Classes: []spec.DriftClass{{Values: []int{2, 3}}}}), true},
		{"no map, same onset", a, a, true},
		{"no map, another onset", a, fp16, false},
		{"one map only, same onset", with(a, rowsMap(32, 1, 32)), a, true},
		{"another relation", with(a, rowsMap(32, 1, 32)), with(other, rowsMap(32, 1, 32)), false},
	} {
		if got := SameDrift(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: SameDrift = %v, want %v", tc.name, got, tc.want)
		}
		if got := SameDrift(tc.b, tc.a); got != tc.want {
			t.Errorf("%s (swapped): SameDrift = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestRecorder: the case as found is a case file and a journal record
// before shrinking; its shrunk form replaces it; the result file is
// rebuilt from the journal; a partial result is marked interrupted.
func TestRecorder(t *testing.T) {
	dir := t.TempDir()
	d, err := corpus.OpenDir(filepath.Join(dir, "c"), true)
	if err != nil {
		t.Fatal(err)
	}
	jsonPath := filepath.Join(dir, "r.json")
	head := spec.Result{Version: spec.ResultVersion, Seed: 7}
	r, err := NewRecorder(RecorderOptions{Store: d, Where: "c", JSON: jsonPath, Head: head})
	if err != nil {
		t.Fatal(err)
	}
	f := finding(control, true, 40)
	r.Found(f)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	names, _ := d.List()
	if len(names) != 1 || names[0] != Key(f) || r.Findings() != 1 {
		t.Fatalf("after Found: corpus %v, %d finding(s); want %s", names, r.Findings(), Key(f))
	}
	back, complete, err := corpus.RebuildJournal(jsonPath + corpus.JournalSuffix)
	if err != nil || complete || len(back.Findings) != 1 || !back.Interrupted {
		t.Fatalf("journal after Found: %v, complete %v, %+v", err, complete, back)
	}
	m := finding(control, true, 32)
	orig := f.Case
	m.Original = &orig
	r.Shrunk(m)
	names, _ = d.List()
	if len(names) != 1 || names[0] == Key(f) || r.Findings() != 1 || r.PathOf(m) != d.PathOf(names[0]) {
		t.Fatalf("after Shrunk: corpus %v, %d finding(s); want the minimal case alone", names, r.Findings())
	}
	if p := r.Partial(); !p.Interrupted || len(p.Findings) != 1 || p.Findings[0].Case.Shape.Rows != 32 {
		t.Fatalf("Partial: %+v", p)
	}
	res := head
	res.Findings = []spec.Finding{m}
	if err := r.Finish(&res); err != nil {
		t.Fatal(err)
	}
	got, err := corpus.ReadResult(jsonPath)
	if err != nil || got.Interrupted || len(got.Findings) != 1 {
		t.Fatalf("result: %v %+v", err, got)
	}
	if _, err := os.Stat(jsonPath + corpus.JournalSuffix); !os.IsNotExist(err) {
		t.Errorf("the journal is left after Finish: %v", err)
	}
}

// TestRecorderJunkEntry: an entry already under a found case's name (a
// truncated file, a symbolic link, a folder) is never taken for the case:
// the case is stored over it and reads back, or, where nothing can replace
// it, the recording fails (Err) and the line says NOT stored.
func TestRecorderJunkEntry(t *testing.T) {
	f := finding(control, true, 40)
	for _, tc := range []struct {
		name   string
		make   func(path string) error
		stored bool
	}{
		{"truncated file", func(p string) error { return os.WriteFile(p, []byte(`{"format":"bitparity-case","ver`), 0o644) }, true},
		{"symlink", func(p string) error { return os.Symlink("/dev/null", p) }, true},
		{"folder", func(p string) error { return os.Mkdir(p, 0o755) }, false},
	} {
		d, err := corpus.OpenDir(filepath.Join(t.TempDir(), "c"), true)
		if err != nil {
			t.Fatal(err)
		}
		if err := tc.make(d.PathOf(Key(f))); err != nil {
			t.Fatal(err)
		}
		var log strings.Builder
		r, err := NewRecorder(RecorderOptions{Store: d, Where: "c", Log: &log})
		if err != nil {
			t.Fatal(err)
		}
		r.Found(f)
		_, gerr := d.Get(Key(f))
		if tc.stored && (r.Err() != nil || gerr != nil) {
			t.Errorf("%s: recording %v, the case reads back %v; want it stored\n%s", tc.name, r.Err(), gerr, log.String())
		}
		if !tc.stored && (r.Err() == nil || !strings.Contains(log.String(), "NOT stored")) {
			t.Errorf("%s: recording %v; want a failure and NOT stored\n%s", tc.name, r.Err(), log.String())
		}
	}
}

// openAndFixed makes a corpus folder dir holding an open finding and a
// fixed one, and returns it with both.
func openAndFixed(t *testing.T, dir string) (d *corpus.Dir, open, fixed spec.Finding) {
	t.Helper()
	d, err := corpus.OpenDir(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	open, fixed = finding("vendor-a", false, 3), finding("vendor-b", false, 5)
	for _, f := range []spec.Finding{open, fixed} {
		file := corpus.NewFile(f.Case, &f, spec.Env{}, "test")
		if f.TargetA == fixed.TargetA {
			file.Status.State, file.Status.FixedAt = corpus.StateFixed, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		}
		if _, _, err := d.Put(file); err != nil {
			t.Fatal(err)
		}
	}
	return d, open, fixed
}

// TestFixedIdentities: only the identities of cases marked fixed.
func TestFixedIdentities(t *testing.T) {
	d, _, fixed := openAndFixed(t, t.TempDir())
	got, err := FixedIdentities(d)
	if err != nil || len(got) != 1 || !got[spec.Identity(fixed)] {
		t.Fatalf("FixedIdentities = %v, %v; want only %s", got, err, spec.Identity(fixed))
	}
}

// Knows answers by identity alone: a finding of a known kind, op, relation
// and targets is known whatever its map, one of another relation is not.
func TestKnows(t *testing.T) {
	a := finding("vendor-rmsnorm", false, 32)
	a.DriftMap = rowsMap(32, 1, 31, 32, 64)
	k := &Known{open: map[string][]knownCase{spec.Identity(a): {{at: "h200/x.json", finding: a}}}}
	other := a
	other.DriftMap = rowsMap(7, 1, 7, 14, 64)
	padding := a
	padding.Relation = spec.RelPadding
	if !k.Knows(a) || !k.Knows(other) {
		t.Error("a finding of a known identity is not known")
	}
	if _, ok := k.Match(other); ok {
		t.Error("another map matched the known drift")
	}
	if k.Knows(padding) || (*Known)(nil).Knows(a) {
		t.Error("a finding of another identity is known")
	}
}

// TestKnownSkipsImported: a case imported from another corpus and not
// rechecked here is no --known baseline (a finding that matches it is not
// known), and LoadKnown says how many it left out; once a recheck has
// cleared the mark, the same case is known.
func TestKnownSkipsImported(t *testing.T) {
	dir := t.TempDir()
	d, err := corpus.OpenDir(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	f := finding("vendor-a", false, 3)
	file := corpus.NewFile(f.Case, &f, spec.Env{}, "test")
	file.Status = corpus.Status{State: corpus.StateOpen, Imported: true}
	name, _, err := d.Put(file)
	if err != nil {
		t.Fatal(err)
	}
	var warn strings.Builder
	k, err := LoadKnown(t.Context(), []string{dir}, &warn)
	if err != nil {
		t.Fatal(err)
	}
	if at, ok := k.Match(f); ok {
		t.Errorf("Match = %s; an imported case not rechecked here must not be a baseline", at)
	}
	if !strings.Contains(warn.String(), "1 imported case(s) not rechecked here are not a baseline") {
		t.Errorf("warnings %q; want the imported case counted", warn.String())
	}
	file.Status.Imported = false // as corpus recheck leaves it
	if err := os.Remove(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Put(file); err != nil {
		t.Fatal(err)
	}
	if k, err = LoadKnown(t.Context(), []string{dir}, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := k.Match(f); !ok {
		t.Error("a rechecked case is not known")
	}
}
