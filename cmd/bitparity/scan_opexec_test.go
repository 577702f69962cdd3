package main

import (
	"strings"
	"testing"

	"github.com/bitparity/bitparity/internal/pythontest"
)

// TestScanOpExec: the commands of docs/moe.md's "Your own router or
// quantizer": scan --exec of the NumPy moe_route certifies and stores a
// certificate that corpus recheck --exec keeps valid; a router with a
// planted tie-break flip is found at its onset by `scan` (exit 1) and by
// `run --exec`, whose repro is the scan with the same --exec, whose
// --corpus keeps its case, which `repro --exec` replays (and refuses
// without its adapter, or with another) and corpus recheck finds still failing, and whose minimal case
// `run --exec --case` replays; per-tensor
// FP8 scaling drifts under neighbour replacement.
func TestScanOpExec(t *testing.T) {
	py := pythontest.NumPy(t)
	dir := t.TempDir()
	route := py + " " + adapterScript("numpy_ops.py") + " moe_route"
	out, errs, code := cli(t, dir, "scan", "--exec", route, "--shape", "experts=32,top_k=4", "--to", "40", "--dir", "c")
	if code != 0 || !strings.Contains(out, "CERTIFIED") || !strings.Contains(out, "exec:numpy.moe_route moe_route, items 1..40, experts 32, top_k 4") {
		t.Fatalf("scan: exit %d, want 0 CERTIFIED\n%s\n%s", code, out, errs)
	}
	if out, errs, code = cli(t, dir, "corpus", "recheck", "-dir", "c", "--exec", route); code != 0 || !strings.Contains(out, "certificate holds") {
		t.Fatalf("recheck --exec: exit %d, want the certificate holding\n%s\n%s", code, out, errs)
	}
	drift := route + " --moe-tie-high-from 30"
	out, errs, code = cli(t, dir, "scan", "--exec", drift, "--shape", "experts=32,top_k=4", "--to", "40", "--dists", "sensitive")
	if code != 1 || !strings.Contains(out, "tokens <= 29 -> A, tokens >= 30 -> B") || !strings.Contains(out, "by a tie") {
		t.Fatalf("scan of the tie flip: exit %d, want 1 and the map at 30 with ties\n%s\n%s", code, out, errs)
	}
	out, errs, _ = cli(t, dir, "run", "--exec", drift, "--duration", "5s", "--corpus", "rc")
	stored := errs[strings.LastIndex(errs, "; case rc/")+len("; case rc/"):] // the minimal case's
	stored, _, _ = strings.Cut(stored, "\n")
	if !strings.Contains(out, "tokens <= 29 -> A, tokens >= 30 -> B") || !strings.Contains(out, "repro: bitparity scan --exec '"+drift+"'") || stored == "" {
		t.Fatalf("run --exec of the tie flip: want the map at 30, the scan with --exec as repro and its case stored\n%s\n%s", out, errs)
	}
	file := "rc/" + stored
	if ls, errs, _ := cli(t, dir, "corpus", "ls", "--dir", "rc"); !strings.Contains(ls, "open") || !strings.Contains(ls, "moe_route batch_invariance on exec:numpy-drift.moe_route rows=") || !strings.Contains(ls, " top_k=") {
		t.Errorf("corpus ls of the run's corpus lacks its case\n%s\n%s", ls, errs)
	}
	for _, r := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"corpus", "show", file}, 0, "finding: moe_route batch_invariance on exec:numpy-drift.moe_route: row "},
		{[]string{"repro", "--exec", drift, file}, 1, "REPRODUCED"},
		{[]string{"repro", "--exec", route, file}, 2, "the --exec given serve exec:numpy.moe_route"},
		{[]string{"repro", file}, 2, "pass --exec '" + drift + "', the command line recorded with the case"},
		{[]string{"corpus", "recheck", "--dir", "rc", "--exec", drift}, 1, "still failing " + stored},
	} {
		out, errs, code := cli(t, dir, r.args...)
		if code != r.code || !strings.Contains(out+errs, r.want) {
			t.Errorf("%s: exit %d, want %d and %q\n%s\n%s", strings.Join(r.args, " "), code, r.code, r.want, out, errs)
		}
	}
	_, line, _ := strings.Cut(out, "minimal case: ")
	c, _, _ := strings.Cut(line, "\n")
	out, errs, code = cli(t, dir, "run", "--exec", drift, "--case", c)
	if code != 1 || !strings.Contains(out, "changed experts") || !strings.Contains(out, "by a tie") || !strings.Contains(out, "expert_ids[0] (int32): A = ") {
		t.Fatalf("run --case %s: exit %d, want 1, the first differing expert id and the tokens that changed experts by a tie\n%s\n%s", c, code, out, errs)
	}
	quant := py + " " + adapterScript("numpy_ops.py") + " quant_fp8 --fp8-scaling per_tensor"
	out, errs, code = cli(t, dir, "scan", "--exec", quant, "--dim", "neighbours", "--shape", "hidden=64", "--to", "8")
	if code != 1 || !strings.Contains(out, "tokens <= 1 -> A, tokens >= 2 -> B") || !strings.Contains(out, "the batch's amax") {
		t.Fatalf("scan of per-tensor scaling: exit %d, want 1 from 2 tokens\n%s\n%s", code, out, errs)
	}
}
