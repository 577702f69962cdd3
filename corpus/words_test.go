package corpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// TestEntryWords: corpus ls's line and JSON object and corpus show's
// words say the case, the finding, its signature and the status, open or
// fixed.
func TestEntryWords(t *testing.T) {
	c := seedCase(7)
	open := Entry{Name: "open.json", File: NewFile(c, sampleFinding(c), spec.Env{Bitparity: "test"}, "test")}
	open.File.Note = "seen on the nightly"
	pass := Entry{Name: "pass.json", File: NewFile(seedCase(8), nil, spec.Env{Bitparity: "test"}, "test")}
	fixed := Entry{Name: "fixed.json", File: NewFile(c, sampleFinding(c), spec.Env{Bitparity: "test"}, "test")}
	fixed.File.Status = Status{State: StateFixed, FixedAt: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), FixedKernelHash: "k1"}
	desc := "rmsnorm batch_invariance on oracle "
	for _, tc := range []struct {
		e         Entry
		line      string
		words     []string
		signature bool
	}{
		{open, "open.json  open   mismatch sig " + open.File.Signature + "  " + desc,
			[]string{"case open.json: " + desc, "note: seen on the nightly\n", "inputs: seed 7, normal values", "finding: ", "drift map: ", "signature: " + open.File.Signature, "recorded in: ", "status: open\n"}, true},
		{pass, "pass.json  open   pass                    " + desc,
			[]string{"finding: none (a regression case that must keep passing)\n", "status: open\n"}, false},
		{fixed, "fixed.json  fixed  mismatch sig ",
			[]string{"status: fixed since 2026-12-02T00:00:00Z, kernel k1\n"}, true},
	} {
		if got := tc.e.Line(); !strings.HasPrefix(got, tc.line) {
			t.Errorf("%s: Line() = %q, want it to start %q", tc.e.Name, got, tc.line)
		}
		w := tc.e.Words()
		for _, want := range tc.words {
			if !strings.Contains(w, want) {
				t.Errorf("%s: Words() lacks %q:\n%s", tc.e.Name, want, w)
			}
		}
		if strings.Contains(w, "signature: ") != tc.signature {
			t.Errorf("%s: Words() says a signature: %v, want %v", tc.e.Name, !tc.signature, tc.signature)
		}
		var obj struct {
			Name, Status, Signature string
			Case                    spec.Case
		}
		if err := json.Unmarshal(tc.e.JSON(), &obj); err != nil || obj.Name != tc.e.Name || obj.Status != tc.e.File.Status.State ||
			obj.Signature != tc.e.File.Signature || obj.Case.Seed != tc.e.File.Case.Seed {
			t.Errorf("%s: JSON() = %s (%v)", tc.e.Name, tc.e.JSON(), err)
		}
	}
}

// TestWriteRecheck: one line per rechecked file, and a flaky crash and a
// reopened finding count as failing, an error as could not run.
func TestWriteRecheck(t *testing.T) {
	res := []RecheckResult{
		{Name: "a", Err: errors.New("no such target")},
		{Name: "b", Fixed: true, Outcome: &Outcome{Verdict: NotReproduced}},
		{Name: "c", Outcome: &Outcome{Verdict: NotReproduced}},
		{Name: "d", Outcome: &Outcome{Verdict: Passed}},
		{Name: "e", Reopened: true, Outcome: &Outcome{Verdict: Reproduced}},
		{Name: "f", Outcome: &Outcome{Verdict: Flaky, Crashes: 2, Replays: 5}},
		{Name: "g", Outcome: &Outcome{Verdict: Changed}},
	}
	var b bytes.Buffer
	failing, broken := WriteRecheck(&b, res)
	want := `could not run a: no such target
fixed         b
still fixed   c
passes        d
reopened      e (marked fixed, fails again: reproduced)
flaky         f (the recorded crash showed on 2 of 5 replays; kept open)
still failing g (changed)
rechecked 7 case(s): 2 still failing, 1 flaky, 2 fixed, 1 passing, 1 could not run
`
	if b.String() != want || failing != 3 || broken != 1 {
		t.Errorf("WriteRecheck = %d failing, %d broken:\n%s\nwant 3, 1:\n%s", failing, broken, b.String(), want)
	}
}

