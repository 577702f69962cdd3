#!/usr/bin/env bash
# h200.sh: everything issue 7 needs from the GPU host in one call (run as
# `bash .device/run.sh bash gpu/testdata/userkernels/h200.sh`, CUDA_COMPAT_INCLUDE=gpu/cudacompat):
# the example kernels' PTX, the cuda build, the user-kernel and cuBLAS
# tests, cuBLAS and user-kernel campaigns with the CLI, and (when present)
# adapters/run_h200.sh. Everything lands in $OUT/results.tgz and $OUT/log.txt.
set -uo pipefail
R=${OUT:-/tmp/out}/r
mkdir -p "$R"
t0=$(date +%s)
step() { tar -C "$R" -czf "${OUT:-/tmp/out}/results.tgz" . 2>/dev/null; echo "== $(( $(date +%s) - t0 ))s: $*"; }
step nvidia-smi; nvidia-smi -L
step ptx; bash gpu/testdata/userkernels/build.sh && cp gpu/testdata/userkernels/*.ptx gpu/testdata/userkernels/userkernels.sha256 "$R"/
step build; timeout 200 go build -tags cuda -o bin/bitparity ./cmd/bitparity || echo "build failed"
step gpu-tests
timeout 90 go test -tags cuda -count=1 -short -v -run 'UserKernel|Cublas|Manifest|Expr|Shipped' ./gpu/ >"$R/gputest.log" 2>&1; echo "go test exit $?"
grep -E '^(=== RUN|--- |ok|FAIL|PASS)|found:|finding|crash|cases' "$R/gputest.log" | head -80
step cublas-campaign
timeout 35 bin/bitparity run --targets cublas-sgemm,cublas-gemmex --duration 15s --seed 1 --json "$R/cublas.json" >"$R/cublas.txt" 2>"$R/cublas.err"; echo "exit $?"
tail -c 4000 "$R/cublas.txt"
step kernel-drift
timeout 30 bin/bitparity run --kernel gpu/testdata/userkernels/rmsnorm_drift.json --duration 10s --seed 1 --json "$R/kernel-drift.json" >"$R/kernel-drift.txt" 2>"$R/kernel-drift.err"; echo "exit $?"
tail -c 2500 "$R/kernel-drift.txt"
step kernel-fault
timeout 25 bin/bitparity run --kernel gpu/testdata/userkernels/fault.json,gpu/testdata/userkernels/rmsnorm_invariant.json --duration 6s --seed 1 --no-shrink --json "$R/kernel-fault.json" >"$R/kernel-fault.txt" 2>"$R/kernel-fault.err"; echo "exit $?"
tail -c 1500 "$R/kernel-fault.txt"
if [ -f adapters/run_h200.sh ]; then
	step adapters
	BITPARITY=bin/bitparity BUDGET=${ADAPTER_BUDGET:-25} DURATION=6s timeout 45 bash adapters/run_h200.sh "$R/h200" >"$R/adapters.log" 2>&1; echo "exit $?"
	tail -c 1500 "$R/adapters.log"
fi
step done
tar -C "$R" -czf "${OUT:-/tmp/out}/results.tgz" .
