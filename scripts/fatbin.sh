#!/usr/bin/env bash
# fatbin.sh: build one fat image per kernel module, gpu/kernels/<module>.fatbin,
# with nvcc -fatbin: machine code (SASS) for sm_80 and sm_90, and for sm_100
# when `nvcc --list-gpu-code` lists it, plus compute_90 PTX that the driver
# JIT-compiles on any other GPU. The package loads the fat image in place of
# the .ptx, so a fresh host whose GPU the image has SASS for compiles
# nothing on first use (docs/gpu.md, "Fat images").
#
# The flags are scripts/ptx.sh's (no contraction of a*b+c, IEEE division
# and square root, no flush to zero, no fast math). The compute_90 PTX put
# in each image is checked here as gpu's TestPTXExact checks the .ptx: no
# .approx, no .ftz; a hit fails the build.
#
# gpu/kernels/fatbin.sha256 records the nvcc version, flags and codes, the
# sha256 of every source the images were made from and of every image. The
# package loads a module's fat image only when the image and all the
# sources match that record (otherwise it loads the PTX and says why), and
# TestFatbinMatchesSources fails on a stale or unlisted image.
#
# Usage: scripts/fatbin.sh [DIR]   (DIR defaults to gpu/kernels; the example
# user kernels use the same script through gpu/testdata/userkernels/build.sh)
# Needs nvcc (CUDA_HOME/bin, /usr/local/cuda/bin or PATH). Idempotent: every
# image is rebuilt and replaced only when nvcc succeeded.
set -euo pipefail
scripts=$(cd "$(dirname "$0")" && pwd)
dir=${1:-"$scripts/../gpu/kernels"}
cd "$dir"
sumfile=${FATBIN_SUMS:-fatbin.sha256}

. "$scripts/nvcc.sh" fatbin

# The SASS codes: sm_80 and sm_90 always, sm_100 when this nvcc builds it.
listed=$("$nvcc" --list-gpu-code | tr -s " \t" "\n") || { echo "fatbin: $nvcc --list-gpu-code failed" >&2; exit 3; }
sass=(sm_80 sm_90)
if grep -qx sm_100 <<<"$listed"; then sass+=(sm_100); fi
for s in "${sass[@]}"; do
	grep -qx "$s" <<<"$listed" || { echo "fatbin: $nvcc does not build $s (--list-gpu-code: $(echo $listed))" >&2; exit 3; }
done
ptxcode=compute_90
gencode=()
for s in "${sass[@]}"; do gencode+=(-gencode "arch=compute_${s#sm_},code=$s"); done
gencode+=(-gencode "arch=$ptxcode,code=$ptxcode")

flags=("${exact[@]}")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shopt -s nullglob
cus=(*.cu)
[ ${#cus[@]} -gt 0 ] || { echo "fatbin: no .cu files in $PWD" >&2; exit 2; }
for cu in "${cus[@]}"; do
	mod=${cu%.cu}
	echo "fatbin: $nvcc -fatbin ${gencode[*]} ${flags[*]} -o $mod.fatbin $cu" >&2
	"$nvcc" -fatbin "${gencode[@]}" "${flags[@]}" -o "$tmp/$mod.fatbin" "$cu" || { echo "fatbin: nvcc failed on $cu" >&2; exit 3; }
	# The PTX the image carries, made with the same flags, checked as
	# TestPTXExact checks the .ptx files.
	"$nvcc" -arch="$ptxcode" -ptx "${flags[@]}" -o "$tmp/$mod.$ptxcode.ptx" "$cu" || { echo "fatbin: nvcc -ptx failed on $cu" >&2; exit 3; }
	if grep -nE '\.(approx|ftz)' <(sed 's://.*::' "$tmp/$mod.$ptxcode.ptx") >&2; then
		echo "fatbin: $cu: the $ptxcode PTX has inexact instructions (above)" >&2
		exit 3
	fi
	[ -s "$tmp/$mod.fatbin" ] || { echo "fatbin: $tmp/$mod.fatbin is empty" >&2; exit 3; }
done
for cu in "${cus[@]}"; do mv "$tmp/${cu%.cu}.fatbin" "${cu%.cu}.fatbin"; done

{
	echo "# made by scripts/fatbin.sh; checked by gpu/ptx_test.go and when the package loads a module"
	echo "# nvcc: $("$nvcc" --version | tail -n 2 | head -n 1)"
	echo "# flags: -fatbin ${gencode[*]} ${flags[*]}"
	echo "# code: ${sass[*]} $ptxcode"
	sha256sum -- *.cu *.cuh
	for cu in "${cus[@]}"; do sha256sum -- "${cu%.cu}.fatbin"; done
} >"$sumfile.tmp"
mv "$sumfile.tmp" "$sumfile"
echo "fatbin: wrote ${#cus[@]} fat images (${sass[*]} $ptxcode) and $sumfile in $PWD" >&2
