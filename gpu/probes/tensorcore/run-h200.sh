#!/usr/bin/env bash
# Runs the tensor-core probe and the cuBLAS GemmEx recording on a GPU host
# (README.md beside this file). $1: a folder holding tc.test (go test -c -o
# tc.test ./oracle, built for linux/amd64) and this folder's sources; $2: the
# output folder.
set -uo pipefail
src=$1 out=$2
work=$(mktemp -d)
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc --version | tail -2
"$src/tc.test" -test.run '^TestTensorCoreProbeWrite$' -tcprobe.write "$work" || exit 3
nvcc -O2 -gencode arch=compute_90a,code=sm_90a -o "$work/tcprobe" "$src/tcprobe.cu" || exit 3
for m in mma-bf16 mma-fp16 mma-tf32 wgmma-bf16 wgmma-fp16; do
	"$work/tcprobe" "$m" "$work/$m.in" "$out/$m.out" || echo "tcprobe $m failed: $?"
done
python3 "$src/cublas_gemmex.py" "$work" || echo "cublas_gemmex failed: $?"
tar -C "$work" -czf "$out/gemm.tgz" $(cd "$work" && ls gemm_*.y32 gemm_*.y16)
