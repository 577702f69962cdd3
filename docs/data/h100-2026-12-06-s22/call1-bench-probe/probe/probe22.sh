#!/usr/bin/env bash
# session 22: the cuBLAS warm-up beside the first draw, A/B; cuBLAS's first calls across handles
set -u
o=$OUT/p22; mkdir -p $o
[ -x bin/bitparity ] || go build -tags cuda,nocloud -o bin/bitparity ./cmd/bitparity > $o/build.log 2>&1 || { echo BUILD FAILED; exit 3; }
b=bin/bitparity
rm -rf /tmp/base && mkdir /tmp/base && tar -C . --exclude=./.device --exclude=./bin -cf - . | tar -C /tmp/base -xf -
tar -C /tmp/base -xf .device/base-files.tar
(cd /tmp/base && go build -tags cuda,nocloud -o /tmp/bp-base ./cmd/bitparity) >> $o/build.log 2>&1 || echo BASE BUILD FAILED
nvidia-smi -L > $o/gpu.txt
gs() { timeout 60 "$1" scan --target cublas-gemmex --to 256 --hidden 4096 --n 4096 --in bf16 --out bf16 --power 0 --dir /tmp/gc-$2 --dists "$3"; }
for i in 1 2 3 4; do for v in new base; do bb=$b; [ $v = base ] && bb=/tmp/bp-base
  for d in normal normal,boundary,heavy; do
    gs $bb $v $d > $o/ab-$v-$i-${d//,/-}.log 2>&1
    grep -h -E "row comparisons|DRIFT|rror" $o/ab-$v-$i-${d//,/-}.log | sed "s/^/[$v $i $d] /" >> $o/ab.txt
  done
done; done
for m in own8 seq own8 seq; do timeout 60 python3 .device/first_calls2.py $m; done > $o/first.txt 2> $o/first.err
for m in seq own8; do CUDA_MODULE_LOADING=EAGER timeout 120 python3 .device/first_calls2.py $m; done >> $o/first.txt 2>> $o/first.err
cat $o/gpu.txt $o/ab.txt $o/first.txt; head -c 600 $o/first.err
tar czf $OUT/p22.tgz -C $OUT p22 && rm -rf $o
