"""Probe: the kit's per-step cost on a GPU against the bare loop."""
import sys, time, json
sys.path.insert(0, "adapters/python")
import numpy as np, torch
import torch.nn.functional as F
from bitparity_adapter import scan
from bitparity_adapter.serve import Op, Arrays
N, H = 8192, 4096
@torch.inference_mode()
def rms(x, w, eps):
    return F.rms_norm(x, (x.shape[-1],), weight=w, eps=eps)
def plain(x, w, eps):
    return F.rms_norm(x, (x.shape[-1],), weight=w, eps=eps)
res = {}
rng = np.random.default_rng(1)
xb = (rng.standard_normal((N, H)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
wb = (rng.standard_normal(H).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
meta = {"frame": "hold", "seq": "1", "op": "rmsnorm", "in": "bf16", "out": "bf16", "eps": "1e-06", "eps_bits": "358637bd"}
for name, fn in (("decorated", rms), ("plain", plain)):
    h = scan.Held("rmsnorm", Op(fn), meta, {"x": ("BF16", xb), "w": ("BF16", wb)}, Arrays("torch", "cuda"))
    torch.cuda.synchronize()
    t = time.perf_counter(); h.step(np.arange(N), True, None); torch.cuda.synchronize()
    res[name + " alone 8192 us/batch"] = (time.perf_counter() - t) / N * 1e6
    for lo, n in ((1, 512), (4000, 512)):
        sizes = list(range(lo, lo + n))
        h.step(np.zeros(0, np.int64), False, None, sizes, True)
        torch.cuda.synchronize()
        t = time.perf_counter(); h.step(np.zeros(0, np.int64), False, None, sizes, True); torch.cuda.synchronize()
        res["%s kit steps %d.. us/step" % (name, lo)] = (time.perf_counter() - t) / n * 1e6
x, w = h.dev["x"], h.dev["w"]
eps = float(h.eps)
al = torch.cat([rms(x[i:i + 1], w, eps) for i in range(N)]).view(torch.int64) if False else None
alone = torch.cat([plain(x[i:i + 1], w, eps) for i in range(N)])
a64 = alone.view(torch.int16).view(torch.int64)
for fname, fn in (("decorated", rms), ("plain", plain)):
    for lo, n in ((1, 512), (4000, 512)):
        for what in ("op", "op+cmp"):
            torch.cuda.synchronize(); t = time.perf_counter(); ms = []
            for v in range(lo, lo + n):
                y = fn(x[:v], w, eps)
                if what == "op+cmp":
                    ms.append((y.view(torch.int16).view(torch.int64) != a64[:v]).any(dim=1))
            if ms:
                torch.nonzero(torch.cat(ms)).cpu()
            torch.cuda.synchronize()
            res["bare %s %s %d.. us/step" % (fname, what, lo)] = (time.perf_counter() - t) / n * 1e6
    torch.cuda.synchronize(); t = time.perf_counter()
    for i in range(N):
        fn(x[i:i + 1], w, eps)
    torch.cuda.synchronize()
    res["bare %s alone us/batch" % fname] = (time.perf_counter() - t) / N * 1e6
print(json.dumps({k: round(v, 1) for k, v in res.items()}, indent=0))
