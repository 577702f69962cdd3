package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/bitparity/bitparity/internal/atomicfile"
	"github.com/bitparity/bitparity/spec"
)

// The files of a Slurm campaign folder (docs/scale.md).
const (
	slurmPlanFile    = "campaign.json" // slurmPlan
	slurmShardJob    = "shard.sbatch"  // the array job
	slurmMergeJob    = "merge.sbatch"  // the merge job
	slurmSubmit      = "submit.sh"     // both sbatch calls, for submitting by hand
	slurmVerdict     = "merge.json"    // slurmVerdictT, written by slurm merge
	slurmPlanFormat  = "bitparity-slurm"
	slurmPlanVersion = 1
)

// slurmPlan is campaign.json: what the shard and merge jobs run.
type slurmPlan struct {
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

// slurmFlags are `bitparity slurm`'s flags.
type slurmFlags struct {
	dir, corpus, known, bin                            string
	partition, account, timeLimit, mem                 string
	shards, gpusPerTask, cpusPerTask                   int
	sbatchArgs                                         multiFlag
	dryRun, writeOnly                                  bool
	runArgs                                            []string
	maxCases                                           int64
	shardScript, mergeScript, submitScript, sbatchPath string
}

// slurmCmd is `bitparity slurm [flags] -- RUN FLAGS` (write the campaign
// folder and submit it) or `bitparity slurm merge DIR` (the merge job,
// slurm_merge.go).
func slurmCmd(stdout, stderr io.Writer, args []string) error {
	if len(args) > 0 && args[0] == "merge" {
		return slurmMergeCmd(stdout, stderr, args[1:])
	}
	fs := flag.NewFlagSet("slurm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sf := &slurmFlags{}
	fs.StringVar(&sf.dir, "dir", "", "campaign folder `DIR` on a filesystem every node sees: scripts, logs, shard results, merged result and reports (required)")
	fs.IntVar(&sf.shards, "shards", 0, "number of shards `N`: array tasks 0..N-1, task i runs run --shard i/N (required)")
	fs.IntVar(&sf.gpusPerTask, "gpus-per-task", 0, "GPUs per array task (#SBATCH --gpus-per-task); with more than 1, each task runs --gpus all over its GPUs")
	fs.IntVar(&sf.cpusPerTask, "cpus-per-task", 0, "CPUs per array task (#SBATCH --cpus-per-task; 0: the cluster's default)")
	fs.StringVar(&sf.partition, "partition", "", "Slurm partition of both jobs")
	fs.StringVar(&sf.account, "account", "", "Slurm account of both jobs")
	fs.StringVar(&sf.timeLimit, "time", "", "time limit of each array task (#SBATCH --time, e.g. 2:00:00); give the campaign's --duration some room")
	fs.StringVar(&sf.mem, "mem", "", "memory of each array task (#SBATCH --mem, e.g. 16G)")
	fs.Var(&sf.sbatchArgs, "sbatch-arg", "another #SBATCH line for both jobs, e.g. --qos=long (repeatable)")
	fs.StringVar(&sf.corpus, "corpus", "", "merged corpus: a folder or bucket URL (s3://, gs://, azblob://, file://) the merge job writes every shard's case files into (default DIR/corpus)")
	fs.StringVar(&sf.known, "known", "", "comma-separated corpus folders or bucket URLs of known findings, for the merge's verdict (run --known)")
	fs.StringVar(&sf.bin, "bin", "", "the bitparity binary the jobs run, as the nodes see it (default: this program)")
	fs.StringVar(&sf.sbatchPath, "sbatch", "sbatch", "the sbatch program")
	fs.BoolVar(&sf.writeOnly, "write-only", false, "write the folder and scripts, print the commands that submit them, submit nothing")
	fs.BoolVar(&sf.dryRun, "dry-run", false, "print the scripts and the commands, write and submit nothing")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: bitparity slurm --dir DIR --shards N [flags] -- [run flags]")
		fmt.Fprintln(stderr, "       bitparity slurm merge DIR")
		fmt.Fprintln(stderr, "\nWrites DIR/shard.sbatch (an array job: task i runs `bitparity run --shard i/N` with the run")
		fmt.Fprintln(stderr, "flags after --), DIR/merge.sbatch (bitparity slurm merge DIR: merged result, reports, corpus,")
		fmt.Fprintln(stderr, "verdict; it names every shard that failed and the sbatch command that reruns only those)")
		fmt.Fprintln(stderr, "and DIR/submit.sh, then submits the array and the merge with --dependency=afterany.")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	if ok, err := parse(fs, args); !ok {
		return err
	}
	sf.runArgs = fs.Args()
	plan, err := sf.plan()
	if err != nil {
		return err
	}
	if err := sf.render(plan); err != nil {
		return withCode(spec.ExitInternal, err)
	}
	if sf.dryRun {
		fmt.Fprintf(stdout, "# %s\n%s\n# %s\n%s\n# %s\n%s", filepath.Join(plan.Dir, slurmShardJob), sf.shardScript,
			filepath.Join(plan.Dir, slurmMergeJob), sf.mergeScript, filepath.Join(plan.Dir, slurmSubmit), sf.submitScript)
		return nil
	}
	if err := sf.write(plan); err != nil {
		return withCode(spec.ExitUsage, err)
	}
	fmt.Fprintf(stdout, "wrote %s, %s, %s and %s\n", filepath.Join(plan.Dir, slurmPlanFile),
		filepath.Join(plan.Dir, slurmShardJob), filepath.Join(plan.Dir, slurmMergeJob), filepath.Join(plan.Dir, slurmSubmit))
	if sf.writeOnly {
		fmt.Fprintf(stdout, "submit with: bash %s\n", spec.ShellQuote(filepath.Join(plan.Dir, slurmSubmit)))
		return nil
	}
	return sf.submit(stdout, plan)
}

// slurmReserved are run flags that bitparity slurm sets per task.
var slurmReserved = map[string]string{
	"shard": "each task gets --shard i/N", "json": "each task writes DIR/shards/i/result.json",
	"corpus": "give the merged corpus to bitparity slurm --corpus", "work-dir": "each task works in DIR/shards/i",
	"procs": "use one task per shard (--shards)", "case": "bitparity slurm runs campaigns",
	"known": "give it to bitparity slurm --known (the merge's verdict)",
}

// plan checks the flags and returns the campaign plan.
func (sf *slurmFlags) plan() (*slurmPlan, error) {
	switch {
	case sf.dir == "":
		return nil, usageErr("slurm: --dir is required (a folder every node of the cluster sees)")
	case sf.shards < 1:
		return nil, usageErr("slurm: --shards %d: want a count of shards >= 1", sf.shards)
	case sf.gpusPerTask < 0 || sf.cpusPerTask < 0:
		return nil, usageErr("slurm: --gpus-per-task and --cpus-per-task want counts >= 0")
	case sf.dryRun && sf.writeOnly:
		return nil, usageErr("slurm: --dry-run and --write-only exclude each other")
	}
	var rest []string
	for i := 0; i < len(sf.runArgs); i++ {
		a := sf.runArgs[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if why, bad := slurmReserved[name]; bad && strings.HasPrefix(a, "-") {
			return nil, usageErr("slurm: run flag --%s is not allowed here: %s", name, why)
		}
		if name != "max-cases" || !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(sf.runArgs) {
				return nil, usageErr("slurm: --max-cases needs a value")
			}
			i++
			val = sf.runArgs[i]
		}
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil || n < 0 {
			return nil, usageErr("slurm: --max-cases %q: want a count >= 0", val)
		}
		sf.maxCases = n
	}
	if sf.maxCases > 0 && sf.maxCases < int64(sf.shards) {
		return nil, usageErr("slurm: --max-cases %d is less than --shards %d: some shards would run no case", sf.maxCases, sf.shards)
	}
	dir, err := filepath.Abs(sf.dir)
	if err != nil {
		return nil, usageErr("slurm: --dir: %v", err)
	}
	if strings.ContainsAny(dir, " \t\n\r%\"'\\$`") {
		return nil, usageErr("slurm: --dir %q: #SBATCH lines cannot quote spaces, quotes, $, backquotes or %%: choose a plain path", dir)
	}
	bin := sf.bin
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return nil, withCode(spec.ExitInternal, fmt.Errorf("slurm: find own executable (give --bin): %w", err))
		}
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return nil, usageErr("slurm: --bin: %v", err)
	}
	corpusLoc := sf.corpus
	if corpusLoc == "" {
		corpusLoc = filepath.Join(dir, "corpus")
	}
	if err := checkBucket(corpusLoc); err != nil {
		return nil, usageErr("slurm: --corpus: %v", err)
	}
	for _, k := range strings.Split(sf.known, ",") {
		if err := checkBucket(strings.TrimSpace(k)); err != nil {
			return nil, usageErr("slurm: --known: %v", err)
		}
	}
	return &slurmPlan{Format: slurmPlanFormat, Version: slurmPlanVersion, Created: time.Now().UTC().Truncate(time.Second),
		Dir: dir, Bin: bin, Shards: sf.shards, MaxCases: sf.maxCases, RunArgs: rest, Corpus: corpusLoc, Known: sf.known}, nil
}

