package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bitparity/bitparity/spec"
)

func runArgs(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	err := run(&out, &errb, args)
	return out.String(), errb.String(), exitCode(err)
}

// TestRunCampaign: a short campaign over one drift model and its oracle
// finds the control, prints its drift map, writes a result file, and exits
// 0 because the only findings are the expected control's.
func TestRunCampaign(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	out, errs, code := runArgs("run", "--duration", "4s", "--targets", "drift-gemm-splitk-by-m,oracle-gemm", "--json", path)
	if code != spec.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"rows <= 64 -> A, rows >= 65 -> B", "repro: bitparity run --case '", "invariant targets:", "drift-gemm-splitk-by-m         found by"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	res := readJSON[spec.Result](t, path)
	if res.Version != spec.ResultVersion || res.Cases == 0 || len(res.Findings) == 0 || len(res.Targets) != 2 {
		t.Fatalf("result: version %d, %d cases, %d findings, %d targets", res.Version, res.Cases, len(res.Findings), len(res.Targets))
	}
	for _, ts := range res.Targets {
		if ts.Invariant && ts.Findings != 0 {
			t.Errorf("invariant %s has %d findings", ts.Target, ts.Findings)
		}
	}
	// without --expect-controls every finding makes exit 1
	if _, _, code := runArgs("run", "--duration", "2s", "--targets", "drift-gemm-splitk-by-m", "--no-shrink", "--expect-controls=false"); code != spec.ExitFinding {
		t.Fatalf("--expect-controls=false with a finding: exit %d, want 1", code)
	}
}

// TestRunCase: one case from a repro line; the exit code says whether it
// failed.
func TestRunCase(t *testing.T) {
	drift := `{"version":1,"op":"gemm","relation":"oracle_parity","targets":["drift-gemm-splitk-by-m"],"shape":{"rows":1,"hidden":6,"n":2},"in":"fp16","out":"fp16","dist":"normal","seed":0,"gen_version":1,"rel":{}}`
	out, _, code := runArgs("run", "--case", drift)
	if code != spec.ExitFinding || !strings.Contains(out, "first diverging row 0, column 1") {
		t.Fatalf("drift case: exit %d\n%s", code, out)
	}
	held := strings.Replace(drift, "drift-gemm-splitk-by-m", "oracle-gemm", 1)
	if out, _, code := runArgs("run", "--case", held); code != spec.ExitOK || !strings.Contains(out, "holds") {
		t.Fatalf("oracle case: exit %d\n%s", code, out)
	}
	for _, bad := range [][]string{{"run", "--case", `{"op":"gemm","bogus":1}`}, {"run", "--targets", "nope"}, {"run", "--relations", "nope"}, {"run", "extra"},
		{"run", "--transformer-on", "warp9"}, {"run", "--transformer-on", "cpu,cpu,cpu"}} {
		if _, _, code := runArgs(bad...); code != spec.ExitUsage {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

func TestList(t *testing.T) {
	out, _, code := runArgs("list")
	if code != spec.ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"rmsnorm", "logprob_parity", "oracle-attn_decode", "drift-attn-tile48", "oracle-attn_prefill vs drift-attn-tile48  [must find: negative control]",
		"op packages", "moe_route         a row is one token; experts=128 top_k=8", "drift-moe-route-tie-high-128", "quant-fp8-per-tensor"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q", want)
		}
	}
}

// TestRunCountsWhatItStored: the final progress line counts every finding
// printed as found, and the corpus line counts the case files this run
// stored as it went as added, not as already there; a second run of the
// same seed finds them all there.
func TestRunCountsWhatItStored(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", "--targets", "drift-rmsnorm-te-mod32,drift-gemm-splitk-by-m", "--max-cases", "600", "--workers", "1",
		"--seed", "2", "--duration", "20s", "--corpus", filepath.Join(dir, "c")}
	out, errs, code := runArgs(args...)
	if code != spec.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	found := strings.Count(errs, "\nfound: ")
	if strings.HasPrefix(errs, "found: ") {
		found++
	}
	names, err := filepath.Glob(filepath.Join(dir, "c", "*.json"))
	if err != nil || found == 0 || len(names) == 0 {
		t.Fatalf("%d found: lines, %d case files (%v)\n%s", found, len(names), err, errs)
	}
	if want := fmt.Sprintf("finding%s\n", map[bool]string{true: "", false: "s"}[found == 1]); !strings.Contains(errs, fmt.Sprintf(" %d %s", found, want)) {
		t.Errorf("the done: line does not count the %d finding(s) printed as found:\n%s", found, errs)
	}
	if want := fmt.Sprintf("%d case file(s) added, 0 already there", len(names)); !strings.Contains(out, want) {
		t.Errorf("stdout lacks %q:\n%s", want, out)
	}
	out, errs, code = runArgs(args...)
	if want := fmt.Sprintf("0 case file(s) added, %d already there", len(names)); code != spec.ExitOK || !strings.Contains(out, want) {
		t.Errorf("second run: exit %d, stdout lacks %q:\n%s\n%s", code, want, out, errs)
	}
}

// TestRunGeneratesForItsDuration: with nothing to shrink, a campaign
// generates cases for its whole --duration (no shrinking time is held
// back from it).
func TestRunGeneratesForItsDuration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	out, errs, code := runArgs("run", "--targets", "oracle-rmsnorm", "--relations", "determinism", "--workers", "1",
		"--duration", "7s", "--json", path)
	if code != spec.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	r := readJSON[spec.Result](t, path)
	if d := time.Duration(r.Duration); d < 7*time.Second {
		t.Errorf("the campaign ran %s of its 7s --duration", d)
	}
}
