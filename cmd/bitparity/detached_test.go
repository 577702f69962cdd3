package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
)

// TestRunDetachedHelper: an adapter whose helper left its process group
// (setsid) and keeps stdout open for 30 s (fuzz/external/testdata/detached.sh)
// holds a run no longer than its bounds: with --exec-timeout 1s and
// --duration 3s the hang is a crash finding and the run ends (exit 1), and
// one SIGINT ends a run whose request timeout is far off (exit 6); each
// writes its --json. A harness that waits for the pipe's end of file runs
// until the helper exits, past the test's 15 s.
func TestRunDetachedHelper(t *testing.T) {
	wd, _ := os.Getwd()
	adapter := "--exec=sh " + spec.ShellQuote(filepath.Join(wd, "../../fuzz/external/testdata/detached.sh")) + " hang"
	tests := []struct {
		name   string
		args   []string
		signal bool // SIGINT a second after the run started
		code   int
		want   string
	}{
		{"timeout", []string{"--exec-timeout", "1s", "--duration", "3s", "--no-shrink"}, false, spec.ExitFinding, "no reply within 1s (hung)"},
		{"sigint", []string{"--exec-timeout", "60s", "--duration", "60s"}, true, spec.ExitInterrupted, "INTERRUPTED after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			pids := filepath.Join(dir, "helpers")
			t.Setenv("DETACHED_PIDS", pids) // the adapter inherits it through the run
			t.Cleanup(func() {
				b, _ := os.ReadFile(pids)
				for _, f := range strings.Fields(string(b)) {
					if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
						syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			args := append([]string{adapter, "--targets", "exec:detached-hang", "--json", "r.json"}, tt.args...)
			p := startBitparity(t, dir, args...)
			if tt.signal {
				select {
				case <-p.started:
				case <-time.After(10 * time.Second):
				}
				time.Sleep(time.Second)
				p.cmd.Process.Signal(syscall.SIGINT)
			}
			ended := make(chan struct{})
			var code int
			var errs string
			go func() {
				code, _, errs = p.wait()
				close(ended)
			}()
			select {
			case <-ended:
			case <-time.After(15 * time.Second):
				p.cmd.Process.Kill()
				<-ended
				t.Fatalf("run still going after 15 s (the helper holds the adapter's stdout)\n%s\n%s", p.out.String(), errs)
			}
			if out := p.out.String(); code != tt.code || !strings.Contains(out, tt.want) {
				t.Fatalf("exit %d, want %d and %q\n%s\n%s", code, tt.code, tt.want, out, errs)
			}
			if b, err := os.ReadFile(pids); err != nil || len(b) == 0 {
				t.Fatalf("the adapter started no helper (%v)", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "r.json")); err != nil {
				t.Fatalf("--json not written: %v", err)
			}
		})
	}
}
