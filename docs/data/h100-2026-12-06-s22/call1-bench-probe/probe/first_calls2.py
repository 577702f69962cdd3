"""Session 22 probe: is cuBLAS's first-call cost at a new M (K = N = 4096,
bf16, cublasGemmEx as gpu/cublas.go calls it) shared between handles, and
is it lazy kernel loading? Each mode in a fresh process:
  own8     M = 2..256 over 8 threads, each its own handle and stream (the
           scan's warm-up), then the same M on a ninth handle (the scan's
           main one): is the main handle's pass warm?
  seq      M = 2..256 on one handle, twice (the cold and warm passes)
Run under CUDA_MODULE_LOADING=EAGER as well: the first pass's cost when
every kernel was loaded at cuBLAS's start (startup seconds printed)."""
import json, os, sys, threading, time
import numpy as np
mode = sys.argv[1]
K = N = 4096; n = 256
t_start = time.perf_counter()
import cupy as cp
from cupy_backends.cuda.libs import cublas
x = cp.zeros((n, K), dtype=cp.uint16); w = cp.zeros((K, N), dtype=cp.uint16)
al = np.array(1.0, dtype=np.float32); be = np.array(0.0, dtype=np.float32)
threads = 8 if mode == "own8" else 1
ys = [cp.empty((n, N), dtype=cp.uint16) for _ in range(threads + 1)]
hs, ss = [], []
for i in range(threads + 1):
    h = cublas.create(); s = cp.cuda.Stream(non_blocking=True); cublas.setStream(h, s.ptr); hs.append(h); ss.append(s)
def g(i, m):
    cublas.gemmEx(hs[i], 0, 0, N, m, K, al.ctypes.data, w.data.ptr, 14, N, x.data.ptr, 14, K,
                  be.ctypes.data, ys[i].data.ptr, 14, N, 68, -1)
for i in range(threads + 1):
    g(i, 1)
cp.cuda.Device().synchronize()
startup = time.perf_counter() - t_start
def part(i, step, first):
    cp.cuda.Device(0).use()
    for m in range(2 + first, n + 1, step):
        g(i, m)
    ss[i].synchronize()
def timed(f):
    c0, t0 = time.process_time(), time.perf_counter()
    f(); cp.cuda.Device().synchronize()
    return {"wall_s": round(time.perf_counter() - t0, 4), "cpu_s": round(time.process_time() - c0, 4)}
out = {"mode": mode, "loading": os.environ.get("CUDA_MODULE_LOADING", "default"), "startup_s": round(startup, 3)}
if mode == "own8":
    def warm():
        th = [threading.Thread(target=part, args=(i, threads, i)) for i in range(threads)]
        [t.start() for t in th]; [t.join() for t in th]
    out["threads8"] = timed(warm)
    out["main_after"] = timed(lambda: part(threads, 1, 0))
else:
    out["first"] = timed(lambda: part(0, 1, 0))
    out["second"] = timed(lambda: part(0, 1, 0))
print(json.dumps(out))
