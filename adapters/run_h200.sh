#!/usr/bin/env bash
# Run every relation of bitparity against the PyTorch adapters on a GPU
# machine (the H200: python3 with torch and CUDA) and write what was found:
# one campaign per op and per adapter variant, each a JSON result, a log
# and a Markdown summary with the exact commands and a repro line per
# finding.
#
#   adapters/run_h200.sh [OUT_DIR]          (default out/h200)
#
# Environment: DURATION (per campaign, default 30s), SEED (1), PYTHON
# (python3), BITPARITY (bin/bitparity; built with go when missing),
# RUNS (space-separated run names to do, default all), BUDGET (seconds for
# the whole script, default 540: runs that would start after it are
# skipped and listed as such).
#
# Needs `bitparity run --exec CMD` (repeatable; fuzz/external.AddAll).
set -uo pipefail
cd "$(dirname "$0")/.."

OUT=${1:-out/h200}
DURATION=${DURATION:-30s}
SEED=${SEED:-1}
PY=${PYTHON:-python3}
BP=${BITPARITY:-bin/bitparity}
BUDGET=${BUDGET:-540}
mkdir -p "$OUT"
start=$(date +%s)

if [ ! -x "$BP" ]; then
  if command -v go >/dev/null 2>&1; then
    go build -o "$BP" ./cmd/bitparity || { echo "run_h200: cannot build $BP" >&2; exit 3; }
  else
    echo "run_h200: $BP is missing and there is no go here: build it elsewhere (go build -o bin/bitparity ./cmd/bitparity) and bring it" >&2
    exit 3
  fi
fi
if ! grep -q -- '-exec' <<<"$("$BP" run -h 2>&1)"; then
  echo "run_h200: $BP has no 'run --exec' flag (wire fuzz/external.AddAll into cmd/bitparity/run.go)" >&2
  exit 3
fi
if ! "$PY" -c 'import torch, numpy' 2>"$OUT/python.err"; then
  echo "run_h200: $PY cannot import torch and numpy:" >&2
  cat "$OUT/python.err" >&2
  exit 3
fi

{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(hostname)"
  "$PY" - <<'EOF'
import torch
print("torch:", torch.__version__, "cuda:", torch.version.cuda, "available:", torch.cuda.is_available())
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0)
    print("gpu:", p.name, "cc: %d.%d" % (p.major, p.minor), "memory: %.0f GiB" % (p.total_memory / 2**30))
EOF
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/nvidia-smi: /'
  echo "bitparity: $("$BP" version 2>/dev/null | head -1)"
  echo "duration per campaign: $DURATION, seed: $SEED"
} > "$OUT/env.txt"
cat "$OUT/env.txt"

A="$PY adapters/torch_ops.py"
# name | adapter command lines (separated by ';') | target names (comma-separated)
RUNLIST=(
  "rmsnorm|$A rmsnorm|exec:torch.rmsnorm"
  "gemm|$A gemm|exec:torch.gemm"
  "logprob|$A logprob|exec:torch.logprob"
  "logprob-native|$A logprob --logprob-dtype native|exec:torch-nativelp.logprob"
  "attention|$A attn_prefill;$A attn_decode|exec:torch.attn_prefill,exec:torch.attn_decode"
  "attention-mask|$A attn_prefill;$A attn_decode --decode-mask always|exec:torch.attn_prefill,exec:torch.attn_decode"
  "attention-flash|$A attn_prefill --sdpa-backend flash;$A attn_decode --sdpa-backend flash|exec:torch-flash.attn_prefill,exec:torch-flash.attn_decode"
  "attention-efficient|$A attn_prefill --sdpa-backend efficient;$A attn_decode --sdpa-backend efficient|exec:torch-efficient.attn_prefill,exec:torch-efficient.attn_decode"
  "attention-math|$A attn_prefill --sdpa-backend math;$A attn_decode --sdpa-backend math|exec:torch-math.attn_prefill,exec:torch-math.attn_decode"
  "gemm-deterministic|$A gemm --deterministic|exec:torch-det.gemm"
  "rmsnorm-deterministic|$A rmsnorm --deterministic|exec:torch-det.rmsnorm"
)

