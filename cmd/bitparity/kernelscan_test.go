package main

import (
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
	m, err := gpu.LoadManifest(filepath.Join(exampleKernels, "rmsnorm_invariant.json"))
	if err != nil {
		t.Fatal(err)
	}
	m.In = m.In[:1] // bf16 only
	k := &kernelScan{m: m}
	s := spec.ScanSpec{Target: k.name(), Op: m.Op, To: 64, Shape: spec.Shape{Hidden: 128}, In: spec.BF16, Out: spec.BF16}
	if err := k.check(s); err != nil {
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
		if err := k.check(bad); !errors.Is(err, scan.ErrBadSpec) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want ErrBadSpec saying %q", bad, err, c.want)
		}
	}
}
