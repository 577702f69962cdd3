package slurm

import (
	"text/template"

	"github.com/bitparity/bitparity/spec"
)

// The scripts of a campaign folder (Render fills them).
var shardTemplate = template.Must(template.New("shard").Funcs(template.FuncMap{"q": spec.ShellQuote, "qall": spec.ShellJoin}).Parse(`#!/bin/bash
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

var mergeTemplate = template.Must(template.New("merge").Funcs(template.FuncMap{"q": spec.ShellQuote}).Parse(`#!/bin/bash
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

var submitTemplate = template.Must(template.New("submit").Funcs(template.FuncMap{"q": spec.ShellQuote}).Parse(`#!/bin/bash
# Submit the bitparity campaign in {{.P.Dir}}: the shard array job, then the merge job
# once every task has ended (afterany: a failed shard is reported by the merge).
set -euo pipefail
jid=$({{q .Sbatch}} --parsable {{q .ShardJob}})
jid=${jid%%;*}
echo "shard array job $jid"
mid=$({{q .Sbatch}} --parsable --dependency=afterany:$jid {{q .MergeJob}})
echo "merge job ${mid%%;*}"
`))
