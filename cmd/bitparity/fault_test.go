package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/verdict"
)

// faultTargets are drift models found within a few hundred cases, whose
// shrinking and drift maps take about a second: a kill lands before, during
// and after shrinking.
const faultTargets = "drift-gemm-splitk-by-m,drift-decode-splits-by-batch,drift-order-logprob-rows132,drift-rmsnorm-te-mod32"

var foundLine = regexp.MustCompile(`^found: .*; case (\S+)$`)

// bitparityProc is the test binary started as `bitparity ARGS` (TestMain)
// with its stderr collected line by line.
type bitparityProc struct {
	cmd     *exec.Cmd
	mu      sync.Mutex
	stderr  []string
	found   chan struct{} // closed at the first "found:" line
	started chan struct{} // closed at the "bitparity run:" line (signals are handled from then on)
	done    chan struct{} // closed when stdout and stderr are drained
	out     bytes.Buffer
}

func startBitparity(t *testing.T, dir string, args ...string) *bitparityProc {
	t.Helper()
	p := &bitparityProc{found: make(chan struct{}), started: make(chan struct{}), done: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], append([]string{"run"}, args...)...)
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), "BITPARITY_TEST_WORKER=1")
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outDone := make(chan struct{})
	go func() {
		defer close(outDone)
		sc := bufio.NewScanner(outPipe)
		sc.Buffer(nil, 1<<20)
		once := sync.Once{}
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if strings.HasPrefix(sc.Text(), "bitparity run:") {
				once.Do(func() { close(p.started) })
			}
		}
	}()
	go func() {
		defer close(p.done)
		defer func() { <-outDone }()
		sc := bufio.NewScanner(errPipe)
		once := sync.Once{}
		for sc.Scan() {
			p.mu.Lock()
			p.stderr = append(p.stderr, sc.Text())
			p.mu.Unlock()
			if foundLine.MatchString(sc.Text()) {
				once.Do(func() { close(p.found) })
			}
		}
	}()
	return p
}

// wait returns the exit code and every "found:" case path printed.
func (p *bitparityProc) wait() (code int, found []string, log string) {
	<-p.done
	err := p.cmd.Wait()
	code = p.cmd.ProcessState.ExitCode()
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = -int(ws.Signal())
	}
	_ = err
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.stderr {
		if m := foundLine.FindStringSubmatch(l); m != nil {
			found = append(found, m[1])
		}
	}
	return code, found, strings.Join(p.stderr, "\n")
}

// assertStored checks that each found case (a path in corpus folder dir)
// is in dir and decodes, as found or as the minimal case shrunk from it.
func assertStored(t *testing.T, dir string, found []string, what string) {
	t.Helper()
	d, err := corpus.OpenDir(dir, false)
	if err != nil && len(found) == 0 {
		return // killed before the run opened its corpus: nothing was promised
	}
	if err != nil {
		t.Fatalf("%s: %d finding(s) printed, corpus: %v", what, len(found), err)
	}
	names, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	from := map[string]bool{} // found-case names that a stored file covers
	for _, n := range names {
		f, err := d.Get(n)
		if err != nil {
			t.Errorf("%s: %s does not decode: %v", what, n, err)
			continue
		}
		from[n] = true
		if f.Finding != nil && f.Finding.Original != nil {
			from[verdict.Key(*f.Finding)] = true
		}
	}
	for _, p := range found {
		if !from[filepath.Base(p)] {
			t.Errorf("%s: finding printed as found (%s) is not in the corpus (%d files)", what, p, len(names))
		}
	}
}

// TestFaultInjection kills runs that find drift with SIGKILL and SIGTERM at
// seeded random moments (before a finding, while shrinking, after), and
// asserts that every finding printed as found is in the corpus and decodes;
// after SIGTERM the run exits as interrupted (6, or 1 for an unexpected
// finding) and --json holds every finding and says interrupted, after
// SIGKILL the journal rebuilds them (interrupted too).
func TestFaultInjection(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	rng := rand.New(rand.NewSource(17))
	kills := 20
	for i := 0; i < kills; i++ {
		sig := syscall.SIGKILL
		if i%2 == 1 {
			sig = syscall.SIGTERM
		}
		afterFound := rng.Intn(3) != 0 // else a fixed moment from the start
		delay := time.Duration(rng.Intn(1200)) * time.Millisecond
		t.Run(fmt.Sprintf("%d-%s", i, sig), func(t *testing.T) {
			dir := t.TempDir()
			p := startBitparity(t, dir, "--duration", "30s", "--seed", fmt.Sprint(100+i), "--workers", "1",
				"--targets", faultTargets, "--corpus", "c", "--json", "r.json")
			wait := p.started
			if afterFound {
				wait = p.found
			}
			select {
			case <-wait:
			case <-time.After(20 * time.Second):
			}
			time.Sleep(delay)
			p.cmd.Process.Signal(sig)
			code, found, log := p.wait()
			t.Logf("%s %s after the %s: %d finding(s) printed, exit %d", sig, delay,
				map[bool]string{true: "first finding", false: "start"}[afterFound], len(found), code)
			assertStored(t, filepath.Join(dir, "c"), found, sig.String())
			var r *spec.Result
			var err error
			if sig == syscall.SIGTERM {
				if code != spec.ExitInterrupted && code != spec.ExitFinding {
					t.Fatalf("SIGTERM: exit %d, want the verdict of an interrupted run (%d, or 1 for an unexpected finding)\n%s", code, spec.ExitInterrupted, log)
				}
				r, err = corpus.ReadResult(filepath.Join(dir, "r.json"))
			} else {
				r, _, err = corpus.RebuildJournal(filepath.Join(dir, "r.json"+corpus.JournalSuffix))
			}
			if err != nil && len(found) == 0 && errors.Is(err, fs.ErrNotExist) {
				return // killed before the run opened its journal
			}
			if err != nil {
				t.Fatalf("%s: result: %v\n%s", sig, err, log)
			}
			if !r.Interrupted {
				t.Errorf("%s: the result does not say interrupted", sig)
			}
			if len(r.Findings) < len(found) {
				t.Errorf("%s: the result holds %d finding(s), %d were printed", sig, len(r.Findings), len(found))
			}
		})
	}
}

