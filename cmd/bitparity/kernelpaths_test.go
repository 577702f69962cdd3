package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestKernelManifestPaths: every command that loads a kernel manifest
// refuses, with exit 2 and the field named, an image outside the
// manifest's folder (here /dev/zero, which read whole exhausts memory),
// and, with --kernel-any-path, one that is not a regular file; all before
// anything is read whole, in the CPU build too.
func TestKernelManifestPaths(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(exampleKernels, "rmsnorm_invariant.json"))
	if err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(t.TempDir(), "zero.json")
	js := strings.Replace(string(raw), `"ptx": "rmsnorm_invariant.ptx"`, `"ptx": "/dev/zero"`, 1)
	if js == string(raw) {
		t.Fatal("the example manifest has no ptx field to replace")
	}
	if err := os.WriteFile(m, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "--kernel", m, "--duration", "1s"},
		{"scan", "--kernel", m, "--to", "4", "--hidden", "8"},
		{"corpus", "recheck", "--dir", t.TempDir(), "--kernel", m},
		{"worker", "--kernel", m},
	} {
		for _, anyPath := range []bool{false, true} {
			a, want := args, `field "ptx": /dev/zero: outside the manifest's folder`
			if anyPath {
				a, want = append(append([]string{}, args...), "--kernel-any-path"), `field "ptx": /dev/zero: not a regular file (a character device)`
			}
			errs, code := runErr(a...)
			if code != spec.ExitUsage || !strings.Contains(errs, want) {
				t.Errorf("%q: exit %d, want %d and %q in\n%s", a, code, spec.ExitUsage, want, errs)
			}
		}
	}
}
