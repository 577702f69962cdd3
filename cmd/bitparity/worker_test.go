package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/detect"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestMain lets the test binary be a `bitparity worker` (env
// BITPARITY_TEST_WORKER=1) with test-only targets that fault and hang, so
// the supervision is tested on the CPU, without a GPU.
func TestMain(m *testing.M) {
	detect.RegisterTargets() // as run does, for the tests that call a command's parts directly
	// As a worker also when started as `TESTBINARY worker ...` without the
	// variable (a worker target registered by one test and restarted by a
	// later campaign), never the whole suite again.
	if os.Getenv(cliEnv) == "1" { // exec_test.go: the test binary as the bitparity command
		main()
	}
	if os.Getenv("BITPARITY_TEST_WORKER") == "1" || len(os.Args) > 1 && os.Args[1] == "worker" {
		target.Register("test-faulty-rmsnorm", func() (target.Target, error) { return faulty{}, nil })
		os.Exit(exitCode(run(os.Stdout, os.Stderr, os.Args[1:])))
	}
	os.Exit(m.Run())
}

// faulty is the oracle RMSNorm, except that batches of 7 rows (or, with
// BITPARITY_TEST_FAULT_MOD=k, rows % k == 1, rows > 1) fault like a GPU kernel that
// wrote to an illegal address, and batches of 11 rows hang.
type faulty struct{}

func (faulty) Info() target.Info {
	i := mustLookup("oracle-rmsnorm").Info()
	i.Name, i.Models = "test-faulty-rmsnorm", "oracle RMSNorm that faults at 7 rows and hangs at 11 (test only)"
	return i
}

func (faulty) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	n := b.Rows()
	var mod int
	fmt.Sscan(os.Getenv("BITPARITY_TEST_FAULT_MOD"), &mod)
	if n == 7 || mod > 0 && n > 1 && n%mod == 1 {
		fmt.Fprintln(os.Stderr, "simulated CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered")
		return nil, fmt.Errorf("rmsnorm %d rows: %w: simulated illegal address", n, target.ErrTargetCrashed)
	}
	if n == 11 {
		time.Sleep(time.Hour)
	}
	return mustLookup("oracle-rmsnorm").Run(ctx, b, rows)
}

func mustLookup(name string) target.Target {
	t, err := target.Lookup(name)
	if err != nil {
		panic(err)
	}
	return t
}

// workerCmdline runs this test binary as a worker serving the faulty target.
func workerCmdline(t *testing.T, env string) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return "BITPARITY_TEST_WORKER=1 " + env + " exec " + spec.ShellQuote(exe) + " worker --target test-faulty-rmsnorm"
}

