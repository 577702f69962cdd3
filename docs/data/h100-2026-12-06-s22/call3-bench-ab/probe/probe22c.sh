#!/usr/bin/env bash
# session 22, call 3: the cuBLAS scan with this tree, with the upload ring's change alone, and as the session began (51e7450), alternated
set -u
o=$OUT/p22c; mkdir -p $o
[ -x bin/bitparity ] || go build -tags cuda,nocloud -o bin/bitparity ./cmd/bitparity > $o/build.log 2>&1 || { echo BUILD FAILED; exit 3; }
for v in base ring; do
  rm -rf /tmp/$v && mkdir /tmp/$v && tar -C . --exclude=./.device --exclude=./bin -cf - . | tar -C /tmp/$v -xf -
  tar -C /tmp/$v -xf .device/$v-files.tar
  (cd /tmp/$v && go build -tags cuda,nocloud -o /tmp/bp-$v ./cmd/bitparity) >> $o/build.log 2>&1 || echo $v BUILD FAILED
done
nvidia-smi -L > $o/gpu.txt
gs() { timeout 60 "$1" scan --target cublas-gemmex --to 256 --hidden 4096 --n 4096 --in bf16 --out bf16 --power 0 --dir /tmp/gc-$2 --dists "$3"; }
for i in 1 2 3; do for v in new ring base; do bb=bin/bitparity; [ $v != new ] && bb=/tmp/bp-$v
  for d in normal normal,boundary,heavy; do
    gs $bb $v $d > $o/ab-$v-$i-${d//,/-}.log 2>&1
    grep -h -E "row comparisons|DRIFT|rror" $o/ab-$v-$i-${d//,/-}.log | sed "s/^/[$v $i $d] /" >> $o/ab.txt
  done
done; done
for i in 1 2; do timeout 60 python3 scripts/gemm_scan.py 256 4096 4096 --draws 3 --backend torch | python3 -c 'import json,sys; d=json.load(sys.stdin); print("torch loop", d["seconds"])'; done > $o/loops.txt 2>&1
cat $o/gpu.txt; grep "row comparisons" $o/ab.txt; grep -c DRIFT $o/ab.txt; grep -h "drift map" $o/ab.txt | sed 's/^\[[^]]*\] *//' | sort | uniq -c; cat $o/loops.txt
tar czf $OUT/p22c.tgz -C $OUT p22c && rm -rf $o
