//go:build !cuda

package main

import (
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestVersionSaysNoGPUKernels: without the cuda tag, `bitparity version`
// prints the version and says that no GPU kernels are in the build.
func TestVersionSaysNoGPUKernels(t *testing.T) {
	out, errs, code := runArgs("version")
	if code != spec.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || lines[0] != spec.BuildVersion() || lines[1] != "gpu kernels: none (built without the cuda tag)" {
		t.Errorf("version printed %q", out)
	}
}
