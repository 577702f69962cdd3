// Package slurm runs a campaign on a Slurm cluster (docs/scale.md): New
// checks what the campaign asks for and makes its Plan (campaign.json),
// Scripts renders the shard array job, the merge job and the script that
// submits both, Write puts them in the campaign folder, Submit hands them
// to sbatch, and Merge is the merge job: the shards' results and corpus
// folders merged, the reports written and the campaign judged by
// verdict.Of, with every shard that failed named with the command that
// reruns only those.
package slurm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/bitparity/bitparity/internal/atomicfile"
)

// The files of a Slurm campaign folder (docs/scale.md).
const (
	PlanFile    = "campaign.json" // Plan
	ShardJob    = "shard.sbatch"  // the array job
	MergeJob    = "merge.sbatch"  // the merge job
	SubmitFile  = "submit.sh"     // both sbatch calls, for submitting by hand
	VerdictFile = "merge.json"    // Verdict, written by Merge

	planFormat  = "bitparity-slurm"
	planVersion = 1
)

// Plan is campaign.json: what the shard and merge jobs run.
type Plan struct {
	Format   string    `json:"format"`
	Version  int       `json:"version"`
	Created  time.Time `json:"created"`
	Dir      string    `json:"dir"`
	Bin      string    `json:"bin"`
	Shards   int       `json:"shards"`
	MaxCases int64     `json:"max_cases,omitempty"` // the campaign's --max-cases, split by spec.Shard.Budget
	RunArgs  []string  `json:"run_args"`            // run's flags, without --shard, --json, --corpus, --max-cases
	Corpus   string    `json:"corpus"`              // the merged corpus: folder or bucket URL
	Known    string    `json:"known,omitempty"`     // --known of the merge's verdict
}

// Options are `bitparity slurm`'s flags: the campaign folder, its shards,
// the resources of each array task and the run flags of every shard.
type Options struct {
	Dir, Corpus, Known, Bin          string
	Partition, Account, Time, Mem    string
	Shards, GPUsPerTask, CPUsPerTask int
	SbatchArgs                       []string // more #SBATCH lines of both jobs
	RunArgs                          []string // the run flags after --
	Sbatch                           string   // the sbatch program
}

// reserved are run flags that each task sets itself.
var reserved = map[string]string{
	"shard": "each task gets --shard i/N", "json": "each task writes DIR/shards/i/result.json",
	"corpus": "give the merged corpus to bitparity slurm --corpus", "work-dir": "each task works in DIR/shards/i",
	"procs": "use one task per shard (--shards)", "case": "bitparity slurm runs campaigns",
	"known": "give it to bitparity slurm --known (the merge's verdict)",
}

// New checks o and returns the campaign's plan: o.RunArgs without
// --max-cases, which the plan splits over the shards. Bin defaults to
// this program and Corpus to DIR/corpus; an error names the bad flag.
func New(o Options) (*Plan, error) {
	switch {
	case o.Dir == "":
		return nil, errors.New("--dir is required (a folder every node of the cluster sees)")
	case o.Shards < 1:
		return nil, fmt.Errorf("--shards %d: want a count of shards >= 1", o.Shards)
	case o.GPUsPerTask < 0 || o.CPUsPerTask < 0:
		return nil, errors.New("--gpus-per-task and --cpus-per-task want counts >= 0")
	}
	rest, maxCases, err := splitMaxCases(o.RunArgs)
	if err != nil {
		return nil, err
	}
	if maxCases > 0 && maxCases < int64(o.Shards) {
		return nil, fmt.Errorf("--max-cases %d is less than --shards %d: some shards would run no case", maxCases, o.Shards)
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("--dir: %w", err)
	}
	if strings.ContainsAny(dir, " \t\n\r%\"'\\$`") {
		return nil, fmt.Errorf("--dir %q: #SBATCH lines cannot quote spaces, quotes, $, backquotes or %%: choose a plain path", dir)
	}
	bin := o.Bin
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("find own executable (give --bin): %w", err)
		}
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return nil, fmt.Errorf("--bin: %w", err)
	}
	corpusLoc := o.Corpus
	if corpusLoc == "" {
		corpusLoc = filepath.Join(dir, "corpus")
	}
	return &Plan{Format: planFormat, Version: planVersion, Created: time.Now().UTC().Truncate(time.Second),
		Dir: dir, Bin: bin, Shards: o.Shards, MaxCases: maxCases, RunArgs: rest, Corpus: corpusLoc, Known: o.Known}, nil
}