var slurmTemplates = template.Must(template.New("shard").Funcs(template.FuncMap{"q": spec.ShellQuote, "qall": spec.ShellJoin}).Parse(`#!/bin/bash
# bitparity campaign: the shard array job, written by bitparity slurm (plan: {{.P.Dir}}/campaign.json).
# Task i of 0..{{.Last}} runs shard i/{{.P.Shards}} of the campaign (draw k of each pair of target
# and relation belongs to shard k mod {{.P.Shards}}) and leaves in {{.P.Dir}}/shards/i:
#   result.json  the shard's result (bitparity run --json)
#   corpus/      its findings as case files
#   exit         the run's exit status, written last (143: the task was sent SIGTERM by
#                scancel, its time limit or preemption); a task without it was killed,
#                or never ran; the merge job names each such shard
# Rerun only some shards with sbatch --array=2,5 {{q .ShardJob}}, then merge again
# (bitparity slurm merge {{q .P.Dir}} prints the exact command).
#SBATCH --job-name=bitparity-shard
#SBATCH --array=0-{{.Last}}
#SBATCH --output={{.P.Dir}}/logs/shard-%a.out
{{- if .GPUs}}
#SBATCH --gpus-per-task={{.GPUs}}{{end}}
{{- if .CPUs}}
#SBATCH --cpus-per-task={{.CPUs}}{{end}}
{{- if .Mem}}
#SBATCH --mem={{.Mem}}{{end}}
{{- if .Time}}
#SBATCH --time={{.Time}}{{end}}
{{- range .Common}}
#SBATCH {{.}}{{end}}
set -u
# scancel, the time limit and preemption send SIGTERM to the task's processes: the run
# stops; this script records that the shard did not finish.
trap 'terminated=1' TERM
i=${SLURM_ARRAY_TASK_ID:?submit this script with sbatch: it is an array job}
out={{q .P.Dir}}/shards/$i
mkdir -p "$out"
# a rerun starts over; the corpus folder stays (content-addressed, nothing overwritten)
rm -f "$out/exit" "$out/result.json"
{{- if .P.MaxCases}}
# the shard's share of --max-cases {{.P.MaxCases}}: the draws k < {{.P.MaxCases}} with k mod {{.P.Shards}} == i
budget=$(( ({{.P.MaxCases}} - i + {{.P.Shards}} - 1) / {{.P.Shards}} ))
{{- end}}
{{q .P.Bin}} run --shard "$i/{{.P.Shards}}" --json "$out/result.json" --corpus "$out/corpus"{{if .P.MaxCases}} --max-cases "$budget"{{end}}{{if .GPUsAll}} --gpus all{{end}}{{if .P.RunArgs}} {{qall .P.RunArgs}}{{end}}
code=$?
if [ -n "${terminated:-}" ]; then code=143; fi
echo "$code" > "$out/exit.tmp" && mv "$out/exit.tmp" "$out/exit"
# 1 is the shard's own verdict (a finding it did not expect, a control another
# shard found): the merge judges the campaign, so the task succeeded.
if [ "$code" -le 1 ]; then exit 0; fi
exit "$code"
`))

