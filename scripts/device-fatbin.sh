#!/usr/bin/env bash
# device-fatbin.sh: on a GPU host with nvcc, from the project root, build the
# fat images of gpu/kernels and of the example user kernels, then measure
# what they change for a fresh host: `bitparity list`, `bitparity version`
# and a one-step scan with the driver's compile cache disabled
# (CUDA_CACHE_DISABLE=1), for a build that loads the PTX (fat images set
# aside) and for one that loads the fat images; then the gpu package's
# quick tests on the fat images, and `scan --kernel` of the example user
# kernels (the test, and rows 1..8192 at hidden 4096 over three draws).
# Everything comes back in $OUT/fatbin.tar (OUT defaults to out/fatbin),
# packed again after every stage, so a run cut short still returns what it
# made: the images and their sha256 files to commit, summary.txt, the logs.
#
# STEPS (default "measure test kernel") picks the stages after the images
# and the builds: measure (start-up times, version), test (gpu package
# tests), kernel (scan --kernel's GPU test, then each 8192-row scan under
# KERNEL_SCAN_TIMEOUT seconds, default 120). The stages run in that order,
# most important first: under a 10-minute limit the last may be cut short.
#
#   GPUTAGS=cuda,nocloud bash .device/run.sh bash scripts/device-fatbin.sh   # Go from .device (scripts/device-prepare.sh)
#   bash scripts/device-fatbin.sh                                             # where go is on PATH
#
# GPUTAGS (default cuda) are the tags of the GPU builds: cuda,nocloud where
# the vendored modules leave out the cloud SDKs, as device-prepare.sh packs
# them.
#
# Without Go the images are still built and packed, and the script exits 3
# after saying so. A failing build stops the script with its log on
# stderr (exit 3); a failing test or measurement is logged, the other
# stages still run, and the script ends with FAILED and exit 1. Running it
# again rebuilds everything.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${OUT:-$root/out/fatbin}
mkdir -p "$out"
logs=$out/logs
rm -rf "$logs"
mkdir -p "$logs"
summary=$out/summary.txt
: >"$summary"
tags=${GPUTAGS:-cuda}
cuda=${CUDA_HOME:-/usr/local/cuda}

