package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/internal/pythontest"
	"github.com/bitparity/bitparity/spec"
)

// TestModelFindingReplays: a model campaign on the NumPy route with its
// planted decode drift (numpy_model.py --drift) finds it and stores it in
// --corpus as a case file with its adapter and drift map, which --known
// then lists as a filed bug (exit 0); repro without
// --exec exits 2 quoting the recorded command; with it the finding
// reproduces (exit 1), in corpus recheck too, and after a bundle's round
// trip into another folder; the route without --drift (the fix) does not
// reproduce it (exit 4, naming how the adapter differs) and recheck marks
// it fixed. The Python kit's test helper drives the same binary.
func TestModelFindingReplays(t *testing.T) {
	py := pythontest.NumPy(t)
	dir := t.TempDir()
	route := py + " " + adapterScript(filepath.Join("examples", "numpy_model.py"))
	drift := route + " --drift"
	// Seed 5 finds the drift under path_parity at L0.attention at its 12th
	// case (the route's two jobs take turns); --no-shrink keeps the test
	// short (the stored file then gets its drift map by an update of the
	// case stored when found: the source's Map still runs).
	out, errs, code := cli(t, dir, "run", "--exec", drift, "--max-cases", "12", "--duration", "60s", "--seed", "5",
		"--no-shrink", "--corpus", "c", "--json", "r.json")
	if code != spec.ExitFinding || !strings.Contains(errs, "found: path_parity exec:numpy-model.transformer") {
		t.Fatalf("run: exit %d, want 1 with a path_parity finding\n%s\n%s", code, out, errs)
	}
	caseName, f := onlyCaseFile(t, filepath.Join(dir, "c"))
	want := spec.Adapter{Target: "exec:numpy-model.transformer", Name: "numpy-model.transformer", Device: "cpu",
		About: "numpy reference decoder, sequential fp32 reductions; planted drift: decode attention sums backwards for 2+ live requests",
		Exec:  drift}
	if f.Case.Op != spec.OpModel || len(f.Adapters) != 1 || f.Adapters[0] != want {
		t.Fatalf("case file: op %s, adapters %+v, want model and [%+v]", f.Case.Op, f.Adapters, want)
	}
	if f.Finding == nil || f.Finding.DriftMap == nil || f.Finding.DriftMap.Rule != "batch <= 1 -> A, batch >= 2 -> B" ||
		!strings.Contains(f.Finding.Message, "first divergence at L0.attention") {
		t.Fatalf("case file finding: %+v", f.Finding)
	}
	if res, err := corpus.ReadResult(filepath.Join(dir, "r.json")); err != nil || len(res.Findings) != 1 || res.Findings[0].Signature != f.Signature {
		t.Fatalf("result: %v, want the case file's finding", err)
	}
	caseFile := filepath.Join("c", filepath.Base(caseName))
	// The same campaign with the corpus as a baseline of filed bugs passes.
	out, errs, code = cli(t, dir, "run", "--exec", drift, "--max-cases", "12", "--duration", "60s", "--seed", "5",
		"--no-shrink", "--known", "c")
	if code != 0 || !strings.Contains(out, "[known (--known c/"+filepath.Base(caseName)+")]") {
		t.Fatalf("run --known: exit %d, want 0 with the finding known\n%s\n%s", code, out, errs)
	}

	if out, errs, code = cli(t, dir, "repro", caseFile); code != spec.ExitUsage || !strings.Contains(errs, "pass --exec '"+drift+"'") {
		t.Fatalf("repro without --exec: exit %d, want 2 quoting the command\n%s\n%s", code, out, errs)
	}
	theirs := reproAndBundle(t, dir, drift, caseFile, "same row, column and bits as recorded")
	if out, errs, code = cli(t, dir, "repro", "--exec", drift, theirs); code != spec.ExitFinding {
		t.Fatalf("repro --exec of the unbundled case: exit %d, want 1\n%s\n%s", code, out, errs)
	}
	out, errs, code = cli(t, dir, "repro", "--exec", route, theirs)
	if code != spec.ExitNotReproduced || !strings.Contains(out, "COULD NOT REPRODUCE") || !strings.Contains(out, "adapter exec:numpy-model.transformer: about: recorded") {
		t.Fatalf("repro on the route without its drift: exit %d, want 4 naming the adapter's difference\n%s\n%s", code, out, errs)
	}
	if out, errs, code = cli(t, dir, "corpus", "recheck", "-dir", "theirs", "--exec", route); code != 0 || !strings.Contains(out, "1 fixed") {
		t.Fatalf("corpus recheck on the fixed route: exit %d, want 0 with 1 fixed\n%s\n%s", code, out, errs)
	}
	if out, errs, code = cli(t, dir, "corpus", "minimize", "-dir", "c", filepath.Base(caseName)); code != spec.ExitUsage || !strings.Contains(errs, "model campaign") {
		t.Fatalf("corpus minimize of a model case: exit %d, want 2\n%s\n%s", code, out, errs)
	}

	// The kit's test helper, as a team's test suite runs it, on this binary.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := `import sys
sys.path.insert(0, sys.argv[1])
from bitparity_adapter.testing import repro, run_campaign
route, case = sys.argv[2], sys.argv[3]
repro(case, route + " --drift").assert_code(1)
repro(case, route).assert_code(4)
out = run_campaign([route], duration="60s", max_cases=2, corpus="pyc")
out.assert_clean()
assert out.cases == 2 and out.case_files == [], (out.cases, out.case_files)
`
	cmd := exec.Command(py, "-c", script, filepath.Join(filepath.Dir(adapterScript("x")), "python"), route, caseFile)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BITPARITY="+exe, cliEnv+"=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the kit's test helper: %v\n%s", err, b)
	}
}
