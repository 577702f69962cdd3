package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestExecStartInterrupted: an adapter that never answers its hello holds
// `run --exec` only until Ctrl-C: SIGINT 200 ms in ends the run within a
// second, though --exec-start-timeout allows a minute, and says why.
func TestExecStartInterrupted(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "run", "--exec", "sleep 1000", "--duration", "6s", "--exec-timeout", "5s", "--exec-start-timeout", "1m")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), cliEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForChild(t, cmd.Process.Pid) // the adapter started: run is in its start
	time.Sleep(200 * time.Millisecond)
	sent := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("run still waits for the adapter's hello 10 s after SIGINT\n%s", out.String())
	}
	if took := time.Since(sent); took > time.Second {
		t.Errorf("run ended %s after SIGINT, want within 1 s\n%s", took, out.String())
	}
	if code := cmd.ProcessState.ExitCode(); code == 0 || !strings.Contains(out.String(), "start canceled") {
		t.Errorf("exit %d, want a failure saying the start was canceled\n%s", code, out.String())
	}
}

// TestExecStartTimeoutFlag: --exec-start-timeout bounds a silent adapter's
// start, and a bound that is not positive is a usage error.
func TestExecStartTimeoutFlag(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	out, errs, code := cli(t, dir, "run", "--exec", "sleep 1000", "--duration", "6s", "--exec-start-timeout", "500ms")
	if code != 2 || !strings.Contains(errs, "no reply within 500ms") {
		t.Fatalf("exit %d, want 2 naming the start bound\n%s\n%s", code, out, errs)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("refused after %s, want about the 500 ms bound", took)
	}
	if _, errs, code := cli(t, dir, "run", "--exec", "sleep 1000", "--exec-start-timeout", "0s"); code != 2 || !strings.Contains(errs, "--exec-start-timeout") {
		t.Fatalf("--exec-start-timeout 0s: exit %d, want 2\n%s", code, errs)
	}
}

// waitForChild waits until process pid has a child (its adapter), so that a
// signal sent next finds the run past its signal handler's setup however
// loaded the machine is; where /proc does not list children it returns.
func waitForChild(t *testing.T, pid int) {
	t.Helper()
	pattern := filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "children") // a child of any thread
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		files, err := filepath.Glob(pattern)
		if err != nil || len(files) == 0 {
			return
		}
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && len(bytes.TrimSpace(b)) > 0 {
				return
			}
		}
	}
	t.Fatalf("process %d started no adapter within 20 s", pid)
}
