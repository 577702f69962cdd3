#!/usr/bin/env bash
# session 20 probe: runs after device-round.sh (bin/bitparity built)
set -u
o=$OUT/probe; mkdir -p $o
b=bin/bitparity
sc() { $b scan --target cublas-gemmex --to 256 --hidden 4096 --n 4096 --in bf16 --out bf16 --power 0 --dir /tmp/pc "$@"; }
for i in 1 2; do
  for d in normal normal,boundary,heavy; do
    /usr/bin/time -f "wall %e" bash -c "$(declare -f sc); b=$b; sc --dists $d" 2>&1 | grep -E "row comparisons|wall" | sed "s/^/[$i $d] /"
  done
done > $o/draws.txt 2>&1
CUDA_MODULE_LOADING=EAGER /usr/bin/time -f "wall %e" $b scan --target cublas-gemmex --to 256 --hidden 4096 --n 4096 --in bf16 --out bf16 --power 0 --dir /tmp/pc --dists normal,boundary,heavy 2>&1 | grep -E "row comparisons|wall" > $o/eager.txt
timeout 120 python3 .device/cublas_probe.py > $o/cupy.json 2> $o/cupy.err
for i in 1 2; do timeout 60 python3 scripts/gemm_scan.py 256 4096 4096 --draws 3 --backend torch | python3 -c 'import json,sys; d=json.load(sys.stdin); print("torch loop", d["seconds"], d["products"])'; timeout 60 python3 scripts/gemm_scan.py 256 4096 4096 --draws 3 --backend torch --op-only | python3 -c 'import json,sys; d=json.load(sys.stdin); print("torch ops", d["seconds"])'; timeout 60 python3 scripts/gemm_scan.py 256 4096 4096 --draws 3 --backend cupy --op-only | python3 -c 'import json,sys; d=json.load(sys.stdin); print("cupy ops", d["seconds"])'; done > $o/loops.txt 2>&1
cat $o/*.txt $o/cupy.json
tar cf $OUT/probe.tar -C $OUT probe && rm -rf $o