// TestFaultInjectionProcs kills the parent of --procs workers with
// SIGKILL: the workers die with it (each stops on its SIGTERM and writes
// its folder), and a later run with the same --work-dir merges every
// finding they printed into its corpus.
func TestFaultInjectionProcs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	args := []string{"--duration", "30s", "--seed", "3", "--workers", "1", "--procs", "2",
		"--targets", faultTargets, "--corpus", "c", "--json", "r.json", "--work-dir", "w"}
	p := startBitparity(t, dir, args...)
	logs := []string{filepath.Join(dir, "w", "shard-0", "log"), filepath.Join(dir, "w", "shard-1", "log")}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(readAll(logs[0])+readAll(logs[1]), "found: ") {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	p.cmd.Process.Kill()
	p.wait()
	killed := time.Now()
	// the workers get SIGTERM from the kernel; each leaves result.json
	// within 15 s. A worker that is later is waited for up to its own
	// --duration, so the failure says whether it stopped late or never got
	// the signal.
	for _, l := range logs {
		res := filepath.Join(filepath.Dir(l), "result.json")
		for time.Since(killed) < 45*time.Second && readAll(res) == "" {
			time.Sleep(50 * time.Millisecond)
		}
		took := time.Since(killed).Round(time.Millisecond)
		switch {
		case readAll(res) == "":
			t.Fatalf("worker %s left no result within %s of its parent's death (%s)\n%s", filepath.Dir(l), took, procState(filepath.Dir(l)), readAll(l))
		case took > 15*time.Second:
			t.Fatalf("worker %s wrote its result %s after its parent's death, want within 15 s\n%s", filepath.Dir(l), took, readAll(l))
		}
	}
	// every finding a worker printed is in its own folder, as found or as
	// its shrunk form (which names the found case as its original)
	var found []string
	for k, l := range logs {
		var mine []string
		for _, line := range strings.Split(readAll(l), "\n") {
			if m := foundLine.FindStringSubmatch(line); m != nil {
				mine = append(mine, m[1])
			}
		}
		assertStored(t, filepath.Join(filepath.Dir(l), "corpus"), mine, fmt.Sprintf("worker %d", k))
		found = append(found, mine...)
	}
	if len(found) == 0 {
		t.Fatal("the workers printed no finding before the kill")
	}
	sigs := storedSignatures(t, filepath.Join(dir, "w", "shard-0", "corpus"), filepath.Join(dir, "w", "shard-1", "corpus"))
	// resume: a short run with the same --work-dir merges them
	q := startBitparity(t, dir, "--duration", "5s", "--seed", "3", "--workers", "1", "--procs", "2", "--max-cases", "4",
		"--targets", "oracle-rmsnorm", "--relations", "determinism", "--corpus", "c2", "--json", "r2.json", "--work-dir", "w")
	code, _, log := q.wait()
	if code != spec.ExitOK && code != spec.ExitFinding {
		t.Fatalf("resume: exit %d\n%s\n%s", code, q.out.String(), log)
	}
	// the merge keeps one case per signature (the two workers may both
	// have found the same bug): every signature the workers stored is in it
	merged := storedSignatures(t, filepath.Join(dir, "c2"))
	for sig := range sigs {
		if !merged[sig] {
			t.Errorf("resume: the workers stored a finding of signature %s, the merged corpus has none", sig)
		}
	}
	r, err := corpus.ReadResult(filepath.Join(dir, "r2.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) < 1 {
		t.Errorf("resumed result holds no finding, %d were printed by the killed workers", len(found))
	}
}

// storedSignatures returns the signatures of the findings stored in the corpus
// folders dirs.
func storedSignatures(t *testing.T, dirs ...string) map[string]bool {
	t.Helper()
	sigs := map[string]bool{}
	for _, dir := range dirs {
		d, err := corpus.OpenDir(dir, false)
		if err != nil {
			continue // a worker killed before it opened its corpus stored nothing
		}
		names, err := d.List()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			f, err := d.Get(n)
			if err != nil {
				t.Fatalf("%s/%s: %v", dir, n, err)
			}
			if f.Finding != nil {
				sigs[f.Finding.Signature] = true
			}
		}
	}
	return sigs
}

func readAll(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// procState says whether a process whose command line names dir is still
// alive, and its state and pending signals (from /proc), so a worker that
// left no result shows whether it hung or died.
func procState(dir string) string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return "no /proc"
	}
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), dir) {
			continue
		}
		status, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		var keep []string
		for _, line := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(line, "State:") || strings.HasPrefix(line, "SigPnd:") || strings.HasPrefix(line, "ShdPnd:") ||
				strings.HasPrefix(line, "SigCgt:") || strings.HasPrefix(line, "PPid:") {
				keep = append(keep, strings.Join(strings.Fields(line), " "))
			}
		}
		return "still running: pid " + e.Name() + ", " + strings.Join(keep, "; ")
	}
	return "no process of it is left"
}
