package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/verdict"
)

// slurmVerdictT is merge.json: the merge job's outcome.
type slurmVerdictT struct {
	Exit     int            `json:"exit"`
	Shards   int            `json:"shards"`
	Merged   []int          `json:"merged"`            // shards whose result is in result.json
	Missing  []slurmMissing `json:"missing,omitempty"` // shards that failed or left no result
	Resubmit string         `json:"resubmit,omitempty"`
	Cases    int64          `json:"cases"`
	Findings int            `json:"findings"`
	Message  string         `json:"message,omitempty"`
}

type slurmMissing struct {
	Shard  int    `json:"shard"`
	Reason string `json:"reason"`
	Log    string `json:"log"`
}

// slurmMergeCmd is `bitparity slurm merge DIR`, the merge job. For each
// shard i of DIR/campaign.json it takes DIR/shards/i/result.json when
// DIR/shards/i/exit says the run ended with 0 or 1 and the result reads
// back; every other shard is missing, with its reason. It merges the
// results (fuzz.MergeResults: findings deduplicated by signature, cases
// summed) into DIR/result.json, the shards' corpus folders into the
// campaign's corpus (a folder or a bucket; put-if-absent), writes the
// reports to DIR/report and the verdict to DIR/merge.json, and prints the
// campaign's summary like bitparity run. Exit 3 when a shard is missing
// (after naming each one and the sbatch command that reruns only those),
// else run's verdict: 1 for an unexpected finding or a missed control.
func slurmMergeCmd(stdout, stderr io.Writer, args []string) error {
	fl := flag.NewFlagSet("slurm merge", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: bitparity slurm merge DIR")
		fmt.Fprintln(stderr, "\nMerges the shards of the Slurm campaign in DIR (written by bitparity slurm); the merge job runs it.")
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &exitError{code: spec.ExitUsage}
	}
	if fl.NArg() != 1 {
		fl.Usage()
		return usageErr("slurm merge: want one campaign folder")
	}
	p, err := readSlurmPlan(fl.Arg(0))
	if err != nil {
		return usageErr("slurm merge: %v", err)
	}
	known, err := loadKnown(p.Known, stderr)
	if err != nil {
		return usageErr("slurm merge: %v", err)
	}
	m := &slurmMerge{plan: p, stdout: stdout, stderr: stderr}
	m.collect()
	return m.finish(known)
}

// readSlurmPlan reads DIR/campaign.json.
func readSlurmPlan(dir string) (*slurmPlan, error) {
	path := filepath.Join(dir, slurmPlanFile)
	b, err := readSmall(path, 1<<20)
	if err != nil {
		return nil, fmt.Errorf("%w (is %s a campaign folder written by bitparity slurm?)", err, dir)
	}
	var p slurmPlan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if p.Format != slurmPlanFormat || p.Version != slurmPlanVersion {
		return nil, fmt.Errorf("%s: format %q version %d, want %q version %d", path, p.Format, p.Version, slurmPlanFormat, slurmPlanVersion)
	}
	if p.Shards < 1 || p.Shards > 1<<20 {
		return nil, fmt.Errorf("%s: shards %d, want 1..%d", path, p.Shards, 1<<20)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		p.Dir = abs // the folder as this node sees it
	}
	return &p, nil
}

// readSmall reads a regular file of at most limit bytes.
func readSmall(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > limit {
		return nil, fmt.Errorf("%s: not a regular file of at most %d bytes", path, limit)
	}
	return os.ReadFile(path)
}

// slurmMerge is one run of the merge job.
type slurmMerge struct {
	plan           *slurmPlan
	stdout, stderr io.Writer
	results        []*spec.Result
	merged         []int
	missing        []slurmMissing
}

func (m *slurmMerge) shardDir(i int) string {
	return filepath.Join(m.plan.Dir, "shards", strconv.Itoa(i))
}

// collect reads every shard's exit status, result and stats.
func (m *slurmMerge) collect() {
	for i := 0; i < m.plan.Shards; i++ {
		dir := m.shardDir(i)
		log := filepath.Join(m.plan.Dir, "logs", fmt.Sprintf("shard-%d.out", i))
		res, reason := verdict.ReadShard(dir)
		if reason != "" {
			m.missing = append(m.missing, slurmMissing{Shard: i, Reason: reason, Log: log})
			continue
		}
		m.results = append(m.results, res)
		m.merged = append(m.merged, i)
	}
}

// resubmitCommand is the shell command that reruns only the missing
// shards and then this merge.
func (m *slurmMerge) resubmitCommand() string {
	ids := make([]string, len(m.missing))
	for k, s := range m.missing {
		ids[k] = strconv.Itoa(s.Shard)
	}
	return fmt.Sprintf("jid=$(sbatch --parsable --array=%s %s) && sbatch --dependency=afterany:${jid%%%%;*} %s",
		strings.Join(ids, ","), spec.ShellQuote(filepath.Join(m.plan.Dir, slurmShardJob)), spec.ShellQuote(filepath.Join(m.plan.Dir, slurmMergeJob)))
}

