package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

func TestScanCommand(t *testing.T) {
	dir := t.TempDir()
	out, errs, code := bp(t, "scan", "--target", "oracle-rmsnorm", "--to", "40", "--hidden", "64", "--power", "0", "--dir", dir)
	if code != spec.ExitOK || !strings.Contains(out, "CERTIFIED: 0 differ") {
		t.Fatalf("oracle scan: exit %d\n%s%s", code, out, errs)
	}
	d, name, _ := onlyCertificate(t, dir)
	if out, _, code := bp(t, "corpus", "ls", "-dir", dir); code != 0 || !strings.Contains(out, name+"  valid") {
		t.Errorf("corpus ls: exit %d\n%s", code, out)
	}
	if out, _, code := bp(t, "corpus", "show", "-dir", dir, name); code != 0 || !strings.Contains(out, "items 1..40, hidden 64") {
		t.Errorf("corpus show: exit %d\n%s", code, out)
	}
	if out, _, code := bp(t, "corpus", "recheck", "-dir", dir); code != 0 || !strings.Contains(out, "1 hold, 0 invalid") {
		t.Errorf("corpus recheck: exit %d\n%s", code, out)
	}

	// a certificate of a target that drifts (as if it changed since):
	// the recheck marks it invalid with the map and exits 1.
	c, err := d.GetCertificate(name)
	if err != nil {
		t.Fatal(err)
	}
	c.Scan.Target = "drift-rmsnorm-te-mod32"
	if _, err := d.PutCertificate(c); err != nil {
		t.Fatal(err)
	}
	if out, _, code := bp(t, "corpus", "recheck", "-dir", dir); code != spec.ExitFinding || !strings.Contains(out, "certificate INVALID") ||
		!strings.Contains(out, "rows <= 31 -> A, rows == 32 -> B, rows >= 33 -> A") {
		t.Errorf("recheck of a drifting target: exit %d\n%s", code, out)
	}

	jsonPath := filepath.Join(t.TempDir(), "scan.json")
	out, _, code = bp(t, "scan", "--target", "drift-rmsnorm-te-mod32", "--to", "96", "--hidden", "256", "--dir", dir, "--json", jsonPath)
	if code != spec.ExitFinding || !strings.Contains(out, "rows % 32 == 0 -> B, otherwise -> A") {
		t.Errorf("drift scan: exit %d\n%s", code, out)
	}
	if b, err := os.ReadFile(jsonPath); err != nil || !strings.Contains(string(b), `"rule": "rows % 32 == 0 -\u003e B, otherwise -\u003e A"`) {
		t.Errorf("--json: %v\n%.300s", err, b)
	}
}

// A target that answers one step two ways is a drift, not a failure: exit
// 1, the map with its nondeterministic class, the steps against the same
// batch run again, and the class in the JSON like any other.
func TestScanNondeterministic(t *testing.T) {
	jsonPath := filepath.Join(t.TempDir(), "scan.json")
	out, errs, code := bp(t, "scan", "--target", "drift-rmsnorm-atomic-128", "--from", "120", "--to", "140", "--hidden", "256",
		"--dir", t.TempDir(), "--json", jsonPath)
	if code != spec.ExitFinding || !strings.Contains(out, "rows <= 127 -> A, rows >= 128 -> nondeterministic") ||
		!strings.Contains(out, "differ from the same batch run again") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	res := readJSON[spec.ScanResults](t, jsonPath)
	if len(res.Scans) != 1 {
		t.Fatalf("--json: %d results", len(res.Scans))
	}
	rs := res.Scans
	if rs[0].Verdict != spec.ScanDrift || rs[0].Map == nil {
		t.Fatalf("--json: verdict %q, map %v", rs[0].Verdict, rs[0].Map)
	}
	var nd []int
	for _, c := range rs[0].Map.Classes {
		if c.Label == "nondeterministic" {
			nd = c.Values
		}
	}
	if len(nd) != 13 || nd[0] != 128 || rs[0].Certificate != nil {
		t.Errorf("--json: nondeterministic values %v, certified %v", nd, rs[0].Certificate != nil)
	}
}

func TestScanCommandErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no target", []string{"scan", "--to", "4"}, "--target is required"},
		{"unknown target", []string{"scan", "--target", "nope", "--to", "4"}, "unknown target"},
		{"no hidden", []string{"scan", "--target", "oracle-rmsnorm", "--to", "4"}, "hidden"},
		{"bad range", []string{"scan", "--target", "oracle-rmsnorm", "--from", "5", "--to", "4", "--hidden", "8"}, "below from"},
		{"bad dist", []string{"scan", "--target", "oracle-rmsnorm", "--to", "4", "--hidden", "8", "--dists", "uniform"}, "unknown distribution"},
		{"bad profile", []string{"scan", "--target", "oracle-rmsnorm", "--profile", "gpt-9"}, "unknown"},
		{"stray argument", []string{"scan", "--target", "oracle-rmsnorm", "x"}, "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, code := bp(t, append(tt.args, "--dir", dir)...)
			if code != spec.ExitUsage {
				t.Errorf("exit %d, want %d (%s)", code, spec.ExitUsage, errs)
			}
		})
	}
}

func TestScanProfile(t *testing.T) {
	out, errs, code := bp(t, "scan", "--target", "oracle-rmsnorm", "--profile", "qwen2.5-7b", "--to", "3", "--dir", t.TempDir())
	if code != 0 || !strings.Contains(out, "items 1..3, hidden 3584") {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
}
