//go:build !cuda

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestScanKernelWithoutCUDA: a build without CUDA refuses scan --kernel
// with exit 3 and says why (a good manifest; a bad one is still exit 2).
func TestScanKernelWithoutCUDA(t *testing.T) {
	errs, code := runErr("scan", "--kernel", filepath.Join(exampleKernels, "rmsnorm_invariant.json"), "--to", "4", "--hidden", "8")
	if code != spec.ExitInternal || !strings.Contains(errs, "built without CUDA") {
		t.Errorf("exit %d, want %d saying the build has no CUDA:\n%s", code, spec.ExitInternal, errs)
	}
}

// TestRecheckKernelWithoutCUDA: in a build without CUDA a user kernel's
// certificate, given its manifest either way, could not run (exit 3) and
// the line says why; the certificate is left as it was.
func TestRecheckKernelWithoutCUDA(t *testing.T) {
	good := filepath.Join(exampleKernels, "rmsnorm_invariant.json")
	rec := &spec.KernelManifest{Path: good, ManifestHash: "sha256:0000000000000000", ImageHash: "ptx:0123456789abcdef"}
	for _, args := range [][]string{{"--kernel", good}, {"--kernel-from-certificate"}} {
		dir := kernelCertDir(t, "rmsnorm-invariant", rec)
		out, errs, code := bp(t, append([]string{"corpus", "recheck", "--dir", dir}, args...)...)
		if code != spec.ExitInternal || !strings.Contains(out, "built without CUDA") || !strings.Contains(out, "1 could not run") {
			t.Errorf("%q: exit %d, want %d saying the build has no CUDA:\n%s%s", args, code, spec.ExitInternal, out, errs)
		}
		ls, _, _ := bp(t, "corpus", "ls", "--dir", dir)
		if !strings.Contains(ls, "valid") {
			t.Errorf("%q: the certificate changed:\n%s", args, ls)
		}
	}
}