var slurmMergeTemplate = template.Must(template.New("merge").Funcs(template.FuncMap{"q": spec.ShellQuote}).Parse(`#!/bin/bash
# bitparity campaign: the merge job, written by bitparity slurm (plan: {{.P.Dir}}/campaign.json).
# Submitted with --dependency=afterany on the shard array job, so it runs when every
# task has ended, failed ones too. It writes {{.P.Dir}}/result.json (the shards merged),
# {{.P.Dir}}/report/, the corpus {{.P.Corpus}} and {{.P.Dir}}/merge.json (verdict,
# missing shards, the command that reruns them), and exits like bitparity run:
# 0 nothing unexpected, 1 an unexpected finding or a missed control, 3 a shard
# failed or is missing (the merged result then covers the other shards only).
#SBATCH --job-name=bitparity-merge
#SBATCH --output={{.P.Dir}}/logs/merge-%j.out
{{- range .Common}}
#SBATCH {{.}}{{end}}
exec {{q .P.Bin}} slurm merge {{q .P.Dir}}
`))

var slurmSubmitTemplate = template.Must(template.New("submit").Funcs(template.FuncMap{"q": spec.ShellQuote}).Parse(`#!/bin/bash
# Submit the bitparity campaign in {{.P.Dir}}: the shard array job, then the merge job
# once every task has ended (afterany: a failed shard is reported by the merge).
set -euo pipefail
jid=$({{q .Sbatch}} --parsable {{q .ShardJob}})
jid=${jid%%;*}
echo "shard array job $jid"
mid=$({{q .Sbatch}} --parsable --dependency=afterany:$jid {{q .MergeJob}})
echo "merge job ${mid%%;*}"
`))

