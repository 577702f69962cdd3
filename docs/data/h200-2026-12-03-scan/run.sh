#!/usr/bin/env bash
# device run for the scan work (not part of the repo)
cd "$(dirname "$0")"
export CUDA_COMPAT_INCLUDE=gpu/cudacompat
R=.device/run.sh
tar -C .device -xJf .device/vendor.tar.xz
mkdir -p /tmp/t
s=$(date +%s)
at() { echo "== rc=$? at $(( $(date +%s)-s ))s"; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv; bash $R go version
  bash $R go build -tags cuda -o /tmp/t/bp ./cmd/bitparity & bash $R go test -c -tags cuda -o /tmp/t/scan.test ./scan/; wait; at; } > $OUT/build.log 2>&1
{ bash $R /tmp/t/bp scan --target cuda-rmsnorm --to 8192 --hidden 4096 --dists normal,boundary,heavy --dir /tmp/c --json $OUT/rms.json; at; } > $OUT/scan.log 2>&1
{ bash $R /tmp/t/scan.test -test.run XXX -test.bench ScanGPURMSNorm -test.benchtime 3x; at; } > $OUT/bench.log 2>&1
{ bash $R /tmp/t/scan.test -test.run 'TestScanGPU' -test.v -test.count=1; at; } > $OUT/test.log 2>&1
{ bash $R /tmp/t/bp scan --target cuda-drift-rmsnorm-te-mod32 --to 8192 --hidden 4096 --dir /tmp/c; at
  bash $R /tmp/t/bp scan --target cuda-drift-rmsnorm-vllm-256 --to 8192 --hidden 4096 --dir /tmp/c; at
  bash $R /tmp/t/bp scan --target cublas-gemmex --to 256 --hidden 4096 --n 4096 --dists normal --dir /tmp/c --json $OUT/gemm.json; at
  python3 scripts/cublas_sweep.py 256 > $OUT/sweep.json; at
  python3 scripts/scan_compare.py $OUT/gemm.json $OUT/sweep.json; at
  bash $R /tmp/t/bp corpus recheck -dir /tmp/c; at; } >> $OUT/scan.log 2>&1
{ bash $R go test -c -tags cuda -o /tmp/t/ ./fuzz/ ./gpu/; at
  bash $R /tmp/t/gpu.test -test.run XXX -test.bench 'BenchmarkCompare$' -test.benchtime 10x; at
  bash $R /tmp/t/fuzz.test -test.run TestDriftMapCublas -test.v; at; } > $OUT/test2.log 2>&1
tail -n 30 $OUT/build.log $OUT/scan.log $OUT/bench.log $OUT/test.log $OUT/test2.log
