#!/usr/bin/env bash
# bench-scan-gpu.sh: the scan benchmark of docs/performance.md ("Scan
# benchmark") in one call, on a GPU host with torch (and CuPy for the user
# kernel's loop): each target kind's scan beside the loop a user would
# write instead, and the copy bound, then one summary table
# (scripts/bench_summary.py). Every speed figure is taken with --power 0
# (no sensitive draws: the same draws as the loops).
#
#   rmsnorm   scan --target cuda-rmsnorm over rows 1..ROWS at hidden
#             HIDDEN, bf16, one draw per distribution of DISTS, against
#             scripts/torch_scan.py (F.rms_norm on every prefix) and the
#             copy bound (scripts/copy_bandwidth.py): bound = 3 x 2 bytes x
#             HIDDEN x the rows of every batch / copy bandwidth
#   gemm      scan --target GEMM_TARGET (cublas-gemmex) over M 1..GEMM_M at
#             K = GEMM_K, N = GEMM_N, against scripts/gemm_scan.py on each
#             backend of GEMM_LOOPS (default torch: torch.matmul; cupy: the
#             same cublasGemmEx call through CuPy), and the floor: the torch
#             loop's products and gathers with no compare (--op-only)
#   exec      scan --exec 'python3 adapters/torch_ops.py rmsnorm' over the
#             rmsnorm's rows, hidden and draws, against the same torch loop,
#             and the floor: the loop's F.rms_norm calls with no compare
#             (scripts/torch_scan.py --op-only)
#   kernel    scan --kernel KERNEL (the invariant example kernel) over the
#             same, against scripts/kernel_loop.py (the same kernel
#             launched in a plain CuPy loop over the same batches)
#   power     scan --target cuda-rmsnorm --profile llama3-8b --to ROWS with
#             the default power (0.99: host-made sensitive draws), twice:
#             first with an empty BITPARITY_SENSITIVE_CACHE, then with the
#             draws the first kept there
#
#   make bench-scan-gpu                                     # builds bin/bitparity first
#   BITPARITY=bin/bitparity bash scripts/bench-scan-gpu.sh  # ROWS HIDDEN DISTS OUTDIR KINDS ...
#   DRY_RUN=1 bash scripts/bench-scan-gpu.sh                # print the commands, run none (no GPU)
#
# RUNS (default 1) runs every scan and loop of rmsnorm, gemm and exec that
# many times, alternated (run k's files carry .rK before their extension:
# gemm-scan.r2.log); the summary takes each figure's median run, since a
# loop's time moved by up to half between runs on one machine (0.39 and
# 0.58 s). The copy bound, kernel and power run once.
#
# KINDS picks parts (default "rmsnorm gemm exec kernel power"); GEMM_TARGET=
# (empty) skips gemm; PART_TIMEOUT (default 240) bounds each command in
# seconds. Logs and JSON go to OUTDIR (default out/bench-scan-gpu);
# scripts/bench_summary.py OUTDIR prints the figures again from them. Exit
# 0 when all ran, 3 when one failed (its log is named; a scan exiting 1 has
# drawn a map, which counts as a run).
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${BITPARITY:-bin/bitparity}
rows=${ROWS:-8192}
hidden=${HIDDEN:-4096}
dists=${DISTS:-normal,boundary,heavy}
out=${OUTDIR:-out/bench-scan-gpu}
kinds=${KINDS:-rmsnorm gemm exec kernel power}
gemm_target=${GEMM_TARGET-cublas-gemmex}
gemm_m=${GEMM_M:-256}
gemm_k=${GEMM_K:-4096}
gemm_n=${GEMM_N:-4096}
gemm_loops=${GEMM_LOOPS:-torch}
kernel=${KERNEL:-gpu/testdata/userkernels/rmsnorm_invariant.json}
part_timeout=${PART_TIMEOUT:-240}
runs=${RUNS:-1}
dry=${DRY_RUN:-}
ndraws=$(awk -F, '{print NF}' <<<"$dists")
mkdir -p "$out"
failed=()

