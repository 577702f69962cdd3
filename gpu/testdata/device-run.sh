#!/usr/bin/env bash
# device-run.sh: the GPU verification run behind docs/gpu.md and
# docs/performance.md, on a GPU host, from the project root:
#
#   CUDA_COMPAT_INCLUDE=gpu/cudacompat bash .device/run.sh bash gpu/testdata/device-run.sh OUTDIR
#
# It rebuilds the PTX (make ptx), runs the CPU and GPU suites of package gpu,
# the benchmarks, and a short `bitparity run` campaign over every target
# of the cuda build (CPU and GPU),
# writing logs and the PTX (ptx.tar) to OUTDIR.
set -uo pipefail
out=${1:?usage: device-run.sh OUTDIR}
mkdir -p "$out"
nvidia-smi -L
scripts/ptx.sh 2>&1 | tail -1 || exit 1
(cd gpu/kernels && tar cf "$out/ptx.tar" *.ptx kernels.sha256)
go test -count=1 ./gpu/ 2>&1 | tail -3
go test -tags cuda -count=1 -v -timeout 300s ./gpu/... ./cmd/... >"$out/test.log" 2>&1
echo "gpu tests: rc=$?"
grep -E '^(--- |ok|FAIL|panic)|parity:|found|drift map|zero findings|max:|exp32|bf16/|cases bitwise' "$out/test.log" | grep -v '^    --- PASS' | head -40
go test -tags cuda -count=1 -run '^$' -bench . -benchtime 20x -timeout 240s ./gpu/ 2>&1 | tee "$out/bench.log" | grep -E 'Benchmark|^ok|FAIL'
go build -tags cuda -o /tmp/bitparity ./cmd/bitparity &&
	timeout 150 /tmp/bitparity run --duration 40s --seed 1 --json "$out/run.json" >"$out/run.log" 2>&1
echo "bitparity run: rc=$?"
tail -25 "$out/run.log"
