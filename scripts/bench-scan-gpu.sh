#!/usr/bin/env bash
# bench-scan-gpu.sh: the scan benchmark of docs/performance.md ("Scan
# benchmark") in one process group, on a GPU host with torch: a
# certification scan of cuda-rmsnorm over rows 1..ROWS at hidden HIDDEN,
# bf16, one draw per distribution of DISTS; the plain torch loop over the
# same rows, hidden and number of draws (scripts/torch_scan.py); and the
# device-to-device copy bandwidth (scripts/copy_bandwidth.py). It prints
# the three figures and their ratios:
#
#   speedup  = loop seconds / scan seconds           (issue: >= 2)
#   of bound = scan seconds / bound seconds          (issue: <= 2)
#   bound    = 3 x 2 bytes x HIDDEN x rows of every batch / copy bandwidth
#              (the kernel reads each batch and writes its output, the
#              compare reads each output once)
#
#   make bench-scan-gpu                                     # builds bin/bitparity first
#   BITPARITY=bin/bitparity bash scripts/bench-scan-gpu.sh  # ROWS HIDDEN DISTS OUTDIR
#
# A second figure, the cuBLAS scan: `bitparity scan --target GEMM_TARGET`
# (default cublas-gemmex) over M 1..GEMM_M (256) at K = GEMM_K and N =
# GEMM_N (4096), bf16, one draw per distribution of DISTS, its batches
# resident on the device, against the loop a user writes over the same
# comparisons (scripts/gemm_scan.py: cuBLAS through CuPy when it imports,
# else torch), and their ratio:
#
#   gemm speedup = loop seconds / scan seconds      (issue: >= 2)
#
# GEMM_TARGET= (empty) skips it.
#
# The logs and JSON go to OUTDIR (default out/bench-scan-gpu). Exit 0 when
# all ran, 3 when one failed (its log is named).
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${BITPARITY:-bin/bitparity}
rows=${ROWS:-8192}
hidden=${HIDDEN:-4096}
dists=${DISTS:-normal,boundary,heavy}
out=${OUTDIR:-out/bench-scan-gpu}
mkdir -p "$out"
gemm_target=${GEMM_TARGET-cublas-gemmex}
gemm_m=${GEMM_M:-256}
gemm_k=${GEMM_K:-4096}
gemm_n=${GEMM_N:-4096}
ndraws=$(awk -F, '{print NF}' <<<"$dists")
failed=()

rm -rf "$out/corpus"
"$bin" scan --target cuda-rmsnorm --to "$rows" --hidden "$hidden" --in bf16 --out bf16 --dists "$dists" \
	--dir "$out/corpus" --json "$out/scan.json" >"$out/scan.log" 2>&1 || failed+=("scan (exit $?, $out/scan.log)")
python3 scripts/torch_scan.py "$rows" "$hidden" cuda --draws "$ndraws" >"$out/loop.json" 2>"$out/loop.log" ||
	failed+=("torch loop (exit $?, $out/loop.log)")
python3 scripts/copy_bandwidth.py >"$out/copy.json" 2>"$out/copy.log" || failed+=("copy (exit $?, $out/copy.log)")

python3 - "$out/scan.log" "$out/loop.json" "$out/copy.json" "$rows" "$hidden" "$ndraws" <<'PY'
import json, re, sys
scan_log, loop_json, copy_json = sys.argv[1:4]
rows, hidden, draws = map(int, sys.argv[4:7])
def load(p):
    try:
        return json.load(open(p))
    except (OSError, ValueError):
        return None
m = None
try:
    m = re.search(r"(\d+) row comparisons in (\d+) batches, [^,]*, ([0-9.e+]+)s \(([0-9.e+]+) rows/s\)", open(scan_log).read())
except OSError:
    pass
loop, copy = load(loop_json), load(copy_json)
batch_rows = draws * rows * (rows + 1) // 2
bound_bytes = 3 * 2 * hidden * batch_rows
scan_s = float(m.group(3)) if m else None
print("scan benchmark: rmsnorm rows 1..%d, hidden %d, bf16, %d draw(s)" % (rows, hidden, draws))
if m:
    verdict = "CERTIFIED" if "CERTIFIED" in open(scan_log).read() else "not certified"
    print("  scan (bitparity scan --target cuda-rmsnorm): %.3f s, %s row comparisons in %s batches, %.3g rows/s, %s"
          % (scan_s, m.group(1), m.group(2), float(m.group(4)), verdict))
