package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/internal/pythontest"
	"github.com/bitparity/bitparity/spec"
)

// cliEnv makes the test binary the bitparity command (TestMain): each exec
// test runs the commands in their own process, as a user would, because an
// --exec target stays registered in the process that started it.
const cliEnv = "BITPARITY_TEST_CLI"

// cli runs the test binary as `bitparity args...` in dir.
func cli(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), cliEnv+"=1")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return o.String(), e.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), 0
}

// reproAndBundle checks, in dir, that case file caseFile (under corpus c)
// reproduces with --exec drift (exit 1, REPRODUCED, output naming
// recorded) and stays failing in corpus recheck, then bundles c's open
// cases and unbundles them into theirs; it returns the case's path there.
func reproAndBundle(t *testing.T, dir, drift, caseFile, recorded string) (theirs string) {
	t.Helper()
	out, errs, code := cli(t, dir, "repro", "--exec", drift, caseFile)
	if code != spec.ExitFinding || !strings.Contains(out, "REPRODUCED") || !strings.Contains(out, recorded) {
		t.Fatalf("repro --exec: exit %d, want 1 REPRODUCED with %q\n%s\n%s", code, recorded, out, errs)
	}
	if out, errs, code = cli(t, dir, "corpus", "recheck", "-dir", "c", "--exec", drift); code != spec.ExitFinding || !strings.Contains(out, "still failing") {
		t.Fatalf("corpus recheck --exec: exit %d, want 1 still failing\n%s\n%s", code, out, errs)
	}
	if out, errs, code = cli(t, dir, "corpus", "bundle", "-dir", "c", "-open", "-o", "b.tar.gz"); code != 0 {
		t.Fatalf("bundle: exit %d\n%s\n%s", code, out, errs)
	}
	if out, errs, code = cli(t, dir, "corpus", "unbundle", "-dir", "theirs", "b.tar.gz"); code != 0 {
		t.Fatalf("unbundle: exit %d\n%s\n%s", code, out, errs)
	}
	return filepath.Join("theirs", filepath.Base(caseFile))
}

func adapterScript(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "adapters", name)
}

