package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/internal/s3test"
	"github.com/bitparity/bitparity/spec"
)

// needEngine skips a test whose engine (a Slurm cluster, an S3 server) is
// missing, or fails it when BITPARITY_REQUIRE_ENGINES=1 (make test-scale,
// which CI runs after installing them).
func needEngine(t *testing.T, format string, a ...any) {
	t.Helper()
	s3test.SkipIfOff(t)
	if os.Getenv("BITPARITY_REQUIRE_ENGINES") == "1" {
		t.Fatalf(format+" (BITPARITY_REQUIRE_ENGINES=1)", a...)
	}
	t.Skipf(format+"; make test-scale installs and starts it", a...)
}

// startSlurm starts a single-node Slurm cluster (scripts/slurm-cluster.sh)
// with its state in a temp folder, points SLURM_CONF at it and stops it
// when the test ends. The jobs run this test binary as bitparity
// (BITPARITY_TEST_WORKER=1, exported to the jobs by sbatch).
func startSlurm(t *testing.T) {
	t.Helper()
	s3test.SkipIfOff(t)
	for _, p := range []string{"slurmctld", "slurmd", "munged", "sbatch", "squeue", "scontrol", "scancel"} {
		if _, err := exec.LookPath(p); err != nil {
			if _, err := os.Stat("/usr/sbin/" + p); err != nil {
				needEngine(t, "no %s here (apt-get install slurm-wlm munge)", p)
			}
		}
	}
	if os.Geteuid() != 0 {
		needEngine(t, "the test Slurm cluster runs as root")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "slurm-cluster.sh"))
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	start := exec.Command(script, "start", state)
	start.Env = append(os.Environ(), "OWNER_PID="+strconv.Itoa(os.Getpid())) // stopped if this test dies
	out, err := start.CombinedOutput()
	t.Cleanup(func() {
		if out, err := exec.Command(script, "stop", state).CombinedOutput(); err != nil {
			t.Errorf("stop the Slurm cluster: %v\n%s", err, out)
		}
	})
	if err != nil {
		t.Fatalf("start the Slurm cluster: %v\n%s", err, out)
	}
	t.Setenv("SLURM_CONF", filepath.Join(state, "slurm.conf"))
	t.Setenv("BITPARITY_TEST_WORKER", "1")
}

var jobIDRE = regexp.MustCompile(`submitted merge job (\d+)`)

// submitSlurm runs `bitparity slurm` and returns the merge job's id.
func submitSlurm(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, code := runArgs(append([]string{"slurm"}, args...)...)
	m := jobIDRE.FindStringSubmatch(out)
	if code != spec.ExitOK || m == nil {
		t.Fatalf("bitparity slurm: exit %d\n%s\n%s", code, out, errs)
	}
	return m[1]
}

// jobState is scontrol's JobState and ExitCode of a job (every task of an
// array job, one line each).
func jobState(t *testing.T, id string) []string {
	t.Helper()
	out, err := exec.Command("scontrol", "-o", "show", "job", id).Output()
	if err != nil {
		t.Fatalf("scontrol show job %s: %v", id, err)
	}
	var states []string
	re := regexp.MustCompile(`JobState=(\S+).*ExitCode=(\S+)`)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if m := re.FindStringSubmatch(line); m != nil {
			states = append(states, m[1]+" "+m[2])
		}
	}
	return states
}

// waitJob waits until job id has ended and returns its state and exit.
func waitJob(t *testing.T, id string, limit time.Duration) string {
	t.Helper()
	end := time.Now().Add(limit)
	for time.Now().Before(end) {
		s := jobState(t, id)
		if len(s) == 1 && !strings.HasPrefix(s[0], "PENDING") && !strings.HasPrefix(s[0], "RUNNING") && !strings.HasPrefix(s[0], "CONFIGURING") && !strings.HasPrefix(s[0], "COMPLETING") {
			return s[0]
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("job %s still %v after %s", id, jobState(t, id), limit)
	return ""
}

// killTask sends SIGKILL to every process of an array task (scontrol
// listpids on this, the only node): the batch script dies with its run.
func killTask(t *testing.T, task string) {
	t.Helper()
	out, err := exec.Command("scontrol", "-o", "show", "job", task).Output()
	m := regexp.MustCompile(`JobId=(\d+)`).FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("scontrol show job %s: %v %s", task, err, out)
	}
	out, err = exec.Command("scontrol", "listpids", string(m[1])).Output()
	if err != nil {
		t.Fatalf("scontrol listpids %s: %v", m[1], err)
	}
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		pid, err := strconv.Atoi(f[0])
		if err != nil || pid <= 1 {
			continue // the header
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	if n == 0 {
		t.Fatalf("task %s: no process to kill in\n%s", task, out)
	}
}

func signatures(fs []spec.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Signature)
	}
	sort.Strings(out)
	return out
}