// splitMaxCases takes --max-cases out of run flags args, refusing the
// flags each task sets itself (reserved).
func splitMaxCases(args []string) (rest []string, maxCases int64, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if why, bad := reserved[name]; bad && strings.HasPrefix(a, "-") {
			return nil, 0, fmt.Errorf("run flag --%s is not allowed here: %s", name, why)
		}
		if name != "max-cases" || !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, 0, errors.New("--max-cases needs a value")
			}
			i++
			val = args[i]
		}
		if maxCases, err = strconv.ParseInt(val, 10, 64); err != nil || maxCases < 0 {
			return nil, 0, fmt.Errorf("--max-cases %q: want a count >= 0", val)
		}
	}
	return rest, maxCases, nil
}

// ReadPlan reads DIR/campaign.json; the plan's Dir is dir as this node
// sees it.
func ReadPlan(dir string) (*Plan, error) {
	path := filepath.Join(dir, PlanFile)
	st, err := os.Stat(path)
	if err == nil && (!st.Mode().IsRegular() || st.Size() > 1<<20) {
		err = fmt.Errorf("%s: not a regular file of at most %d bytes", path, 1<<20)
	}
	var b []byte
	if err == nil {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("%w (is %s a campaign folder written by bitparity slurm?)", err, dir)
	}
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if p.Format != planFormat || p.Version != planVersion {
		return nil, fmt.Errorf("%s: format %q version %d, want %q version %d", path, p.Format, p.Version, planFormat, planVersion)
	}
	if p.Shards < 1 || p.Shards > 1<<20 {
		return nil, fmt.Errorf("%s: shards %d, want 1..%d", path, p.Shards, 1<<20)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		p.Dir = abs
	}
	return &p, nil
}

// Scripts are the campaign's three scripts.
type Scripts struct {
	Shard, Merge, Submit string
}

// Render fills the three scripts of plan p with the resources of o.
func Render(p *Plan, o Options) (*Scripts, error) {
	var common []string
	if o.Partition != "" {
		common = append(common, "--partition="+o.Partition)
	}
	if o.Account != "" {
		common = append(common, "--account="+o.Account)
	}
	for _, a := range o.SbatchArgs {
		if strings.ContainsAny(a, "\n\r") {
			return nil, fmt.Errorf("--sbatch-arg %q: one line, please", a)
		}
		common = append(common, a)
	}
	data := map[string]any{
		"P": p, "Last": p.Shards - 1, "GPUs": o.GPUsPerTask, "GPUsAll": o.GPUsPerTask > 1 && !hasFlag(p.RunArgs, "gpus"), "CPUs": o.CPUsPerTask,
		"Mem": o.Mem, "Time": o.Time, "Common": common, "Sbatch": o.Sbatch,
		"ShardJob": filepath.Join(p.Dir, ShardJob), "MergeJob": filepath.Join(p.Dir, MergeJob),
	}
	s := &Scripts{}
	for _, t := range []struct {
		tmpl *template.Template
		out  *string
	}{{shardTemplate, &s.Shard}, {mergeTemplate, &s.Merge}, {submitTemplate, &s.Submit}} {
		var b bytes.Buffer
		if err := t.tmpl.Execute(&b, data); err != nil {
			return nil, err
		}
		*t.out = b.String()
	}
	return s, nil
}

// Write creates the campaign folder (and its logs folder) and writes the
// plan and the scripts.
func Write(p *Plan, s *Scripts) error {
	if err := os.MkdirAll(filepath.Join(p.Dir, "logs"), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	files := []struct {
		name string
		data []byte
	}{{PlanFile, append(b, '\n')}, {ShardJob, []byte(s.Shard)}, {MergeJob, []byte(s.Merge)}, {SubmitFile, []byte(s.Submit)}}
	for _, f := range files {
		if err := atomicfile.Write(filepath.Join(p.Dir, f.name), f.data); err != nil {
			return err
		}
	}
	return nil
}

// Submit runs sbatch (the program prog) for the array job, then for the
// merge job with --dependency=afterany on it, and returns both job ids.
func Submit(prog string, p *Plan) (shardJob, mergeJob string, err error) {
	jid, err := sbatch(prog, "--parsable", filepath.Join(p.Dir, ShardJob))
	if err != nil {
		return "", "", err
	}
	mid, err := sbatch(prog, "--parsable", "--dependency=afterany:"+jid, filepath.Join(p.Dir, MergeJob))
	if err != nil {
		return jid, "", fmt.Errorf("%w (the array job %s is queued: scancel it, or submit %s by hand with --dependency=afterany:%s)", err, jid, filepath.Join(p.Dir, MergeJob), jid)
	}
	return jid, mid, nil
}

// sbatch runs the sbatch program and returns the job id it printed
// (--parsable: "ID" or "ID;CLUSTER").
func sbatch(prog string, args ...string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.Command(prog, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", prog, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	id, _, _ := strings.Cut(strings.TrimSpace(out.String()), ";")
	if id == "" {
		return "", fmt.Errorf("%s %s printed no job id", prog, strings.Join(args, " "))
	}
	return id, nil
}

// hasFlag reports whether run flags args set the flag name.
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); n == name {
			return true
		}
	}
	return false
}
