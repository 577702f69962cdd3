#!/usr/bin/env python3
"""A plain PyTorch loop making the comparisons of `bitparity scan --exec
'python3 adapters/torch_ops.py rmsnorm'` (and of `scan --target
cuda-rmsnorm`), to measure the harness against.

For each of DRAWS input draws (seeds SEED, SEED+1, ...: MAX x HIDDEN bf16
rows and HIDDEN weights, torch.randn, held on the device) and for every
row count v in 1..MAX it computes F.rms_norm on the first v rows (in the
input dtype, as torch_ops.py does) and compares every row bitwise with the
same row computed alone (a batch of one row) and with the same row in the
MAX-row batch. A step's verdict stays on the device (one flag a step, no
sync per step); the flags are read once a draw, after the loop. This is
the loop a PyTorch user would write.

It prints one JSON object: the values where some row differs (per draw
and their union), the seconds of the loops (inputs made and copied before
the clock starts), and two counts:

  rows_checked     every row of every batch, once per draw (sum of v over
                   1..MAX, plus the MAX rows of the largest batch checked
                   against the rows alone): the property a certification
                   scan proves, 100,700,160 for 8192 rows and three draws
  row_comparisons  the compares this loop makes (2 per row of a batch: the
                   row alone and the row in the largest batch, plus MAX)

with rows_per_second = rows_checked / seconds.

With --op-only it makes the same F.rms_norm calls (every row alone, the
largest batch, every prefix) and no compare: the time any scan that calls
F.rms_norm on these batches cannot go below (the floor of `scan --exec`);
its JSON has "op_only": true and no differing values.

    python3 scripts/torch_scan.py [MAX] [HIDDEN] [DEVICE] [--draws N] [--seed S] [--eps E] [--op-only]
    python3 scripts/torch_scan.py 8192 4096 cuda --draws 3
"""
import argparse
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


def bits(t):
    return t.view(torch.int16)


def sweep(x, w, eps):
    """Runs rows 1..len(x) of one draw; returns the per-step flags (on the
    device) and how many rows of the largest batch differ from alone."""
    n = x.shape[0]
    alone = bits(torch.cat([rms_norm(x[i:i + 1], w, eps) for i in range(n)]))
    ref = bits(rms_norm(x, w, eps))
    moved = (alone != ref).any(dim=1).sum()
    flags = torch.zeros(n, dtype=torch.bool, device=x.device)
    for v in range(1, n + 1):
        y = bits(rms_norm(x[:v], w, eps))
        flags[v - 1] = ((y != alone[:v]) | (y != ref[:v])).any()
    return flags, moved


def ops_only(x, w, eps):
    """The F.rms_norm calls of sweep, none compared: a flag tensor of no
    differing step, and no moved row."""
    n = x.shape[0]
    for i in range(n):
        rms_norm(x[i:i + 1], w, eps)
    rms_norm(x, w, eps)
    for v in range(1, n + 1):
        rms_norm(x[:v], w, eps)
    return torch.zeros(n, dtype=torch.bool, device=x.device), torch.zeros((), dtype=torch.int64)


def main(argv):
    ap = argparse.ArgumentParser(prog="torch_scan.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("max", nargs="?", type=int, default=8192, help="largest batch (rows 1..MAX)")
    ap.add_argument("hidden", nargs="?", type=int, default=4096)
    ap.add_argument("device", nargs="?", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--draws", type=int, default=1, help="input draws (seeds SEED, SEED+1, ...)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eps", type=float, default=1e-6, help="as bitparity scan's --eps default")
    ap.add_argument("--op-only", action="store_true", help="the F.rms_norm calls only, no compare (the floor)")
    a = ap.parse_args(argv)
    n, hidden, dev = a.max, a.hidden, a.device
    if n < 1 or hidden < 1 or a.draws < 1:
        ap.error("MAX, HIDDEN and --draws must be >= 1")

    def sync():
        if dev.startswith("cuda"):
            torch.cuda.synchronize()

    draws = []
    for k in range(a.draws):
        g = torch.Generator(device="cpu").manual_seed(a.seed + k)
        x = torch.randn(n, hidden, generator=g).to(torch.bfloat16).to(dev)
        w = torch.randn(hidden, generator=g).to(torch.bfloat16).to(dev)
        draws.append((x, w))
    rms_norm(draws[0][0][:1], draws[0][1], a.eps)  # load the kernels before the clock
    sync()
    t0 = time.perf_counter()
    run = ops_only if a.op_only else sweep
    results = [run(x, w, a.eps) for x, w in draws]
    sync()
    took = time.perf_counter() - t0
    per_draw, moved = [], []
    for flags, m in results:
        per_draw.append([i + 1 for i in torch.nonzero(flags).flatten().tolist()])
        moved.append(int(m))
    union = sorted(set().union(*per_draw))
    checked = a.draws * (n * (n + 1) // 2 + n)
    compared = a.draws * (n * (n + 1) + n)
    print(json.dumps({"device": dev, "torch": torch.__version__, "rows": n, "hidden": hidden,
                      "draws": a.draws, "seed": a.seed, "eps": a.eps, "op_only": a.op_only,
                      "largest_batch_rows_moved": moved, "differ_by_draw": per_draw, "differ": union,
                      "rows_checked": checked, "row_comparisons": compared, "seconds": round(took, 3),
                      "rows_per_second": round(checked / took)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