func rmsBatch(t *testing.T, rows int) *target.Batch {
	t.Helper()
	c := spec.Case{Version: spec.CaseVersion, Op: spec.OpRMSNorm, Relation: spec.RelDeterminism,
		Shape: spec.Shape{Rows: rows, Hidden: 64}, In: spec.BF16, Out: spec.BF16, Eps: 1e-6, Dist: spec.DistNormal, Seed: 3}
	b, err := inputs.Of(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWorkerSupervision: a worker that faults or hangs becomes an error
// wrapping target.ErrTargetCrashed with the worker's error; the next batch
// gets a fresh worker whose results are bitwise the in-process target's.
func TestWorkerSupervision(t *testing.T) {
	w, err := external.New(workerCmdline(t, ""), "", external.Options{Name: "worker:test", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if info := w.Info(); info.Op != spec.OpRMSNorm || !info.Invariant || info.Schedule != mustLookup("oracle-rmsnorm").Info().Schedule {
		t.Fatalf("worker info %+v", info)
	}
	ctx := context.Background()
	same := func(rows int) {
		t.Helper()
		b := rmsBatch(t, rows)
		got, err := w.Run(ctx, b, nil)
		if err != nil {
			t.Fatalf("%d rows: %v", rows, err)
		}
		want, err := mustLookup("oracle-rmsnorm").Run(ctx, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want.Values {
			if math.Float32bits(got.Values[i]) != math.Float32bits(want.Values[i]) {
				t.Fatalf("%d rows: value %d: worker %x, in process %x", rows, i, math.Float32bits(got.Values[i]), math.Float32bits(want.Values[i]))
			}
		}
	}
	crash := func(rows int, says string) {
		t.Helper()
		_, err := w.Run(ctx, rmsBatch(t, rows), nil)
		if !errors.Is(err, target.ErrTargetCrashed) {
			t.Fatalf("%d rows: error %v does not wrap target.ErrTargetCrashed", rows, err)
		}
		if !strings.Contains(err.Error(), says) {
			t.Fatalf("%d rows: error %q does not say %q", rows, err, says)
		}
	}
	same(5)
	crash(7, "illegal memory access")
	same(5)
	start := time.Now()
	crash(11, "hung")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the watchdog took %v for a 2 s timeout", d)
	}
	same(13)
	if n := w.Starts(); n != 3 {
		t.Errorf("worker started %d times, want 3 (first, after the fault, after the hang)", n)
	}
}

// TestWorkerCampaign: a campaign over a worker target that faults on a
// third of the row counts reports crash findings with their case and
// error, and goes on: a pair stops at its first finding, the others keep
// running cases on a restarted worker.
func TestWorkerCampaign(t *testing.T) {
	w, err := external.Add(workerCmdline(t, "BITPARITY_TEST_FAULT_MOD=3"), "", external.Options{Name: "worker:test-campaign", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	c := &fuzz.Campaign{Duration: 20 * time.Second, Seed: 1, Targets: []string{"worker:test-campaign"},
		MaxCases: 40, Workers: 1, NoShrink: true}
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var crashes int
	for _, f := range res.Findings {
		if f.Kind != "crash" {
			t.Errorf("unexpected finding %s %s: %s", f.Kind, f.Relation, f.Message)
			continue
		}
		crashes++
		if !strings.Contains(f.Error, "illegal memory access") {
			t.Errorf("crash finding: error %q", f.Error)
		}
	}
	if crashes == 0 {
		t.Fatalf("no crash finding in %d cases", res.Cases)
	}
	if res.Cases <= int64(crashes) {
		t.Errorf("campaign ran %d cases for %d crash findings: it did not go on", res.Cases, crashes)
	}
	if w.Starts() < 2 {
		t.Errorf("worker started %d times, want a restart after the crash", w.Starts())
	}
	t.Logf("%d cases, %d crash findings, %d worker starts", res.Cases, crashes, w.Starts())
}

// TestRunKernelBadManifest: run --kernel with a bad manifest exits 2 with
// an error naming the field, before any worker starts.
func TestRunKernelBadManifest(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/k.json"
	if err := os.WriteFile(path, []byte(`{"version": 1, "op": "conv2d"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb strings.Builder
	err := run(&out, &errb, []string{"run", "--kernel", path, "--duration", "1s"})
	if code := exitCode(err); code != spec.ExitUsage {
		t.Fatalf("exit %d, want %d: %v", code, spec.ExitUsage, err)
	}
	if !strings.Contains(err.Error(), `field "op": unknown op "conv2d"`) {
		t.Fatalf("error %q does not name the field", err)
	}
	err = run(&out, &errb, []string{"worker", "--kernel", path})
	if code := exitCode(err); code != spec.ExitUsage || !strings.Contains(err.Error(), `field "op"`) {
		t.Fatalf("worker: exit %d: %v", code, err)
	}
}

var registerFaulty sync.Once

// TestRunIsolate: run --isolate runs targets in worker subprocesses (here
// this test binary as the worker): the oracle gives no finding through the
// protocol, and a target that faults gives crash findings (exit 1) while
// the campaign goes on.
func TestRunIsolate(t *testing.T) {
	registerFaulty.Do(func() { // --isolate checks the name here before a worker starts
		target.Register("test-faulty-rmsnorm", func() (target.Target, error) { return faulty{}, nil })
	})
	t.Setenv("BITPARITY_TEST_WORKER", "1") // inherited by the workers only
	var out, errb strings.Builder
	err := run(&out, &errb, []string{"run", "--isolate", "oracle-rmsnorm", "--duration", "2s", "--no-shrink"})
	if err != nil {
		t.Fatalf("oracle in a worker: %v\n%s\n%s", err, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "worker:oracle-rmsnorm") || !strings.Contains(out.String(), "0 finding(s)") {
		t.Fatalf("output:\n%s", out.String())
	}
	t.Setenv("BITPARITY_TEST_FAULT_MOD", "3")
	out.Reset()
	err = run(&out, &errb, []string{"run", "--isolate", "test-faulty-rmsnorm", "--duration", "3s", "--no-shrink"})
	if code := exitCode(err); code != spec.ExitFinding {
		t.Fatalf("faulty target: exit %d, want %d: %v\n%s", code, spec.ExitFinding, err, out.String())
	}
	if !strings.Contains(out.String(), "crash") || !strings.Contains(out.String(), "illegal memory access") {
		t.Fatalf("output has no crash finding with its error:\n%s", out.String())
	}
}
