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
