package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/internal/pythontest"
	"github.com/bitparity/bitparity/spec"
)

// TestRunInterrupted: SIGTERM in the middle of a campaign ends it with the
// interrupted exit code, never 0: on invariant targets (nothing to find),
// on drift models after their first finding, in a full run while the
// end-to-end transformer's share runs, and on a process target (--exec). The result file says
// interrupted, `bitparity report` on it says so (and --fail-on exits 6),
// the controls the run did not reach are "not reached", not "NOT FOUND",
// and every finding printed as found before the signal is in the corpus
// and the result.
func TestRunInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, targets string
		afterFound    bool
		extra         []string
	}{
		{"invariant", "oracle-rmsnorm,oracle-gemm", false, nil},
		{"drift", faultTargets, true, nil},
		{"transformer-share", "", false, nil}, // a full run: the end-to-end transformer's share runs beside the pairs
		{"exec", "", false, []string{"--exec", "exec " + spec.ShellQuote(exe) + " worker --target oracle-rmsnorm"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"--duration", "60s", "--seed", "5", "--workers", "1", "--corpus", "c", "--json", "r.json"}
			if tc.targets != "" {
				args = append(args, "--targets", tc.targets)
			}
			args = append(args, tc.extra...)
			p := startBitparity(t, dir, args...)
			wait := p.started
			if tc.afterFound {
				wait = p.found
			}
			select {
			case <-wait:
			case <-time.After(30 * time.Second):
				p.cmd.Process.Kill()
				_, _, log := p.wait()
				t.Fatalf("no %s line within 30 s\n%s", map[bool]string{true: "found:", false: "bitparity run:"}[tc.afterFound], log)
			}
			time.Sleep(time.Second)
			p.cmd.Process.Signal(syscall.SIGTERM)
			code, found, log := p.wait()
			out := p.out.String()
			r, err := corpus.ReadResult(filepath.Join(dir, "r.json"))
			if err != nil {
				t.Fatalf("%v\n%s\n%s", err, out, log)
			}
			// A full run's single-op pairs run from its start, beside the
			// transformer's share: the test binary's test-* targets that
			// claim invariance can give unexpected findings before the
			// signal, and a failure outranks the interruption (verdict.Of).
			want := spec.ExitInterrupted
			for _, f := range r.Findings {
				if !f.Expected && strings.HasPrefix(f.TargetA, "test-") {
					want = spec.ExitFinding
				}
			}
			if code != want {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, want, out, log)
			}
			if !strings.Contains(out, "INTERRUPTED after") || strings.Contains(out, "NOT FOUND") || strings.Contains(out, "MISSED") || strings.Contains(log, "not found") {
				t.Errorf("stdout should say INTERRUPTED and no control NOT FOUND:\n%s\n%s", out, log)
			}
			if !r.Interrupted {
				t.Error("the result file does not say interrupted")
			}
			if tc.afterFound && len(found) == 0 {
				t.Fatal("no finding printed before the signal")
			}
			assertStored(t, filepath.Join(dir, "c"), found, "SIGTERM")
			if len(r.Findings) < len(found) {
				t.Errorf("the result holds %d finding(s), %d were printed as found", len(r.Findings), len(found))
			}
			rep, errs, rcode := cli(t, dir, "report", "--fail-on", "any", "r.json")
			if rcode != want || !strings.Contains(rep, "INTERRUPTED") {
				t.Errorf("report --fail-on any: exit %d, want %d and INTERRUPTED\n%s\n%s", rcode, want, rep, errs)
			}
		})
	}
}

// TestModelRouteInterrupted: SIGTERM to a model route (--exec of a
// transformer adapter) ends it with the interrupted exit code, says
// INTERRUPTED, and its result file says interrupted.
func TestModelRouteInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	py := pythontest.NumPy(t)
	dir := t.TempDir()
	route := py + " " + adapterScript(filepath.Join("examples", "numpy_model.py"))
	p := startBitparity(t, dir, "--exec", route, "--duration", "60s", "--seed", "1", "--json", "r.json")
	select {
	case <-p.started:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		_, _, log := p.wait()
		t.Fatalf("no bitparity run: line within 30 s\n%s", log)
	}
	time.Sleep(500 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGTERM)
	code, _, log := p.wait()
	out := p.out.String()
	if code != spec.ExitInterrupted || !strings.Contains(out, "INTERRUPTED after") {
		t.Fatalf("exit %d, want %d and INTERRUPTED\n%s\n%s", code, spec.ExitInterrupted, out, log)
	}
	r, err := corpus.ReadResult(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Interrupted {
		t.Error("the result file does not say interrupted")
	}
}
