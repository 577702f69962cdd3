package main

import (
	"bytes"
	"os"

	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/scan"
	"github.com/bitparity/bitparity/spec"
)

const exampleKernels = "../../gpu/testdata/userkernels"

// runErr runs the command in process and returns its error message (what
// main prints) and exit code.
func runErr(args ...string) (string, int) {
	err := run(io.Discard, io.Discard, args)
	if err == nil {
		return "", spec.ExitOK
	}
	return err.Error(), exitCode(err)
}

// TestScanKernelUsage: scan --kernel's bad input exits 2 naming the
// problem, before any worker starts.
func TestScanKernelUsage(t *testing.T) {
	good := filepath.Join(exampleKernels, "rmsnorm_invariant.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"scan", "--kernel", filepath.Join(t.TempDir(), "none.json"), "--to", "4", "--hidden", "8"}, "kernel manifest"},
		{[]string{"scan", "--kernel", good, "--target", "oracle-rmsnorm", "--to", "4", "--hidden", "8"}, "give one of --target, --exec or --kernel"},
		{[]string{"scan", "--to", "4"}, "--target, --exec or --kernel MANIFEST is required"},
		{[]string{"worker", "--target", "oracle-rmsnorm", "--scan"}, "--scan goes with --kernel"},
	} {
		errs, code := runErr(c.args...)
		if code != spec.ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, want %d and %q in\n%s", c.args, code, spec.ExitUsage, c.want, errs)
		}
	}
}

// TestKernelScanCheck: a kernel scan's spec is checked in the parent
// against the manifest: the scan's dtypes must be ones the kernel takes,
// and the op's sizes must be set.
func TestKernelScanCheck(t *testing.T) {
	k, err := scan.LoadKernel(filepath.Join(exampleKernels, "rmsnorm_invariant.json"), gpu.ManifestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	k.In = k.In[:1] // bf16 only
	check := func(s spec.ScanSpec) error { _, _, err := scan.Expand(s, nil, scan.Options{Kernel: k}); return err }
	s := spec.ScanSpec{Target: k.Name, Op: k.Op, To: 64, Shape: spec.Shape{Hidden: 128}, In: spec.BF16, Out: spec.BF16}
	if err := check(s); err != nil {
		t.Errorf("good spec: %v", err)
	}
	for _, c := range []struct {
		edit func(*spec.ScanSpec)
		want string
	}{
		{func(s *spec.ScanSpec) { s.In = spec.FP16 }, "takes in [bf16]"},
		{func(s *spec.ScanSpec) { s.Shape.Hidden = 0 }, "hidden"},
		{func(s *spec.ScanSpec) { s.To = 0 }, "to 0"},
	} {
		bad := s
		c.edit(&bad)
		if err := check(bad); !errors.Is(err, scan.ErrBadSpec) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want ErrBadSpec saying %q", bad, err, c.want)
		}
	}
}

// kernelCertDir is a corpus folder holding one valid certificate of the
// user kernel kernel:NAME, recording manifest rec (nil: a certificate
// made before manifests were recorded, with only its image hash).
func kernelCertDir(t *testing.T, name string, rec *spec.KernelManifest) string {
	t.Helper()
	dir := t.TempDir()
	if out, _, code := bp(t, "scan", "--target", "oracle-rmsnorm", "--to", "4", "--hidden", "16", "--dists", "normal", "--power", "0", "--dir", dir); code != spec.ExitOK {
		t.Fatalf("scan: exit %d\n%s", code, out)
	}
	d, cert, c := onlyCertificate(t, dir)
	if err := os.Remove(d.PathOf(cert)); err != nil {
		t.Fatal(err)
	}
	c.Scan.Target, c.KernelHash, c.Kernel = "kernel:"+name, "ptx:0123456789abcdef", rec
	if _, err := d.PutCertificate(c); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRecheckKernelFlags: corpus recheck runs a user kernel's certificate
// only with a manifest the user passes; without one the certificate could
// not run (exit 3) and the line says which flag to pass: --kernel with the
// recorded path, or for a certificate that recorded none, "recorded no
// manifest: pass --kernel". A bad or doubled --kernel is exit 2.
func TestRecheckKernelFlags(t *testing.T) {
	good := filepath.Join(exampleKernels, "rmsnorm_invariant.json")
	rec := &spec.KernelManifest{Path: good, ManifestHash: "sha256:0000000000000000", ImageHash: "ptx:0123456789abcdef"}
	older := kernelCertDir(t, "rmsnorm-invariant", nil)
	recorded := kernelCertDir(t, "rmsnorm-invariant", rec)
	for _, c := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"older", []string{"--dir", older}, spec.ExitInternal, []string{"kernel:rmsnorm-invariant recorded no manifest: pass --kernel MANIFEST", "ptx:0123456789abcdef", "0 hold, 0 invalid, 1 could not run"}},
		{"recorded", []string{"--dir", recorded}, spec.ExitInternal, []string{"pass --kernel " + good + ", the manifest recorded", "or --kernel-from-certificate", "1 could not run"}},
		{"another kernel", []string{"--dir", recorded, "--kernel", filepath.Join(exampleKernels, "rmsnorm_drift.json")}, spec.ExitInternal, []string{"pass --kernel " + good}},
		{"bad manifest", []string{"--dir", recorded, "--kernel", filepath.Join(t.TempDir(), "none.json")}, spec.ExitUsage, []string{"corpus recheck --kernel: kernel manifest"}},
		{"twice", []string{"--dir", recorded, "--kernel", good + "," + good}, spec.ExitUsage, []string{"both name kernel kernel:rmsnorm-invariant"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var o, e bytes.Buffer
			err := run(&o, &e, append([]string{"corpus", "recheck"}, c.args...))
			out, errs, code := o.String(), e.String(), exitCode(err)
			if err != nil {
				errs += err.Error()
			}
			for _, w := range c.want {
				if !strings.Contains(out+errs, w) {
					t.Errorf("no %q in\n%s%s", w, out, errs)
				}
			}
			if code != c.code {
				t.Errorf("exit %d, want %d\n%s%s", code, c.code, out, errs)
			}
		})
	}
}
