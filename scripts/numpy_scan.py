#!/usr/bin/env python3
"""A plain NumPy loop making the comparisons of `bitparity scan --exec
'python3 adapters/numpy_ops.py rmsnorm'`, to measure the harness against
on the CPU (scripts/torch_scan.py is the same loop for torch).

For each of DRAWS input draws (seeds SEED, SEED+1, ...: MAX x HIDDEN bf16
rows and HIDDEN weights, standard normal) and for every row count v in
1..MAX it runs adapters/numpy_ops.py's exact RMSNorm on the first v rows
and compares every row bitwise (the bf16 output bits and the fp32 taps'
bits, as the scan does) with the same row computed alone and with the
same row in the MAX-row batch.

It prints one JSON object: the values where some row differs, the
seconds of the loops (inputs made before the clock starts), rows_checked
(sum of v over 1..MAX plus MAX, per draw: the rows a scan of the same
range certifies) and rows_per_second = rows_checked / seconds.

    python3 scripts/numpy_scan.py [MAX] [HIDDEN] [--draws N] [--seed S] [--eps E]
    python3 scripts/numpy_scan.py 512 1024
"""
import argparse
import json
import os
import sys
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "adapters"))
sys.path.insert(0, os.path.join(here, "..", "adapters", "python"))
import bitparity_adapter as bp  # noqa: E402
import numpy_ops  # noqa: E402


def rms_norm(x, w, meta):
    """The adapter's op on bf16 bits x [v, hidden]: (output bits, tap bits)."""
    y, taps = numpy_ops.rmsnorm(bp.Request(meta, {"x": ("BF16", x), "w": ("BF16", w)}))
    return bp.f32_to_bf16(y), np.ascontiguousarray(taps, dtype=np.float32).view(np.uint32)


def sweep(x, w, meta):
    """Runs rows 1..len(x) of one draw: the values whose rows differ, and
    how many rows of the largest batch differ from alone."""
    n = len(x)
    one = [rms_norm(x[i:i + 1], w, meta) for i in range(n)]
    alone, alone_t = np.concatenate([o[0] for o in one]), np.concatenate([o[1] for o in one])
    ref, ref_t = rms_norm(x, w, meta)
    moved = int(((alone != ref).any(axis=1) | (alone_t != ref_t).any(axis=1)).sum())
    differ = []
    for v in range(1, n + 1):
        y, t = rms_norm(x[:v], w, meta)
        if (y != alone[:v]).any() or (y != ref[:v]).any() or (t != alone_t[:v]).any() or (t != ref_t[:v]).any():
            differ.append(v)
    return differ, moved


def main(argv):
    ap = argparse.ArgumentParser(prog="numpy_scan.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("max", nargs="?", type=int, default=512, help="largest batch (rows 1..MAX)")
    ap.add_argument("hidden", nargs="?", type=int, default=1024)
    ap.add_argument("--draws", type=int, default=1, help="input draws (seeds SEED, SEED+1, ...)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eps", type=float, default=1e-6, help="as bitparity scan's --eps default")
    a = ap.parse_args(argv)
    n, hidden = a.max, a.hidden
    if n < 1 or hidden < 1 or a.draws < 1:
        ap.error("MAX, HIDDEN and --draws must be >= 1")
    eps_bits = "%08x" % int(np.array([a.eps], dtype=np.float32).view(np.uint32)[0])
    meta = {"op": "rmsnorm", "in": "bf16", "out": "bf16", "eps_bits": eps_bits}
    draws = []
    for k in range(a.draws):
        g = np.random.default_rng(a.seed + k)
        draws.append((bp.f32_to_bf16(g.standard_normal((n, hidden)).astype(np.float32)),
                      bp.f32_to_bf16(g.standard_normal(hidden).astype(np.float32))))
    t0 = time.perf_counter()
    results = [sweep(x, w, meta) for x, w in draws]
    took = time.perf_counter() - t0
    per_draw = [d for d, _ in results]
    checked = a.draws * (n * (n + 1) // 2 + n)
    print(json.dumps({"device": "cpu", "numpy": np.__version__, "rows": n, "hidden": hidden, "draws": a.draws,
                      "seed": a.seed, "eps": a.eps, "largest_batch_rows_moved": [m for _, m in results],
                      "differ_by_draw": per_draw, "differ": sorted(set().union(*per_draw)),
                      "rows_checked": checked, "seconds": round(took, 3), "rows_per_second": round(checked / took)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
