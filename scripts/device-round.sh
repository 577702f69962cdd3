#!/usr/bin/env bash
# device-round.sh: one device call on the GPU host (H200, CUDA 13, torch),
# from the project root, for the production-shapes, maps and scan-speed
# issues. It builds bin/bitparity once with -tags $GPUTAGS and runs these
# stages in order, most important first, each under its own timeout and
# within one budget (ROUND_BUDGET seconds from the script's start, default
# 530: a stage's limit is cut to what is left, a stage with too little
# left is skipped and said so):
#
#   userkernels  gpu/testdata/userkernels/build.sh (the example user
#                kernels' PTX and fat images, for the held-attention tests);
#                not in the default list
#   test-gpu     make test-gpu on the packages with GPU tests (TEST_PKGS,
#                default ./gpu/ ./scan/ ./cmd/bitparity/ ./internal/layers/;
#                about 140 s on the H200, over 210 s on an H100 in session
#                19), -v (and -run $TEST_RUN when set)
#                (TEST_LIMIT seconds, default 330; go test's -timeout 20 s
#                less, so a test still running is named with its stack)
#   go-bench     make test-gpu -bench GO_BENCH (default .) -benchtime 1x on
#                GO_BENCH_PKGS (default ./scan/), GO_BENCH_LIMIT seconds
#                (default 240); not in the default list
#   exec-rmsnorm scan --exec of torch's F.rms_norm (adapters/torch_ops.py),
#                rows 1..8192 at hidden 4096 bf16, three draws (normal,
#                boundary, heavy), then scripts/torch_scan.py over the same
#                rows, hidden and number of draws: both rates, the ratio
#   exec-ab      the exec scan of exec-rmsnorm with this tree's adapters and
#                with an older copy's (EXEC_AB_OLD, default out/old: its
#                adapters/ from `git archive REV adapters | tar -x -C out/old`,
#                carried), alternated EXEC_AB_RUNS (2) times each, then the
#                torch loop: each run's own time, the means, new / old; not
#                in the default list
#   sdpa         path scans (prefill against decode) of torch SDPA at the
#                llama3-8b profile (bf16, 32 heads, 8 KV heads, head dim 128),
#                KV 1..1024, backends default, flash and efficient, beside
#                scripts/sdpa_sweep.py --inputs (the scans' own inputs, saved
#                by scan --save-inputs), all at once (SDPA_ALONE=1: each
#                scan alone, then the sweep); the two sets of differing KV
#                lengths compared
#   profile-run  run --profile llama3-8b --kernel rmsnorm_drift.json for 60 s
#                (less when the budget is short): the histogram of drawn
#                batch sizes by decile, the findings' minimal cases
#   maps         the GPU tile-48 model's path-parity map (scan, against its
#                CPU twin's scan, and a campaign) and the GPU logprob
#                model's onset (scan and campaign), all at once
#   bench        scripts/bench-scan-gpu.sh (make bench-scan-gpu): each kind
#                of KINDS (rmsnorm gemm exec kernel power) beside its loop
#                and the copy bound, one summary table; limit BENCH_LIMIT
#                seconds (default 200: the kernel kind's CuPy loop alone
#                takes about 66 s)
#   scan-profile the rmsnorm and cuBLAS scans of bench under --cpuprofile,
#                with go tool pprof -top (flat and -cum) of each, and scripts/gemm_scan.py
#                on torch (torch.matmul) beside the CuPy loop of bench
#   power-profile the default-power scan of cuda-rmsnorm at llama3-8b over
#                1..POWER_ROWS (8192) twice, an empty sensitive-draw cache
#                then the kept draws, each under --cpuprofile (pprof -top
#                flat and cumulative); not in the default list
#   campaign     the 60 s campaign over every cuda- target (CAMPAIGN_SECONDS),
#                seed 1, --known corpus/h200: its invariant case count, and
#                the same for a baseline binary built from .device/base.tar.gz
#                (git archive of the commit to compare with) when it is there
#
# Before the build, the stage ptx (not in the default list) runs make ptx
# (scripts/ptx.sh and scripts/fatbin.sh: PTX and fat images from the
# sources in the tree) and puts the kernels and their sha256 files in
# logs/kernels/, to commit; the build and every stage after it use them.
#
#   CUDA_COMPAT_INCLUDE=gpu/cudacompat GPUTAGS=cuda,nocloud bash .device/run.sh bash scripts/device-round.sh
#
# STAGES picks stages (default all six, in the order above). What comes
# back is two files under $OUT (default out/round): summary.txt (one line
# or a few per stage) and round.tar (logs/: every stage's log, its exit
# code and seconds in exits.txt, JSON results gzipped when over 1 MB),
# packed again after every stage, so a call cut short still returns what
# ran. The logs and corpora are made in ROUND_WORK (default a fresh
# /tmp/bitparity-round.*), never under $OUT, so at most three files come
# back. Exit 0 when every stage answered as expected, 1 when one did not
# (the summary's FAILED line names it), 3 when the build failed.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
start=$(date +%s)
out=${OUT:-$root/out/round}
work=${ROUND_WORK:-$(mktemp -d /tmp/bitparity-round.XXXXXX)}
logs=$work/logs
mkdir -p "$out" "$logs"
summary=$out/summary.txt
: >"$summary"
: >"$logs/exits.txt"
tags=${GPUTAGS:-cuda}
cuda=${CUDA_HOME:-/usr/local/cuda}
budget=${ROUND_BUDGET:-530}
stages=${STAGES:-test-gpu exec-rmsnorm sdpa profile-run maps bench scan-profile campaign}
bin=$root/bin/bitparity
failed=()

