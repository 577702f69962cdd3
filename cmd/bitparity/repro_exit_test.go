package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// A case file that decodes but cannot run as written (path parity given
// one target) is bad input: repro exits 2, not 3 (internal failure).
func TestReproUnrunnableCaseIsBadInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "case.json")
	js := `{"format":"bitparity-case","version":1,"case":{"version":1,"op":"rmsnorm","relation":"path_parity",` +
		`"targets":["oracle-rmsnorm"],"shape":{"rows":4,"hidden":8},"in":"bf16","out":"bf16","eps":0.00001,` +
		`"dist":"normal","seed":1,"gen_version":1,"rel":{}},"status":{"state":"open"}}`
	if err := os.WriteFile(path, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runArgs("repro", path)
	if code != spec.ExitUsage {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, spec.ExitUsage, out, errOut)
	}
}
