package scan

import (
	"errors"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestCouldNotRun: a recheck that could not run names the entry and the
// error, and for an adapter no --exec started, the command line recorded
// with it (quoted, to read and pass; never run).
func TestCouldNotRun(t *testing.T) {
	a := &spec.Adapter{Target: "exec:gemm", Name: "gemm", Device: "cuda:0", Exec: "python3 my adapter.py"}
	for _, tc := range []struct {
		name, target string
		adapter      *spec.Adapter
		want         []string
		not          string
	}{
		{"adapter", "exec:gemm", a, []string{"could not run d.json: boom\n",
			"exec:gemm is an adapter (gemm on cuda:0): pass --exec 'python3 my adapter.py', the command line recorded with the drift"}, ""},
		{"no adapter recorded", "exec:gemm", nil, []string{"could not run d.json: boom\n"}, "pass --exec"},
		{"not an adapter", "oracle-rmsnorm", a, []string{"could not run d.json: boom\n"}, "pass --exec"},
	} {
		var b strings.Builder
		couldNotRun(&b, "d.json", errors.New("boom"), tc.target, tc.adapter, "drift")
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: no %q in %q", tc.name, w, b.String())
			}
		}
		if tc.not != "" && strings.Contains(b.String(), tc.not) {
			t.Errorf("%s: %q in %q", tc.name, tc.not, b.String())
		}
	}
}

// TestDriftWords: a fault is said as the fault, a drift as its map.
func TestDriftWords(t *testing.T) {
	if got := DriftWords(spec.ScanResult{Verdict: spec.ScanFault, Fault: "IllegalAddress"}); got != "fault: IllegalAddress" {
		t.Errorf("fault: %q", got)
	}
	m := &spec.DriftMap{Dim: "rows", Rule: "splits at 32"}
	if got := DriftWords(spec.ScanResult{Verdict: spec.ScanDrift, Map: m}); got != "drift map: "+MapWords(m) {
		t.Errorf("drift: %q", got)
	}
}

// TestListEntries: each entry that reads is printed, each that does not
// is an error line, and a folder that cannot be listed says which kind.
func TestListEntries(t *testing.T) {
	var out, errw strings.Builder
	names := func() ([]string, error) { return []string{"a", "bad", "c"}, nil }
	get := func(n string) (string, error) {
		if n == "bad" {
			return "", errors.New("bad: cannot decode")
		}
		return strings.ToUpper(n), nil
	}
	listEntries(&errw, "things", names, get, func(name, v string) { out.WriteString(name + "=" + v + "\n") })
	if out.String() != "a=A\nc=C\n" || errw.String() != "bad: cannot decode\n" {
		t.Errorf("listed %q, errors %q", out.String(), errw.String())
	}
	errw.Reset()
	listEntries(&errw, "things", func() ([]string, error) { return nil, errors.New("no folder") }, get, nil)
	if errw.String() != "things: no folder\n" {
		t.Errorf("unlistable folder: %q", errw.String())
	}
}
