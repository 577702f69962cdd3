#!/usr/bin/env python3
"""What a GEMM costs the first time at a shape and after: for every M in
1..MAX (K x N bf16 weights, fp32 compute), the host time of the first
product at that M (with a sync after it) and the GPU time of a product
at that M once seen (CUDA events over REPS products), through the call of
bitparity's cublas-gemmex target (cublasGemmEx, CUBLAS_COMPUTE_32F,
CUBLAS_GEMM_DEFAULT, through CuPy) and through torch.matmul.

It answers whether a scan of M 1..MAX is spent choosing kernels (the
first call at each M) or running them: docs/performance.md, "Sixteenth
session", cuBLAS. Prints one JSON object: per backend, the first calls'
total and largest seconds, and the repeated products' GPU microseconds
at a few M.

    python3 scripts/gemm_shapes.py [MAX] [K] [N] [--reps 50] [--torch-first]
"""
import argparse
import json
import sys
import time

import numpy as np


def cupy_backend(K, N):
    import cupy as cp
    try:
        from cupy_backends.cuda.libs import cublas
    except ImportError:  # older CuPy
        from cupy.cuda import cublas
    h = cp.cuda.device.get_cublas_handle()
    alpha, beta = np.array(1.0, np.float32), np.array(0.0, np.float32)
    rng = np.random.default_rng(1)
    bits = lambda a: (cp.asarray(a.astype(np.float32)).view(cp.uint32) >> 16).astype(cp.uint16)
    w, x = bits(rng.standard_normal((K, N)) / np.sqrt(K)), bits(rng.standard_normal((MAXROWS, K)))
    y = cp.empty((MAXROWS, N), cp.uint16)

    def gemm(m):  # row-major y = x.w as column-major Y^T = W^T X^T (bf16 = 14, 32F = 68, default = -1)
        cublas.gemmEx(h, 0, 0, N, m, K, alpha.ctypes.data, w.data.ptr, 14, N, x.data.ptr, 14, K,
                      beta.ctypes.data, y.data.ptr, 14, N, 68, -1)
    return gemm, cp.cuda.Device().synchronize, cp.cuda.Event, lambda a, b: cp.cuda.get_elapsed_time(a, b)


def torch_backend(K, N):
    import torch
    w = torch.randn(K, N, dtype=torch.bfloat16, device="cuda")
    x = torch.randn(MAXROWS, K, dtype=torch.bfloat16, device="cuda")
    ev = lambda: torch.cuda.Event(enable_timing=True)
    return (lambda m: torch.matmul(x[:m], w)), torch.cuda.synchronize, ev, lambda a, b: a.elapsed_time(b)


def measure(make, mx, K, N, reps):
    gemm, sync, event, elapsed = make(K, N)
    gemm(1)  # load the library before the clock, as the loops do
    sync()
    first = []
    for m in range(1, mx + 1):
        t0 = time.perf_counter()
        gemm(m)
        sync()
        first.append(time.perf_counter() - t0)
    seen = {}
    for m in sorted({1, 16, 64, mx // 2 or 1, mx}):
        a, b = event(), event()
        a.record()
        for _ in range(reps):
            gemm(m)
        b.record()
        b.synchronize()
        seen[m] = round(elapsed(a, b) * 1e3 / reps, 2)
    return {"first_calls_s": round(sum(first), 4), "first_call_max_ms": round(max(first) * 1e3, 3),
            "first_call_median_ms": round(float(np.median(first)) * 1e3, 3), "seen_gpu_us": seen}


MAXROWS = 256


def main(argv):
    global MAXROWS
    ap = argparse.ArgumentParser(prog="gemm_shapes.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("max", nargs="?", type=int, default=256)
    ap.add_argument("k", nargs="?", type=int, default=4096)
    ap.add_argument("n", nargs="?", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--torch-first", action="store_true",
                    help="measure torch.matmul first: the first calls then pay for loading the kernels (CUDA loads a "
                         "library's kernels lazily, at their first launch), and cuBLAS's through CuPy find them loaded")
    a = ap.parse_args(argv)
    if min(a.max, a.k, a.n, a.reps) < 1:
        ap.error("MAX, K, N and --reps must be >= 1")
    MAXROWS = a.max
    out = {"max": a.max, "k": a.k, "n": a.n}
    backends = [("cublasGemmEx (cupy)", cupy_backend), ("torch.matmul", torch_backend)]
    if a.torch_first:
        backends.reverse()
    out["order"] = [name for name, _ in backends]
    for name, make in backends:
        try:
            out[name] = measure(make, a.max, a.k, a.n, a.reps)
        except (ImportError, RuntimeError, AssertionError) as e:  # no CuPy, no CUDA build of torch, no GPU
            out[name] = {"error": "%s: %s" % (type(e).__name__, e)}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
