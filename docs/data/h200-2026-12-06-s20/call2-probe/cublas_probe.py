"""Probe: host and device cost of the cuBLAS scan's product sequence.
One pass = one draw's products in the scan's order (256 rows alone, M=256,
then M=1..256 each with its panel batches for M<64). Passes 1..3 reuse
the buffers: pass 1 pays first-call costs (kernel loads, heuristics)."""
import json, sys, time
import numpy as np
import cupy as cp
from cupy_backends.cuda.libs import cublas

K = N = 4096; n = 256; P = 64
h = cp.cuda.device.get_cublas_handle()
al = np.array(1.0, dtype=np.float32); be = np.array(0.0, dtype=np.float32)
x = cp.asarray((np.random.default_rng(1).standard_normal((n, K)).astype(np.float32)).view(np.uint32) >> 16).astype(cp.uint16)
w = cp.asarray((np.random.default_rng(2).standard_normal((K, N)).astype(np.float32) / 64).view(np.uint32) >> 16).astype(cp.uint16)
y = cp.empty((n, N), dtype=cp.uint16)
def g(m, row=0):
    cublas.gemmEx(h, 0, 0, N, m, K, al.ctypes.data, w.data.ptr, 14, N, x.data.ptr + 2 * K * row, 14, K,
                  be.ctypes.data, y.data.ptr, 14, N, 68, -1)
def seq():
    s = [(1, i) for i in range(n)] + [(n, 0)]
    for m in range(1, n + 1):
        s.append((m, 0))
        for first in range(m, P, m):
            s.append((m, 0))
    return s
S = seq()
out = {"products_per_pass": len(S), "passes": []}
e0, e1 = cp.cuda.Event(), cp.cuda.Event()
for p in range(4):
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter(); e0.record()
    for m, r in S:
        g(m, r)
    t1 = time.perf_counter(); e1.record(); e1.synchronize()
    t2 = time.perf_counter()
    out["passes"].append({"host_issue_s": round(t1 - t0, 4), "wall_s": round(t2 - t0, 4),
                          "gpu_s": round(cp.cuda.get_elapsed_time(e0, e1) / 1e3, 4)})
# the steps' distinct M alone, first time vs again, on a fresh handle's cache? (same handle)
t = []
for m in (1, 7, 64, 200, 256):
    cp.cuda.Device().synchronize(); t0 = time.perf_counter()
    for _ in range(100): g(m)
    cp.cuda.Device().synchronize(); t.append((m, round((time.perf_counter() - t0) / 100 * 1e6, 1)))
out["us_per_call_steady"] = t
print(json.dumps(out))
