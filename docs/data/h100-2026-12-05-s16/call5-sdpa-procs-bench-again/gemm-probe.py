#!/usr/bin/env python3
"""Session probe (not kept): cublasGemmEx (CuPy, the call of bitparity's
cublas-gemmex) against torch.matmul, GPU and host time a product."""
import json, time
import numpy as np
import cupy as cp
import torch
try:
    from cupy_backends.cuda.libs import cublas
except ImportError:
    from cupy.cuda import cublas
K = N = 4096
h = cp.cuda.device.get_cublas_handle()
alpha, beta = np.array(1.0, np.float32), np.array(0.0, np.float32)
w = cp.asarray(np.random.default_rng(1).standard_normal((K, N), np.float32)).astype(cp.float32).view(cp.uint32)
w = (w >> 16).astype(cp.uint16)
x = (cp.asarray(np.random.default_rng(2).standard_normal((256, K), np.float32)).view(cp.uint32) >> 16).astype(cp.uint16)
y = cp.empty((256, N), cp.uint16)
def gemm(m):
    cublas.gemmEx(h, 0, 0, N, m, K, alpha.ctypes.data, w.data.ptr, 14, N, x.data.ptr, 14, K, beta.ctypes.data, y.data.ptr, 14, N, 68, -1)
res = {}
for m in (1, 8, 16, 41, 64, 128, 256):
    for _ in range(3): gemm(m)
    cp.cuda.Device().synchronize()
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    t0 = time.perf_counter(); e0.record()
    for _ in range(200): gemm(m)
    e1.record(); t1 = time.perf_counter(); e1.synchronize()
    res[m] = {"gemmex_gpu_us": cp.cuda.get_elapsed_time(e0, e1) * 1e3 / 200, "gemmex_issue_us": (t1 - t0) * 1e6 / 200}
tw = torch.randn(K, N, dtype=torch.bfloat16, device="cuda"); tx = torch.randn(256, K, dtype=torch.bfloat16, device="cuda")
for m in res:
    for _ in range(3): torch.matmul(tx[:m], tw)
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(200): torch.matmul(tx[:m], tw)
    b.record(); torch.cuda.synchronize()
    res[m]["matmul_gpu_us"] = a.elapsed_time(b) * 1e3 / 200
print(json.dumps(res))
