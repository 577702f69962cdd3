//go:build cuda

package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/fuzz/external"
	"github.com/bitparity/bitparity/fuzz/inputs"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// TestMain lets this test binary serve a user kernel as a worker
// (BITPARITY_GPU_TEST_WORKER=MANIFEST), the way `bitparity worker --kernel`
// does, so the crash tests need no bitparity binary.
func TestMain(m *testing.M) {
	if path := os.Getenv("BITPARITY_GPU_TEST_WORKER"); path != "" {
		os.Exit(serveKernel(path))
	}
	var cleanup func()
	examples, cleanup, examplesErr = exampleDir()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// examples is the folder of the example manifests with their PTX:
// testdata/userkernels once build.sh has run there, otherwise a temporary
// copy with PTX compiled by nvcc now (the GPU host has nvcc).
var (
	examples    string
	examplesErr error
)

func exampleDir() (string, func(), error) {
	src := filepath.Join("testdata", "userkernels")
	if _, err := os.Stat(filepath.Join(src, "rmsnorm_invariant.ptx")); err == nil {
		return src, func() {}, nil
	}
	nvcc := "nvcc"
	for _, d := range []string{os.Getenv("CUDA_HOME"), "/usr/local/cuda"} {
		if _, err := os.Stat(filepath.Join(d, "bin", "nvcc")); d != "" && err == nil {
			nvcc = filepath.Join(d, "bin", "nvcc")
			break
		}
	}
	tmp, err := os.MkdirTemp("", "userkernels")
	if err != nil {
		return "", func() {}, err
	}
	done := func() { os.RemoveAll(tmp) }
	files, _ := filepath.Glob(filepath.Join(src, "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", done, err
		}
		if err := os.WriteFile(filepath.Join(tmp, filepath.Base(f)), b, 0o644); err != nil {
			return "", done, err
		}
	}
	cus, _ := filepath.Glob(filepath.Join(tmp, "*.cu"))
	for _, cu := range cus {
		cmd := exec.Command(nvcc, "-arch=compute_80", "-ptx", "-fmad=false", "-prec-div=true", "-prec-sqrt=true", "-ftz=false", "-std=c++17",
			"-o", strings.TrimSuffix(cu, ".cu")+".ptx", cu)
		cmd.Dir = tmp
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", done, fmt.Errorf("no PTX in %s and %s failed (run build.sh where nvcc exists): %v\n%s", src, nvcc, err, out)
		}
	}
	return tmp, done, nil
}

