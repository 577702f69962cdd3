#!/usr/bin/env python3
"""A NumPy RMSNorm with a planted drift that starts at a batch size: a
negative control for scans and campaigns of adapters.

usage: numpy_split.py [--from N]    (N = 150 by default)

Below N rows it is the oracle's RMSNorm bit for bit (adapters/numpy_ops.py).
From N rows on it sums the squares of each row in two halves (the first
hidden/2 columns, the rest, then the two sums), the way a kernel that
splits its reduction for large batches does. It declares batch invariance
and an ulp bound of 2, so a scan must give the exact map
`rows <= N-1 -> A, rows >= N -> B`:

    bitparity scan --exec 'python3 adapters/examples/numpy_split.py' --to 256 --hidden 256
"""

import os
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
sys.path.insert(0, os.path.join(here, "..", "python"))
import bitparity_adapter as bp  # noqa: E402
import numpy_ops  # noqa: E402


def split_rmsnorm(start):
    def fn(req):
        x, w = req.f32("x"), req.f32("w")
        rows, hidden = x.shape
        if rows < start:
            return numpy_ops.rmsnorm(req)
        h = hidden // 2
        with np.errstate(all="ignore"):
            a = np.add.accumulate(x[:, :h] * x[:, :h], axis=1, dtype=np.float32)[:, -1] if h else np.zeros(rows, np.float32)
            b = np.add.accumulate(x[:, h:] * x[:, h:], axis=1, dtype=np.float32)[:, -1]
            ss = a + b
            rstd = np.float32(1) / np.sqrt(ss / np.float32(hidden) + req.eps)
            y = (x * rstd[:, None]) * w[None, :]
        return numpy_ops.canon(y), np.stack([numpy_ops.canon(ss), numpy_ops.canon(rstd)], axis=1)
    return fn


def main(argv):
    start = numpy_ops.int_flag(argv, "--from", 150, 0)
    op = bp.Op(split_rmsnorm(start), request=True, ulp_bound=2,
               about="numpy: planted drift, the sum of squares in two halves from %d rows on" % start)
    return bp.serve({"rmsnorm": op}, name="numpy-split", argv=argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
