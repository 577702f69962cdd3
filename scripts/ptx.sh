#!/usr/bin/env bash
# ptx.sh: rebuild gpu/kernels/*.ptx from gpu/kernels/*.cu with nvcc and
# record the sha256 of every source and PTX file in gpu/kernels/kernels.sha256
# (gpu's tests check that the embedded PTX was made from the sources in the
# tree). Needs nvcc (CUDA_HOME/bin, /usr/local/cuda/bin or PATH).
#
# Exact kernels: PTX for compute_80 (Ampere, Hopper and Blackwell JIT it),
# no contraction of a*b+c (-fmad=false), IEEE division and square root, no
# flush to zero, no fast math.
#
# `make ptx` runs scripts/fatbin.sh after this script: each module's fat
# image (SASS for the GPUs we build for, beside PTX) from the same sources,
# so PTX and fat images stay in step.
set -euo pipefail
. "$(dirname "$0")/nvcc.sh" ptx
cd "$(dirname "$0")/../gpu/kernels"

flags=(-arch=compute_80 -ptx "${exact[@]}")

for cu in *.cu; do
	out=${cu%.cu}.ptx
	echo "ptx: $nvcc ${flags[*]} -o $out $cu" >&2
	"$nvcc" "${flags[@]}" -o "$out.tmp" "$cu"
	mv "$out.tmp" "$out"
done

{
	echo "# made by scripts/ptx.sh; checked by gpu/ptx_test.go"
	echo "# nvcc: $("$nvcc" --version | tail -n 2 | head -n 1)"
	echo "# flags: ${flags[*]}"
	sha256sum -- *.cu *.cuh *.ptx
} >kernels.sha256.tmp
mv kernels.sha256.tmp kernels.sha256
echo "ptx: wrote $(ls *.ptx | wc -l) PTX files and kernels.sha256" >&2
