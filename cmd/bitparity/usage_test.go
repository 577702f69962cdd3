package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestUsageRefusedUpFront: bad usage exits 2 with a message naming the
// problem, before any campaign work.
func TestUsageRefusedUpFront(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--duration", "0"}, "--duration 0s: want a positive duration"},
		{[]string{"run", "--duration", "-5s"}, "--duration -5s: want a positive duration"},
		{[]string{"run", "--case", ""}, "--case is empty"},
		{[]string{"run", "--max-cases", "-1"}, "--max-cases -1"},
		{[]string{"run", "--workers", "-1"}, "--workers -1"},
		{[]string{"run", "--gpu-streams", "0"}, "--gpu-streams"},
		{[]string{"run", "--json", dir}, "not a regular file"},
		{[]string{"run", "--corpus", file}, "--corpus " + file},
		{[]string{"run", "extra"}, `unexpected arguments ["extra"]`},
		{[]string{"run", "--isolate", "nope"}, `unknown target "nope"`},
		{[]string{"detect", "--models", "nope"}, `unknown target "nope"`},
		{[]string{"repro", fifo}, "not a regular file"},
		{[]string{"corpus", "ls", filepath.Join(dir, "none")}, "no such file"},
		{[]string{"corpus", "recheck", "-dir", dir, file}, "the folder is given twice"},
		{[]string{"corpus", "dedup", "a", "b"}, "want at most one folder"},
		{[]string{"merge", "--json", dir, file}, "not a regular file"},
		{[]string{"report", "--out-dir", file, file}, "--out-dir " + file},
	}
	for _, tt := range tests {
		_, errs, code := runArgs(tt.args...)
		if code != spec.ExitUsage {
			t.Errorf("%q: exit %d, want %d\n%s", tt.args, code, spec.ExitUsage, errs)
			continue
		}
		if err := run(&strings.Builder{}, &strings.Builder{}, tt.args); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want it to say %q", tt.args, err, tt.want)
		}
	}
}

// TestFlagsAfterArguments: a flag after the file argument is read as a
// flag, and corpus ls DIR lists DIR.
func TestFlagsAfterArguments(t *testing.T) {
	out, errs, code := runArgs("corpus", "ls", "../../corpus/known", "-json")
	if code != spec.ExitOK || !strings.HasPrefix(out, "{") || strings.Count(out, "\n") < 10 {
		t.Fatalf("corpus ls DIR -json: exit %d\n%s\n%s", code, out, errs)
	}
	err := run(&strings.Builder{}, &strings.Builder{}, []string{"repro", "../../corpus/known/229a5fb54605a933.json", "-max-elements", "1"})
	if exitCode(err) != spec.ExitUsage || !strings.Contains(err.Error(), "above -max-elements 1") {
		t.Fatalf("repro FILE -max-elements 1: %v, want the flag applied (exit 2)", err)
	}
}