fail() {
	echo "device-fatbin: FAILED: $*" >&2
	pack || true
	exit 3
}
# logged NAME CMD...: run CMD with its output in $logs/NAME.log; on a
# failure show the log's last 40 lines and return 1.
logged() {
	local name=$1
	shift
	echo "== $name: $*" >&2
	"$@" >"$logs/$name.log" 2>&1 && return 0
	tail -n 40 "$logs/$name.log" >&2
	return 1
}
# step NAME CMD...: logged; fail loudly.
step() { logged "$@" || fail "$1 (log: $logs/$1.log)"; }
# check NAME CMD...: step, but a failure is recorded and the script goes on.
failed=()
check() {
	if ! logged "$@"; then
		echo "device-fatbin: FAILED: $1 (log: $logs/$1.log)" >&2
		failed+=("$1")
	fi
	return 0
}
want() { [[ " ${STEPS:-measure test kernel} " == *" $1 "* ]]; }
pack() {
	local files=()
	for f in gpu/kernels/*.fatbin gpu/kernels/fatbin.sha256 \
		gpu/testdata/userkernels/*.fatbin gpu/testdata/userkernels/userkernels.fatbin.sha256 \
		gpu/testdata/userkernels/*.ptx gpu/testdata/userkernels/userkernels.sha256; do
		[ -f "$f" ] && files+=("$f")
	done
	cp -f "$summary" "$logs"/ 2>/dev/null || true
	tar -cf "$out/fatbin.tar" "${files[@]}" -C "$out" logs
	echo "device-fatbin: $out/fatbin.tar: ${#files[@]} image files and logs" >&2
}
# wall CMD...: CMD's wall time in seconds, e.g. 0.412 (its stdout dropped)
wall() {
	local t0 ms
	t0=$(date +%s%N)
	"$@" >/dev/null || return
	ms=$((($(date +%s%N) - t0) / 1000000))
	printf '%d.%03d\n' $((ms / 1000)) $((ms % 1000))
}

say() { echo "$*" | tee -a "$summary" >&2; }

{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader; } >"$logs/host.log" 2>&1 || true
step nvcc bash -c "'$cuda/bin/nvcc' --version; '$cuda/bin/nvcc' --list-gpu-code"
say "host: $(head -n 1 "$logs/host.log")"
say "nvcc: $(grep -m1 release "$logs/nvcc.log") codes: $(grep -o 'sm_[0-9a-z]*' "$logs/nvcc.log" | tr '\n' ' ') (sm_100 listed: $(grep -qw sm_100 "$logs/nvcc.log" && echo yes || echo no))"

# 1. The fat images.
step fatbin bash scripts/fatbin.sh
step userkernels bash gpu/testdata/userkernels/build.sh
say "fat images: $(ls gpu/kernels/*.fatbin | wc -l) modules, $(du -cb gpu/kernels/*.fatbin | tail -n 1 | cut -f1) bytes; $(grep '^# code:' gpu/kernels/fatbin.sha256)"

if ! command -v go >/dev/null; then
	pack
	echo "device-fatbin: no go on PATH: the images are built and packed, nothing measured (run it through .device/run.sh)" >&2
	exit 3
fi
export CGO_CFLAGS="-I$root/gpu/cudacompat -I$cuda/include ${CGO_CFLAGS:-}"
export CGO_LDFLAGS="-L$cuda/lib64/stubs -L$cuda/lib64 ${CGO_LDFLAGS:-}"
export LD_LIBRARY_PATH="$cuda/lib64:${LD_LIBRARY_PATH:-}"
say "go: $(go version)"

# 2. Two builds: PTX only (the fat images set aside), then fat images.
aside=$(mktemp -d)
mv gpu/kernels/*.fatbin gpu/kernels/fatbin.sha256 "$aside"/
if ! go build -tags "$tags" -o bin/bitparity-ptx ./cmd/bitparity >"$logs/build-ptx.log" 2>&1; then
	mv "$aside"/* gpu/kernels/
	tail -n 40 "$logs/build-ptx.log" >&2
	fail "build-ptx"
fi
mv "$aside"/* gpu/kernels/
rmdir "$aside"
step build-fat go build -tags "$tags" -o bin/bitparity ./cmd/bitparity
check test-cpu go test -tags nocloud -count=1 -run 'TestPTX|TestFatbin|TestPickImage|TestShippedUserKernels' ./gpu/
pack

# 3. Start-up with the driver's cache disabled (every PTX load compiles).
want measure && for bin in bin/bitparity-ptx bin/bitparity; do
	name=$(basename "$bin")
	CUDA_CACHE_DISABLE=1 "$bin" version >"$logs/version-$name.txt" 2>&1 || failed+=("$name version")
	lists=()
	for i in 1 2 3; do
		t=$(CUDA_CACHE_DISABLE=1 wall "$bin" list) || { failed+=("$name list"); t=failed; }
		lists+=("$t")
	done
	scan=$(CUDA_CACHE_DISABLE=1 wall "$bin" scan --target cuda-rmsnorm --from 1 --to 1 --hidden 4096 --dists normal --dir "$out/corpus-$name") ||
		{ failed+=("$name one-step scan"); scan=failed; }
	warm=$(wall "$bin" list) || { failed+=("$name list (cache on)"); warm=failed; }
	say "$name: CUDA_CACHE_DISABLE=1 list ${lists[*]} s; one-step scan $scan s; list with the cache on $warm s"
	say "$name: version:"
	sed 's/^/    /' "$logs/version-$name.txt" | tee -a "$summary" >&2
done
pack

# 4. The gpu package's tests on the fat images.
if want test; then
	check test-gpu go test -tags "$tags" -count=1 -short -v -timeout 5m \
		-run "${QUICK_RUN:-TestCompare|TestParity|TestProbes|TestPTX|TestFatbin|TestUserKernel|TestUserHeld|TestDriftModelsFound}" ./gpu/
	say "gpu tests on the fat images: $(grep -E '^(ok|FAIL)' "$logs/test-gpu.log" | tr '\n' ' ')"
	pack
fi

# 5. scan --kernel: the example kernels (certified, mapped, faulting,
# hanging), then rows 1..8192 at hidden 4096 over three draws.
if want kernel; then
	check test-kernel-scan go test -tags "$tags" -count=1 -v -timeout 4m -run 'TestScanKernelOnGPU' ./cmd/bitparity/
	say "scan --kernel test: $(grep -E '^(ok|FAIL|--- )' "$logs/test-kernel-scan.log" | tr '\n' ' ')"
	for k in rmsnorm_invariant rmsnorm_drift; do
		t0=$(date +%s)
		rc=0
		timeout "${KERNEL_SCAN_TIMEOUT:-120}" bin/bitparity scan --kernel "gpu/testdata/userkernels/$k.json" --to 8192 --hidden 4096 \
			--dists normal,boundary,heavy --dir "$out/corpus-kernel" --json "$logs/scan-$k.json" >"$logs/scan-$k.log" 2>&1 || rc=$?
		say "scan --kernel $k, rows 1..8192, hidden 4096, 3 draws: exit $rc in $(($(date +%s) - t0)) s"
		{ grep -E 'row comparisons|CERTIFIED|DRIFT|FAULT' "$logs/scan-$k.log" || true; } | sed 's/^/    /' | tee -a "$summary" >&2
		case $k:$rc in rmsnorm_invariant:0 | rmsnorm_drift:1) ;; *) failed+=("scan --kernel $k (exit $rc)") ;; esac
		pack
	done
fi
pack
cat "$summary"
if [ ${#failed[@]} -gt 0 ]; then
	echo "device-fatbin: FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "device-fatbin: all stages passed" >&2