say() { echo "$*" | tee -a "$summary" >&2; }
now() { echo $(($(date +%s) - start)); }
# limit N: N seconds, or what is left of the budget less 15 s for packing.
limit() {
	local l=$((budget - $(now) - 15))
	((l < $1)) && echo "$l" || echo "$1"
}
# begin STAGE MIN: whether STAGE is wanted and at least MIN seconds are left.
begin() {
	[[ " $stages " == *" $1 "* ]] || return 1
	if (($(limit "$2") < $2)); then
		say "$1: SKIPPED at $(now) s: $(limit "$2") s left of the budget, the stage needs $2"
		failed+=("$1 (skipped: no time left)")
		return 1
	fi
	echo "== stage $1 at $(now) s" >&2
}
# timed NAME LIMIT CMD...: CMD under a timeout of LIMIT seconds (then KILL
# 10 s later), its stdout and stderr in $logs/NAME.log; its exit code and
# seconds in $logs/NAME.rc and exits.txt; not run (exit 125) when fewer
# than 5 s are left. Safe in a background job.
timed() {
	local name=$1 lim=$2 t0 ms rc
	shift 2
	if ((lim < 5)); then # timeout 0 would mean no limit at all
		echo "not run: ${lim} s left of the budget" >"$logs/$name.log"
		echo "125 0.000" >"$logs/$name.rc"
		printf '%-22s not run (%s s left): %s\n' "$name" "$lim" "$*" >>"$logs/exits.txt"
		return 125
	fi
	echo "-- $name (limit ${lim} s): $*" >&2
	t0=$(date +%s%N)
	timeout -k 10 "$lim" "$@" >"$logs/$name.log" 2>&1
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	printf '%d %d.%03d\n' "$rc" $((ms / 1000)) $((ms % 1000)) >"$logs/$name.rc"
	printf '%-22s exit %3d in %d.%03d s (limit %s s): %s\n' "$name" "$rc" $((ms / 1000)) $((ms % 1000)) "$lim" "$*" >>"$logs/exits.txt"
	return "$rc"
}
# result NAME: sets rc and secs from NAME's .rc file (rc "none" when it never ran).
result() {
	rc=none secs=0
	[ -f "$logs/$1.rc" ] && read -r rc secs <"$logs/$1.rc"
	return 0
}
# expect NAME CODE...: NAME's exit code must be one of CODEs.
expect() {
	local name=$1 c
	shift
	local want="$*"
	result "$name"
	for c in "$@"; do [ "$rc" = "$c" ] && return 0; done
	local why="exit $rc"
	case $rc in 124 | 137) why="timed out, exit $rc" ;; 125) why="not run" ;; esac
	failed+=("$name ($why, want ${want// / or })")
	echo "device-round: FAILED: $name ($why; log $logs/$name.log):" >&2
	tail -n 20 "$logs/$name.log" >&2
}
# jsonline FILE: the last line of FILE that starts with { (a script's JSON
# after any warnings), into FILE's .json twin.
jsonline() { grep '^{' "$1" | tail -n 1 >"${1%.log}.json" || true; }
# pack: summary and logs into $out/round.tar (files over 1 MB gzipped
# first; if the tar would pass 15 MiB the largest files are left out and
# named in logs/left-out.txt).
pack() {
	cp -f "$summary" "$logs/summary.txt"
	find "$logs" -type f ! -name '*.gz' -size +1M -exec gzip -f {} \;
	tar -cf "$out/round.tar.tmp" -C "$work" logs
	local f
	while [ "$(stat -c %s "$out/round.tar.tmp")" -gt $((15 * 1024 * 1024)) ]; do
		f=$(find "$logs" -type f ! -name left-out.txt -printf '%s %p\n' | sort -rn | head -n 1 | cut -d' ' -f2-)
		[ -n "$f" ] || break
		echo "$(stat -c %s "$f") ${f#"$work"/}" >>"$logs/left-out.txt"
		mv "$f" "$work/"
		tar -cf "$out/round.tar.tmp" -C "$work" logs
	done
	mv -f "$out/round.tar.tmp" "$out/round.tar"
}
trap 'pack; exit 130' INT TERM

