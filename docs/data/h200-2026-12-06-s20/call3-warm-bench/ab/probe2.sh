#!/usr/bin/env bash
# session 20, call 3: the cuBLAS warm-up A/B (this tree against the tree
# without it: .device/base-files.tar over a copy, warm files removed)
set -u
o=$OUT/p2; mkdir -p $o
rm -rf /tmp/base && mkdir /tmp/base && tar -C . --exclude=./.device --exclude=./bin -cf - . | tar -C /tmp/base -xf -
tar -C /tmp/base -xf .device/base-files.tar && rm -f /tmp/base/gpu/cublas_warm.go /tmp/base/scan/warm_test.go
{ (cd /tmp/base && go build -tags cuda,nocloud -o /tmp/bp-base ./cmd/bitparity) && go build -tags cuda,nocloud -o /tmp/bp-new ./cmd/bitparity; } > $o/build.log 2>&1 || { echo BUILD FAILED; cat $o/build.log; }
for i in 1 2 3; do for v in new base; do
  /usr/bin/time -f "[$v $i] wall %e s" /tmp/bp-$v scan --target cublas-gemmex --to 256 --hidden 4096 --n 4096 --in bf16 --out bf16 --dists normal,boundary,heavy --power 0 --dir /tmp/pc-$v --json $o/$v-$i.json 2>&1 | grep -E "row comparisons|wall|rror" | sed "s/^ */[$v $i] /"
done; done > $o/ab.txt 2>&1
python3 - $o >> $o/ab.txt <<'PY'
import json, sys, glob
o = sys.argv[1]
def load(f):
    s = json.load(open(f))["scans"][0]
    return s["map"], s["differing"], s["batches"], s["elapsed"]
runs = {f.split("/")[-1][:-5]: load(f) for f in sorted(glob.glob(o + "/*-[0-9].json"))}
ref = runs.get("base-1")
for k, (m, d, b, e) in sorted(runs.items()):
    print(k, "elapsed %.3f s" % e, "differing", d, "batches", b, "map same as base-1:", ref is not None and m == ref[0] and d == ref[1])
for v in ("new", "base"):
    es = [r[3] for k, r in runs.items() if k.startswith(v)]
    print(v, "mean %.3f s over %d" % (sum(es) / max(len(es), 1), len(es)))
PY
for i in 1 2; do timeout 60 python3 scripts/gemm_scan.py 256 4096 4096 --draws 3 --backend torch | python3 -c 'import json,sys; d=json.load(sys.stdin); print("torch loop", d["seconds"], d["products"])'; done >> $o/ab.txt 2>&1
cat $o/ab.txt
tar cf $OUT/p2.tar -C $OUT p2 && rm -rf $o
