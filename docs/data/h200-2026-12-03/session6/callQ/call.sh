#!/usr/bin/env bash
# session 6 call Q: PTX with nudge.cu; device nudge tests; 60 s campaigns new vs HEAD~ (base.tgz)
set -u
O=$OUT; mkdir -p $O/r $O/ptx; S=$(date +%s)
T=${GPUTAGS:-cuda,nocloud}
el() { echo "$(( $(date +%s)-S ))s"; }
scripts/ptx.sh > $O/r/ptx.log 2>&1 || { echo ptx failed; cat $O/r/ptx.log | tail -30; tar -czf $O/r.tgz -C $O r; exit 1; }
cp gpu/kernels/*.ptx gpu/kernels/kernels.sha256 $O/ptx/
echo "ptx at $(el)"
(rm -rf /tmp/base && mkdir /tmp/base && tar -xzf .scratch-main/base.tgz -C /tmp/base && cp -r .device /tmp/base/ 2>/dev/null; cd /tmp/base && go build -tags $T -o /tmp/bp-base ./cmd/bitparity) > $O/r/base-build.log 2>&1 &
go build -tags $T -o /tmp/bp ./cmd/bitparity && go test -tags $T -c -o /tmp/gpu.test ./gpu/ || { echo build failed; exit 1; }
wait
echo "built at $(el)"; ls -la /tmp/bp-base || tail -5 $O/r/base-build.log
(cd gpu && timeout 200 /tmp/gpu.test -test.v -test.run 'TestDeviceNudge|TestLazyOnDevice|TestPTX|TestLanes|TestEmbedded' > $O/r/tests.log 2>&1); echo "tests rc=$? at $(el)"
grep -E '^(ok|FAIL|--- FAIL|panic|PASS)|nudged rows|Error|error' $O/r/tests.log | head -40
targets=$(/tmp/bp list | awk '$1 ~ /^cuda-/ {print $1}' | paste -sd, -)
for v in ${RUNS:-new base}; do
  bin=/tmp/bp; [ $v = base ] && bin=/tmp/bp-base
  [ -x $bin ] || { echo "no $bin"; continue; }
  nvidia-smi --query-gpu=timestamp,utilization.gpu --format=csv,noheader -lms 250 > $O/r/smi-$v.csv 2>&1 &
  SMI=$!
  MP=""; [ $v = new ] && MP="--mutexprofile $O/r/run-$v.mutex"
  timeout 90 /usr/bin/time -f maxrss_kb=%M $bin run --duration 60s --seed 1 --targets "$targets" --known corpus/h200 --json $O/r/run-$v.json --cpuprofile $O/r/run-$v.prof $MP > $O/r/run-$v.log 2>&1
  echo "run $v rc=$? at $(el)"; grep -E 'cases in|invariant targets:|maxrss' $O/r/run-$v.log
  grep -E '^    cuda-' $O/r/run-$v.log | awk '{print $1, $2, $3}' | paste -sd' ' -
  kill $SMI; awk -F', ' '{gsub(/ %/,"",$2); s+=$2; n++} END {print "smi mean util", s/n}' $O/r/smi-$v.csv
done
if [ -n "${FULL:-}" ]; then timeout ${TT:-250} make test-gpu GPUTAGS=$T > $O/r/test-gpu.log 2>&1; echo "test-gpu rc=$? at $(el)"; grep -E '^(ok|FAIL|--- FAIL|panic)' $O/r/test-gpu.log | head -40; fi
tar -czf $O/r.tgz -C $O r; rm -rf $O/r; echo "end at $(el)"
