#!/usr/bin/env bash
# session 21: the card with RUNS=3 (device-round bench), then the probes
set -u
ROUND_BUDGET=300 STAGES="bench" KINDS="rmsnorm gemm exec kernel" RUNS=3 BENCH_LIMIT=280 PART_TIMEOUT=120 bash scripts/device-round.sh
bash .device/probe21.sh
