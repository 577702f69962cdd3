package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestExplainKnownCase explains the shipped split-K-by-M case: exit 0, the
// rule in words with both classes' schedules, and the JSON file.
func TestExplainKnownCase(t *testing.T) {
	js := filepath.Join(t.TempDir(), "ex.json")
	out, errOut, code := runArgs("explain", "-json", js, "../../corpus/known/ce35604ccd57e0df.json")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"explained: rows <= 64: splitk=4 combine=sequential ", "; rows >= 65: splitk=1 combine=sequential "} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var ex struct {
		Words   string `json:"words"`
		Classes []struct {
			Targets []struct {
				Matches []struct{ Schedules []string }
			}
		}
	}
	if err := json.Unmarshal(b, &ex); err != nil || len(ex.Classes) != 2 || ex.Words == "" {
		t.Fatalf("json %s: %v", b, err)
	}
}

// TestExplainBadInput: a passing case, a case without a sweep and garbage
// are bad input (exit 2).
func TestExplainBadInput(t *testing.T) {
	for _, arg := range []string{
		`{"version":1,"op":"rmsnorm","relation":"batch_invariance","targets":["oracle-rmsnorm"],"shape":{"rows":2,"hidden":8},"in":"bf16","out":"bf16","dist":"normal","seed":1,"gen_version":1,"rel":{"batch":3}}`,
		`{"version":1,"op":"rmsnorm","relation":"batch_invariance","targets":["oracle-rmsnorm"],"nonsense":1}`,
		filepath.Join(t.TempDir(), "missing.json"),
	} {
		out, errOut, code := runArgs("explain", arg)
		if code != spec.ExitUsage {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", arg, code, spec.ExitUsage, out, errOut)
		}
	}
	if _, _, code := runArgs("explain"); code != spec.ExitUsage {
		t.Errorf("no argument: exit %d, want %d", code, spec.ExitUsage)
	}
}
