//go:build cuda

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/spec"
)

// kernelManifest copies example manifest name into a temporary folder
// with absolute image paths and the given timeout.
func kernelManifest(t *testing.T, name, timeout string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(exampleKernels, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ptx", "fatbin"} {
		if rel, ok := m[f].(string); ok {
			abs, _ := filepath.Abs(filepath.Join(exampleKernels, rel))
			m[f] = abs
		}
	}
	m["timeout"] = timeout
	b, _ := json.Marshal(m)
	p := filepath.Join(t.TempDir(), name+".json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestScanKernelOnGPU: scan --kernel over the example kernels in worker
// subprocesses: the invariant kernel is certified resident on the device
// (the certificate names its image hash), the drifting one gets its map,
// the faulting and the spinning one are findings at the reference batch
// (40 rows: both misbehave above 8), and the scan still exits; corpus
// recheck --kernel reruns the certificate.
func TestScanKernelOnGPU(t *testing.T) {
	if err := gpu.Available(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	scanArgs := func(manifest, dir string, to string) []string {
		return []string{"scan", "--kernel", manifest, "--to", to, "--hidden", "256", "--dists", "normal,boundary", "--dir", dir}
	}
	dir := t.TempDir()
	inv := kernelManifest(t, "rmsnorm_invariant", "30s")
	out, errs, code := bp(t, scanArgs(inv, dir, "300")...)
	if code != spec.ExitOK || !strings.Contains(out, "CERTIFIED") || !strings.Contains(out, "resident on the device") {
		t.Fatalf("invariant kernel: exit %d\n%s\n%s", code, out, errs)
	}
	m, _ := gpu.LoadManifest(inv, gpu.ManifestOptions{})
	d, _ := corpus.OpenDir(dir, false)
	names, _ := d.Certificates()
	if len(names) != 1 {
		t.Fatalf("certificates %v", names)
	}
	c, err := d.GetCertificate(names[0])
	if err != nil || c.KernelHash != m.ImageHash() || c.Scan.Target != "kernel:rmsnorm-invariant" {
		t.Errorf("certificate %+v (%v), want kernel hash %s", c, err, m.ImageHash())
	}
	if c != nil && (c.Kernel == nil || c.Kernel.Path != inv || c.Kernel.ImageHash != m.ImageHash()) {
		t.Errorf("certificate records kernel %+v, want the manifest %s and image %s", c.Kernel, inv, m.ImageHash())
	}
	// corpus recheck reruns it with the manifest passed (a worker again)
	if out, errs, code := bp(t, "corpus", "recheck", "--dir", dir, "--kernel", inv); code != spec.ExitOK || !strings.Contains(out, "1 hold, 0 invalid") {
		t.Errorf("recheck --kernel: exit %d\n%s\n%s", code, out, errs)
	}

	out, errs, code = bp(t, scanArgs(kernelManifest(t, "rmsnorm_drift", "30s"), dir, "100")...)
	if code != spec.ExitFinding || !strings.Contains(out, "DRIFT") || !strings.Contains(out, "rows = 32") {
		t.Errorf("drifting kernel: exit %d\n%s\n%s", code, out, errs)
	}

	for _, c := range []struct{ name, timeout, want string }{
		{"fault", "30s", "faulted at draw normal, the reference batch, rows = 40"},
		{"spin", "3s", "hung at draw normal, the reference batch, rows = 40"},
	} {
		out, errs, code := bp(t, scanArgs(kernelManifest(t, c.name, c.timeout), dir, "40")...)
		if code != spec.ExitFinding || !strings.Contains(out, "FAULT: kernel:"+c.name) || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d, want %d and %q\n%s\n%s", c.name, code, spec.ExitFinding, c.want, out, errs)
		}
	}
}
