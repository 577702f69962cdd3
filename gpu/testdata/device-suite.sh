#!/usr/bin/env bash
# device-suite.sh: the whole GPU verification of a session on the H200, from
# the project root (after scripts/device-prepare.sh):
#
#   CUDA_COMPAT_INCLUDE=gpu/cudacompat bash .device/run.sh bash gpu/testdata/device-suite.sh OUTDIR [STEPS]
#
# STEPS (default "test detect bench") picks what runs, each step's log under
# OUTDIR:
#   ptx     make ptx (scripts/ptx.sh): rebuild gpu/kernels/*.ptx with this host's
#           nvcc; the PTX and kernels.sha256 come back in OUTDIR/ptx.tar to commit
#   quick   the gpu package's kernel, compare and parity tests, -short (quick.log)
#   test    make test-gpu TESTFLAGS=-v: every package with -tags cuda (test-gpu.log)
#   detect  bitparity detect over the GPU drift models (detect-h200.md, detect-h200.log)
#   bench   make bench-gpu (bench-gpu.log; BENCH, BENCHTIME, BENCHCOUNT pass through)
#   e2e     the transformer's GPU tests, verbose (transformer-gpu.log)
#   run     a 40 s `bitparity run` of the cuda build, every target, with cuBLAS's
#           known findings as the baseline (--known corpus/h200; run.log, run.json)
#   python  adapters/h200_python.sh with the cuda build: the Python kit's Triton
#           example, the JAX adapter and the Hugging Face model route under
#           real campaigns (OUTDIR/python/; BUDGET, DURATION pass through)
set -uo pipefail
out=${1:?usage: device-suite.sh OUTDIR [STEPS]}
steps=${2:-test detect bench}
mkdir -p "$out"
nvidia-smi -L
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
go version
for s in $steps; do
	start=$(date +%s)
	case $s in
	ptx)
		make ptx >"$out/ptx.log" 2>&1 || { echo "make ptx failed"; cat "$out/ptx.log"; exit 1; }
		tar -cf "$out/ptx.tar" -C gpu/kernels $(cd gpu/kernels && ls *.ptx) kernels.sha256
		echo "make ptx: $(tar -tf "$out/ptx.tar" | grep -c ptx) PTX files in ptx.tar"
		;;
	quick)
		make test-gpu TESTFLAGS="-short -v -run '${QUICK_RUN:-TestCompare|TestConcurrentCompares|TestPairCache|TestPoolReuse|TestParity|TestDriftModelsFound|TestTransformerParity|TestProbes|TestPTX}'" PKGS=./gpu/ >"$out/quick.log" 2>&1
		echo "quick gpu tests: rc=$?"
		grep -E '^(ok|FAIL|--- FAIL|--- PASS|panic)' "$out/quick.log" | head -60
		;;
	test)
		make test-gpu TESTFLAGS=-v >"$out/test-gpu.log" 2>&1
		echo "make test-gpu: rc=$?"
		grep -E '^(ok|FAIL|--- FAIL|panic)|three-way|fuzzed transformer|both paths on the GPU|drift map over|found \(|test-gpu:' "$out/test-gpu.log" | head -80
		;;
	detect)
		go build -tags ${GPUTAGS:-cuda} -o /tmp/bitparity ./cmd/bitparity || exit 1
		models=${DETECT_GPU_MODELS:-cuda-drift-rmsnorm-te-mod32,cuda-drift-rmsnorm-vllm-256,cuda-drift-gemm-splitk-by-m,cuda-drift-order-logprob-rows132,cuda-drift-decode-splits-by-batch@oracle_parity,cuda-drift-attn-tile48}
		timeout ${DETECT_TIMEOUT:-240} /tmp/bitparity detect --seeds ${DETECT_SEEDS:-3} --max-cases ${DETECT_MAX:-3000} -v --models "$models" \
			>"$out/detect-h200.md" 2>"$out/detect-h200.log"
		echo "bitparity detect: rc=$?"
		cat "$out/detect-h200.md"
		;;
	bench)
		make bench-gpu BENCHTIME=${BENCHTIME:-200x} BENCH="${BENCH:-.}" BENCHCOUNT=${BENCHCOUNT:-1} >"$out/bench-gpu.log" 2>&1
		echo "make bench-gpu: rc=$?"
		grep -E 'Benchmark|^ok|FAIL' "$out/bench-gpu.log"
		;;
	e2e)
		go test -tags ${GPUTAGS:-cuda} -count=1 -v -run 'Transformer' ./gpu/ >"$out/transformer-gpu.log" 2>&1
		echo "transformer gpu: rc=$?"
		grep -E '^(---|ok|FAIL|panic)|cases|found|agree' "$out/transformer-gpu.log" | head -40
		;;
	run)
		go build -tags ${GPUTAGS:-cuda} -o /tmp/bitparity ./cmd/bitparity || exit 1
		timeout 200 /tmp/bitparity run --duration ${RUN_DURATION:-40s} --seed 1 --known ${RUN_KNOWN:-corpus/h200} --json "$out/run.json" >"$out/run.log" 2>&1
		echo "bitparity run: rc=$?"
		tail -40 "$out/run.log"
		;;
	python)
		go build -tags ${GPUTAGS:-cuda} -o bin/bitparity ./cmd/bitparity || exit 1
		BITPARITY=bin/bitparity bash adapters/h200_python.sh "$out/python" >"$out/python.log" 2>&1
		echo "python adapters: rc=$?"
		cat "$out/python/summary.tsv"
		;;
	esac
	echo "== step $s took $(( $(date +%s) - start )) s"
done
