#!/usr/bin/env bash
# session 21, call 1: where the exec scan's and the cuBLAS scan's time goes (H200)
set -u
o=$OUT/p21; mkdir -p $o
go build -tags cuda,nocloud -o bin/bitparity ./cmd/bitparity > $o/build.log 2>&1 || { echo BUILD FAILED; cat $o/build.log; exit 3; }
b=bin/bitparity
rm -rf /tmp/base && mkdir /tmp/base && tar -C . --exclude=./.device --exclude=./bin -cf - . | tar -C /tmp/base -xf -
tar -C /tmp/base -xf .device/base-files.tar && rm -f /tmp/base/scan/exec_bulk.go /tmp/base/scan/exec_test.go
(cd /tmp/base && go build -tags cuda,nocloud -o /tmp/bp-base ./cmd/bitparity) >> $o/build.log 2>&1 || echo BASE BUILD FAILED
nvidia-smi -L > $o/gpu.txt; nproc >> $o/gpu.txt
size="--to 8192 --hidden 4096 --in bf16 --out bf16 --power 0"
# exec: traced adapter, three draws; then each draw alone; then a Go profile
KIT_TRACE=$o/trace3.json timeout 120 $b scan --exec 'python3 .device/kit_trace.py rmsnorm' $size --dists normal,boundary,heavy --dir /tmp/ec0 --json $o/exec3.json > $o/exec3.log 2>&1
for d in normal boundary heavy; do
  KIT_TRACE=$o/trace-$d.json timeout 60 $b scan --exec 'python3 .device/kit_trace.py rmsnorm' $size --dists $d --dir /tmp/ec-$d > $o/exec-$d.log 2>&1
done
timeout 120 $b scan --exec 'python3 adapters/torch_ops.py rmsnorm' $size --dists normal,boundary,heavy --dir /tmp/ec1 --cpuprofile $o/exec.pprof > $o/exec-prof.log 2>&1
timeout 120 /tmp/bp-base scan --exec 'python3 adapters/torch_ops.py rmsnorm' $size --dists normal,boundary,heavy --dir /tmp/ec2 --cpuprofile $o/exec-base.pprof > $o/exec-base-prof.log 2>&1
go tool pprof -top -cum /tmp/bp-base $o/exec-base.pprof 2>/dev/null | head -60 > $o/exec-base.cum.txt
for i in 1 2; do for v in new base; do bb=$b; [ $v = base ] && bb=/tmp/bp-base
  timeout 120 $bb scan --exec 'python3 adapters/torch_ops.py rmsnorm' $size --dists normal,boundary,heavy --dir /tmp/ec-ab-$v > $o/ab-$v-$i.log 2>&1
  grep -h "row comparisons" $o/ab-$v-$i.log | sed "s/^/[ab $v $i] /" >> $o/ab.txt
done; done
go tool pprof -top -cum $b $o/exec.pprof 2>/dev/null | head -60 > $o/exec.cum.txt
timeout 60 python3 scripts/torch_scan.py 8192 4096 cuda --draws 3 | python3 -c 'import json,sys; d=json.load(sys.stdin); print("torch loop", d["seconds"])' > $o/loops.txt 2>&1
# cuBLAS
gs() { $b scan --target cublas-gemmex --to 256 --hidden 4096 --n 4096 --in bf16 --out bf16 --power 0 --dir /tmp/gc "$@"; }
for i in 1 2; do for d in normal normal,boundary,heavy; do gs --dists $d 2>&1 | grep -E "row comparisons" | sed "s/^/[$i $d] /"; done; done > $o/gemm.txt 2>&1
gs --dists normal,boundary,heavy --cpuprofile $o/gemm.pprof > /dev/null 2>&1
go tool pprof -top -cum $b $o/gemm.pprof 2>/dev/null | head -70 > $o/gemm.cum.txt
for m in seq t8 seq t8 torch; do timeout 60 python3 .device/first_calls.py $m; done > $o/first.txt 2> $o/first.err
python3 - $o > $o/trace-summary.txt <<'PY'
import json, sys, glob, collections
for f in sorted(glob.glob(sys.argv[1] + "/trace*.json")):
    d = json.load(open(f))
    agg = collections.OrderedDict()
    for kind, det, wait, took in d["frames"]:
        key = kind + ("/each" if det.get("each") == "true" else "") + ("/sizes" if "sizes" in det else "") + ("/batches" if "batches" in det else "") + ("/gen" if det.get("gen") else "")
        a = agg.setdefault(key, [0, 0.0, 0.0]); a[0] += 1; a[1] += wait; a[2] += took
    print(f.split("/")[-1])
    for k, (n, w, t) in agg.items():
        print("  %-24s n=%5d wait %.3f s answer %.3f s" % (k, n, w, t))
    for k, (n, t) in d["acc"].items():
        print("  in %-20s n=%5d %.3f s" % (k, n, t))
    holds = [(det, wait, took) for kind, det, wait, took in d["frames"] if kind == "hold"]
    for h in holds: print("  hold", h)
PY
cat $o/gpu.txt $o/*.log | grep -E "row comparisons|CERT|DRIFT|rror" ; cat $o/ab.txt $o/loops.txt $o/gemm.txt $o/first.txt $o/trace-summary.txt; head -c 600 $o/first.err
tar czf $OUT/p21.tgz -C $OUT p21 && rm -rf $o
