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
# The logs and JSON go to OUTDIR (default out/bench-scan-gpu). Exit 0 when
# all three ran, 3 when one failed (its log is named).
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${BITPARITY:-bin/bitparity}
rows=${ROWS:-8192}
hidden=${HIDDEN:-4096}
dists=${DISTS:-normal,boundary,heavy}
out=${OUTDIR:-out/bench-scan-gpu}
mkdir -p "$out"
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
if [ ${#failed[@]} -gt 0 ]; then
	echo "bench-scan-gpu: FAILED: ${failed[*]}" >&2
	exit 3
fi
