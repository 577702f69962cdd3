package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/verdict"
)

// waitFor waits for ch (a line of p's output) or fails after d.
func waitFor(t *testing.T, p *bitparityProc, ch <-chan struct{}, what string, d time.Duration) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		p.cmd.Process.Kill()
		_, _, log := p.wait()
		t.Fatalf("no %s within %s\n%s", what, d, log)
	}
}

// waitExit waits for p to exit, killing it and failing the test after d.
func waitExit(t *testing.T, p *bitparityProc, d time.Duration) (code int, found []string, log string) {
	t.Helper()
	timer := time.AfterFunc(d, func() { p.cmd.Process.Kill() })
	start := time.Now()
	code, found, log = p.wait()
	if !timer.Stop() {
		t.Fatalf("the run did not exit within %s of the signal (killed)\n%s\n%s", d, p.out.String(), log)
	}
	t.Logf("exited %d after %s", code, time.Since(start).Round(time.Millisecond))
	return code, found, log
}

// recoveryLine is the merge command a run prints for a journal it moved
// aside.
var recoveryLine = regexp.MustCompile(`(bitparity merge --json (\S+) \S+)`)

// TestRecoveryCommandVerbatim: a run killed (SIGKILL) after its first
// finding leaves its journal; the next run with the same --json moves it
// aside and prints the command that rebuilds its result; that command, run
// verbatim by sh with bitparity on PATH, exits 0 and writes a result that
// says interrupted and holds every finding printed as found.
func TestRecoveryCommandVerbatim(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	p := startBitparity(t, dir, "--targets", faultTargets, "--duration", "60s", "--seed", "5", "--workers", "1",
		"--corpus", "c", "--json", "r.json")
	waitFor(t, p, p.found, "found: line", 30*time.Second)
	p.cmd.Process.Signal(syscall.SIGKILL)
	_, found, _ := p.wait()
	if len(found) == 0 {
		t.Fatal("no finding printed before the kill")
	}
	out, errs, code := cli(t, dir, "run", "--targets", "oracle-rmsnorm,oracle-gemm", "--duration", "1s", "--json", "r.json")
	if code != 0 {
		t.Fatalf("the next run: exit %d\n%s\n%s", code, out, errs)
	}
	var line, result string
	for _, l := range strings.Split(errs, "\n") {
		if m := recoveryLine.FindStringSubmatch(l); m != nil {
			line, result = m[1], m[2]
		}
	}
	if line == "" {
		t.Fatalf("the next run printed no recovery command\n%s", errs)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "bitparity")); err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("/bin/sh", "-c", line)
	sh.Dir = dir
	sh.Env = append(os.Environ(), cliEnv+"=1", "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if b, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, b)
	}
	r, err := corpus.ReadResult(filepath.Join(dir, result))
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if !r.Interrupted || len(r.Findings) < len(found) {
		t.Errorf("%s: interrupted %v, %d finding(s); want interrupted and the %d printed as found", line, r.Interrupted, len(r.Findings), len(found))
	}
}

// TestJSONLocked: while a run writes --json r.json, a second run given the
// same --json is refused (exit 2) naming the first, and leaves the first's
// journal in place; the first then ends on SIGTERM with its result written
// and its lock file removed.
func TestJSONLocked(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	p := startBitparity(t, dir, "--targets", "oracle-rmsnorm,oracle-gemm", "--duration", "60s", "--workers", "1", "--json", "r.json")
	waitFor(t, p, p.started, "bitparity run: line", 30*time.Second)
	out, errs, code := cli(t, dir, "run", "--targets", "oracle-rmsnorm,oracle-gemm", "--duration", "1s", "--json", "r.json")
	want := "r.json: " + verdict.ErrLocked.Error() + ": the run of process " + strconv.Itoa(p.cmd.Process.Pid)
	if code != spec.ExitUsage || !strings.Contains(errs, want) {
		t.Errorf("second run: exit %d, want %d and %q\n%s\n%s", code, spec.ExitUsage, want, out, errs)
	}
	if aside, _ := filepath.Glob(filepath.Join(dir, "r.json.journal.*")); len(aside) > 0 {
		t.Errorf("the second run moved the live journal aside: %v", aside)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	code, _, log := waitExit(t, p, 30*time.Second)
	if code != spec.ExitInterrupted {
		t.Fatalf("first run: exit %d, want %d\n%s", code, spec.ExitInterrupted, log)
	}
	r, err := corpus.ReadResult(filepath.Join(dir, "r.json"))
	if err != nil || !r.Interrupted {
		t.Fatalf("first run's result: %v (interrupted %v)\n%s", err, r != nil && r.Interrupted, log)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.json"+verdict.LockSuffix)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file after the run: %v", err)
	}
}

// TestSignalWithDetachedHelper: one SIGTERM ends a run whose process
// target is stuck in a read that never ends (its adapter faulted, and a
// helper it started in a session of its own keeps the adapter's stdout
// open, as Python libraries that start detached helpers do): the run exits
// 6 (interrupted) with its result written (the result file says
// interrupted), within the bounded waits of its end.
func TestSignalWithDetachedHelper(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	dir := t.TempDir()
	pids := filepath.Join(dir, "helpers.pid")
	t.Cleanup(func() {
		b, _ := os.ReadFile(pids)
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
				syscall.Kill(pid, syscall.SIGKILL) // only the helpers this test started
			}
		}
	})
	// every odd batch over one row faults (the worker exits); the helper
	// holds the pipe the harness reads the reply from
	helper := "setsid sh -c 'echo $$ >> " + spec.ShellQuote(pids) + "; exec sleep 120' </dev/null 2>/dev/null & "
	adapter := helper + workerCmdline(t, "BITPARITY_TEST_FAULT_MOD=2")
	p := startBitparity(t, dir, "--exec", adapter, "--exec-timeout", "2s", "--duration", "60s", "--workers", "1", "--json", "r.json")
	waitFor(t, p, p.started, "bitparity run: line", 30*time.Second)
	time.Sleep(2 * time.Second)
	p.cmd.Process.Signal(syscall.SIGTERM)
	code, _, log := waitExit(t, p, 40*time.Second)
	out := p.out.String()
	// the adapter's fault is a finding once its read ends (exit 1, a
	// finding outranks the interruption); with none found yet, exit 6
	if (code != spec.ExitInterrupted && code != spec.ExitFinding) || !strings.Contains(out, "INTERRUPTED after") {
		t.Fatalf("exit %d, want %d or %d and INTERRUPTED\n%s\n%s", code, spec.ExitInterrupted, spec.ExitFinding, out, log)
	}
	r, err := corpus.ReadResult(filepath.Join(dir, "r.json"))
	if err != nil || !r.Interrupted {
		t.Fatalf("result: %v (interrupted %v)\n%s", err, r != nil && r.Interrupted, log)
	}
	if code == spec.ExitFinding && len(r.Findings) == 0 {
		t.Fatalf("exit 1 with no finding in the result\n%s", log)
	}
}
