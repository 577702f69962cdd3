#!/usr/bin/env bash
# session 22, call 3: the card with RUNS=3 and the GPU tests of the held GEMM, the warm-up and the upload ring (device-round), then the A/B probe
set -u
ROUND_BUDGET=440 STAGES="bench test-gpu" KINDS="rmsnorm gemm exec kernel" RUNS=3 BENCH_LIMIT=280 PART_TIMEOUT=120 \
  TEST_PKGS="./scan/ ./gpu/" TEST_RUN='TestHoldGEMM|TestScanUserKernelBulk|TestScanGEMMHeld|TestScanGPUBulkMatchesPerStep|TestScanWarms|TestScanMakesHostBatchesAhead|TestUploadRing|TestUploadShared|TestCublas' TEST_LIMIT=130 \
  bash scripts/device-round.sh
bash .device/probe22c.sh
