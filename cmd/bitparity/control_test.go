package main

import (
	"strings"
	"testing"

	"github.com/bitparity/bitparity/spec"
)

// TestRunControlOutOfTime: a negative control not found in fewer cases
// than --control-cases gives it (a busy machine: here a profile in which
// drift-rmsnorm-vllm-256 cannot drift, and 2 s of one worker, a few
// hundred cases) ran out of time: the run is STALLED (exit 5) and says so,
// never NOT FOUND; given its cases, the same miss is NOT FOUND (exit 1).
func TestRunControlOutOfTime(t *testing.T) {
	base := []string{"run", "--profile", "testdata/below-vllm-onset.json", "--targets", "drift-rmsnorm-vllm-256",
		"--duration", "2s", "--workers", "1", "--no-shrink"}
	for _, tc := range []struct {
		name  string
		args  []string
		code  int
		want  []string
		never string
	}{
		{"default budget", nil, spec.ExitStalled, []string{"drift-rmsnorm-vllm-256         ran out of time (STALLED below)",
			"STALLED: drift-rmsnorm-vllm-256: ran out of time: not found in ", "fewer than the 9000 its 3 relation(s) are given (3000 each)"}, "NOT FOUND"},
		{"its cases run", []string{"--control-cases", "1"}, spec.ExitFinding, []string{"drift-rmsnorm-vllm-256         NOT FOUND"}, "ran out of time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runArgs(append(base, tc.args...)...)
			if code != tc.code || strings.Contains(out, tc.never) {
				t.Fatalf("exit %d, want %d and no %q\n%s\n%s", code, tc.code, tc.never, out, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Fatalf("stdout lacks %q\n%s\n%s", w, out, errs)
				}
			}
		})
	}
	if _, _, code := runArgs("run", "--control-cases", "-1"); code != spec.ExitUsage {
		t.Errorf("--control-cases -1: exit %d, want %d", code, spec.ExitUsage)
	}
}