summary="$OUT/summary.tsv"
printf 'run\texit\tfindings\tseconds\tcommand\n' > "$summary"
for entry in "${RUNLIST[@]}"; do
  IFS='|' read -r name cmds targets <<<"$entry"
  if [ -n "${RUNS:-}" ] && [[ " $RUNS " != *" $name "* ]]; then
    continue
  fi
  now=$(date +%s)
  if [ $((now - start)) -ge "$BUDGET" ]; then
    printf '%s\tskipped\t-\t-\tbudget of %ss spent\n' "$name" "$BUDGET" >> "$summary"
    continue
  fi
  args=(run --seed "$SEED" --duration "$DURATION" --targets "$targets" --expect-controls=false --json "$OUT/$name.json")
  IFS=';' read -ra cl <<<"$cmds"
  shown="$BP run --seed $SEED --duration $DURATION --targets $targets --expect-controls=false --json $OUT/$name.json"
  for c in "${cl[@]}"; do
    args+=(--exec "$c")
    shown+=" --exec '$c'"
  done
  echo "== $name: $shown"
  t0=$(date +%s)
  "$BP" "${args[@]}" > "$OUT/$name.txt" 2> "$OUT/$name.log"
  rc=$?
  n=$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1])).get("findings") or []))' "$OUT/$name.json" 2>/dev/null || echo "?")
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$rc" "$n" "$(( $(date +%s) - t0 ))" "$shown" >> "$summary"
  tail -n 5 "$OUT/$name.txt"
done

# findings.md: per run, the command, then each finding with its drift map
# and a repro line that carries the --exec flags.
"$PY" - "$OUT" "$BP" > "$OUT/findings.md" <<'EOF'
import csv, json, os, shlex, sys
out, bp = sys.argv[1], sys.argv[2]
print("# bitparity on the PyTorch adapters\n")
print("```\n" + open(os.path.join(out, "env.txt")).read().strip() + "\n```\n")
rows = list(csv.DictReader(open(os.path.join(out, "summary.tsv")), delimiter="\t"))
print("| run | exit | findings | seconds |\n|---|---|---|---|")
for r in rows:
    print("| %s | %s | %s | %s |" % (r["run"], r["exit"], r["findings"], r["seconds"]))
for r in rows:
    print("\n## %s\n" % r["run"])
    print("```\n%s\n```\n" % r["command"])
    path = os.path.join(out, r["run"] + ".json")
    if not os.path.exists(path):
        print("no result (%s)" % r["exit"])
        continue
    res = json.load(open(path))
    print("%d cases in %.0f s.\n" % (res.get("cases", 0), res.get("duration", 0)))
    parts = shlex.split(r["command"])
    exec_flags = " ".join("--exec " + shlex.quote(parts[i + 1]) for i, a in enumerate(parts) if a == "--exec")
    for f in res.get("findings") or []:
        c = f["case"]
        tgt = f["target_a"] + (" vs " + f["target_b"] if f.get("target_b") else "")
        print("### %s %s on %s: %s" % (c["op"], f["relation"], tgt, f["kind"]))
        if f["kind"] == "mismatch":
            print("\nrow %d col %d: %s (%s) vs %s (%s), %d ulps in %s; %d row(s) differ; shape %s\n" % (
                f["row"], f["col"], f["a"]["hex"], f["a"]["dec"], f["b"]["hex"], f["b"]["dec"], f["ulps"],
                c.get("compare") or c["out"], f.get("rows_differing", 0), json.dumps(c["shape"])))
        if f.get("message"):
            print(f["message"] + "\n")
        if f.get("error"):
            print("```\n" + f["error"][:2000] + "\n```\n")
        dm = f.get("drift_map")
        if dm:
            print("drift map over %s (%s): %s" % (dm["dim"], dm["kind"], dm.get("rule") or "no rule recognised"))
            for cl in dm.get("classes") or []:
                print("- %s: %s" % (cl["label"], cl["values"]))
            print()
        print("repro:\n```\n%s run %s --case %s\n```\n" % (bp, exec_flags, shlex.quote(json.dumps(c, separators=(",", ":")))))
EOF
for j in "$OUT"/*.json; do # bitparity's own Markdown report of each run
  "$BP" report --format markdown "$j" > "${j%.json}.md" 2>/dev/null || rm -f "${j%.json}.md"
done
echo
column -t -s $'\t' "$summary" 2>/dev/null || cat "$summary"
echo "written: $OUT/findings.md (per finding: drift map, repro with --exec), and per run RUN.json, RUN.md, RUN.txt, RUN.log"
