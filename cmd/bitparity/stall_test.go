package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// testPython is a python3 with NumPy (the adapters' module needs it), or
// the test is skipped.
func testPython(t *testing.T) string {
	t.Helper()
	cands := []string{"/usr/bin/python3", "python3"}
	if p := os.Getenv("BITPARITY_PYTHON"); p != "" {
		cands = []string{p}
	}
	for _, c := range cands {
		if exec.Command(c, "-c", "import numpy").Run() == nil {
			return c
		}
	}
	t.Skip("no python3 with numpy")
	return ""
}

// TestRunExecHang: an adapter that stops answering on its third request is
// a crash finding when the request timeout comes first (exit 1), and
// makes the run STALLED when the run's end comes first (exit 5), never a
// green run.
func TestRunExecHang(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an adapter for seconds")
	}
	wd, _ := os.Getwd()
	adapter := "--exec=" + testPython(t) + " " + filepath.Join(wd, "../../fuzz/external/testdata/misbehave.py") + " hang3"
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"timeout", []string{"--exec-timeout", "1s", "--duration", "3s", "--no-shrink"}, spec.ExitFinding, "no reply within 1s (hung)"},
		// the adapter answers x itself: only relations an identity passes,
		// so the answers it gives before hanging are no finding (with a
		// process per worker, 16 workers get 32 answers, oracle parity's
		// among them, and a finding's exit 1 would hide the stall)
		{"stall", []string{"--duration", "4s", "--relations", "batch_invariance,padding,determinism"}, spec.ExitStalled,
			"STALLED: exec:misbehave-hang3: reply frame 3 unanswered after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// a process each: the registry of external targets is global
			p := startBitparity(t, t.TempDir(), append([]string{adapter, "--targets", "exec:misbehave-hang3"}, tt.args...)...)
			code, _, errs := p.wait()
			if out := p.out.String(); code != tt.code || !strings.Contains(out, tt.want) {
				t.Fatalf("exit %d, want %d and %q\n%s\n%s", code, tt.code, tt.want, out, errs)
			}
		})
	}
}

func TestRunMinCases(t *testing.T) {
	out, errs, code := runArgs("run", "--targets", "oracle-rmsnorm", "--relations", "determinism", "--max-cases", "3", "--min-cases", "5")
	if code != spec.ExitStalled || !strings.Contains(out, "oracle-rmsnorm: 3 case(s) run, fewer than the minimum of 5") {
		t.Fatalf("exit %d, want %d and the target named\n%s\n%s", code, spec.ExitStalled, out, errs)
	}
	if _, _, code := runArgs("run", "--min-cases", "-1"); code != spec.ExitUsage {
		t.Errorf("--min-cases -1: exit %d, want %d", code, spec.ExitUsage)
	}
}