# run NAME MAXRC LOG CMD...: runs CMD under the part timeout with its
# output in LOG (stdout to LOG.json instead when LOG ends in .json, stderr
# to LOG's .log twin) and its wall seconds in OUTDIR/NAME.wall; an exit
# above MAXRC is a failure.
run() {
	local name=$1 maxrc=$2 log=$3
	shift 3
	if [ -n "$dry" ]; then
		printf '%s:' "$name"
		printf ' %q' "$@"
		printf '\n'
		return 0
	fi
	local t0 rc
	t0=$(date +%s.%N)
	if [[ $log == *.json ]]; then
		timeout "$part_timeout" "$@" >"$log" 2>"${log%.json}.log"
	else
		timeout "$part_timeout" "$@" >"$log" 2>&1
	fi
	rc=$?
	awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f\n", b - a }' >"$out/$name.wall"
	[ $rc -le "$maxrc" ] || failed+=("$name (exit $rc, $log)")
}

has() { [[ " $kinds " == *" $1 "* ]]; }
size=(--to "$rows" --hidden "$hidden" --in bf16 --out bf16 --dists "$dists" --power 0)

# r NAME: NAME as run k's file (.rK before the extension from run 2 on).
r() { if [ "$k" -eq 1 ]; then echo "$1"; else echo "${1%.*}.r$k.${1##*.}"; fi; }
for k in $(seq 1 "$runs"); do
	if has rmsnorm || has exec; then
		run torch-loop 0 "$out/$(r loop.json)" python3 scripts/torch_scan.py "$rows" "$hidden" cuda --draws "$ndraws"
	fi
	if has rmsnorm; then
		rm -rf "$out/corpus"
		run scan 0 "$out/$(r scan.log)" "$bin" scan --target cuda-rmsnorm "${size[@]}" --dir "$out/corpus" --json "$out/$(r scan.json)"
		[ "$k" -eq 1 ] && run copy 0 "$out/copy.json" python3 scripts/copy_bandwidth.py
	fi
	if has gemm && [ -n "$gemm_target" ]; then
		rm -rf "$out/gemm-corpus"
		run gemm-scan 1 "$out/$(r gemm-scan.log)" "$bin" scan --target "$gemm_target" --to "$gemm_m" --hidden "$gemm_k" --n "$gemm_n" \
			--in bf16 --out bf16 --dists "$dists" --power 0 --dir "$out/gemm-corpus" --json "$out/$(r gemm-scan.json)"
		for be in $gemm_loops; do
			run "gemm-loop-$be" 0 "$out/$(r "gemm-loop-$be.json")" python3 scripts/gemm_scan.py "$gemm_m" "$gemm_k" "$gemm_n" \
				--draws "$ndraws" --backend "$be"
		done
		run gemm-ops 0 "$out/$(r gemm-ops.json)" python3 scripts/gemm_scan.py "$gemm_m" "$gemm_k" "$gemm_n" \
			--draws "$ndraws" --backend torch --op-only
	fi
	if has exec; then
		run torch-ops 0 "$out/$(r ops.json)" python3 scripts/torch_scan.py "$rows" "$hidden" cuda --draws "$ndraws" --op-only
		rm -rf "$out/exec-corpus"
		run exec-scan 1 "$out/$(r exec-scan.log)" "$bin" scan --exec 'python3 adapters/torch_ops.py rmsnorm' "${size[@]}" \
			--dir "$out/exec-corpus" --json "$out/$(r exec-scan.json)"
	fi
done
if has kernel; then
	rm -rf "$out/kernel-corpus"
	run kernel-scan 1 "$out/kernel-scan.log" "$bin" scan --kernel "$kernel" "${size[@]}" \
		--dir "$out/kernel-corpus" --json "$out/kernel-scan.json"
	run kernel-loop 0 "$out/kernel-loop.json" python3 scripts/kernel_loop.py "$kernel" "$rows" "$hidden" --draws "$ndraws"
fi
if has power; then
	rm -rf "$out/power-corpus" "$out/sensitive-cache"
	for pass in 1 2; do
		run "power-$pass" 1 "$out/power-$pass.log" env BITPARITY_SENSITIVE_CACHE="$out/sensitive-cache" \
			"$bin" scan --target cuda-rmsnorm --profile llama3-8b --to "$rows" --dir "$out/power-corpus" --json "$out/power-$pass.json"
	done
fi

if [ -n "$dry" ]; then
	exit 0
fi
python3 scripts/bench_summary.py "$out" --rows "$rows" --hidden "$hidden" --draws "$ndraws" \
	--gemm-target "$gemm_target" --gemm-m "$gemm_m" --gemm-k "$gemm_k" --gemm-n "$gemm_n" --kernel "$kernel"
if [ ${#failed[@]} -gt 0 ]; then
	echo "bench-scan-gpu: FAILED: ${failed[*]}" >&2
	exit 3
fi
