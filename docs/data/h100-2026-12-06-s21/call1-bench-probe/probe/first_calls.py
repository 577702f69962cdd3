"""Session 21 probe: is cuBLAS's first call at a new M (K = N = 4096, bf16,
cublasGemmEx as gpu/cublas.go calls it) serialized across threads, and is
it host CPU? Run once per mode, each in a fresh process:
  seq      M = 1..256 on one thread (one handle)
  tN       M = 1..256 spread round-robin over N threads, each its own handle and stream
  torch    torch.matmul at M = 1..256 on one thread
Prints wall and process CPU seconds of the first pass and of a second pass."""
import json, sys, threading, time
import numpy as np
mode = sys.argv[1]
K = N = 4096; n = 256
def run_cupy(threads):
    import cupy as cp
    from cupy_backends.cuda.libs import cublas
    x = cp.zeros((n, K), dtype=cp.uint16); w = cp.zeros((K, N), dtype=cp.uint16)
    al = np.array(1.0, dtype=np.float32); be = np.array(0.0, dtype=np.float32)
    ys = [cp.empty((n, N), dtype=cp.uint16) for _ in range(threads)]
    hs, ss = [], []
    for i in range(threads):
        h = cublas.create(); s = cp.cuda.Stream(non_blocking=True); cublas.setStream(h, s.ptr); hs.append(h); ss.append(s)
    cp.cuda.Device().synchronize()
    def g(i, m):
        cublas.gemmEx(hs[i], 0, 0, N, m, K, al.ctypes.data, w.data.ptr, 14, N, x.data.ptr, 14, K,
                      be.ctypes.data, ys[i].data.ptr, 14, N, 68, -1)
    # handle warm: one call at M=1 per handle, before the clock
    for i in range(threads):
        g(i, 1)
    cp.cuda.Device().synchronize()
    def part(i):
        cp.cuda.Device(0).use()
        for m in range(2 + i, n + 1, threads):
            g(i, m)
        ss[i].synchronize()
    out = {}
    for p in ("first", "second"):
        c0, t0 = time.process_time(), time.perf_counter()
        if threads == 1:
            part(0)
        else:
            th = [threading.Thread(target=part, args=(i,)) for i in range(threads)]
            [t.start() for t in th]; [t.join() for t in th]
        cp.cuda.Device().synchronize()
        out[p] = {"wall_s": round(time.perf_counter() - t0, 4), "cpu_s": round(time.process_time() - c0, 4)}
    return out
def run_torch():
    import torch
    x = torch.zeros(n, K, dtype=torch.bfloat16, device="cuda"); w = torch.zeros(K, N, dtype=torch.bfloat16, device="cuda")
    torch.matmul(x[:1], w); torch.cuda.synchronize()
    out = {}
    for p in ("first", "second"):
        c0, t0 = time.process_time(), time.perf_counter()
        for m in range(2, n + 1):
            torch.matmul(x[:m], w)
        torch.cuda.synchronize()
        out[p] = {"wall_s": round(time.perf_counter() - t0, 4), "cpu_s": round(time.process_time() - c0, 4)}
    return out
if mode == "torch":
    r = run_torch()
else:
    r = run_cupy(1 if mode == "seq" else int(mode[1:]))
print(json.dumps({"mode": mode, **r}))
