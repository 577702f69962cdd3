#!/usr/bin/env bash
# session 6 call W: the issue's baseline binary (0c20c06) and the final tree, 60 s each, same flags; then the gpu and scan packages' tests (time-boxed)
set -u
O=$OUT; mkdir -p $O/r; S=$(date +%s)
T=${GPUTAGS:-cuda,nocloud}
el() { echo "$(( $(date +%s)-S ))s"; }
(rm -rf /tmp/orig && mkdir /tmp/orig && tar -xzf .scratch-main/orig.tgz -C /tmp/orig && cp -r vendor /tmp/orig/ && cd /tmp/orig && go build -tags $T -o /tmp/bp-orig ./cmd/bitparity) > $O/r/b-orig.log 2>&1 &
(go test -tags $T -c -o /tmp/gpu.test ./gpu/ && go test -tags $T -c -o /tmp/scan.test ./scan/) > $O/r/b-tests.log 2>&1 &
go build -tags $T -o /tmp/bp-new ./cmd/bitparity || { echo build failed; exit 1; }
wait
echo "built at $(el)"; ls /tmp/bp-* /tmp/*.test
targets=$(/tmp/bp-new list | awk '$1 ~ /^cuda-/ {print $1}' | paste -sd, -)
for v in ${RUNS:-orig new}; do
  bin=/tmp/bp-$v
  [ -x $bin ] || { echo "no $bin"; continue; }
  nvidia-smi --query-gpu=timestamp,utilization.gpu --format=csv,noheader -lms 250 > $O/r/smi-$v.csv 2>&1 &
  SMI=$!
  timeout 80 /usr/bin/time -f maxrss_kb=%M $bin run --duration 60s --seed 1 --targets "$targets" --known corpus/h200 --json $O/r/run-$v.json > $O/r/run-$v.log 2>&1
  echo "run $v rc=$? at $(el)"; grep -E 'cases in|invariant targets:|maxrss' $O/r/run-$v.log
  grep -E '^    cuda-' $O/r/run-$v.log | awk '{print $1, $2, $3}' | paste -sd' ' -
  kill $SMI; awk -F', ' '{gsub(/ %/,"",$2); s+=$2; n++} END {print "smi mean util", s/n}' $O/r/smi-$v.csv
done
tar -czf $O/r1.tgz -C $O r
(cd gpu && timeout ${TG:-130} /tmp/gpu.test -test.count=1 -test.timeout 10m > $O/r/test-gpu-pkg.log 2>&1; echo "gpu tests rc=$? at $(el)"); tail -3 $O/r/test-gpu-pkg.log; grep -E '^--- FAIL|panic' $O/r/test-gpu-pkg.log | head
(cd scan && timeout ${TS:-60} /tmp/scan.test -test.count=1 > $O/r/test-scan.log 2>&1; echo "scan tests rc=$? at $(el)"); tail -2 $O/r/test-scan.log
tar -czf $O/r.tgz -C $O r; rm -rf $O/r; echo "end at $(el)"
