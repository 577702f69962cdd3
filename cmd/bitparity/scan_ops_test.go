package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/internal/pythontest"
	"github.com/bitparity/bitparity/spec"
)

// TestScanOps: bitparity scan runs the op packages' targets: a drift
// model prints its exact map with the op's words and exits 1, the oracle
// and per-token FP8 scaling are certified (exit 0), per-tensor FP8
// scaling drifts under neighbour replacement in words that say why, and
// bad flags exit 2.
func TestScanOps(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"--target", "drift-moe-route-tie-high-128", "--to", "130", "--dists", "sensitive"}, 1,
			[]string{"DRIFT", "tokens <= 127 -> A, tokens >= 128 -> B", "draw sensitive, tokens = 128: 34 row(s) differ from the item alone",
				"34 of 128 tokens differ: 34 (26.6%) changed experts (32 by a tie, 2 by a near-tie", "stored: "}},
		{[]string{"--target=oracle-moe_route", "--profile", "mixtral-8x7b", "--to", "40"}, 0,
			[]string{"moe_route, items 1..40, experts 8, top_k 2, fp32", "CERTIFIED: 0 differ; certificate "}},
		{[]string{"--target", "quant-fp8-per-tensor", "--dim", "neighbours", "--to", "8", "--shape", "hidden=32"}, 1,
			[]string{"tokens <= 1 -> A, tokens >= 2 -> B", "differ from the other rows replaced", "depend on other rows' values"}},
		{[]string{"--target", "quant-fp8-per-token", "--dim", "neighbours", "--to", "8", "--shape", "hidden=32"}, 0,
			[]string{"CERTIFIED"}},
		{[]string{"--target", "oracle-moe_route", "--shape", "experts=8,top_k=9", "--to", "4"}, 2, nil},
		{[]string{"--target", "oracle-moe_route", "--shape", "experts", "--to", "4"}, 2, nil},
		{[]string{"--target", "oracle-moe_route"}, 2, nil},
	} {
		out, errs, code := bp(t, append([]string{"scan", "--dir", dir}, tt.args...)...)
		if code != tt.code {
			t.Errorf("scan %v: exit %d, want %d\n%s%s", tt.args, code, tt.code, out, errs)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("scan %v: output lacks %q:\n%s", tt.args, w, out)
			}
		}
	}
}

// TestScanOpsResults: a scan of an op package's target is a first-class
// scan: --json writes the scan results schema (spec.ScanResults, the
// diffs with the op's words), bitparity report renders it, its drift is
// stored in the corpus (corpus ls lists it, corpus recheck reruns it
// through scan.Rerun and keeps it open) and its certificate is stored and
// rechecked (it holds).
func TestScanOpsResults(t *testing.T) {
	dir := t.TempDir()
	drift, cert := filepath.Join(dir, "drift.json"), filepath.Join(dir, "cert.json")
	corp := filepath.Join(dir, "corpus")
	if _, errs, code := bp(t, "scan", "--target", "drift-moe-route-sum-pairwise-64", "--to", "66", "--dists", "sensitive",
		"--dir", corp, "--json", drift); code != 1 {
		t.Fatalf("drift scan: exit %d, want 1\n%s", code, errs)
	}
	if _, errs, code := bp(t, "scan", "--target", "quant-fp8-per-token", "--dim", "neighbours", "--to", "8", "--shape", "hidden=32",
		"--dir", corp, "--json", cert); code != 0 {
		t.Fatalf("certified scan: exit %d, want 0\n%s", code, errs)
	}
	var res spec.ScanResults
	data, err := os.ReadFile(drift)
	if err == nil {
		err = json.Unmarshal(data, &res)
	}
	if err != nil || res.Format != spec.ScanResultsFormat || len(res.Scans) != 1 {
		t.Fatalf("--json: %v, %+v", err, res)
	}
	r := res.Scans[0]
	if r.Verdict != spec.ScanDrift || r.Scan.Op != "moe_route" || r.Scan.Shape.Dims["experts"] != 128 || r.Map.Rule != "tokens <= 63 -> A, tokens >= 64 -> B" ||
		r.DriftFile == "" || len(r.Diffs) == 0 || r.Diffs[0].Value != 64 || !strings.Contains(r.Diffs[0].Words, "changed experts (1 by a near-tie") {
		t.Errorf("--json scan: %+v", r)
	}
	out, errs, code := bp(t, "report", drift, cert)
	if code != 0 || !strings.Contains(out, "scans: 2; 1 certified, 0 agree, 1 drift") || !strings.Contains(out, "changed experts (1 by a near-tie") {
		t.Errorf("report: exit %d\n%s%s", code, out, errs)
	}
	out, _, _ = bp(t, "corpus", "ls", "--dir", corp)
	if !strings.Contains(out, "open") || !strings.Contains(out, "drift-moe-route-sum-pairwise-64 moe_route") || !strings.Contains(out, "quant-fp8-per-token quant_fp8") {
		t.Errorf("corpus ls lacks the scan's drift or certificate:\n%s", out)
	}
	out, errs, code = bp(t, "corpus", "recheck", "--dir", corp)
	for _, w := range []string{"certificate holds   cert-", "scan drift OPEN", "tokens <= 63 -> A, tokens >= 64 -> B", "rechecked 1 scan drift(s): 0 fixed, 1 still drift, 0 could not run"} {
		if !strings.Contains(out, w) {
			t.Errorf("corpus recheck lacks %q (exit %d):\n%s%s", w, code, out, errs)
		}
	}
}

// TestMoEDocCommands runs every command of docs/moe.md's code blocks
// verbatim through sh, in a folder holding adapters/ (a link to this
// checkout's), with the test binary as bitparity and a python3 that
// imports numpy first on PATH, and checks each exits as its comment says,
// so the page stays true. A line with an elided argument ("...") is
// logged, not run: TestScanOpExec replays a real minimal case.
func TestMoEDocCommands(t *testing.T) {
	cmds, err := readmeCommands("../../docs/moe.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) < 5 {
		t.Fatalf("docs/moe.md: %d commands found", len(cmds))
	}
	dir, bin := t.TempDir(), t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	adapters, err := filepath.Abs("../../adapters")
	if err != nil {
		t.Fatal(err)
	}
	links := map[string]string{filepath.Join(bin, "bitparity"): exe, filepath.Join(dir, "adapters"): adapters}
	for _, c := range cmds {
		if strings.Contains(c.cmd, "python3 ") {
			py, err := exec.LookPath(pythontest.NumPy(t))
			if err != nil {
				t.Fatal(err)
			}
			links[filepath.Join(bin, "python3")] = py
			break
		}
	}
	for link, to := range links {
		if err := os.Symlink(to, link); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), cliEnv+"=1", envCorpus+"="+t.TempDir(), // the scans store what they find
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, c := range cmds {
		if !strings.HasPrefix(c.cmd, "bitparity ") {
			t.Fatalf("docs/moe.md:%d: %q is not a bitparity command", c.line, c.cmd)
		}
		if strings.Contains(c.cmd, "...") {
			t.Logf("docs/moe.md:%d: not run (an elided argument): %s", c.line, c.cmd)
			continue
		}
		cmd := exec.Command("sh", "-c", c.cmd)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != c.exit {
			t.Errorf("docs/moe.md:%d: %s: exit %d (%v), want %d\n%s", c.line, c.cmd, code, err, c.exit, tail(string(out), 3000))
		}
	}
}