// render fills the three scripts.
func (sf *slurmFlags) render(p *slurmPlan) error {
	var common []string
	if sf.partition != "" {
		common = append(common, "--partition="+sf.partition)
	}
	if sf.account != "" {
		common = append(common, "--account="+sf.account)
	}
	for _, a := range sf.sbatchArgs {
		if strings.ContainsAny(a, "\n\r") {
			return fmt.Errorf("slurm: --sbatch-arg %q: one line, please", a)
		}
		common = append(common, a)
	}
	data := map[string]any{
		"P": p, "Last": p.Shards - 1, "GPUs": sf.gpusPerTask, "GPUsAll": sf.gpusPerTask > 1 && !slurmHasFlag(p.RunArgs, "gpus"), "CPUs": sf.cpusPerTask,
		"Mem": sf.mem, "Time": sf.timeLimit, "Common": common, "Sbatch": sf.sbatchPath,
		"ShardJob": filepath.Join(p.Dir, slurmShardJob), "MergeJob": filepath.Join(p.Dir, slurmMergeJob),
	}
	for _, t := range []struct {
		tmpl *template.Template
		out  *string
	}{{slurmTemplates, &sf.shardScript}, {slurmMergeTemplate, &sf.mergeScript}, {slurmSubmitTemplate, &sf.submitScript}} {
		var b bytes.Buffer
		if err := t.tmpl.Execute(&b, data); err != nil {
			return fmt.Errorf("slurm: %w", err)
		}
		*t.out = b.String()
	}
	return nil
}

// write creates the campaign folder and writes the plan and scripts.
func (sf *slurmFlags) write(p *slurmPlan) error {
	if err := os.MkdirAll(filepath.Join(p.Dir, "logs"), 0o755); err != nil {
		return fmt.Errorf("slurm: %w", err)
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("slurm: %w", err)
	}
	files := []struct {
		name string
		data []byte
	}{{slurmPlanFile, append(b, '\n')}, {slurmShardJob, []byte(sf.shardScript)}, {slurmMergeJob, []byte(sf.mergeScript)}, {slurmSubmit, []byte(sf.submitScript)}}
	for _, f := range files {
		if err := atomicfile.Write(filepath.Join(p.Dir, f.name), f.data); err != nil {
			return fmt.Errorf("slurm: %w", err)
		}
	}
	return nil
}

// submit runs sbatch for the array job, then for the merge job with
// --dependency=afterany on it.
func (sf *slurmFlags) submit(stdout io.Writer, p *slurmPlan) error {
	jid, err := sbatch(sf.sbatchPath, "--parsable", filepath.Join(p.Dir, slurmShardJob))
	if err != nil {
		return withCode(spec.ExitInternal, err)
	}
	fmt.Fprintf(stdout, "submitted shard array job %s (%d tasks)\n", jid, p.Shards)
	mid, err := sbatch(sf.sbatchPath, "--parsable", "--dependency=afterany:"+jid, filepath.Join(p.Dir, slurmMergeJob))
	if err != nil {
		return withCode(spec.ExitInternal, fmt.Errorf("%w (the array job %s is queued: scancel it, or submit %s by hand with --dependency=afterany:%s)", err, jid, filepath.Join(p.Dir, slurmMergeJob), jid))
	}
	fmt.Fprintf(stdout, "submitted merge job %s (after job %s ends)\n", mid, jid)
	fmt.Fprintf(stdout, "logs %s; the merged result will be %s, its verdict %s\n",
		filepath.Join(p.Dir, "logs"), filepath.Join(p.Dir, "result.json"), filepath.Join(p.Dir, slurmVerdict))
	return nil
}

// sbatch runs the sbatch program and returns the job id it printed
// (--parsable: "ID" or "ID;CLUSTER").
func sbatch(prog string, args ...string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.Command(prog, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("slurm: %s %s: %w: %s", prog, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	id, _, _ := strings.Cut(strings.TrimSpace(out.String()), ";")
	if id == "" {
		return "", fmt.Errorf("slurm: %s %s printed no job id", prog, strings.Join(args, " "))
	}
	return id, nil
}

// slurmHasFlag reports whether run flags args set the flag name.
func slurmHasFlag(args []string, name string) bool {
	for _, a := range args {
		if n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); n == name {
			return true
		}
	}
	return false
}
