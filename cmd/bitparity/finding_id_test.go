package main

import (
	"encoding/json"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestFindingIDAgrees: one finding, one id. A campaign's finding is printed
// with the same id (spec.FindingID) by the result file, its case file
// (corpus ls -json), repro and the report in every format.
func TestFindingIDAgrees(t *testing.T) {
	dir := t.TempDir()
	cases, result := filepath.Join(dir, "c"), filepath.Join(dir, "r.json")
	out, errs, code := runArgs("run", "--targets", "test-claims-invariant-rmsnorm", "--relations", "batch_invariance",
		"--max-cases", "400", "--workers", "1", "--seed", "3", "--corpus", cases, "--json", result)
	if code != spec.ExitFinding {
		t.Fatalf("run: exit %d, want %d\n%s\n%s", code, spec.ExitFinding, out, errs)
	}
	res := readJSON[spec.Result](t, result)
	if len(res.Findings) != 1 {
		t.Fatalf("result holds %d findings, want 1", len(res.Findings))
	}
	if res.Findings[0].DriftMap == nil {
		t.Fatal("the finding has no drift map: its signature would equal the base signature replay computes, and the test could not tell them apart")
	}
	id := spec.FindingID(res.Findings[0])
	if res.Findings[0].Signature != id || len(id) != 16 {
		t.Fatalf("result's signature %q, FindingID %q", res.Findings[0].Signature, id)
	}

	out, errs, code = runArgs("corpus", "ls", "-json", "-dir", cases)
	if code != spec.ExitOK {
		t.Fatalf("corpus ls: exit %d\n%s", code, errs)
	}
	var listed struct{ Signature string }
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &listed); err != nil {
		t.Fatalf("corpus ls -json: %v\n%s", err, out)
	}
	if listed.Signature != id {
		t.Errorf("corpus ls: signature %s, the result's %s", listed.Signature, id)
	}

	var file string
	_ = filepath.WalkDir(cases, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") && file == "" {
			file = p
		}
		return nil
	})
	out, errs, code = runArgs("repro", file)
	if code != spec.ExitFinding {
		t.Fatalf("repro %s: exit %d, want %d\n%s\n%s", file, code, spec.ExitFinding, out, errs)
	}
	for _, want := range []string{"recorded, signature " + id + ":", "shows here too, signature " + id} {
		if !strings.Contains(out, want) {
			t.Errorf("repro output lacks %q:\n%s", want, out)
		}
	}

	for _, format := range []string{"text", "markdown", "junit", "html"} {
		out, errs, code = runArgs("report", "--format", format, result)
		if code != spec.ExitOK && code != spec.ExitFinding {
			t.Fatalf("report --format %s: exit %d\n%s", format, code, errs)
		}
		if !strings.Contains(out, id) {
			t.Errorf("report --format %s lacks the finding's id %s:\n%s", format, id, out)
		}
	}
}
