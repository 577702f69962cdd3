package external

import (
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestNotBuilt: a registered target is not missing; a GPU target and any
// other unknown one are, each with where to get it.
func TestNotBuilt(t *testing.T) {
	got := NotBuilt(spec.Case{Targets: []string{"oracle-rmsnorm", "cuda-rmsnorm-nope", "vendor-x"}})
	want := []string{
		"target cuda-rmsnorm-nope: not in this build (a GPU target: build with -tags cuda on a machine with a GPU (make build))",
		"target vendor-x: not in this build (see 'bitparity list')",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Missing = %q, want %q", got, want)
	}
}
