//go:build !cuda

package gpu

import (
	"errors"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/target"
)

// TestNoCUDA checks that a build without the cuda tag says so plainly and
// registers no GPU target.
func TestNoCUDA(t *testing.T) {
	err := Available()
	if !errors.Is(err, ErrNoCUDA) {
		t.Fatalf("Available() = %v, want ErrNoCUDA", err)
	}
	if !strings.Contains(err.Error(), "built without CUDA") || !strings.Contains(err.Error(), "-tags cuda") {
		t.Errorf("message %q should say the build has no CUDA and how to get it", err)
	}
	for _, n := range target.Names() {
		if strings.HasPrefix(n, "cuda-") {
			t.Errorf("target %s registered in a build without CUDA", n)
		}
	}
}
