#!/usr/bin/env python3
"""Independent sweep of the cuBLAS call behind bitparity's cublas-gemmex target.

It calls cublasGemmEx through CuPy exactly as gpu/cublas.go does (row-major
y = x.w as column-major Y^T = W^T X^T: transa = transb = N, m = N, n = M,
A = W with ld N, B = X with ld K, C = Y with ld N, A and B bf16, C bf16,
CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) on its own random bf16 inputs, for
every M in 1..MAX at K = N = 4096, and classifies each M as bitparity scan
does: A when every row of the M-row product equals that row computed alone
(M = 1), else B with the digest of row 0's bits. It prints the classes as
JSON: {"classes": [[M, ...], ...]} in the order of their first value.

    python3 scripts/cublas_sweep.py [MAX] [K] [N]
"""
import hashlib
import json
import sys

import cupy as cp
import numpy as np

try:
    from cupy_backends.cuda.libs import cublas
except ImportError:  # older CuPy
    from cupy.cuda import cublas

CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT = 14, 68, -1


def bf16(a):
    """Round float32 values to bf16 (nearest even), as uint16 bits."""
    b = a.astype(np.float32).view(np.uint32)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def main():
    top = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    K = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
    N = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
    rng = np.random.default_rng(20261203)
    x = cp.asarray(bf16(rng.standard_normal((top, K))))
    w = cp.asarray(bf16(rng.standard_normal((K, N)) / np.sqrt(K)))
    y = cp.zeros((top, N), dtype=cp.uint16)
    alone = cp.zeros((top, N), dtype=cp.uint16)
    h = cp.cuda.device.get_cublas_handle()
    alpha = np.array(1.0, dtype=np.float32)
    beta = np.array(0.0, dtype=np.float32)

    def gemm(xptr, m, yptr):
        cublas.gemmEx(h, 0, 0, N, m, K, alpha.ctypes.data, w.data.ptr, CUDA_R_16BF, N,
                      xptr, CUDA_R_16BF, K, beta.ctypes.data, yptr, CUDA_R_16BF, N,
                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)

    for i in range(top):
        gemm(x.data.ptr + 2 * K * i, 1, alone.data.ptr + 2 * N * i)
    classes, index = [], {}
    for m in range(1, top + 1):
        gemm(x.data.ptr, m, y.data.ptr)
        if bool(cp.all(y[:m] == alone[:m])):
            key = "A"
        else:
            key = "B:" + hashlib.sha256(cp.asnumpy(y[0]).tobytes()).hexdigest()[:12]
        if key not in index:
            index[key] = len(classes)
            classes.append([])
        classes[index[key]].append(m)
    json.dump({"k": K, "n": N, "classes": classes}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
