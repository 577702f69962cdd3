package main

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bitparity/bitparity/slurm"
	"github.com/bitparity/bitparity/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ (slurm-dry-run.golden, scan-results.json)")

// TestSlurmDryRunGolden: --dry-run prints the three scripts of a GPU
// campaign (array of 8 tasks, 2 GPUs each, so --gpus all within a task;
// partition, time, an extra #SBATCH line, --max-cases split per shard, run
// flags quoted) and writes nothing.
func TestSlurmDryRunGolden(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "campaign")
	out, errs, code := runArgs("slurm", "--dir", dir, "--shards", "8", "--gpus-per-task", "2", "--cpus-per-task", "16",
		"--partition", "gpu", "--time", "2:00:00", "--sbatch-arg", "--qos=nightly", "--bin", "/opt/bitparity/bin/bitparity",
		"--dry-run", "--", "--duration", "90m", "--seed", "7", "--max-cases", "1000000", "--targets", "cuda-rmsnorm,it's")
	if code != spec.ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("--dry-run created %s", dir)
	}
	got := strings.ReplaceAll(out, dir, "/shared/campaign")
	golden := filepath.Join("testdata", "slurm-dry-run.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/bitparity -run TestSlurmDryRunGolden -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("dry run differs from %s (-update rewrites it):\n%s", golden, got)
	}
}

// TestSlurmUsage: bad flags exit 2 with a message naming the problem.
func TestSlurmUsage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shards", "4"}, "--dir is required"},
		{[]string{"--dir", dir}, "--shards 0"},
		{[]string{"--dir", dir, "--shards", "4", "--", "--shard", "1/2"}, "--shard is not allowed"},
		{[]string{"--dir", dir, "--shards", "4", "--", "--json=x.json"}, "--json is not allowed"},
		{[]string{"--dir", dir, "--shards", "4", "--", "--corpus", "c"}, "bitparity slurm --corpus"},
		{[]string{"--dir", dir, "--shards", "4", "--", "--max-cases", "3"}, "less than --shards"},
		{[]string{"--dir", dir, "--shards", "4", "--", "--max-cases", "x"}, "want a count"},
		{[]string{"--dir", dir + "/a b", "--shards", "4"}, "plain path"},
		{[]string{"--dir", dir, "--shards", "4", "--dry-run", "--write-only"}, "exclude each other"},
	} {
		var out, errb strings.Builder
		err := run(&out, &errb, append([]string{"slurm"}, tc.args...))
		if code := exitCode(err); code != spec.ExitUsage || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("slurm %q: exit %d, %v; want 2 and %q", tc.args, code, err, tc.want)
		}
	}
	if _, _, code := runArgs("slurm", "merge", t.TempDir()); code != spec.ExitUsage {
		t.Errorf("slurm merge of a folder without campaign.json: exit %d, want 2", code)
	}
}

// slurmShardArgs is the CPU campaign the Slurm tests shard: one drift
// model with its oracle over three relations, without shrinking (the
// signatures then do not depend on a shrink budget under load), 400 cases.
var slurmShardArgs = []string{"--seed", "3", "--targets", "drift-rmsnorm-te-mod32,oracle-rmsnorm",
	"--relations", "batch_invariance,padding,oracle_parity", "--workers", "1", "--duration", "120s", "--no-shrink"}

// runShardHere does what shard.sbatch does for task i, in this process.
func runShardHere(t *testing.T, dir string, i, n int, maxCases int64) {
	t.Helper()
	out := filepath.Join(dir, "shards", strconv.Itoa(i))
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	budget := spec.Shard{Index: i, Count: n}.Budget(maxCases)
	args := append([]string{"run", "--shard", strconv.Itoa(i) + "/" + strconv.Itoa(n), "--json", filepath.Join(out, "result.json"),
		"--corpus", filepath.Join(out, "corpus"), "--max-cases", strconv.FormatInt(budget, 10)}, slurmShardArgs...)
	o, e, code := runArgs(args...)
	if code > spec.ExitFinding {
		t.Fatalf("shard %d: exit %d\n%s\n%s", i, code, o, e)
	}
	if err := os.WriteFile(filepath.Join(out, "exit"), []byte(strconv.Itoa(code)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readVerdict(t *testing.T, dir string) slurm.Verdict {
	t.Helper()
	return readJSON[slurm.Verdict](t, filepath.Join(dir, slurm.VerdictFile))
}

// TestSlurmMergeMissingShard: the merge of a campaign whose shard 2 never
// wrote its exit status (a killed task) and whose shard 3 exited 3 names
// both, prints the sbatch command that reruns only 2 and 3, merges the
// others and exits 3; once those shards ran, the merge exits 0 over all 4.
// The tasks run in this process, as shard.sbatch would run them.
func TestSlurmMergeMissingShard(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "campaign")
	if _, errs, code := runArgs(append([]string{"slurm", "--dir", dir, "--shards", "4", "--write-only", "--"}, append(slurmShardArgs, "--max-cases", "200")...)...); code != spec.ExitOK {
		t.Fatalf("slurm --write-only: exit %d\n%s", code, errs)
	}
	runShardHere(t, dir, 0, 4, 200)
	runShardHere(t, dir, 1, 4, 200)
	os.MkdirAll(filepath.Join(dir, "shards", "2"), 0o755)
	os.MkdirAll(filepath.Join(dir, "shards", "3"), 0o755)
	os.WriteFile(filepath.Join(dir, "shards", "3", "exit"), []byte("3\n"), 0o644)

	out, errs, code := runArgs("slurm", "merge", dir)
	if code != spec.ExitInternal {
		t.Fatalf("merge with shards 2 and 3 missing: exit %d, want 3\n%s\n%s", code, out, errs)
	}
	resubmit := "jid=$(sbatch --parsable --array=2,3 " + filepath.Join(dir, "shard.sbatch") + ") && sbatch --dependency=afterany:${jid%%;*} " + filepath.Join(dir, "merge.sbatch")
	for _, want := range []string{"MISSING 2 of 4 shard(s)", "shard 2/4: no exit status", "shard 3/4: bitparity run exited 3", resubmit} {
		if !strings.Contains(out, want) {
			t.Errorf("merge output lacks %q:\n%s", want, out)
		}
	}
	v := readVerdict(t, dir)
	if v.Exit != spec.ExitInternal || len(v.Missing) != 2 || v.Missing[0].Shard != 2 || v.Missing[1].Shard != 3 || v.Resubmit != resubmit || v.Cases != 100 {
		t.Errorf("merge.json %+v", v)
	}
	runShardHere(t, dir, 2, 4, 200)
	runShardHere(t, dir, 3, 4, 200)
	if out, errs, code = runArgs("slurm", "merge", dir); code != spec.ExitOK {
		t.Fatalf("merge of 4 shards: exit %d\n%s\n%s", code, out, errs)
	}
	if v := readVerdict(t, dir); v.Exit != 0 || len(v.Missing) != 0 || len(v.Merged) != 4 || v.Cases != 200 || v.Findings == 0 {
		t.Errorf("merge.json after the rerun %+v", v)
	}
	for _, p := range []string{"result.json", "report/report.html", "report/junit.xml"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Error(err)
		}
	}
}