// TestExecFindingReplays: a campaign on the kit's NumPy adapter with a
// planted batch dependence (numpy_ops.py rmsnorm --drift) finds it; the case
// file records the adapter's hello and command line; repro and corpus
// recheck without --exec refuse (exit 2) and quote that command, and
// never run it themselves; with --exec the finding reproduces, also after
// travelling in a bundle.
func TestExecFindingReplays(t *testing.T) {
	py := pythontest.NumPy(t)
	dir := t.TempDir()
	drift := py + " " + adapterScript("numpy_ops.py") + " rmsnorm --drift"
	out, errs, code := cli(t, dir, "run", "--exec", drift, "--relations", "batch_invariance", "--duration", "20s",
		"--seed", "1", "--corpus", "c", "--json", "r.json")
	if code != spec.ExitFinding {
		t.Fatalf("run: exit %d, want 1\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"rows % 32 == 0 -> B, otherwise -> A", "repro: bitparity run --exec '" + drift + "' --case '"} {
		if !strings.Contains(out, want) {
			t.Errorf("run output lacks %q:\n%s", want, out)
		}
	}
	caseName, f := onlyCaseFile(t, filepath.Join(dir, "c"))
	want := spec.Adapter{Target: "exec:numpy-drift.rmsnorm", Name: "numpy-drift.rmsnorm", Device: "cpu",
		About: "numpy: planted drift, the sum of squares backwards when rows % 32 == 0", Exec: drift}
	if len(f.Adapters) != 1 || f.Adapters[0] != want {
		t.Fatalf("case file adapters = %+v, want [%+v]", f.Adapters, want)
	}
	caseFile := filepath.Join("c", filepath.Base(caseName))

	// Without --exec: exit 2, naming the recorded command; nothing runs it.
	sentinel := filepath.Join(dir, "ran")
	f.Adapters[0].Exec = "touch " + sentinel + " && " + drift
	planted := filepath.Join(dir, "planted.json")
	if b, err := corpus.Encode(f); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(planted, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"repro", caseFile}, {"repro", planted}, {"corpus", "recheck", "-dir", "c"}} {
		out, errs, code := cli(t, dir, args...)
		if code != spec.ExitUsage || !strings.Contains(errs, "pass --exec '") {
			t.Errorf("%v: exit %d, want 2 with the --exec to pass\n%s\n%s", args, code, out, errs)
		}
	}
	if _, err := os.Stat(sentinel); err == nil {
		t.Fatal("a command line from a case file was run")
	}
	if g, err := corpus.ReadFile(caseName); err != nil || g.Status.State != corpus.StateOpen || !g.Status.Checked.IsZero() {
		t.Fatalf("a refused recheck touched the case: %+v %v", g.Status, err)
	}

	// With --exec: reproduced here, and after a bundle's round trip.
	theirs := reproAndBundle(t, dir, drift, caseFile, "environment: as recorded")
	if out, errs, code = cli(t, dir, "repro", theirs); code != spec.ExitUsage || !strings.Contains(errs, drift) {
		t.Fatalf("repro of the unbundled case without --exec: exit %d, want 2 quoting the command\n%s\n%s", code, out, errs)
	}
	if out, errs, code = cli(t, dir, "repro", "--exec", drift, theirs); code != spec.ExitFinding {
		t.Fatalf("repro --exec of the unbundled case: exit %d, want 1\n%s\n%s", code, out, errs)
	}

	// Another adapter than the case's: the hint still names the recorded one.
	other := py + " " + adapterScript("numpy_ops.py") + " rmsnorm"
	if out, errs, code = cli(t, dir, "repro", "--exec", other, caseFile); code != spec.ExitUsage || !strings.Contains(errs, "exec:numpy.rmsnorm") {
		t.Fatalf("repro with another adapter: exit %d, want 2 naming what it serves\n%s\n%s", code, out, errs)
	}
	// run --case on an exec: target without its adapter.
	js := (`{"version":1,"op":"rmsnorm","relation":"determinism","targets":["exec:numpy.rmsnorm"],"shape":{"rows":3,"hidden":8},"in":"bf16","out":"bf16","eps":1e-5,"dist":"normal","seed":1,"gen_version":1}`)
	if out, errs, code = cli(t, dir, "run", "--case", js); code != spec.ExitUsage || !strings.Contains(errs, "external adapter") {
		t.Fatalf("run --case without its adapter: exit %d, want 2\n%s\n%s", code, out, errs)
	}
	if out, errs, code = cli(t, dir, "run", "--exec", other, "--case", js); code != 0 {
		t.Fatalf("run --exec --case: exit %d, want 0\n%s\n%s", code, out, errs)
	}
}

// TestRunModelRoute: `bitparity run --exec` on a model route runs a model
// campaign (the NumPy reference decoder holds), records the adapter in the
// result, and refuses a model route mixed with other targets.
func TestRunModelRoute(t *testing.T) {
	py := pythontest.NumPy(t)
	dir := t.TempDir()
	route := py + " " + adapterScript(filepath.Join("examples", "numpy_model.py"))
	out, errs, code := cli(t, dir, "run", "--exec", route, "--max-cases", "2", "--duration", "60s", "--json", "r.json")
	if code != 0 || !strings.Contains(out, "model route(s) [exec:numpy-model.transformer]") {
		t.Fatalf("run: exit %d, want 0\n%s\n%s", code, out, errs)
	}
	res, err := corpus.ReadResult(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Cases != 2 || len(res.Adapters) != 1 || res.Adapters[0].Exec != route || res.Adapters[0].Target != "exec:numpy-model.transformer" {
		t.Fatalf("result: %d cases, adapters %+v", res.Cases, res.Adapters)
	}
	other := py + " " + adapterScript("numpy_ops.py") + " rmsnorm"
	if out, errs, code = cli(t, dir, "run", "--exec", route, "--exec", other, "--duration", "5s"); code != spec.ExitUsage || !strings.Contains(errs, "runs alone") {
		t.Fatalf("model route with another target: exit %d, want 2\n%s\n%s", code, out, errs)
	}
}