else:
    print("  scan: no figure (see scan.log)")
if loop:
    print("  torch loop (scripts/torch_scan.py, torch %s): %.3f s, %d rows checked, %.3g rows/s, %d value(s) differ"
          % (loop["torch"], loop["seconds"], loop["rows_checked"], loop["rows_per_second"], len(loop["differ"])))
else:
    print("  torch loop: no figure (see loop.log)")
if copy:
    bw = copy["bytes_per_second"]
    print("  copy bandwidth (device to device, read + write): %.3f TB/s" % (bw / 1e12))
    print("  bound: %.3f TB (kernel reads and writes, one read of each output) at copy bandwidth: %.3f s"
          % (bound_bytes / 1e12, bound_bytes / bw))
else:
    print("  copy bandwidth: no figure (see copy.log)")
if m and loop:
    print("  speedup over the torch loop: %.2fx (want >= 2)" % (loop["seconds"] / scan_s))
if m and copy:
    print("  scan / bound: %.2fx (want <= 2); the scan moves %.3g TB/s of the bound's bytes"
          % (scan_s / (bound_bytes / copy["bytes_per_second"]), bound_bytes / scan_s / 1e12))
PY
if [ -n "$gemm_target" ]; then
	rm -rf "$out/gemm-corpus"
	"$bin" scan --target "$gemm_target" --to "$gemm_m" --hidden "$gemm_k" --n "$gemm_n" --in bf16 --out bf16 --dists "$dists" \
		--dir "$out/gemm-corpus" --json "$out/gemm-scan.json" >"$out/gemm-scan.log" 2>&1
	rc=$?
	# exit 1 is a drift map: a finding, not a failure
	[ $rc -le 1 ] || failed+=("gemm scan (exit $rc, $out/gemm-scan.log)")
	python3 scripts/gemm_scan.py "$gemm_m" "$gemm_k" "$gemm_n" --draws "$ndraws" >"$out/gemm-loop.json" 2>"$out/gemm-loop.log" ||
		failed+=("gemm loop (exit $?, $out/gemm-loop.log)")
	python3 - "$out/gemm-scan.log" "$out/gemm-loop.json" "$gemm_target" "$gemm_m" "$gemm_k" "$gemm_n" "$ndraws" <<'PY'
import json, re, sys
scan_log, loop_json, name = sys.argv[1:4]
m, k, n, draws = map(int, sys.argv[4:8])
try:
    text = open(scan_log).read()
except OSError:
    text = ""
f = re.search(r"(\d+) row comparisons in (\d+) batches, ([^,]*), ([0-9.e+]+)s \(([0-9.e+]+) rows/s\)", text)
try:
    loop = json.load(open(loop_json))
except (OSError, ValueError):
    loop = None
print("gemm scan benchmark: %s, M 1..%d, K %d, N %d, bf16, %d draw(s)" % (name, m, k, n, draws))
if f:
    verdict = "CERTIFIED" if "CERTIFIED" in text else "drift map"
    print("  scan (bitparity scan --target %s): %.3f s, %s row comparisons in %s batches, %s, %s"
          % (name, float(f.group(4)), f.group(1), f.group(2), f.group(3), verdict))
else:
    print("  scan: no figure (see gemm-scan.log)")
if loop:
    print("  loop (scripts/gemm_scan.py, %s %s): %.3f s, %d rows checked, %d panel rows, %d products, %d M differ"
          % (loop["backend"], loop["version"], loop["seconds"], loop["rows_checked"], loop["panel_rows"],
             loop["products"], len(loop["differ"])))
else:
    print("  loop: no figure (see gemm-loop.log)")
if f and loop:
    print("  gemm speedup over the loop: %.2fx (want >= 2)" % (loop["seconds"] / float(f.group(4))))
PY
fi
if [ ${#failed[@]} -gt 0 ]; then
	echo "bench-scan-gpu: FAILED: ${failed[*]}" >&2
	exit 3
fi
