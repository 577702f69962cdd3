#!/usr/bin/env python3
"""A plain PyTorch loop making the comparisons of `bitparity scan --exec
'python3 adapters/torch_ops.py rmsnorm'`, to measure the harness against.

For every row count v in 1..MAX it computes F.rms_norm on the first v rows
of one batch of MAX x HIDDEN bf16 rows held on the device (in the input
dtype, as torch_ops.py does), and compares every row bitwise with the same
row computed alone (a batch of one row) and with the same row in the
MAX-row batch. It prints JSON: the values where some row differs, the row
comparisons made and the rows compared per second, which is what
`bitparity scan` prints as "rows/s" (row comparisons / elapsed).

    python3 scripts/torch_scan.py [MAX] [HIDDEN] [DEVICE]      # 8192 4096 cuda
"""
import json
import sys
import time

import torch
import torch.nn.functional as F


def rms_norm(x, w, eps):
    if hasattr(F, "rms_norm"):
        return F.rms_norm(x, (x.shape[-1],), w, eps)
    xf = x.float()  # torch < 2.4: the Llama formula, as torch_ops.py
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w


def main(argv):
    n = int(argv[0]) if len(argv) > 0 else 8192
    hidden = int(argv[1]) if len(argv) > 1 else 4096
    dev = argv[2] if len(argv) > 2 else ("cuda" if torch.cuda.is_available() else "cpu")
    g = torch.Generator(device="cpu").manual_seed(1)
    x = torch.randn(n, hidden, generator=g).to(torch.bfloat16).to(dev)
    w = torch.randn(hidden, generator=g).to(torch.bfloat16).to(dev)
    eps = 1e-6

    def sync():
        if dev.startswith("cuda"):
            torch.cuda.synchronize()

    sync()
    t0 = time.perf_counter()
    alone = torch.cat([rms_norm(x[i:i + 1], w, eps) for i in range(n)])
    ref = rms_norm(x, w, eps)
    bits = lambda t: t.view(torch.int16)  # noqa: E731
    a, r = bits(alone), bits(ref)
    differ = []
    compared = n  # the largest batch against the rows alone
    ref_moved = (a != r).any(dim=1)
    for v in range(1, n + 1):
        y = bits(rms_norm(x[:v], w, eps))
        d = (y != a[:v]).any(dim=1) | (y != r[:v]).any(dim=1)
        compared += 2 * v
        if bool(d.any()):
            differ.append(v)
    sync()
    took = time.perf_counter() - t0
    print(json.dumps({"device": dev, "torch": torch.__version__, "rows": n, "hidden": hidden,
                      "largest_batch_rows_moved": int(ref_moved.sum()), "differ": differ,
                      "row_comparisons": compared, "seconds": round(took, 3),
                      "rows_per_second": round(compared / took)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
