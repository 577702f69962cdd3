"""Run cublasGemmEx as gpu/cublas.go calls it on recorded bf16 inputs.

    python3 cublas_gemmex.py DIR

For each DIR/gemm_M_K_N.x (M x K bf16 bits, row-major) and .w (K x N),
computes y = x·W with cublasGemmEx(CUBLAS_OP_N, CUBLAS_OP_N, n, m, k,
alpha=1, W (CUDA_R_16BF, ld n), x (CUDA_R_16BF, ld k), beta=0, y, ld n,
CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) twice: y as CUDA_R_32F
(.y32, fp32 bits) and as CUDA_R_16BF (.y16, bf16 bits). Every run is done
twice and must give the same bits.
"""
import glob
import os
import sys

import cupy as cp
import numpy as np
from cupy.cuda import cublas

CUDA_R_32F, CUDA_R_16BF = 0, 14


def gemmex(x, w, m, k, n, ctype):
    y = cp.zeros(m * n, dtype=np.uint32 if ctype == CUDA_R_32F else np.uint16)
    alpha = np.array(1.0, dtype=np.float32)
    beta = np.array(0.0, dtype=np.float32)
    h = cp.cuda.device.get_cublas_handle()
    cublas.gemmEx(h, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, n, m, k,
                  alpha.ctypes.data, w.data.ptr, CUDA_R_16BF, n,
                  x.data.ptr, CUDA_R_16BF, k, beta.ctypes.data,
                  y.data.ptr, ctype, n, cublas.CUBLAS_COMPUTE_32F, cublas.CUBLAS_GEMM_DEFAULT)
    cp.cuda.Device().synchronize()
    return cp.asnumpy(y)


def main(d):
    print("cublas version", cublas.getVersion(cp.cuda.device.get_cublas_handle()))
    for xf in sorted(glob.glob(os.path.join(d, "gemm_*.x"))):
        base = xf[:-2]
        m, k, n = (int(v) for v in os.path.basename(base).split("_")[1:])
        x = cp.asarray(np.fromfile(xf, dtype=np.uint16))
        w = cp.asarray(np.fromfile(base + ".w", dtype=np.uint16))
        for ctype, ext in ((CUDA_R_32F, ".y32"), (CUDA_R_16BF, ".y16")):
            y1 = gemmex(x, w, m, k, n, ctype)
            y2 = gemmex(x, w, m, k, n, ctype)
            same = bool((y1 == y2).all())
            y1.tofile(base + ext)
            print(f"{os.path.basename(base)}{ext}: deterministic={same}")


if __name__ == "__main__":
    main(sys.argv[1])
