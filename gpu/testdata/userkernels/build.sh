#!/usr/bin/env bash
# build.sh: compile the example user kernels (*.cu) to PTX for compute_80
# with nvcc, with the flags of scripts/ptx.sh (no contraction, IEEE division
# and square root, no flush to zero), and record the sha256 of every source
# and PTX in userkernels.sha256 (gpu's plain tests check it). Then
# scripts/fatbin.sh makes a fat image of each (SASS for sm_80, sm_90 and,
# where nvcc builds it, sm_100, plus compute_90 PTX), recorded in
# userkernels.fatbin.sha256; a manifest's "fatbin" field names it.
set -euo pipefail
cd "$(dirname "$0")"
. ../../../scripts/nvcc.sh build.sh
flags=(-arch=compute_80 -ptx "${exact[@]}")
for cu in *.cu; do
	"$nvcc" "${flags[@]}" -o "${cu%.cu}.ptx" "$cu"
done
{
	echo "# made by gpu/testdata/userkernels/build.sh; checked by gpu/userkernel_ptx_test.go"
	echo "# nvcc: $("$nvcc" --version | tail -n 2 | head -n 1)"
	echo "# flags: ${flags[*]}"
	sha256sum -- *.cu *.cuh *.ptx
} >userkernels.sha256
echo "build.sh: $(ls *.ptx | wc -l) PTX files" >&2
FATBIN_SUMS=userkernels.fatbin.sha256 bash ../../../scripts/fatbin.sh .
