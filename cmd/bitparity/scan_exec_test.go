package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/internal/pythontest"
	"github.com/bitparity/bitparity/spec"
)

// tinyProfile is the small model of docs/python.md's first hour: hidden
// 192, max_tokens 192.
func tinyProfile() string { return adapterScript("examples/tiny-model.json") }

// TestScanExecCertificate: scan --exec of the kit's exact NumPy RMSNorm at
// the tiny profile certifies rows 1..192 and stores a certificate that
// names the adapter's hello; corpus recheck with the adapter keeps it
// valid, without it says which --exec to pass, and a recorded hello that
// differs from the adapter's (another NumPy) invalidates it.
func TestScanExecCertificate(t *testing.T) {
	py := pythontest.NumPy(t)
	dir := t.TempDir()
	adapter := py + " " + adapterScript("numpy_ops.py") + " rmsnorm"
	out, errs, code := cli(t, dir, "scan", "--exec", adapter, "--profile", tinyProfile(), "--dists", "normal", "--dir", "c")
	if code != 0 || !strings.Contains(out, "CERTIFIED") || !strings.Contains(out, "items 1..192, hidden 192") {
		t.Fatalf("scan: exit %d, want 0 CERTIFIED over 1..192 at hidden 192\n%s\n%s", code, out, errs)
	}
	if strings.Contains(errs, "predates") {
		t.Errorf("the kit's adapter was scanned through the slow path:\n%s", errs)
	}
	d, name, c := onlyCertificate(t, filepath.Join(dir, "c"))
	if c.Adapter == nil || c.Adapter.Exec != adapter || c.Hello["name"] != "numpy.rmsnorm" ||
		!strings.Contains(c.Hello["versions"], "numpy=") || c.Hello["scan"] != "1" || c.Hello["seq"] != "" {
		t.Fatalf("certificate adapter %+v hello %v: want the command line and the hello (versions, scan; no seq)", c.Adapter, c.Hello)
	}

	if out, errs, code = cli(t, dir, "corpus", "recheck", "-dir", "c", "--exec", adapter); code != 0 || !strings.Contains(out, "certificate holds") {
		t.Fatalf("recheck --exec: exit %d, want 0 and the certificate holding\n%s\n%s", code, out, errs)
	}
	if out, errs, code = cli(t, dir, "corpus", "recheck", "-dir", "c"); code == 0 || !strings.Contains(out, "pass --exec '"+adapter+"'") {
		t.Fatalf("recheck without --exec: exit %d, want a failure naming the --exec to pass\n%s\n%s", code, out, errs)
	}

	c.Hello["versions"] = strings.Replace(c.Hello["versions"], "numpy=", "numpy=0.0-", 1)
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.PathOf(name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code = cli(t, dir, "corpus", "recheck", "-dir", "c", "--exec", adapter)
	if code != spec.ExitFinding || !strings.Contains(out, "certificate INVALID") || !strings.Contains(out, "the adapter's hello changed: versions") {
		t.Fatalf("recheck after the hello changed: exit %d, want 1 INVALID naming versions\n%s\n%s", code, out, errs)
	}
}

// TestScanExecDriftMap: scan --exec of a NumPy RMSNorm whose sum of
// squares splits in two halves from 130 rows on (in the upper half of the
// tiny profile's 1..192) gives the exact map, over every value: with the
// kit's steps compared with the items alone in the adapter, and the same
// map with every row's digest sent (BITPARITY_SCAN_AGAINST=none, as
// adapters before that answer).
func TestScanExecDriftMap(t *testing.T) {
	py := pythontest.NumPy(t)
	for _, env := range []string{"", "BITPARITY_SCAN_AGAINST=none "} {
		dir := t.TempDir()
		adapter := env + py + " " + adapterScript("examples/numpy_split.py") + " --from 130"
		out, errs, code := cli(t, dir, "scan", "--exec", adapter, "--profile", tinyProfile(), "--dists", "normal", "--dir", "c")
		if code != spec.ExitFinding || !strings.Contains(out, "rows <= 129 -> A, rows >= 130 -> B") {
			t.Fatalf("scan --exec %q: exit %d, want 1 and the map rows <= 129 -> A, rows >= 130 -> B\n%s\n%s", adapter, code, out, errs)
		}
	}
}

// TestScanExecPredating: an adapter without the scan frames still scans
// (every batch through the pipe) to the same verdict, with a note.
func TestScanExecPredating(t *testing.T) {
	py := pythontest.NumPy(t)
	dir := t.TempDir()
	_, file, _, _ := runtime.Caller(0)
	adapter := py + " " + filepath.Join(filepath.Dir(file), "..", "..", "fuzz", "external", "testdata", "noscan.py") + " rmsnorm"
	out, errs, code := cli(t, dir, "scan", "--exec", adapter, "--to", "40", "--hidden", "64", "--dists", "normal", "--dir", "c")
	if code != 0 || !strings.Contains(out, "CERTIFIED") || !strings.Contains(errs, "predates the scan frames") {
		t.Fatalf("scan: exit %d, want 0 CERTIFIED and a note on stderr\n%s\n%s", code, out, errs)
	}
}

// TestScanPaths: a path scan of the kit's NumPy prefill against its decode
// (two adapters) agrees at every KV length, on one process of each and
// on three (--exec-procs; a negative count is refused); the tile-48 prefill model
// against the decode oracle differs past its tile edge (exit 1).
func TestScanPaths(t *testing.T) {
	py := pythontest.NumPy(t)
	dir := t.TempDir()
	pre := py + " " + adapterScript("numpy_ops.py") + " attn_prefill"
	dec := py + " " + adapterScript("numpy_ops.py") + " attn_decode"
	shape := []string{"--heads", "2", "--kv-heads", "1", "--head-dim", "16", "--dists", "normal"}
	out, errs, code := cli(t, dir, append([]string{"scan", "--exec", pre, "--exec", dec, "--to", "70"}, shape...)...)
	if code != 0 || !strings.Contains(out, "AGREE at every KV length 1..70") {
		t.Fatalf("numpy prefill vs decode: exit %d, want 0 AGREE\n%s\n%s", code, out, errs)
	}
	out, errs, code = cli(t, dir, append([]string{"scan", "--exec", pre, "--exec", dec, "--to", "70", "--exec-procs", "3"}, shape...)...)
	if code != 0 || !strings.Contains(out, "AGREE at every KV length 1..70") {
		t.Fatalf("the same over 3 processes of each adapter: exit %d, want 0 AGREE\n%s\n%s", code, out, errs)
	}
	_, errs, code = cli(t, dir, append([]string{"scan", "--exec", pre, "--exec", dec, "--to", "70", "--exec-procs", "-1"}, shape...)...)
	if code != spec.ExitUsage || !strings.Contains(errs, "--exec-procs") {
		t.Fatalf("--exec-procs -1: exit %d, want 2 and an error naming the flag\n%s", code, errs)
	}
	out, errs, code = cli(t, dir, append([]string{"scan", "--target", "drift-attn-tile48,oracle-attn_decode", "--to", "70"}, shape...)...)
	if code != spec.ExitFinding || !strings.Contains(out, "DIFFER at") {
		t.Fatalf("tile-48 prefill vs decode: exit %d, want 1 DIFFER\n%s\n%s", code, out, errs)
	}
}

// TestScanSaveInputs: a path scan writes each draw's inputs with
// --save-inputs; any other scan refuses the flag (exit 2).
func TestScanSaveInputs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "inputs")
	out, errs, code := cli(t, dir, "scan", "--target", "drift-attn-tile48,oracle-attn_decode", "--to", "20", "--heads", "2",
		"--kv-heads", "1", "--head-dim", "8", "--dists", "normal,heavy", "--save-inputs", in)
	if code != 0 && code != spec.ExitFinding {
		t.Fatalf("path scan with --save-inputs: exit %d\n%s\n%s", code, out, errs)
	}
	for _, d := range []string{"normal-seed1", "heavy-seed2"} {
		for _, f := range []string{"q.npy", "k.npy", "v.npy", "case.json"} {
			if _, err := os.Stat(filepath.Join(in, d, f)); err != nil {
				t.Fatalf("--save-inputs wrote no %s/%s: %v", d, f, err)
			}
		}
	}
	_, errs, code = cli(t, dir, "scan", "--target", "oracle-rmsnorm", "--to", "8", "--hidden", "16", "--save-inputs", in)
	if code != spec.ExitUsage || !strings.Contains(errs, "--save-inputs is for path scans") {
		t.Fatalf("rmsnorm scan with --save-inputs: exit %d, want 2 and a usage error\n%s", code, errs)
	}
}