// TestOutcomeWords: each replay verdict's first word and exit code, and
// the reading of a finding that was not reproduced: on taps, in another
// environment or this one.
func TestOutcomeWords(t *testing.T) {
	c := seedCase(7)
	found := NewFile(c, sampleFinding(c), spec.Env{}, "test")
	taps := NewFile(c, sampleFinding(c), spec.Env{}, "test")
	taps.Finding.OnTaps = true
	pass := NewFile(c, nil, spec.Env{}, "test")
	crash := &spec.Finding{Kind: "crash"}
	for _, tc := range []struct {
		name       string
		f          *File
		o          Outcome
		envDiffers bool
		want       []string
		code       int
	}{
		{"reproduced", found, Outcome{Verdict: Reproduced, Finding: found.Finding}, false, []string{"REPRODUCED: the mismatch shows here too"}, spec.ExitFinding},
		{"regression", pass, Outcome{Verdict: Reproduced, Finding: crash}, false, []string{"REGRESSION: the case should pass but shows a crash"}, spec.ExitFinding},
		{"changed", found, Outcome{Verdict: Changed, Finding: crash}, false, []string{"REPRODUCED, CHANGED: a crash here where the mismatch"}, spec.ExitFinding},
		{"flaky-showed", found, Outcome{Verdict: Flaky, Crashes: 1, Replays: 5}, false, []string{"FLAKY: the recorded crash showed on 1 of 5"}, spec.ExitFinding},
		{"flaky-none", found, Outcome{Verdict: Flaky, Replays: 5}, false, []string{"FLAKY: the recorded crash showed on 0 of 5"}, spec.ExitNotReproduced},
		{"not-reproduced-here", found, Outcome{Verdict: NotReproduced}, false, []string{"COULD NOT REPRODUCE", "The environment is as recorded"}, spec.ExitNotReproduced},
		{"not-reproduced-taps", taps, Outcome{Verdict: NotReproduced}, true, []string{"in fp32 intermediates (taps)", "The environment differences above"}, spec.ExitNotReproduced},
		{"passed", pass, Outcome{Verdict: Passed}, false, []string{"PASSED: the case passes, as recorded"}, spec.ExitOK},
	} {
		w := tc.o.Words(tc.f, tc.envDiffers)
		for _, want := range tc.want {
			if !strings.Contains(w, want) {
				t.Errorf("%s: Words() lacks %q:\n%s", tc.name, want, w)
			}
		}
		if strings.Contains(w, "taps") != (tc.name == "not-reproduced-taps") {
			t.Errorf("%s: Words() speaks of taps: %q", tc.name, w)
		}
		if got := tc.o.Code(); got != tc.code {
			t.Errorf("%s: Code() = %d, want %d", tc.name, got, tc.code)
		}
	}
}

// TestEnvWords: as recorded, or each difference, then each missing target.
func TestEnvWords(t *testing.T) {
	if got := EnvWords(nil, nil); got != "environment: as recorded\n" {
		t.Errorf("EnvWords(nil, nil) = %q", got)
	}
	want := "environment differs from the recorded one:\n  gpu: A -> B\n  target x: not in this build\n"
	if got := EnvWords([]string{"gpu: A -> B"}, []string{"target x: not in this build"}); got != want {
		t.Errorf("EnvWords = %q, want %q", got, want)
	}
}

// TestWriteList: a line per readable case, a warning per unreadable file.
func TestWriteList(t *testing.T) {
	d := mustDir(t)
	d.Put(NewFile(seedCase(1), nil, spec.Env{}, ""))
	if err := os.WriteFile(d.PathOf(strings.Repeat("ab", 8)+".json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, warn bytes.Buffer
	if bad := WriteList(&out, &warn, d, false); bad != 1 || strings.Count(out.String(), "\n") != 1 || !strings.HasPrefix(warn.String(), "warning: ") {
		t.Errorf("WriteList = %d unreadable, wrote %q, warned %q", bad, out.String(), warn.String())
	}
	out.Reset()
	WriteList(&out, &warn, d, true)
	if !strings.HasPrefix(out.String(), `{"case":`) {
		t.Errorf("WriteList(json) wrote %q", out.String())
	}
}
