#!/usr/bin/env bash
# Run the Python adapters (the kit's Triton example, the JAX adapter, the
# Hugging Face model route) under real bitparity campaigns on a GPU machine
# and write what each found.
#
#   adapters/h200_python.sh OUT_DIR
#
# Environment: BITPARITY (the binary; default ./bitparity, else
# bin/bitparity), DURATION (per campaign, default 15s), SEED (1), BUDGET
# (seconds for the whole script, default 330: runs that would start after
# it are listed as skipped), RUNS (space-separated run names, default all).
# Writes OUT_DIR/summary.tsv, OUT_DIR/env.txt and per run NAME.json (the
# result), NAME.txt (stdout) and NAME.log (stderr).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: adapters/h200_python.sh OUT_DIR}
mkdir -p "$OUT"
BP=${BITPARITY:-./bitparity}
[ -x "$BP" ] || BP=bin/bitparity
DUR=${DURATION:-15s}
SEED=${SEED:-1}
BUDGET=${BUDGET:-330}
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false TOKENIZERS_PARALLELISM=false
start=$(date +%s)

{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 - <<'EOF'
import importlib, sys
print("python", sys.version.split()[0])
for m in ("numpy", "torch", "triton", "jax", "jaxlib", "transformers", "ml_dtypes"):
    try:
        print(m, importlib.import_module(m).__version__)
    except Exception as e:
        print(m, "missing:", e)
EOF
  "$BP" version 2>&1 | head -1
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

# The kit installs offline and its unit tests pass here (torch and JAX present).
{
  python3 -m pip install -q --no-build-isolation --no-deps --target /tmp/kit ./adapters/python &&
    PYTHONPATH=/tmp/kit python3 -c 'import bitparity_adapter as b; print("installed kit:", b.__file__)'
  (cd adapters/python && python3 -m unittest discover -s tests -t . 2>&1 | tail -3)
} > "$OUT/kit.txt" 2>&1
cat "$OUT/kit.txt"

P=python3
# name | seconds | run arguments (shell words)
RUNLIST=(
  "hf-llama-sdpa|$DUR|--exec '$P adapters/hf_model.py'"
  "jax-gemm|$DUR|--exec '$P adapters/jax_ops.py gemm'"
  "jax-attention|$DUR|--exec '$P adapters/jax_ops.py attn_prefill' --exec '$P adapters/jax_ops.py attn_decode'"
  "triton-rmsnorm-warps|$DUR|--exec '$P adapters/examples/triton_rmsnorm.py --warps-by-rows' --relations batch_invariance"
  "hf-llama-sdpa-bi|$DUR|--exec '$P adapters/hf_model.py --batch-invariant'"
  "hf-llama-eager|$DUR|--exec '$P adapters/hf_model.py --attn eager'"
  "jax-rmsnorm|$DUR|--exec '$P adapters/jax_ops.py rmsnorm'"
  "jax-logprob|$DUR|--exec '$P adapters/jax_ops.py logprob'"
  "triton-rmsnorm|$DUR|--exec '$P adapters/examples/triton_rmsnorm.py'"
  "hf-llama-eager-bi|$DUR|--exec '$P adapters/hf_model.py --attn eager --batch-invariant'"
  "hf-qwen2-sdpa|$DUR|--exec '$P adapters/hf_model.py --arch qwen2'"
  "numpy-model-drift|10s|--exec '$P adapters/examples/numpy_model.py --drift' --max-cases 6"
)
printf 'run\texit\tcases\tfindings\tseconds\tcommand\n' > "$OUT/summary.tsv"
for entry in "${RUNLIST[@]}"; do
  IFS='|' read -r name secs flags <<<"$entry"
  if [ -n "${RUNS:-}" ] && [[ " $RUNS " != *" $name "* ]]; then continue; fi
  if [ $(( $(date +%s) - start )) -ge "$BUDGET" ]; then
    printf '%s\tskipped\t-\t-\t-\tbudget of %ss spent\n' "$name" "$BUDGET" >> "$OUT/summary.tsv"
    continue
  fi
  cmd="$BP run $flags --duration $secs --seed $SEED --expect-controls=false --json $OUT/$name.json"
  echo "== $name: $cmd"
  t0=$(date +%s)
  eval "timeout 120 $cmd" > "$OUT/$name.txt" 2> "$OUT/$name.log"
  rc=$?
  read -r cases nf < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r.get("cases",0), len(r.get("findings") or []))' "$OUT/$name.json" 2>/dev/null || echo "? ?")
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$rc" "$cases" "$nf" "$(( $(date +%s) - t0 ))" "$cmd" >> "$OUT/summary.tsv"
  grep -E '^(finding|  (first|drift|log-probs|train|shrunk))|holds|UNEXPECTED|summary' "$OUT/$name.txt" | cut -c1-400 | head -20
  tail -n 3 "$OUT/$name.log"
done
column -t -s $'\t' "$OUT/summary.tsv" 2>/dev/null | cut -c1-200 || cat "$OUT/summary.tsv"
