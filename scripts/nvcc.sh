# nvcc.sh, sourced with its caller's name (`. scripts/nvcc.sh ptx`) by the
# scripts that compile kernels (ptx.sh, fatbin.sh and
# gpu/testdata/userkernels/build.sh): it sets nvcc to $CUDA_HOME/bin/nvcc,
# else /usr/local/cuda/bin/nvcc, else the nvcc on PATH, and exits 3 when
# there is none; and exact to the flags of exact kernels: no contraction
# of a*b+c, IEEE division and square root, no flush to zero, C++17.
nvcc=nvcc
for d in "${CUDA_HOME:-}" /usr/local/cuda; do
	if [ -n "$d" ] && [ -x "$d/bin/nvcc" ]; then nvcc=$d/bin/nvcc; break; fi
done
command -v "$nvcc" >/dev/null || { echo "$1: nvcc not found (set CUDA_HOME)" >&2; exit 3; }
exact=(-fmad=false -prec-div=true -prec-sqrt=true -ftz=false -std=c++17)
