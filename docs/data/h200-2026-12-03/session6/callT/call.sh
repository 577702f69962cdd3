#!/usr/bin/env bash
# session 6 call T: PTX (gemm nudge, column scratch); nudge tests + benchmark; 60 s campaigns: new, orig (0c20c06, the issue baseline), noGemm (gemm boundary on the host), new again
set -u
O=$OUT; mkdir -p $O/r $O/ptx; S=$(date +%s)
T=${GPUTAGS:-cuda,nocloud}
el() { echo "$(( $(date +%s)-S ))s"; }
scripts/ptx.sh > $O/r/ptx.log 2>&1 || { echo ptx failed; tail -30 $O/r/ptx.log; exit 1; }
cp gpu/kernels/nudge.ptx gpu/kernels/kernels.sha256 $O/ptx/
echo "ptx at $(el)"
mk() { # name sed-expr file
  rm -rf /tmp/v$1 && mkdir /tmp/v$1 && cp -r $(ls -A | grep -v '^\.device$') /tmp/v$1/ && (cd /tmp/v$1 && sed -i "$2" $3 && go build -tags $T -o /tmp/bp-$1 ./cmd/bitparity)
}
mk noGemm 's/var lazyBoundary = map\[spec.Op\]bool{spec.OpRMSNorm: true, spec.OpGEMM: true}/var lazyBoundary = map[spec.Op]bool{spec.OpRMSNorm: true}/' fuzz/lazy.go > $O/r/b-noGemm.log 2>&1 &
for v in orig; do
  (rm -rf /tmp/$v && mkdir /tmp/$v && tar -xzf .scratch-main/$v.tgz -C /tmp/$v && cp -r vendor /tmp/$v/ && cd /tmp/$v && go build -tags $T -o /tmp/bp-$v ./cmd/bitparity) > $O/r/b-$v.log 2>&1 &
done
go build -tags $T -o /tmp/bp-new ./cmd/bitparity && go test -tags $T -c -o /tmp/gpu.test ./gpu/ || { echo build failed; exit 1; }
wait
echo "built at $(el)"; ls /tmp/bp-*; grep -n "var lazyBoundary" /tmp/vnoGemm/fuzz/lazy.go
(cd gpu && timeout 150 /tmp/gpu.test -test.v -test.run 'TestDeviceNudge|TestLazyOnDevice|TestPTX|TestCrossDevice|TestLanes' > $O/r/tests.log 2>&1); echo "tests rc=$? at $(el)"
grep -E '^(ok|FAIL|--- FAIL|panic|PASS)|nudged rows|_test.go' $O/r/tests.log | head -20
(cd gpu && timeout 60 /tmp/gpu.test -test.run '^$' -test.bench 'DeviceNudge' -test.benchtime 20x > $O/r/bench.log 2>&1); grep -E '^Benchmark|FAIL' $O/r/bench.log; echo "bench at $(el)"
targets=$(/tmp/bp-new list | awk '$1 ~ /^cuda-/ {print $1}' | paste -sd, -)
for v in ${RUNS:-new orig noGemm new2}; do
  bin=/tmp/bp-${v%2}
  [ -x $bin ] || { echo "no $bin"; continue; }
  nvidia-smi --query-gpu=timestamp,utilization.gpu --format=csv,noheader -lms 250 > $O/r/smi-$v.csv 2>&1 &
  SMI=$!
  timeout 80 /usr/bin/time -f maxrss_kb=%M $bin run --duration 60s --seed 1 --targets "$targets" --known corpus/h200 --json $O/r/run-$v.json --cpuprofile $O/r/run-$v.prof --mutexprofile $O/r/run-$v.mutex > $O/r/run-$v.log 2>&1
  echo "run $v rc=$? at $(el)"; grep -E 'cases in|invariant targets:|maxrss' $O/r/run-$v.log
  grep -E '^    cuda-' $O/r/run-$v.log | awk '{print $1, $2, $3}' | paste -sd' ' -
  kill $SMI; awk -F', ' '{gsub(/ %/,"",$2); s+=$2; n++} END {print "smi mean util", s/n}' $O/r/smi-$v.csv
done
tar -czf $O/r.tgz -C $O r; rm -rf $O/r; echo "end at $(el)"
