package main

import (
	"errors"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/gpu"
	"github.com/bitparity/bitparity/spec"
)

// TestRunGPUsWithoutCUDA: a build without the cuda tag refuses --gpus with
// exit 3 and says why and what to use instead.
func TestRunGPUsWithoutCUDA(t *testing.T) {
	if _, err := gpu.DeviceCount(); !errors.Is(err, gpu.ErrNoCUDA) {
		t.Skip("a cuda build")
	}
	var out, errb strings.Builder
	err := run(&out, &errb, []string{"run", "--gpus", "all", "--targets", "oracle-rmsnorm", "--max-cases", "1"})
	if code := exitCode(err); code != spec.ExitInternal || err == nil ||
		!strings.Contains(err.Error(), "built without CUDA") || !strings.Contains(err.Error(), "--procs") {
		t.Fatalf("exit %d, %v; want 3 and a message naming the missing CUDA and --procs", code, err)
	}
}

func TestRunParallelUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--gpus", "all", "--procs", "2"},
		{"--procs", "-1"},
		{"--shard", "2/2"},
		{"--work-dir", t.TempDir()},
		{"--procs", "2", "--targets", "oracle-rmsnorm", "--relations", "logprob_parity"},
	} {
		if _, errs, code := runArgs(append([]string{"run", "--max-cases", "1"}, args...)...); code != spec.ExitUsage {
			t.Errorf("run %q: exit %d, want 2\n%s", args, code, errs)
		}
	}
}

