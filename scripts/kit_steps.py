#!/usr/bin/env python3
"""The adapter kit's own cost on a held batch's steps, against the same
calls written bare: what `scan --exec` pays in the kit beyond the op.

It holds ROWS x HIDDEN bf16 rows (standard normal) and HIDDEN weights of
1.0 in the kit (bitparity_adapter.scan.Held, torch arrays on DEVICE) with
an op of one multiply (x * w: its own cost is small, so the kit's shows),
and times, ROUNDS times, alternated:

  alone   the kit's step of every item alone (Held.step, each=true) against
          the bare loop: op(x[i:i+1], w) for every i, torch.cat, viewed as
          int16 bits
  steps   the kit's step of the prefixes 1..ROWS against the items alone
          (sizes, against=alone) against the bare loop: op(x[:v], w) for
          every v, compared bitwise with the items alone ((y != a).any(1)),
          the flags joined and read once

It prints one JSON object: the medians and minimums of each, in us an item
(alone) or a step (steps), and the kit's cost over the bare loop's.

    python3 scripts/kit_steps.py [ROWS] [HIDDEN] [--device D] [--rounds N]
    python3 scripts/kit_steps.py 4096 16 --device cpu --rounds 15
"""
import argparse
import importlib
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adapters", "python"))


def main(argv):
    ap = argparse.ArgumentParser(prog="kit_steps.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("rows", nargs="?", type=int, default=4096)
    ap.add_argument("hidden", nargs="?", type=int, default=16)
    ap.add_argument("--device", default="cpu", help="torch device (cpu, cuda, cuda:N)")
    ap.add_argument("--rounds", type=int, default=15)
    a = ap.parse_args(argv)
    if a.rows < 1 or a.hidden < 1 or a.rounds < 1:
        ap.error("ROWS, HIDDEN and --rounds must be >= 1")
    import torch
    scan = importlib.import_module("bitparity_adapter.scan")
    serve = importlib.import_module("bitparity_adapter.serve")

    def op(x, w, eps):
        return x * w

    class Op:
        request, fn = False, staticmethod(op)

    n, h = a.rows, a.hidden
    x = (np.random.default_rng(1).standard_normal((n, h)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    meta = {"frame": "hold", "seq": "1", "op": "rmsnorm", "in": "bf16", "out": "bf16", "eps": "1e-06", "eps_bits": "358637bd"}
    held = scan.Held("rmsnorm", Op(), meta, {"x": ("BF16", x), "w": ("BF16", np.full(h, 0x3F80, np.uint16))},
                     serve.Arrays("torch", a.device))
    X, W = held.dev["x"], held.dev["w"]
    ids, sizes, none = np.arange(n, dtype=np.int64), np.arange(1, n + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)

    def sync():
        if X.device.type == "cuda":
            torch.cuda.synchronize(X.device)

    def bare_alone():
        return torch.cat([op(X[i:i + 1], W, 1e-6) for i in range(n)]).view(torch.int16)

    A = bare_alone()

    def bare_steps():
        flags = [(op(X[:v], W, 1e-6).view(torch.int16) != A[:v]).any(1) for v in range(1, n + 1)]
        return torch.nonzero(torch.cat(flags)).cpu()

    def kit_alone():
        return held.step(ids, True, None)

    def kit_steps():
        return held.step(none, False, None, sizes=sizes, against=True)

    with torch.inference_mode():  # as the kit's serve runs every frame
        kit_alone()  # the items alone the kit's steps compare with
        times = {k: [] for k in ("bare alone", "kit alone", "bare steps", "kit steps")}
        for _ in range(a.rounds):
            for name, f in (("bare alone", bare_alone), ("kit alone", kit_alone), ("bare steps", bare_steps), ("kit steps", kit_steps)):
                sync()
                t = time.perf_counter()
                f()
                sync()
                times[name].append((time.perf_counter() - t) / n * 1e6)
        kit_alone()  # the kit's items alone last, as a scan leaves them
    med = {k: statistics.median(v) for k, v in times.items()}
    print(json.dumps({
        "torch": torch.__version__, "device": str(X.device), "rows": n, "hidden": h, "rounds": a.rounds,
        "median_us": {k: round(v, 2) for k, v in med.items()},
        "min_us": {k: round(min(v), 2) for k, v in times.items()},
        "kit_over_bare_us": {"alone": round(med["kit alone"] - med["bare alone"], 2), "steps": round(med["kit steps"] - med["bare steps"], 2)},
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
