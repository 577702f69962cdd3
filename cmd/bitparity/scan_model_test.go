package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/internal/pythontest"
	"github.com/bitparity/bitparity/spec"
)

// modelRoute is the command line of the NumPy model route with args.
func modelRoute(t *testing.T, args ...string) string {
	return strings.Join(append([]string{pythontest.NumPy(t), adapterScript("examples/numpy_model.py")}, args...), " ")
}

// TestScanModelRequests: scan --exec of the NumPy model route over the
// requests decoded together certifies it and stores a certificate naming
// the route; corpus recheck with the route keeps it, and with a route that
// reverses decode attention from 3 live requests marks it invalid with the
// map. The planted routes (from N = 2, 4 live requests) map exactly:
// requests <= N-1 -> A, requests >= N -> B.
func TestScanModelRequests(t *testing.T) {
	dir := t.TempDir()
	route := modelRoute(t)
	scanArgs := []string{"scan", "--dim", "requests", "--to", "6", "--in", "fp32", "--out", "fp32", "--dir", "c"}
	out, errs, code := cli(t, dir, append(scanArgs, "--exec", route)...)
	if code != spec.ExitOK || !strings.Contains(out, "CERTIFIED: 0 differ") || !strings.Contains(out, "model, requests 1..6, layers 1") {
		t.Fatalf("scan of the invariant route: exit %d\n%s\n%s", code, out, errs)
	}
	_, _, c := onlyCertificate(t, filepath.Join(dir, "c"))
	if c.Adapter == nil || c.Adapter.Exec != route || c.Hello["op"] != "transformer" || c.Scan.Op != spec.OpModel || c.RowsCompared != 2*(1+2+3+4+5+6) {
		t.Errorf("certificate: adapter %+v, hello %v, op %s, %d requests compared", c.Adapter, c.Hello, c.Scan.Op, c.RowsCompared)
	}
	if out, errs, code := cli(t, dir, "corpus", "recheck", "-dir", "c", "--exec", route); code != spec.ExitOK || !strings.Contains(out, "1 hold") {
		t.Errorf("recheck: exit %d\n%s\n%s", code, out, errs)
	}
	out, errs, code = cli(t, dir, "corpus", "recheck", "-dir", "c", "--exec", modelRoute(t, "--drift-from", "3"))
	if code != spec.ExitFinding || !strings.Contains(out, "certificate INVALID") || !strings.Contains(out, "requests <= 2 -> A, requests >= 3 -> B") {
		t.Errorf("recheck on a drifting route: exit %d\n%s\n%s", code, out, errs)
	}

	for _, n := range []int{2, 4} {
		out, errs, code := cli(t, dir, append(scanArgs, "--exec", modelRoute(t, "--drift-from", fmt.Sprint(n)))...)
		want := fmt.Sprintf("drift map: over requests 1..6 (every value, 2 draws): requests <= %d -> A, requests >= %d -> B; not swept above 6", n-1, n)
		if code != spec.ExitFinding || !strings.Contains(out, want) {
			t.Errorf("drift from %d requests: exit %d, want 1 and %q\n%s\n%s", n, code, want, out, errs)
		}
		first := fmt.Sprintf("draw normal, requests = %d: %d request(s) differ from the request alone, first request 0", n, n)
		if !strings.Contains(out, first) {
			t.Errorf("drift from %d requests: no %q in\n%s", n, first, out)
		}
	}
}

// TestScanModelPrompt: scan --dim prompt certifies the invariant route,
// and maps exactly a route whose prefill of several prompts sums its
// attention backwards once the longest prompt has 11 tokens (the other
// requests' prompts have 8).
func TestScanModelPrompt(t *testing.T) {
	dir := t.TempDir()
	args := []string{"scan", "--dim", "prompt", "--to", "14", "--seq-len", "16", "--in", "fp32", "--out", "fp32", "--dir", "c"}
	out, errs, code := cli(t, dir, append(args, "--exec", modelRoute(t))...)
	if code != spec.ExitOK || !strings.Contains(out, "CERTIFIED: 0 differ") || !strings.Contains(out, "prompt 1..14 (request 0's)") {
		t.Fatalf("prompt scan of the invariant route: exit %d\n%s\n%s", code, out, errs)
	}
	out, errs, code = cli(t, dir, append(args, "--exec", modelRoute(t, "--drift-prompt-from", "11"))...)
	want := "drift map: over prompt 1..14 (every value, 2 draws): prompt <= 10 -> A, prompt >= 11 -> B; not swept above 14"
	if code != spec.ExitFinding || !strings.Contains(out, want) {
		t.Errorf("prompt scan of the drifting route: exit %d, want 1 and %q\n%s\n%s", code, want, out, errs)
	}
}

// TestScanModelUsage: a model route scans requests or prompt only, within
// the route's limits; the model's flags go with a model route only.
func TestScanModelUsage(t *testing.T) {
	dir := t.TempDir()
	route := modelRoute(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"scan", "--exec", route, "--dim", "kv", "--to", "4"}, `a model route scans [requests prompt], not "kv"`},
		{[]string{"scan", "--exec", route, "--to", "300"}, "shape.seqs"},
		{[]string{"scan", "--exec", route, "--dim", "prompt", "--to", "4", "--watch", "4"}, "watched request 4 of 4"},
		{[]string{"scan", "--exec", route, "--to", "4", "--requests", "2"}, "seqs and watch are for a prompt scan"},
		{[]string{"scan", "--target", "oracle-rmsnorm", "--to", "4", "--hidden", "8", "--layers", "2"}, "are for a model route"},
	} {
		out, errs, code := cli(t, dir, c.args...)
		if code != spec.ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, want %d and %q\n%s\n%s", c.args, code, spec.ExitUsage, c.want, out, errs)
		}
	}
}
