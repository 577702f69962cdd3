#!/usr/bin/env bash
# session 22: the card with RUNS=3 and the GPU tests of the held GEMM (device-round), then the probes
set -u
ROUND_BUDGET=430 STAGES="bench test-gpu" KINDS="rmsnorm gemm exec kernel" RUNS=3 BENCH_LIMIT=280 PART_TIMEOUT=120 \
  TEST_PKGS="./scan/" TEST_RUN='TestHoldGEMMCase|TestScanUserKernelBulk|TestScanGEMMHeld|TestScanGPUBulkMatchesPerStep|TestScanWarms|TestScanMakesHostBatchesAhead' TEST_LIMIT=120 \
  bash scripts/device-round.sh
bash .device/probe22.sh