# Where this runs.
{
	nvidia-smi -L
	nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.max.sm,clocks.max.mem --format=csv,noheader
	go version
	python3 -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'
} >"$logs/host.log" 2>&1
say "round: $(date -u +%FT%TZ), $(head -n 1 "$logs/host.log"); $(grep -m1 '^go version' "$logs/host.log"); $(grep -m1 '^python' "$logs/host.log"); source $(find . -path ./vendor -prune -o -path ./.device -prune -o -path ./.git -prune -o -type f \( -name '*.go' -o -name '*.cu' -o -name '*.cuh' -o -name '*.py' \) -print | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16) (sha256 of the sorted sha256sums of the .go, .cu, .cuh and .py files; the copy's .git may be older than its tree); budget ${budget} s; stages: $stages"

# PTX and fat images from the sources, before the build that embeds them.
if [[ " $stages " == *" ptx "* ]]; then
	echo "== stage ptx at $(now) s" >&2
	timed ptx "$(limit 300)" make ptx
	expect ptx 0
	result ptx
	mkdir -p "$logs/kernels"
	cp -f gpu/kernels/*.ptx gpu/kernels/*.fatbin gpu/kernels/*.sha256 "$logs/kernels/" 2>/dev/null
	say "ptx: make ptx: exit $rc in $secs s; kernels.sha256 $(sha256sum gpu/kernels/kernels.sha256 | cut -c1-16), fatbin.sha256 $(sha256sum gpu/kernels/fatbin.sha256 2>/dev/null | cut -c1-16)"
	if [ "$rc" != 0 ]; then
		tail -n 40 "$logs/ptx.log" >&2
		say "ptx: FAILED; nothing else ran"
		pack
		exit 3
	fi
	pack
fi

# The build, once.
mkdir -p "$(dirname "$bin")"
export CGO_CFLAGS="-I$root/gpu/cudacompat -I$cuda/include ${CGO_CFLAGS:-}"
export CGO_LDFLAGS="-L$cuda/lib64/stubs -L$cuda/lib64 ${CGO_LDFLAGS:-}"
export LD_LIBRARY_PATH="$cuda/lib64:${LD_LIBRARY_PATH:-}"
if ! command -v go >/dev/null || ! timed build 300 go build -tags "$tags" -o "$bin" ./cmd/bitparity; then
	result build
	say "build: FAILED (go build -tags $tags: exit $rc; go on PATH: $(command -v go || echo none)); nothing else ran"
	tail -n 40 "$logs/build.log" >&2 2>/dev/null
	pack
	exit 3
fi
result build
say "build: go build -tags $tags -o bin/bitparity ./cmd/bitparity in $secs s"
timed version 30 "$bin" version
say "version: $(grep -v '^$' "$logs/version.log" | sed -E 's/[[:space:]]+/ /g' | paste -sd ';' - | cut -c1-600)"
pack

# 0. The example user kernels' PTX and fat images (gpu/testdata/userkernels).
if begin userkernels 30; then
	timed userkernels "$(limit 180)" bash gpu/testdata/userkernels/build.sh
	expect userkernels 0
	say "userkernels: gpu/testdata/userkernels/build.sh: exit $rc in $secs s"
	pack
fi

# 1. The GPU test suite, on the packages that have GPU tests.
if begin test-gpu 60; then
	pkgs=${TEST_PKGS:-./gpu/ ./scan/ ./cmd/bitparity/ ./internal/layers/}
	tflags=-v
	[ -n "${TEST_RUN:-}" ] && tflags="-v -run '$TEST_RUN'" # quoted: make hands it to sh
	lim=$(limit "${TEST_LIMIT:-330}")
	# go test's own timeout 20 s before the stage's: a test still running
	# then fails with every goroutine's stack, which names it.
	timed test-gpu "$lim" make test-gpu GPUTAGS="$tags" PKGS="$pkgs" TESTFLAGS="$tflags" TEST_TIMEOUT="$((lim > 40 ? lim - 20 : 20))s"
	expect test-gpu 0
	say "test-gpu: make test-gpu GPUTAGS=$tags PKGS='$pkgs' TESTFLAGS=-v: exit $rc in $secs s: $(grep -E '^(ok|FAIL|---)[[:space:]]' "$logs/test-gpu.log" | grep -vE '^--- (PASS|SKIP)' |
		sed -E 's|github.com/bitparity/bitparity/||; s/[[:space:]]+/ /g' | head -n 30 | paste -sd ';' -)"
	pack
fi

# 1b. Go benchmarks of the GPU packages, one iteration each.
if begin go-bench 30; then
	timed go-bench "$(limit "${GO_BENCH_LIMIT:-240}")" make test-gpu GPUTAGS="$tags" PKGS="${GO_BENCH_PKGS:-./scan/}" \
		TESTFLAGS="-run '^\$\$' -bench '${GO_BENCH:-.}' -benchtime 1x -v"
	expect go-bench 0
	say "go-bench: -bench '${GO_BENCH:-.}' in ${GO_BENCH_PKGS:-./scan/}: exit $rc in $secs s: $(grep -E '^(Benchmark|ok|FAIL)' "$logs/go-bench.log" |
		sed -E 's|github.com/bitparity/bitparity/||; s/[[:space:]]+/ /g' | head -n 30 | paste -sd ';' -)"
	pack
fi

# 2. scan --exec of torch's F.rms_norm against the plain torch loop.
if begin exec-rmsnorm 40; then
	timed exec-scan "$(limit 150)" "$bin" scan --exec 'python3 adapters/torch_ops.py rmsnorm' --to 8192 --hidden 4096 \
		--in bf16 --out bf16 --dists normal,boundary,heavy --dir "$work/corpus-exec" --json "$logs/exec-scan.json"
	expect exec-scan 0 1
	timed torch-loop "$(limit 60)" python3 scripts/torch_scan.py 8192 4096 cuda --draws 3
	expect torch-loop 0
	jsonline "$logs/torch-loop.log"
	python3 - "$logs/exec-scan.log" "$logs/exec-scan.rc" "$logs/torch-loop.json" <<'PY' | tee -a "$summary" >&2
import json, re, sys
log, rcf, loopf = sys.argv[1:]
text = open(log).read() if log else ""
rc, secs = open(rcf).read().split()
m = re.search(r"(\d+) row comparisons in (\d+) batches, ([^,]*), ([0-9.e+]+)s \(([0-9.e+]+) rows/s\)", text)
verdict = next((l.strip() for l in text.splitlines() if l.strip().startswith(("CERTIFIED", "DRIFT", "FAULT"))), "no verdict")
try:
    loop = json.load(open(loopf))
except (OSError, ValueError):
    loop = None
print("exec-rmsnorm: scan --exec 'python3 adapters/torch_ops.py rmsnorm' rows 1..8192 hidden 4096 bf16, 3 draws: exit %s, %s s wall" % (rc, secs))
if m:
    print("  scan: %s row comparisons in %s batches (%s), %s s of scan, %.3g rows/s; %s" % (m.group(1), m.group(2), m.group(3), m.group(4), float(m.group(5)), verdict[:300]))
if loop:
    print("  torch loop (scripts/torch_scan.py, torch %s, %d draws): %d rows checked in %.3f s, %.3g rows/s; %d value(s) differ (union of draws)%s"
          % (loop["torch"], loop["draws"], loop["rows_checked"], loop["seconds"], loop["rows_per_second"], len(loop["differ"]),
             (": first " + str(loop["differ"][:8])) if loop["differ"] else ""))
if m and loop:
    r = float(m.group(5)) / loop["rows_per_second"]
    t = loop["seconds"] / float(m.group(4))
    print("  scan / loop: %.2fx the loop's rows/s (issue 31 wants >= 0.5: %s; issue 33 wants >= 2: %s); by time on the same rows: %.2fx"
          % (r, "met" if r >= 0.5 else "NOT met", "met" if r >= 2 else "NOT met", t))
PY
	pack
fi

# 2b. The exec scan with this tree's adapters against an older copy's,
# alternated, beside the torch loop: two runs of one adapter can differ by
# as much as a change gains, so each side runs EXEC_AB_RUNS times.
if begin exec-ab 60; then
	old=${EXEC_AB_OLD:-out/old}
	ab_to=${EXEC_AB_TO:-8192} ab_hidden=${EXEC_AB_HIDDEN:-4096}
	if [[ ! -f $old/adapters/torch_ops.py ]]; then
		say "exec-ab: no $old/adapters/torch_ops.py: git archive REV adapters | tar -x -C $old, and carry $old"
		failed+=("exec-ab (no old adapters in $old)")
	else
		names=()
		for i in $(seq 1 "${EXEC_AB_RUNS:-2}"); do
			for side in new old; do
				dir=.
				[[ $side == old ]] && dir=$old
				timed "exec-ab-$i-$side" "$(limit 90)" "$bin" scan --exec "python3 $dir/adapters/torch_ops.py rmsnorm" --to "$ab_to" \
					--hidden "$ab_hidden" --in bf16 --out bf16 --dists normal,boundary,heavy --power 0 --dir "$work/corpus-ab"
				expect "exec-ab-$i-$side" 0 1
				names+=("exec-ab-$i-$side")
			done
		done
		timed exec-ab-loop "$(limit 60)" python3 scripts/torch_scan.py "$ab_to" "$ab_hidden" "${EXEC_AB_DEVICE:-cuda}" --draws 3
		expect exec-ab-loop 0
		jsonline "$logs/exec-ab-loop.log"
		python3 - "$logs" "$old" "${names[@]}" <<'PY' | tee -a "$summary" >&2
import json, re, statistics, sys
logs, old, names = sys.argv[1], sys.argv[2], sys.argv[3:]
own = {"new": [], "old": []}
print("exec-ab: scan --exec torch_ops.py rmsnorm, this tree's adapters (new) against %s/adapters (old), alternated:" % old)
for n in names:
    text = open("%s/%s.log" % (logs, n)).read()
    rc, wall = open("%s/%s.rc" % (logs, n)).read().split()
    m = re.search(r"row comparisons in \d+ batches, [^,]*, ([0-9.e+]+)s", text)
    side = n.rsplit("-", 1)[1]
    if m:
        own[side].append(float(m.group(1)))
    print("  %-14s exit %s, %s s of scan, %s s wall" % (n, rc, m.group(1) if m else "?", wall))
try:
    loop = json.load(open("%s/exec-ab-loop.json" % logs))["seconds"]
except (OSError, ValueError, KeyError):
    loop = None
for side in ("new", "old"):
    if own[side]:
        mean = statistics.mean(own[side])
        print("  %s: mean %.3f s of scan over %d runs%s" % (side, mean, len(own[side]),
              ", %.2fx the torch loop's speed (loop %.3f s)" % (loop / mean, loop) if loop else ""))
if own["new"] and own["old"]:
    print("  new / old: %.2f of the mean time" % (statistics.mean(own["new"]) / statistics.mean(own["old"])))
PY
	fi
	pack
fi

# 3. SDPA prefill against decode, three backends, beside the independent sweep.
if begin sdpa 40; then
	lim=$(limit "${SDPA_LIMIT:-180}")
	sdpa_dists=${SDPA_DISTS:-normal,boundary}
	sdpa_backends=${SDPA_BACKENDS:-default flash efficient}
	for b in $sdpa_backends; do
		flag=
		[ "$b" = default ] || flag=" --sdpa-backend $b"
		timed "sdpa-$b" "$lim" "$bin" scan --exec "python3 adapters/torch_ops.py attn_prefill$flag" \
			--exec "python3 adapters/torch_ops.py attn_decode$flag" --profile llama3-8b --to 1024 --dists "$sdpa_dists" \
			--dir "$work/corpus-sdpa" --json "$logs/sdpa-$b.json" &
		# SDPA_ALONE=1: each scan alone on the GPU and the host (its time
		# not shared with the other scans and the sweep)
		[ -n "${SDPA_ALONE:-}" ] && wait
	done
	# the sweep runs on the scans' own inputs: one step at KV 1024 writes
	# them (the inputs depend on --to, the draws and the seed, not --from)
	timed sdpa-inputs "$lim" "$bin" scan --exec "python3 adapters/torch_ops.py attn_prefill" \
		--exec "python3 adapters/torch_ops.py attn_decode" --profile llama3-8b --from 1024 --to 1024 --dists "$sdpa_dists" \
		--save-inputs "$work/sdpa-inputs" --dir "$work/corpus-sdpa-inputs"
	timed sdpa-sweep "$lim" python3 scripts/sdpa_sweep.py --inputs "$work/sdpa-inputs" --backends "${sdpa_backends// /,}" &
	wait
	for b in $sdpa_backends; do expect "sdpa-$b" 0 1; done
	expect sdpa-sweep 0
	jsonline "$logs/sdpa-sweep.log"
	python3 - "$logs" "$sdpa_dists" $sdpa_backends <<'PY' | tee -a "$summary" >&2
import json, os, sys
logs, dists, backends = sys.argv[1], sys.argv[2], sys.argv[3:]
def ranges(vs):
    out, i = [], 0
    while i < len(vs):
        j = i
        while j + 1 < len(vs) and vs[j + 1] == vs[j] + 1:
            j += 1
        out.append(str(vs[i]) if i == j else "%d..%d" % (vs[i], vs[j]))
        i = j + 1
    return ", ".join(out) or "none"
def load(p):
    try:
        return json.load(open(p))
    except (OSError, ValueError):
        return None
def first_scan(res):
    """The first scan of a scan --json file (format bitparity-scan-results)."""
    return ((res or {}).get("scans") or [None])[0]
sweep = load(os.path.join(logs, "sdpa-sweep.json"))
print("sdpa: torch SDPA prefill vs decode at llama3-8b (bf16, 32 heads, 8 kv heads, head dim 128), KV 1..1024; bitparity draws %s, sweep seeds %s"
      % (dists, sweep["seeds"] if sweep else "?"))
for b in backends:
    rc, secs = open(os.path.join(logs, "sdpa-%s.rc" % b)).read().split()
    scan = first_scan(load(os.path.join(logs, "sdpa-%s.json" % b)))
    sw = (sweep or {}).get("backends", {}).get(b)
    if scan is None:
        print("  %s: bitparity scan gave no result (exit %s, %s s; see sdpa-%s.log)" % (b, rc, secs, b))
        continue
    got = sorted(scan.get("differ") or [])
    rule = (scan.get("map") or {}).get("rule", "")
    line = "  %s: bitparity (exit %s, %s s) DIFFER at %d: %s" % (b, rc, secs, len(got), ranges(got))
    if rule:
        line += " [map: %s]" % rule
    if sw is None or "error" in sw:
        print(line + "; sweep: %s" % ((sw or {}).get("error", "no result")))
        continue
    want = sorted(sw["differ"])
    both = sorted(set(got) & set(want))
    only_scan, only_sweep = sorted(set(got) - set(want)), sorted(set(want) - set(got))
    print(line)
    print("    sweep (%.1f s) union over seeds %d: %s; per seed: %s" % (sw["seconds"], len(want), ranges(want), " | ".join(str(len(s)) for s in sw["differ_by_seed"])))
    print("    intersection %d; only bitparity %d: %s; only sweep %d: %s; EQUAL: %s"
          % (len(both), len(only_scan), ranges(only_scan), len(only_sweep), ranges(only_sweep), "yes" if got == want else "no"))
PY
	pack
fi

# 4. A campaign at the llama3-8b profile against a user kernel.
if begin profile-run 45; then
	lim=$(limit 100)
	dur=$((lim - 30 < 60 ? lim - 30 : 60))
	timed profile-run "$lim" "$bin" run --profile llama3-8b --kernel gpu/testdata/userkernels/rmsnorm_drift.json \
		--duration "${dur}s" --json "$logs/profile-run.json" --corpus "$work/corpus-run"
	expect profile-run 1
	{
		echo "profile-run: run --profile llama3-8b --kernel gpu/testdata/userkernels/rmsnorm_drift.json --duration ${dur}s: exit $rc in $secs s; $(grep -m1 -E '^[0-9]+ cases in' "$logs/profile-run.log" || echo 'no case count')"
		sed -n '/^batch sizes drawn at profile/,+10p' "$logs/profile-run.log" | sed 's/^/  /'
	} | tee -a "$summary" >&2
	python3 - "$logs/profile-run.json" <<'PY' | tee -a "$summary" >&2
import json, sys
try:
    res = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print("  no result JSON (%s)" % e)
    sys.exit(0)
fs = res.get("findings") or []
held = 0
for f in fs:
    c = f.get("case", {})
    s = c.get("shape", {})
    m = f.get("drift_map") or {}
    ok = s.get("hidden") == 4096 and c.get("in") == "bf16" and c.get("out") == "bf16"
    held += ok
    print("  finding %s %s %s: minimal rows %s hidden %s %s -> %s%s; map over %s %s..%s: %s" % (
        f.get("kind"), f.get("relation"), f.get("target_a"), s.get("rows"), s.get("hidden"), c.get("in"), c.get("out"),
        "" if ok else " (NOT at the profile)", m.get("dim", "-"), m.get("from", "?"), m.get("to", "?"), m.get("rule") or m.get("kind") or "no map"))
print("  %d finding(s), %d at hidden 4096 bf16 -> bf16%s" % (len(fs), held, "" if held == len(fs) and fs else "  <- CHECK"))
PY
	pack
fi

# 5. Maps of the GPU drift models: tile-48 path parity, the logprob onset.
if begin maps 40; then
	lim=$(limit 80)
	cdur=$((lim - 35 < 20 ? lim - 35 : 20))
	((cdur < 5)) && cdur=5
	tile=(--to 200 --heads 4 --kv-heads 2 --head-dim 16 --rows 2)
	timed tile48-gpu "$lim" "$bin" scan --target cuda-drift-attn-tile48,cuda-attn_decode "${tile[@]}" --dir "$work/corpus-maps" --json "$logs/tile48-gpu.json" &
	timed tile48-cpu "$lim" "$bin" scan --target drift-attn-tile48,oracle-attn_decode "${tile[@]}" --dir "$work/corpus-maps" --json "$logs/tile48-cpu.json" &
	timed logprob-scan "$lim" "$bin" scan --target cuda-drift-order-logprob-rows132 --to 300 --vocab 32000 --in bf16 --out fp32 \
		--dir "$work/corpus-maps" --json "$logs/logprob-scan.json" &
	timed tile48-run "$lim" "$bin" run --targets cuda-attn_prefill,cuda-drift-attn-tile48 --relations path_parity \
		--duration "${cdur}s" --json "$logs/tile48-run.json" --corpus "$work/corpus-maps-run" &
	timed logprob-run "$lim" "$bin" run --targets cuda-drift-order-logprob-rows132 \
		--duration "${cdur}s" --json "$logs/logprob-run.json" --corpus "$work/corpus-maps-run" &
	wait
	expect tile48-gpu 1
	expect tile48-cpu 1
	expect logprob-scan 1
	expect tile48-run 0
	expect logprob-run 0
	python3 - "$logs" <<'PY' | tee -a "$summary" >&2
import json, os, re, sys
logs = sys.argv[1]
def rc(name):
    try:
        return open(os.path.join(logs, name + ".rc")).read().split()
    except OSError:
        return ["none", "0"]
def load(name):
    try:
        return json.load(open(os.path.join(logs, name + ".json")))
    except (OSError, ValueError):
        return None
def differ(name):
    """The differing values of the first scan of scan --json file NAME."""
    res = load(name)
    return sorted((((res or {}).get("scans") or [{}])[0] or {}).get("differ") or []) if res else None
def lines(name, pat):
    try:
        return [l.strip() for l in open(os.path.join(logs, name + ".log")) if re.search(pat, l)]
    except OSError:
        return []
print("maps:")
g, c = differ("tile48-gpu"), differ("tile48-cpu")
for name, r in (("tile48-gpu", g), ("tile48-cpu", c)):
    print("  %s (exit %s, %s s): %s" % (name, *rc(name), " ".join(lines(name, r"DIFFER|AGREE|map over"))[:400] or "no result"))
if g is not None and c is not None:
    print("  tile48 GPU map equals its CPU twin's (KV 1..200, 4 heads, 2 kv heads, head dim 16, 2 sequences): %s"
          % ("yes" if g == c else "NO"))
print("  logprob-scan (exit %s, %s s): %s" % (*rc("logprob-scan"), " ".join(lines("logprob-scan", r"CERTIFIED|DRIFT"))[:300] or "no result"))
for name in ("tile48-run", "logprob-run"):
    res = load(name)
    fs = (res or {}).get("findings") or []
    print("  %s (exit %s, %s s): %d cases, %d finding(s)" % (name, *rc(name), (res or {}).get("cases", 0), len(fs)))
    for f in fs:
        m = f.get("drift_map") or {}
        print("    %s %s %s vs %s: map over %s %s..%s (%s, draws %s, runs %s): %s" % (
            f.get("kind"), f.get("relation"), f.get("target_a"), f.get("target_b", "-"), m.get("dim", "-"), m.get("from", "?"),
            m.get("to", "?"), m.get("kind", "-"), m.get("draws", "-"), m.get("runs", "-"), m.get("rule") or "no rule"))
PY
	pack
fi

# 6. The scan benchmark: scan, torch loop, copy bandwidth.
if begin bench 45; then
	timed bench "$(limit "${BENCH_LIMIT:-200}")" env BITPARITY="$bin" OUTDIR="$logs/bench" bash scripts/bench-scan-gpu.sh
	expect bench 0
	{
		echo "bench: scripts/bench-scan-gpu.sh (make bench-scan-gpu): exit $rc in $secs s"
		grep -E '^  ' "$logs/bench.log" || echo "  no figures (see bench.log)"
	} | tee -a "$summary" >&2
	pack
fi

# 7. Where the scans' host time goes.
if begin scan-profile 40; then
	lim=$(limit 60)
	timed prof-rmsnorm "$lim" "$bin" scan --target cuda-rmsnorm --to 8192 --hidden 4096 --in bf16 --out bf16 \
		--dists normal,boundary,heavy --power 0 --dir "$work/corpus-prof" --cpuprofile "$logs/rmsnorm.prof"
	timed prof-gemm "$lim" "$bin" scan --target cublas-gemmex --to 256 --hidden 4096 --n 4096 --in bf16 --out bf16 \
		--dists normal,boundary,heavy --power 0 --dir "$work/corpus-prof" --cpuprofile "$logs/gemm.prof"
	for p in rmsnorm gemm; do
		go tool pprof -top -nodecount=40 "$bin" "$logs/$p.prof" >"$logs/$p.pprof.txt" 2>&1
		go tool pprof -top -cum -nodecount=80 "$bin" "$logs/$p.prof" >"$logs/$p.cum.txt" 2>&1
	done
	timed gemm-loop-torch "$lim" python3 scripts/gemm_scan.py 256 4096 4096 --draws 3 --backend torch
	jsonline "$logs/gemm-loop-torch.log"
	{
		echo "scan-profile: $(grep -h -m1 'row comparisons in' "$logs/prof-rmsnorm.log" "$logs/prof-gemm.log" | paste -sd ';' -)"
		echo "  torch loop over the cuBLAS comparisons: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("backend"), d.get("version"), d.get("seconds"), "s")' "$logs/gemm-loop-torch.json" 2>&1)"
		for p in rmsnorm gemm; do echo "  $p profile:"; sed -n '1,16p' "$logs/$p.pprof.txt" | sed 's/^/    /'; done
	} | tee -a "$summary" >&2
	pack
fi

# 7b. Where a certificate's power goes: the default-power scan of
# cuda-rmsnorm at llama3-8b over 1..POWER_ROWS (default 8192), twice
# (an empty sensitive-draw cache, then the draws the first kept), each
# under --cpuprofile, with go tool pprof -top (flat and cumulative).
if begin power-profile 40; then
	prow=${POWER_ROWS:-8192}
	rm -rf "$work/sensitive-cache"
	for pass in 1 2; do
		timed "power-$pass" "$(limit 90)" env BITPARITY_SENSITIVE_CACHE="$work/sensitive-cache" "$bin" scan --target cuda-rmsnorm \
			--profile llama3-8b --to "$prow" --dir "$work/corpus-power" --json "$logs/power-$pass.json" --cpuprofile "$logs/power-$pass.prof"
		expect "power-$pass" 0
		go tool pprof -top -nodecount=30 "$bin" "$logs/power-$pass.prof" >"$logs/power-$pass.pprof.txt" 2>&1
		go tool pprof -top -cum -nodecount=60 "$bin" "$logs/power-$pass.prof" >"$logs/power-$pass.cum.txt" 2>&1
	done
	{
		for pass in 1 2; do
			result "power-$pass"
			echo "power-profile: pass $pass (sensitive cache $([ "$pass" = 1 ] && echo empty || echo kept)): exit $rc in $secs s; $(grep -h -m1 'row comparisons in' "$logs/power-$pass.log"); $(grep -h -m1 'power:' "$logs/power-$pass.log" | cut -c1-200)"
			sed -n '6,30p' "$logs/power-$pass.cum.txt" | sed 's/^/    /'
		done
	} | tee -a "$summary" >&2
	pack
fi

# 8. The 60 s campaign's invariant case count, this build and a baseline.
if begin campaign 70; then
	cs=${CAMPAIGN_SECONDS:-60}
	targets=$("$bin" list | awk '$1 ~ /^cuda-/ {print $1}' | paste -sd, -)
	timed campaign "$(limit $((cs + 60)))" "$bin" run --duration "${cs}s" --seed 1 --targets "$targets" --known corpus/h200 \
		--json "$logs/campaign.json" --corpus "$work/corpus-campaign"
	expect campaign 0
	base=
	if [ -f .device/base.tar.gz ] && begin campaign $((cs + 40)); then
		mkdir -p "$work/base" && tar -C "$work/base" -xzf .device/base.tar.gz && rm -rf "$work/base/vendor" && cp -r vendor "$work/base/vendor"
		if (cd "$work/base" && timed base-build 300 go build -tags "$tags" -o "$work/base/bitparity" ./cmd/bitparity); then
			base=$work/base/bitparity
			timed campaign-base "$(limit $((cs + 60)))" "$base" run --duration "${cs}s" --seed 1 --targets "$targets" --known corpus/h200 \
				--json "$logs/campaign-base.json" --corpus "$work/corpus-campaign-base"
		fi
	fi
	python3 - "$logs" <<'PY' | tee -a "$summary" >&2
import os, re, sys
logs = sys.argv[1]
def inv(name):
    try:
        text = open(os.path.join(logs, name + ".log")).read()
    except OSError:
        return None
    m = re.search(r"invariant targets: (\d+) cases", text)
    return int(m.group(1)) if m else None
for name in ("campaign", "campaign-base"):
    v = inv(name)
    if v is not None:
        print("campaign: %s: %d invariant cases in the 60 s run (exit %s)" % (name, v, open(os.path.join(logs, name + ".rc")).read().split()[0]))
a, b = inv("campaign"), inv("campaign-base")
if a and b:
    print("campaign: this build / baseline: %.3f (issue 33: must not drop)" % (a / b))
PY
	pack
fi

say "round: ended at $(now) s of ${budget}"
if [ ${#failed[@]} -gt 0 ]; then
	say "FAILED: ${failed[*]}"
	pack
	exit 1
fi
say "all stages answered as expected"
pack
