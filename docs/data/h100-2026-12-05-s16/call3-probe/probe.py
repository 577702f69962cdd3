#!/usr/bin/env python3
"""Session probe: where torch SDPA's time goes (which kernels, a new
shape against a repeated one, one process against 4 and 8 over KV
1..1024, two passes each) and torch.matmul's GPU time a product."""
import json, os, subprocess, sys, time
import torch
import torch.nn.functional as F

dev = "cuda"
def sdpa_loop(vals, passes=2):
    torch.manual_seed(1)
    q = torch.randn(1, 32, 1024, 128, dtype=torch.bfloat16, device=dev)
    k = torch.randn(1, 8, 1024, 128, dtype=torch.bfloat16, device=dev)
    v = torch.randn(1, 8, 1024, 128, dtype=torch.bfloat16, device=dev)
    out = []
    for p in range(passes):
        torch.cuda.synchronize(); t0 = time.perf_counter()
        for L in vals:
            a = F.scaled_dot_product_attention(q[:, :, :L], k[:, :, :L], v[:, :, :L], is_causal=True, enable_gqa=True)[:, :, -1]
            b = F.scaled_dot_product_attention(q[:, :, L-1:L], k[:, :, :L], v[:, :, :L], enable_gqa=True)[:, :, 0]
        torch.cuda.synchronize(); out.append(time.perf_counter() - t0)
    return out

if len(sys.argv) > 1 and sys.argv[1] == "part":
    i, n = int(sys.argv[2]), int(sys.argv[3])
    print(json.dumps(sdpa_loop(list(range(1 + i, 1025, n)))))
    sys.exit(0)

res = {}
from torch.profiler import profile, ProfilerActivity
q = torch.randn(1, 32, 300, 128, dtype=torch.bfloat16, device=dev); k = torch.randn(1, 8, 300, 128, dtype=torch.bfloat16, device=dev)
F.scaled_dot_product_attention(q, k, k, is_causal=True, enable_gqa=True); torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    F.scaled_dot_product_attention(q, k, k, is_causal=True, enable_gqa=True)
    F.scaled_dot_product_attention(q[:, :, -1:], k, k, enable_gqa=True)
    torch.cuda.synchronize()
res["kernels"] = sorted({e.name[:120] for e in prof.events() if e.device_type.name == "CUDA"})
t0 = time.perf_counter(); F.scaled_dot_product_attention(q[:, :, :297], k[:, :, :297], k[:, :, :297], is_causal=True, enable_gqa=True); torch.cuda.synchronize()
res["new_shape_ms"] = (time.perf_counter() - t0) * 1e3
t0 = time.perf_counter(); F.scaled_dot_product_attention(q[:, :, :297], k[:, :, :297], k[:, :, :297], is_causal=True, enable_gqa=True); torch.cuda.synchronize()
res["same_shape_ms"] = (time.perf_counter() - t0) * 1e3
res["one_process"] = sdpa_loop(list(range(1, 1025)))
for n in (4, 8):
    t0 = time.perf_counter()
    ps = [subprocess.Popen([sys.executable, __file__, "part", str(i), str(n)], stdout=subprocess.PIPE) for i in range(n)]
    parts = [json.loads(p.communicate()[0]) for p in ps]
    res["procs%d" % n] = {"wall_incl_start": time.perf_counter() - t0, "per_proc_passes": parts}
w = torch.randn(4096, 4096, dtype=torch.bfloat16, device=dev); x = torch.randn(256, 4096, dtype=torch.bfloat16, device=dev)
g = {}
for M in (1, 8, 16, 41, 64, 128, 256):
    for _ in range(3): torch.matmul(x[:M], w)
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0 = time.perf_counter(); e0.record()
    for _ in range(200): torch.matmul(x[:M], w)
    e1.record(); t1 = time.perf_counter(); torch.cuda.synchronize()
    g[M] = {"gpu_us": e0.elapsed_time(e1) * 1e3 / 200, "issue_us": (t1 - t0) * 1e6 / 200}
res["matmul"] = g
print(json.dumps(res, indent=1))