// finish merges what was collected, writes the result, corpus, reports
// and verdict, and returns the exit.
func (m *slurmMerge) finish(known *verdict.Known) error {
	p := m.plan
	v := slurmVerdictT{Shards: p.Shards, Merged: append([]int{}, m.merged...), Missing: m.missing}
	fmt.Fprintf(m.stdout, "bitparity slurm merge %s: %d of %d shard(s) finished\n", p.Dir, len(m.merged), p.Shards)
	var res *spec.Result
	var err error
	if len(m.results) > 0 {
		if res, err = fuzz.MergeResults(m.results...); err != nil {
			return m.fail(v, spec.ExitInternal, fmt.Errorf("slurm merge: %w", err))
		}
		res.Args = []string{"slurm", "merge", p.Dir}
		if err := runWriteJSONAtomic(filepath.Join(p.Dir, "result.json"), res); err != nil {
			return m.fail(v, spec.ExitInternal, fmt.Errorf("slurm merge: %w", err))
		}
		v.Cases, v.Findings = res.Cases, len(res.Findings)
		if err := m.mergeCorpus(); err != nil {
			return m.fail(v, spec.ExitInternal, err)
		}
		if err := writeReports(filepath.Join(p.Dir, "report"), filepath.Join(p.Dir, "result.json")); err != nil {
			return m.fail(v, spec.ExitInternal, fmt.Errorf("slurm merge: report: %w", err))
		}
		// --expect-controls=false makes any finding fail, as in bitparity run
		sum := verdict.Of(res, verdict.Options{ExpectControls: !slurmNoExpect(p.RunArgs), Known: known})
		runPrintResult(m.stdout, res, sum)
		fmt.Fprintf(m.stdout, "merged result %s, reports %s\n", filepath.Join(p.Dir, "result.json"), filepath.Join(p.Dir, "report"))
		if err := sum.Err(res); err != nil {
			v.Exit, v.Message = sum.Code(), err.Error()
		}
	}
	if len(m.missing) > 0 {
		v.Exit = spec.ExitInternal
		v.Resubmit = m.resubmitCommand()
		v.Message = fmt.Sprintf("%d of %d shard(s) missing; the merged result covers shards %v only", len(m.missing), p.Shards, m.merged)
		if len(m.merged) == 0 {
			v.Message = fmt.Sprintf("none of the %d shard(s) finished: nothing merged", p.Shards)
		}
		fmt.Fprintf(m.stdout, "\nMISSING %d of %d shard(s):\n", len(m.missing), p.Shards)
		for _, s := range m.missing {
			fmt.Fprintf(m.stdout, "  shard %d/%d: %s; log %s\n", s.Shard, p.Shards, s.Reason, s.Log)
		}
		fmt.Fprintf(m.stdout, "rerun only those shards, then this merge:\n  %s\n", v.Resubmit)
	}
	if err := m.writeVerdict(v); err != nil {
		return withCode(spec.ExitInternal, err)
	}
	if v.Exit != spec.ExitOK {
		return &exitError{code: v.Exit, err: fmt.Errorf("slurm merge: %s", v.Message)}
	}
	return nil
}

// slurmNoExpect reports whether the run flags turned --expect-controls off.
func slurmNoExpect(args []string) bool {
	for _, a := range args {
		if name, val, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); name == "expect-controls" && (val == "false" || val == "0") {
			return true
		}
	}
	return false
}

// mergeCorpus puts the case files of every merged shard into the
// campaign's corpus.
func (m *slurmMerge) mergeCorpus() error {
	dst, err := corpus.Open(context.Background(), m.plan.Corpus, true)
	if err != nil {
		return fmt.Errorf("slurm merge: corpus: %w", err)
	}
	var srcs []corpus.Store
	for _, i := range m.merged {
		if d, err := corpus.OpenDir(filepath.Join(m.shardDir(i), "corpus"), false); err == nil {
			srcs = append(srcs, d)
		}
	}
	rep, err := corpus.Merge(dst, srcs...)
	if err != nil {
		return fmt.Errorf("slurm merge: corpus %s: %w", m.plan.Corpus, err)
	}
	if len(rep.Bad) > 0 {
		return fmt.Errorf("slurm merge: corpus: %w", errors.Join(rep.Bad...))
	}
	fmt.Fprintf(m.stdout, "corpus %s: %d case file(s) added from %d shard folder(s), %d already there\n",
		m.plan.Corpus, len(rep.Added), len(srcs), len(rep.Existing))
	return nil
}

// writeVerdict writes merge.json, with the rerun command's && as is (not
// escaped for HTML), so that it can be copied from the file.
func (m *slurmMerge) writeVerdict(v slurmVerdictT) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(m.plan.Dir, slurmVerdict), b.Bytes())
}

// fail writes the verdict of a merge that could not complete and returns
// its error.
func (m *slurmMerge) fail(v slurmVerdictT, code int, err error) error {
	v.Exit, v.Message = code, err.Error()
	if len(m.missing) > 0 {
		v.Resubmit = m.resubmitCommand()
	}
	if werr := m.writeVerdict(v); werr != nil {
		err = errors.Join(err, werr)
	}
	return withCode(code, err)
}
