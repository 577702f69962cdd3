#!/usr/bin/env bash
# session 22, call 2: where the cuBLAS scan's first draw goes (a build with time stamps)
set -u
o=$OUT/p22b; mkdir -p $o
rm -rf /tmp/tr && mkdir /tmp/tr && tar -C . --exclude=./.device --exclude=./bin -cf - . | tar -C /tmp/tr -xf -
tar -C /tmp/tr -xf .device/trace-files.tar
(cd /tmp/tr && go build -tags cuda,nocloud -o /tmp/bp-trace ./cmd/bitparity) > $o/build.log 2>&1 || { echo TRACE BUILD FAILED; cat $o/build.log; exit 3; }
nvidia-smi -L > $o/gpu.txt
gs() { timeout 60 /tmp/bp-trace scan --target cublas-gemmex --to 256 --hidden 4096 --n 4096 --in bf16 --out bf16 --power 0 --dir /tmp/gc-$1 --dists "$2"; }
for i in 1 2; do
  s=$(date +%s%N); gs t normal,boundary,heavy > $o/t3-$i.log 2> $o/t3-$i.err; echo "START $s" >> $o/t3-$i.err
  s=$(date +%s%N); gs t normal > $o/t1-$i.log 2> $o/t1-$i.err; echo "START $s" >> $o/t1-$i.err
done
for i in 1; do timeout 60 python3 scripts/gemm_scan.py 256 4096 4096 --draws 3 --backend torch | python3 -c 'import json,sys; d=json.load(sys.stdin); print("torch loop", d["seconds"])'; done > $o/loops.txt 2>&1
python3 - $o > $o/summary.txt <<'PY'
import glob, sys
for f in sorted(glob.glob(sys.argv[1] + "/t*.err")):
    lines = [l.split(None, 2) for l in open(f) if l.startswith("ZT ")]
    st = [int(l.split()[1]) for l in open(f) if l.startswith("START ")]
    t0 = next((int(t) for _, t, m in lines if m.strip() == "runHeld start"), None)
    print(f.split("/")[-1], "process start -> runHeld start: %.1f ms" % ((t0 - st[0]) / 1e6) if st and t0 else "")
    allocs = 0.0
    prev = None
    for _, t, m in lines:
        m = m.strip(); t = (int(t) - t0) / 1e6
        if m.startswith("alloc"):
            allocs += float(m.split()[3])
        if prev is None or t - prev > 1.5 or m.startswith(("draw", "warm", "runHeld", "map", "GEMMHeld", "allocPinned", "cublas")):
            print("  %9.2f ms (+%6.2f)  %s" % (t, t - (prev or t), m))
        prev = t
    print("  allocs total %.2f ms" % allocs)
for f in sorted(glob.glob(sys.argv[1] + "/t*.log")):
    for l in open(f):
        if "row comparisons" in l: print(f.split("/")[-1], l.strip())
PY
cat $o/gpu.txt $o/summary.txt $o/loops.txt
tar czf $OUT/p22b.tgz -C $OUT p22b && rm -rf $o
