# Reference figures for docs/performance.md, run on the GPU host with the
# PyTorch there: device-to-device copy bandwidth and the usual PyTorch
# bitwise-compare idiom over 2^28 bf16 values (bytes read of both inputs).
import torch

def bench(fn, reps=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize()
        ts.append(s.elapsed_time(e) / 1e3)
    ts.sort()
    return ts[len(ts) // 2]

n = 1 << 28
a = torch.randn(n, device="cuda", dtype=torch.bfloat16)
b = a.clone()
b[12345] += 1
dst = torch.empty_like(a)
t = bench(lambda: dst.copy_(a))
print(f"torch copy: {2 * n * 2 / t / 1e12:.3f} TB/s (read+write, {2*n*2/1e9:.2f} GB in {t*1e3:.3f} ms)")
t = bench(lambda: (a.view(torch.int16) != b.view(torch.int16)).sum().item())
print(f"torch compare idiom: {2 * n * 2 / t / 1e12:.3f} TB/s (both inputs read, {t*1e3:.3f} ms)")
