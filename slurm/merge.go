package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bitparity/bitparity/corpus"
	"github.com/bitparity/bitparity/fuzz"
	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/verdict"
)

// Verdict is merge.json: the merge job's outcome.
type Verdict struct {
	Exit     int       `json:"exit"`
	Shards   int       `json:"shards"`
	Merged   []int     `json:"merged"`            // shards whose result is in result.json
	Missing  []Missing `json:"missing,omitempty"` // shards that failed or left no result
	Resubmit string    `json:"resubmit,omitempty"`
	Cases    int64     `json:"cases"`
	Findings int       `json:"findings"`
	Message  string    `json:"message,omitempty"`
}

// Missing is a shard the merge does not count, and why.
type Missing struct {
	Shard  int    `json:"shard"`
	Reason string `json:"reason"`
	Log    string `json:"log"`
}

// MergeOptions are what a merge knows besides the campaign folder.
type MergeOptions struct {
	// Known is the --known baseline of the verdict (nil: none).
	Known *verdict.Known
	// Reports writes every report of the result file into a folder
	// (bitparity report --out-dir); nil: none.
	Reports func(dir, result string) error
}

// Merged is what Merge did: the merged result (nil when no shard
// finished) and its verdict, the corpus merge, and merge.json.
type Merged struct {
	Result  *spec.Result
	Judged  *verdict.Verdict
	Corpus  *corpus.MergeReport
	Folders int // shard corpus folders merged
	Verdict Verdict
}

// Merge is the merge job of plan p. For each shard i it takes
// DIR/shards/i/result.json when verdict.ReadShard counts it; every other
// shard is Missing, with its reason. It merges the results
// (fuzz.MergeResults: findings deduplicated by signature, cases summed)
// into DIR/result.json and the shards' corpus folders into the plan's
// corpus (put-if-absent), writes the reports to DIR/report, judges the
// merged result (verdict.Of, with --expect-controls as the run flags set
// it) and writes merge.json. Its exit is 3 when a shard is missing (with
// the sbatch command that reruns only those), else the verdict's. An
// error is a merge that could not complete; merge.json then says why.
func Merge(p *Plan, o MergeOptions) (*Merged, error) {
	m := &Merged{Verdict: Verdict{Shards: p.Shards, Merged: []int{}}}
	var results []*spec.Result
	for i := 0; i < p.Shards; i++ {
		res, reason := verdict.ReadShard(shardDir(p, i))
		if reason != "" {
			log := filepath.Join(p.Dir, "logs", fmt.Sprintf("shard-%d.out", i))
			m.Verdict.Missing = append(m.Verdict.Missing, Missing{Shard: i, Reason: reason, Log: log})
			continue
		}
		results = append(results, res)
		m.Verdict.Merged = append(m.Verdict.Merged, i)
	}
	if len(m.Verdict.Missing) > 0 {
		m.Verdict.Resubmit = resubmit(p, m.Verdict.Missing)
	}
	if len(results) > 0 {
		if err := m.merge(p, o, results); err != nil {
			m.Verdict.Exit, m.Verdict.Message = spec.ExitInternal, err.Error()
			return m, errors.Join(err, writeVerdict(p, m.Verdict))
		}
	}
	if n := len(m.Verdict.Missing); n > 0 {
		m.Verdict.Exit = spec.ExitInternal
		m.Verdict.Message = fmt.Sprintf("%d of %d shard(s) missing; the merged result covers shards %v only", n, p.Shards, m.Verdict.Merged)
		if len(results) == 0 {
			m.Verdict.Message = fmt.Sprintf("none of the %d shard(s) finished: nothing merged", p.Shards)
		}
	}
	return m, writeVerdict(p, m.Verdict)
}

// merge merges results into DIR/result.json, the corpus and the reports,
// and judges the merged result.
func (m *Merged) merge(p *Plan, o MergeOptions, results []*spec.Result) error {
	res, err := fuzz.MergeResults(results...)
	if err != nil {
		return err
	}
	res.Args = []string{"slurm", "merge", p.Dir}
	path := filepath.Join(p.Dir, "result.json")
	if err := verdict.WriteResult(path, res); err != nil {
		return err
	}
	m.Result = res
	m.Verdict.Cases, m.Verdict.Findings = res.Cases, len(res.Findings)
	if err := m.mergeCorpus(p); err != nil {
		return err
	}
	if o.Reports != nil {
		if err := o.Reports(filepath.Join(p.Dir, "report"), path); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	// --expect-controls=false makes any finding fail, as in bitparity run
	m.Judged = verdict.Of(res, verdict.Options{ExpectControls: !noExpect(p.RunArgs), Known: o.Known})
	if err := m.Judged.Err(res); err != nil {
		m.Verdict.Exit, m.Verdict.Message = m.Judged.Code(), err.Error()
	}
	return nil
}

// mergeCorpus puts the case files of every merged shard into the plan's
// corpus.
func (m *Merged) mergeCorpus(p *Plan) error {
	dst, err := corpus.Open(context.Background(), p.Corpus, true)
	if err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	var srcs []corpus.Store
	for _, i := range m.Verdict.Merged {
		if d, err := corpus.OpenDir(filepath.Join(shardDir(p, i), "corpus"), false); err == nil {
			srcs = append(srcs, d)
		}
	}
	rep, err := corpus.Merge(dst, srcs...)
	if err != nil {
		return fmt.Errorf("corpus %s: %w", p.Corpus, err)
	}
	if len(rep.Bad) > 0 {
		return fmt.Errorf("corpus: %w", errors.Join(rep.Bad...))
	}
	m.Corpus, m.Folders = rep, len(srcs)
	return nil
}

func shardDir(p *Plan, i int) string { return filepath.Join(p.Dir, "shards", strconv.Itoa(i)) }

// resubmit is the shell command that reruns only the missing shards and
// then the merge.
func resubmit(p *Plan, missing []Missing) string {
	ids := make([]string, len(missing))
	for k, s := range missing {
		ids[k] = strconv.Itoa(s.Shard)
	}
	return fmt.Sprintf("jid=$(sbatch --parsable --array=%s %s) && sbatch --dependency=afterany:${jid%%%%;*} %s",
		strings.Join(ids, ","), spec.ShellQuote(filepath.Join(p.Dir, ShardJob)), spec.ShellQuote(filepath.Join(p.Dir, MergeJob)))
}

// noExpect reports whether the run flags turned --expect-controls off.
func noExpect(args []string) bool {
	for _, a := range args {
		if name, val, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); name == "expect-controls" && (val == "false" || val == "0") {
			return true
		}
	}
	return false
}

// writeVerdict writes merge.json, with the rerun command's && as is (not
// escaped for HTML), so that it can be copied from the file.
func writeVerdict(p *Plan, v Verdict) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(p.Dir, VerdictFile), b.Bytes())
}