// bugs is the set of kind, relation and targets of the findings: the bugs
// found, whatever the dtype of the case that showed each.
func bugs(fs []spec.Finding) []string {
	set := map[string]bool{}
	for _, f := range fs {
		set[string(f.Kind)+" "+f.Relation+" "+f.TargetA+" "+f.TargetB] = true
	}
	var out []string
	for b := range set {
		out = append(out, b)
	}
	sort.Strings(out)
	return out
}

// TestSlurmClusterCampaign: a CPU campaign of 400 cases submitted to a real
// single-node Slurm as a 4-task array job plus its afterany merge job,
// against the same campaign unsharded in this process (same seed).
//
// What must be equal, and why not more: a pair of target and relation
// retires at its first finding, in each shard on its own, so a shard can
// find the same bug in a later draw of another dtype (the signature
// includes the dtypes) that the unsharded run never reached; and under
// --max-cases, which draw of a pair a run reaches depends on the fair
// share of time between pairs. The merge must therefore hold exactly the
// union of the shards' findings, every bug of the unsharded run (the same
// identity: kind, op, relation, targets), the same bugs, the same case
// count, and a case file for every finding.
func TestSlurmClusterCampaign(t *testing.T) {
	startSlurm(t)
	start := time.Now()
	dir := filepath.Join(t.TempDir(), "campaign")
	args := append(append([]string{}, slurmShardArgs...), "--max-cases", "400")
	mergeID := submitSlurm(t, append([]string{"--dir", dir, "--shards", "4", "--"}, args...)...)
	state := waitJob(t, mergeID, 3*time.Minute)
	t.Logf("submit to merged: %s (merge job %s)", time.Since(start).Round(time.Millisecond), state)
	if state != "COMPLETED 0:0" {
		log, _ := os.ReadFile(filepath.Join(dir, "logs", "merge-"+mergeID+".out"))
		t.Fatalf("merge job %s\n%s", state, log)
	}
	v := readVerdict(t, dir)
	if v.Exit != 0 || len(v.Merged) != 4 || len(v.Missing) != 0 {
		t.Fatalf("merge.json %+v", v)
	}
	merged, err := corpus.ReadResult(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	union := map[string]bool{}
	for i := 0; i < 4; i++ {
		r, err := corpus.ReadResult(filepath.Join(dir, "shards", string(rune('0'+i)), "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range r.Findings {
			union[f.Signature] = true
		}
	}
	single := filepath.Join(t.TempDir(), "single")
	if out, errs, code := runArgs(append([]string{"run", "--json", single + ".json", "--corpus", single}, args...)...); code != spec.ExitOK {
		t.Fatalf("unsharded run: exit %d\n%s\n%s", code, out, errs)
	}
	one, err := corpus.ReadResult(single + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if merged.Cases != one.Cases || merged.Cases != 400 {
		t.Errorf("cases: merged %d, unsharded %d, want 400", merged.Cases, one.Cases)
	}
	got := signatures(merged.Findings)
	var want []string
	for s := range union {
		want = append(want, s)
	}
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("merged signatures %v, the shards' union %v", got, want)
	}
	// Which draw of a pair comes first within --max-cases depends on the
	// fair share of time between pairs, so a shard may meet a bug at
	// another draw (another dtype or shape) than the unsharded run: the
	// same bug is the same identity (kind, op, relation, targets).
	ids := map[string]bool{}
	for _, f := range merged.Findings {
		ids[spec.Identity(f)] = true
	}
	for _, f := range one.Findings {
		if !ids[spec.Identity(f)] {
			t.Errorf("the unsharded run's bug %s is not in the merged result", spec.Identity(f))
		}
	}
	if b1, b2 := bugs(merged.Findings), bugs(one.Findings); strings.Join(b1, "|") != strings.Join(b2, "|") {
		t.Errorf("bugs: merged %v, unsharded %v", b1, b2)
	}
	mc, _ := corpus.OpenDir(filepath.Join(dir, "corpus"), false)
	sc, _ := corpus.OpenDir(single, false)
	have, _ := mc.List()
	names, _ := sc.List()
	same := 0
	for _, n := range names {
		if _, err := mc.Get(n); err == nil {
			same++
		}
	}
	if len(have) < len(merged.Findings) || len(names) < len(one.Findings) {
		t.Errorf("case files: merged corpus %d for %d findings, unsharded %d for %d", len(have), len(merged.Findings), len(names), len(one.Findings))
	}
	t.Logf("%d of the unsharded run's %d case files are in the merged corpus", same, len(names))
	t.Logf("merged: %d cases, %d findings (%d bugs), %d case files; unsharded: %d findings; wall %s",
		merged.Cases, len(merged.Findings), len(bugs(merged.Findings)), len(have), len(one.Findings), time.Since(start).Round(time.Millisecond))
}

// TestSlurmClusterKilledShard: scancel of array task 2 while it runs
// (SIGTERM, as the time limit and preemption send) and kill -9 of every
// process of task 1 (the batch script and its run, as an OOM kill or a
// lost node would end them) leave a merge (exit 3) that names both shards with their reasons
// and prints the command that reruns only them; running that command
// verbatim reruns shards 1 and 2 and the merge, which then exits 0 over all
// 4 shards.
func TestSlurmClusterKilledShard(t *testing.T) {
	startSlurm(t)
	start := time.Now()
	dir := filepath.Join(t.TempDir(), "campaign")
	args := []string{"--seed", "5", "--targets", "drift-rmsnorm-te-mod32,oracle-rmsnorm", "--relations", "batch_invariance",
		"--workers", "1", "--duration", "6s", "--no-shrink"}
	out, errs, code := runArgs(append([]string{"slurm", "--dir", dir, "--shards", "4", "--"}, args...)...)
	m := regexp.MustCompile(`submitted shard array job (\d+)`).FindStringSubmatch(out)
	if code != spec.ExitOK || m == nil {
		t.Fatalf("bitparity slurm: exit %d\n%s\n%s", code, out, errs)
	}
	arrayID, mergeID := m[1], jobIDRE.FindStringSubmatch(out)[1]
	for _, task := range []string{arrayID + "_1", arrayID + "_2"} {
		for end := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
			s := jobState(t, task)
			if len(s) == 1 && strings.HasPrefix(s[0], "RUNNING") {
				break
			}
			if time.Now().After(end) {
				t.Fatalf("task %s: %v, never running", task, s)
			}
		}
	}
	time.Sleep(time.Second) // well inside their 6 s
	if out, err := exec.Command("scancel", arrayID+"_2").CombinedOutput(); err != nil {
		t.Fatalf("scancel %s_2: %v\n%s", arrayID, err, out)
	}
	killTask(t, arrayID+"_1")
	if s := waitJob(t, mergeID, 3*time.Minute); !strings.HasPrefix(s, "FAILED 3:") {
		t.Errorf("merge job %s, want FAILED with exit 3", s)
	}
	log, err := os.ReadFile(filepath.Join(dir, "logs", "merge-"+mergeID+".out"))
	if err != nil {
		t.Fatal(err)
	}
	v := readVerdict(t, dir)
	if v.Exit != spec.ExitInternal || len(v.Missing) != 2 || v.Missing[0].Shard != 1 || v.Missing[1].Shard != 2 || len(v.Merged) != 2 ||
		!strings.Contains(v.Missing[0].Reason, "no exit status") || !strings.Contains(v.Missing[1].Reason, "terminated (SIGTERM") ||
		!strings.Contains(v.Resubmit, "--array=1,2 ") {
		t.Fatalf("merge.json %+v\n%s", v, log)
	}
	for _, want := range []string{"MISSING 2 of 4 shard(s)", "shard 1/4: no exit status", "shard 2/4: terminated", v.Resubmit} {
		if !strings.Contains(string(log), want) {
			t.Errorf("merge log lacks %q:\n%s", want, log)
		}
	}
	t.Logf("killed shards reported: 1: %s; 2: %s", v.Missing[0].Reason, v.Missing[1].Reason)
	// the printed command, verbatim
	var rout, rerr bytes.Buffer
	rerun := exec.Command("bash", "-c", v.Resubmit)
	rerun.Stdout, rerun.Stderr = &rout, &rerr
	if err := rerun.Run(); err != nil {
		t.Fatalf("%s: %v\n%s%s", v.Resubmit, err, rout.String(), rerr.String())
	}
	m = regexp.MustCompile(`Submitted batch job (\d+)`).FindStringSubmatch(rout.String())
	if m == nil {
		t.Fatalf("the rerun printed no merge job: %s", rout.String())
	}
	if s := waitJob(t, m[1], 3*time.Minute); s != "COMPLETED 0:0" {
		log, _ := os.ReadFile(filepath.Join(dir, "logs", "merge-"+m[1]+".out"))
		t.Fatalf("merge after the rerun: %s\n%s", s, log)
	}
	if v := readVerdict(t, dir); v.Exit != 0 || len(v.Merged) != 4 || len(v.Missing) != 0 {
		t.Errorf("merge.json after the rerun %+v", v)
	}
	t.Logf("kill, report, rerun, merge: %s", time.Since(start).Round(time.Millisecond))
}
