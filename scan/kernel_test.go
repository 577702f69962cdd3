package scan

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/oracle"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/target"
)

// The test binary is also the scan worker of these tests: with
// BITPARITY_SCAN_WORKER set it serves one scan (Serve) and exits, and the
// target test-misbehave then faults, dies or hangs on its batch of 5 rows
// as the variable says. It is registered as kernel:test-misbehave too, as
// `bitparity worker --kernel MANIFEST --scan` registers the kernel it
// loaded under kernel:NAME.
func TestMain(m *testing.M) {
	if mode := os.Getenv("BITPARITY_SCAN_WORKER"); mode != "" {
		if err := Serve(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func init() {
	for _, name := range []string{"test-misbehave", "kernel:test-misbehave"} {
		target.Register(name, func() (target.Target, error) {
			o, err := target.Lookup("oracle-rmsnorm")
			return misbehave{o, name}, err
		})
	}
}

// misbehave is the oracle, except on a batch of 5 rows in a worker.
type misbehave struct {
	target.Target
	name string
}

func (m misbehave) Info() target.Info {
	i := m.Target.Info()
	i.Name = m.name
	return i
}

func (m misbehave) Run(ctx context.Context, b *target.Batch, rows []int) (*target.Output, error) {
	if b.Rows() == 5 {
		switch os.Getenv("BITPARITY_SCAN_WORKER") {
		case "fault":
			return nil, fmt.Errorf("%w: an illegal memory access was encountered", target.ErrTargetCrashed)
		case "die":
			fmt.Fprintln(os.Stderr, "segmentation fault")
			os.Exit(139)
		case "hang":
			time.Sleep(time.Hour)
		}
	}
	return m.Target.Run(ctx, b, rows)
}

// worker is the argv of a worker in mode.
func worker(t *testing.T, mode string) []string {
	t.Helper()
	t.Setenv("BITPARITY_SCAN_WORKER", mode)
	return []string{os.Args[0], "-test.run=^$"}
}

// TestRunWorker: a scan in a worker gives the result the scan gives in
// process (a certificate with its progress; a drifting target's map); a batch that faults, a worker that dies and
// one that hangs are each a Fault naming the batch of 5 rows.
func TestRunWorker(t *testing.T) {
	s := rmsnormScan("test-misbehave", 8, 16)
	s.Dists = []spec.Dist{spec.DistNormal}
	want := run(t, s)
	var done, total int
	got, err := RunWorker(context.Background(), worker(t, "serve"), s,
		Options{Progress: func(d, n int) { done, total = d, n }}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got.Map == nil || MapWords(got.Map) != MapWords(want.Map) {
		t.Errorf("worker scan's map %v, in process %v", got.Map, want.Map)
	}
	if got.Certificate == nil || got.RowsCompared != want.RowsCompared || got.Batches != want.Batches || done != total || total != 8 {
		t.Errorf("worker scan: certificate %v, %d rows in %d batches (in process %d in %d), progress %d/%d",
			got.Certificate != nil, got.RowsCompared, got.Batches, want.RowsCompared, want.Batches, done, total)
	}

	// a drifting target: the same exact map as in process
	d := rmsnormScan("test-rmsnorm-mod89", 180, 16)
	d.Dists = []spec.Dist{spec.DistNormal}
	wantD := run(t, d)
	gotD, err := RunWorker(context.Background(), worker(t, "serve"), d, Options{}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if gotD.Certificate != nil || MapWords(gotD.Map) != MapWords(wantD.Map) || len(gotD.Diffs) != len(wantD.Diffs) {
		t.Errorf("worker map %s (%d diffs), in process %s (%d diffs)", MapWords(gotD.Map), len(gotD.Diffs), MapWords(wantD.Map), len(wantD.Diffs))
	}

	for _, c := range []struct {
		mode string
		hang bool
		err  string
	}{
		{"fault", false, "illegal memory access"},
		{"die", false, "segmentation fault"},
		{"hang", true, ""},
	} {
		t.Run(c.mode, func(t *testing.T) {
			_, err := RunWorker(context.Background(), worker(t, c.mode), s, Options{}, time.Second)
			var f *Fault
			if !errors.As(err, &f) {
				t.Fatalf("error %v, want a Fault", err)
			}
			if f.Draw != spec.DistNormal || f.Step != "rows = 5" || f.Hang != c.hang || !strings.Contains(f.Err, c.err) {
				t.Errorf("fault %+v", f)
			}
			if !strings.Contains(err.Error(), "test-misbehave") || !strings.Contains(err.Error(), "at draw normal, rows = 5") {
				t.Errorf("fault says %q", err)
			}
		})
	}
}

// TestRunWorkerErrors: a bad spec is ErrBadSpec; a worker that fails
// before its first batch is an error, not a finding.
func TestRunWorkerErrors(t *testing.T) {
	bad := rmsnormScan("test-misbehave", 8, 0)
	_, err := RunWorker(context.Background(), worker(t, "serve"), bad, Options{}, time.Second)
	if !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), "hidden") {
		t.Errorf("bad spec: %v", err)
	}
	_, err = RunWorker(context.Background(), []string{"/bin/sh", "-c", "echo no GPU here >&2; exit 3"}, rmsnormScan("test-misbehave", 8, 16), Options{}, time.Second)
	var f *Fault
	if err == nil || errors.As(err, &f) || !strings.Contains(err.Error(), "no GPU here") {
		t.Errorf("failed worker: %v", err)
	}
}

// TestRecheckKernel: a kernel certificate's recheck in a worker holds when
// the image and manifest here are the recorded ones, turns invalid naming
// both hashes when the image changed, when the kernel faults on a batch,
// and compares an older certificate (no manifest recorded) by its kernel
// hash; a worker that cannot run leaves the certificate as it was.
func TestRecheckKernel(t *testing.T) {
	ctx := context.Background()
	s := rmsnormScan("test-misbehave", 8, 16)
	s.Dists = []spec.Dist{spec.DistNormal}
	r := run(t, s)
	if r.Certificate == nil {
		t.Fatal("no certificate")
	}
	rec := spec.KernelManifest{Path: "k.json", ManifestHash: "sha256:00000000000000aa", ImageHash: "ptx:1111111111111111"}
	c := *r.Certificate
	c.Kernel = &rec
	moved := rec
	moved.Path = "/elsewhere/k.json"
	newImage := rec
	newImage.ImageHash = "ptx:2222222222222222"
	newManifest := rec
	newManifest.ManifestHash = "sha256:00000000000000bb"
	old := *r.Certificate // before manifests were recorded
	old.KernelHash = rec.ImageHash
	for _, tc := range []struct {
		name string
		c    spec.Certificate
		here spec.KernelManifest
		mode string
		want []string // in the reason; none: valid
	}{
		{"same", c, moved, "serve", nil},
		{"image", c, newImage, "serve", []string{"the kernel image changed: recorded ptx:1111111111111111, here ptx:2222222222222222"}},
		{"manifest", c, newManifest, "serve", []string{"the kernel manifest changed: recorded sha256:00000000000000aa (k.json), here sha256:00000000000000bb (k.json)"}},
		{"fault", c, rec, "fault", []string{"faulted at draw normal, rows = 5", "illegal memory access"}},
		{"older same", old, rec, "serve", nil},
		{"older image", old, newImage, "fault", []string{"the kernel image changed: recorded ptx:1111111111111111, here ptx:2222222222222222", "faulted at draw normal"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := Recheck(ctx, tc.c, Options{Kernel: testKernel(tc.here, worker(t, tc.mode), 10*time.Second)})
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if got.Status.State != spec.CertValid || got.Kernel == nil || *got.Kernel != tc.here {
					t.Errorf("state %s (%s), kernel %+v, want valid recording %+v", got.Status.State, got.Status.Reason, got.Kernel, tc.here)
				}
				return
			}
			if got.Status.State != spec.CertInvalid || got.Status.InvalidEnv == nil || got.Status.InvalidEnv.KernelHash != tc.here.ImageHash {
				t.Errorf("state %s, invalid env %+v", got.Status.State, got.Status.InvalidEnv)
			}
			for _, w := range tc.want {
				if !strings.Contains(got.Status.Reason, w) {
					t.Errorf("reason %q, want %q", got.Status.Reason, w)
				}
			}
			if got.Kernel != tc.c.Kernel {
				t.Errorf("an invalid certificate records kernel %+v, want the recorded %+v", got.Kernel, tc.c.Kernel)
			}
		})
	}
	got, _, err := Recheck(ctx, c, Options{Kernel: testKernel(rec, []string{"/bin/sh", "-c", "echo no GPU here >&2; exit 3"}, time.Second)})
	if err == nil || !strings.Contains(err.Error(), "no GPU here") || got.Status != c.Status {
		t.Errorf("a worker that cannot run: %v, status %+v", err, got.Status)
	}
}

// testKernel is the user kernel test-misbehave as a worker started as
// argv serves it, its manifest recorded as rec.
func testKernel(rec spec.KernelManifest, argv []string, timeout time.Duration) *Kernel {
	return &Kernel{Name: "test-misbehave", Op: spec.OpRMSNorm, In: []oracle.DType{oracle.BF16}, Out: []oracle.DType{oracle.BF16},
		Timeout: timeout, Record: rec, Argv: argv}
}