func serveKernel(path string) int {
	man, err := LoadManifest(path, ManifestOptions{})
	if err == nil {
		var t target.Target
		if t, err = NewUserKernel(man); err == nil {
			err = external.Serve(context.Background(), os.Stdin, os.Stdout, t)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 3
	}
	return 0
}

func exampleManifest(t *testing.T, name string) *Manifest {
	t.Helper()
	if examplesErr != nil {
		t.Fatal(examplesErr)
	}
	m, err := LoadManifest(filepath.Join(examples, name+".json"), ManifestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// inProcess registers the example kernel as kernel:NAME in this process.
func inProcess(t *testing.T, name string) string {
	t.Helper()
	m := exampleManifest(t, name)
	k, err := NewUserKernel(m)
	if err != nil {
		t.Fatal(err)
	}
	if !containsName(target.Names(), k.Info().Name) {
		target.Register(k.Info().Name, func() (target.Target, error) { return k, nil })
	}
	return k.Info().Name
}

func containsName(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func userCase(rows, hidden int, in, out spec.DType, seed uint64) spec.Case {
	return spec.Case{Version: spec.CaseVersion, Op: spec.OpRMSNorm, Relation: spec.RelOracleParity,
		Shape: spec.Shape{Rows: rows, Hidden: hidden}, In: in, Out: out, Eps: 1e-6, Dist: spec.DistNormal, Seed: seed}
}

// TestUserKernelInvariant: the invariant example kernel is bitwise its
// declared oracle schedule on every dtype pair, and a campaign over every
// relation finds nothing.
func TestUserKernelInvariant(t *testing.T) {
	name := inProcess(t, "rmsnorm_invariant")
	for _, dt := range [][2]spec.DType{{spec.BF16, spec.BF16}, {spec.FP16, spec.FP16}, {spec.FP32, spec.FP32}, {spec.BF16, spec.FP32}, {spec.FP32, spec.BF16}} {
		for _, rows := range []int{1, 31, 32, 928, 2274} {
			c := userCase(rows, 512, dt[0], dt[1], uint64(rows))
			c.Targets = []string{name}
			f, err := fuzz.Check(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if f != nil {
				t.Fatalf("%s %v rows %d: %s row %d col %d: %s vs %s (%d ulps)", name, dt, rows, f.Relation, f.Row, f.Col, f.A.Hex, f.B.Hex, f.ULPs)
			}
		}
	}
	res, err := (&fuzz.Campaign{Duration: 10 * time.Second, Seed: 1, Targets: []string{name}, MaxCases: 400}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Findings {
		t.Errorf("finding on the invariant kernel: %s %s row %d: %s", f.Kind, f.Relation, f.Row, f.Message)
	}
	t.Logf("%s: %d cases, %d findings", name, res.Cases, len(res.Findings))
}

// TestUserKernelDrift: the planted drift (two-half reduction unless
// rows % 32 == 0) is found, shrunk and mapped.
func TestUserKernelDrift(t *testing.T) {
	name := inProcess(t, "rmsnorm_drift")
	// Oracle parity: wrong on 31 rows in fp32 output, right on 32.
	c := userCase(31, 4096, spec.BF16, spec.FP32, 1)
	c.Targets = []string{name}
	f, err := fuzz.Check(context.Background(), c)
	if err != nil || f == nil {
		t.Fatalf("31 rows: finding %v, error %v; want a finding", f, err)
	}
	c.Shape.Rows = 32
	if f, err := fuzz.Check(context.Background(), c); err != nil || f != nil {
		t.Fatalf("32 rows: finding %+v, error %v; want none", f, err)
	}
	res, err := (&fuzz.Campaign{Duration: 20 * time.Second, Seed: 1, Targets: []string{name},
		Relations: []string{spec.RelBatchInvariance}}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) == 0 {
		t.Fatalf("planted drift not found in %d cases", res.Cases)
	}
	for _, f := range res.Findings {
		js := ""
		if f.DriftMap != nil {
			js = fmt.Sprintf("%s %s: %s", f.DriftMap.Dim, f.DriftMap.Kind, f.DriftMap.Rule)
		}
		t.Logf("found: %s %s after %d cases; row %d col %d %s vs %s (%d ulps); drift map %s; repro %s",
			f.Kind, f.Relation, f.CasesBefore, f.Row, f.Col, f.A.Hex, f.B.Hex, f.ULPs, js, f.Repro)
		if f.DriftMap == nil {
			t.Errorf("finding without a drift map")
		}
	}
}

// worker starts this test binary as a worker serving an example kernel.
func worker(t *testing.T, name string, timeout time.Duration) *external.Target {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if examplesErr != nil {
		t.Fatal(examplesErr)
	}
	path, _ := filepath.Abs(filepath.Join(examples, name+".json"))
	w, err := external.New("BITPARITY_GPU_TEST_WORKER="+path+" exec "+exe, "", external.Options{Name: "kernel:" + name, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func batch(t *testing.T, rows int) *target.Batch {
	t.Helper()
	b, err := inputs.Of(userCase(rows, 256, spec.BF16, spec.BF16, 7))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestUserKernelCrashes: a kernel that writes to an illegal address and one
// that spins become crash errors with the error; the worker restarts and
// the next batch runs.
func TestUserKernelCrashes(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		says    []string
	}{
		{"fault", 30 * time.Second, []string{"exit status 3", "rmsnorm_rows on 16 rows"}},
		{"spin", 5 * time.Second, []string{"hung"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := worker(t, tc.name, tc.timeout)
			if _, err := w.Run(ctx, batch(t, 4), nil); err != nil {
				t.Fatalf("4 rows: %v", err)
			}
			start := time.Now()
			_, err := w.Run(ctx, batch(t, 16), nil)
			if !errors.Is(err, target.ErrTargetCrashed) {
				t.Fatalf("16 rows: error %v, want a crash", err)
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			t.Logf("16 rows after %v: %v", time.Since(start).Round(time.Millisecond), err)
			o, err := w.Run(ctx, batch(t, 4), nil)
			if err != nil {
				t.Fatalf("4 rows after the crash: %v", err)
			}
			if w.Starts() != 2 {
				t.Errorf("worker started %d times, want 2", w.Starts())
			}
			for i, v := range o.Values {
				if math.IsNaN(float64(v)) {
					t.Fatalf("value %d not written after the restart", i)
				}
			}
		})
	}
	// A campaign over the faulting kernel reports crash findings and goes on.
	w := worker(t, "fault", 30*time.Second)
	name := "kernel:fault-campaign"
	target.Register(name, func() (target.Target, error) { return renamed{w, name}, nil })
	res, err := (&fuzz.Campaign{Duration: 30 * time.Second, Seed: 1, Targets: []string{name}, MaxCases: 60, NoShrink: true}).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	crashes := 0
	for _, f := range res.Findings {
		if f.Kind == "crash" {
			crashes++
			t.Logf("crash finding: %s, case rows %d: %.200s", f.Relation, f.Case.Shape.Rows, f.Error)
		}
	}
	if crashes == 0 || res.Cases <= int64(crashes) {
		t.Errorf("%d cases, %d crash findings: want crashes and a campaign that goes on", res.Cases, crashes)
	}
	t.Logf("%d cases, %d crash findings, %d worker starts", res.Cases, crashes, w.Starts())
}

type renamed struct {
	*external.Target
	name string
}

func (r renamed) Info() target.Info { i := r.Target.Info(); i.Name = r.name; return i }