// parallelRun runs `bitparity run` with 3 CPU worker processes (the test
// binary re-executed as bitparity, worker_test.go's TestMain) and returns
// the merged result, the workers' results and the merged corpus names.
func parallelRun(t *testing.T, args ...string) (merged *spec.Result, shards []*spec.Result, names []string) {
	t.Helper()
	t.Setenv("BITPARITY_TEST_WORKER", "1")
	dir := t.TempDir()
	res := filepath.Join(dir, "merged.json")
	work := filepath.Join(dir, "work")
	cdir := filepath.Join(dir, "corpus")
	out, errs, code := runArgs(append([]string{"run", "--procs", "3", "--json", res, "--corpus", cdir, "--work-dir", work}, args...)...)
	if code != spec.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	merged, err := corpus.ReadResult(res)
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 3; k++ {
		r, err := corpus.ReadResult(filepath.Join(work, "shard-"+string(rune('0'+k)), "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		shards = append(shards, r)
	}
	d, err := corpus.OpenDir(cdir, false)
	if err != nil {
		t.Fatal(err)
	}
	if names, err = d.List(); err != nil {
		t.Fatal(err)
	}
	return merged, shards, names
}

// singleRun is the same campaign in one process.
func singleRun(t *testing.T, args ...string) (*spec.Result, []string) {
	t.Helper()
	dir := t.TempDir()
	res := filepath.Join(dir, "single.json")
	out, errs, code := runArgs(append([]string{"run", "--json", res, "--corpus", filepath.Join(dir, "corpus")}, args...)...)
	if code != spec.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	r, err := corpus.ReadResult(res)
	if err != nil {
		t.Fatal(err)
	}
	d, err := corpus.OpenDir(filepath.Join(dir, "corpus"), false)
	if err != nil {
		t.Fatal(err)
	}
	names, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	return r, names
}

// TestRunProcsInvariant: 3 worker processes over an invariant pair with a
// budget of 40 cases run 14 + 13 + 13 cases (Shard.Budget), exactly the 40
// of a single process, and find nothing.
func TestRunProcsInvariant(t *testing.T) {
	args := []string{"--seed", "5", "--targets", "oracle-rmsnorm", "--relations", "determinism", "--max-cases", "40", "--workers", "1", "--duration", "60s"}
	single, _ := singleRun(t, args...)
	merged, shards, names := parallelRun(t, args...)
	if single.Cases != 40 || merged.Cases != 40 {
		t.Fatalf("cases: single %d, merged %d, want 40 each", single.Cases, merged.Cases)
	}
	for k, r := range shards {
		if want := int64([]int{14, 13, 13}[k]); r.Cases != want {
			t.Errorf("shard %d ran %d cases, want %d", k, r.Cases, want)
		}
	}
	if len(merged.Findings) != 0 || len(names) != 0 {
		t.Errorf("merged: %d findings, %d case files; want none", len(merged.Findings), len(names))
	}
	if !reflect.DeepEqual(merged.Targets, single.Targets) {
		t.Errorf("targets: merged %+v, single %+v", merged.Targets, single.Targets)
	}
}

// TestRunProcsMerge: 3 worker processes over a drift pair without
// shrinking, one case at a time. Each worker stops at the first failing
// draw of its shard; the shard that owns the single process's first
// failing draw finds exactly that case. So the merged result holds every
// worker's finding once (deduplicated by signature, none lost), the single
// run's finding among them, the sum of the workers' cases, and the merged
// corpus holds every worker's case files, the single run's included.
func TestRunProcsMerge(t *testing.T) {
	args := []string{"--seed", "7", "--targets", "drift-rmsnorm-te-mod32", "--relations", "batch_invariance",
		"--no-shrink", "--workers", "1", "--max-cases", "300", "--duration", "60s"}
	single, singleNames := singleRun(t, args...)
	merged, shards, names := parallelRun(t, args...)
	if len(single.Findings) != 1 {
		t.Fatalf("single run: %d findings, want 1", len(single.Findings))
	}
	var cases int64
	union := map[string]bool{}
	for _, r := range shards {
		cases += r.Cases
		for _, f := range r.Findings {
			union[f.Signature] = true
		}
	}
	if merged.Cases != cases {
		t.Errorf("merged cases %d, workers' sum %d", merged.Cases, cases)
	}
	got := map[string]int{}
	for _, f := range merged.Findings {
		got[f.Signature]++
	}
	for sig, n := range got {
		if n != 1 || !union[sig] {
			t.Errorf("merged finding %s: %d times, from a worker: %v", sig, n, union[sig])
		}
	}
	if len(got) != len(union) {
		t.Errorf("merged %d signatures, the workers found %d", len(got), len(union))
	}
	if got[single.Findings[0].Signature] != 1 {
		t.Errorf("the single run's finding %s is not in the merged result %v", single.Findings[0].Signature, got)
	}
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	for _, n := range singleNames {
		if !have[n] {
			t.Errorf("the single run's case file %s is not in the merged corpus %v", n, names)
		}
	}
	var want []string
	for _, r := range shards {
		for _, f := range r.Findings {
			h, err := corpus.CaseHash(f.Case)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, h+".json")
		}
	}
	sort.Strings(want)
	sort.Strings(names)
	if !reflect.DeepEqual(names, want) {
		t.Errorf("merged corpus %v, want the workers' case files %v", names, want)
	}
}

// TestMergeCommand: `bitparity merge` over the shard results of two
// `run --shard` processes (two hosts) gives the unsharded case count, and
// refuses results of another seed.
func TestMergeCommand(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--seed", "5", "--targets", "oracle-rmsnorm", "--relations", "determinism", "--workers", "1", "--duration", "60s"}
	var paths []string
	for i, budget := range []string{"5", "4"} {
		p := filepath.Join(dir, "shard"+string(rune('0'+i))+".json")
		if out, errs, code := runArgs(append([]string{"run", "--shard", string(rune('0'+i)) + "/2", "--max-cases", budget, "--json", p}, args...)...); code != spec.ExitOK {
			t.Fatalf("shard %d: exit %d\n%s\n%s", i, code, out, errs)
		}
		paths = append(paths, p)
	}
	merged := filepath.Join(dir, "merged.json")
	if out, errs, code := runArgs(append([]string{"merge", "--json", merged}, paths...)...); code != spec.ExitOK {
		t.Fatalf("merge: exit %d\n%s\n%s", code, out, errs)
	}
	r, err := corpus.ReadResult(merged)
	if err != nil {
		t.Fatal(err)
	}
	if r.Cases != 9 || len(r.Targets) != 1 || r.Targets[0].Cases != 9 {
		t.Errorf("merged %d cases (targets %+v), want 9", r.Cases, r.Targets)
	}
	other := filepath.Join(dir, "other.json")
	if _, _, code := runArgs("run", "--seed", "6", "--targets", "oracle-rmsnorm", "--relations", "determinism", "--max-cases", "1", "--json", other); code != spec.ExitOK {
		t.Fatal("run seed 6 failed")
	}
	if _, _, code := runArgs("merge", "--json", merged, paths[0], other); code != spec.ExitUsage {
		t.Errorf("merge of two seeds: exit %d, want 2", code)
	}
	if _, _, code := runArgs("merge", paths[0]); code != spec.ExitUsage {
		t.Errorf("merge without --json: exit %d, want 2", code)
	}
}
