"""A test adapter of quant_fp8: the kit's NumPy one (adapters/numpy_ops.py,
per-token scaling), holding op scans, whose step replies lie the way
argv[1] says:

  digest  every step's first row digest is one more than its row's
  row     a fetched row's first code has its low bit flipped
"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "adapters"))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "adapters", "python"))
import numpy as np  # noqa: E402

import bitparity_adapter as bp  # noqa: E402
from bitparity_adapter import scan  # noqa: E402
import numpy_ops  # noqa: E402

mode = sys.argv[1]
step, fetched = scan.OpHeld.step, scan.OpHeld._fetched


def lying_step(self, *args, **kw):
    tap_cols, out = step(self, *args, **kw)
    if mode == "digest":
        for name, _, a in out:
            if name == "digests" and len(a):
                a[0, 0] += 1
    return tap_cols, out


def lying_fetched(self, y, t, fetch):
    out = fetched(self, y, t, fetch)
    if mode == "row" and out:
        out[0][2][0, 0] ^= np.uint8(1)
    return out


scan.OpHeld.step, scan.OpHeld._fetched = lying_step, lying_fetched
sys.exit(bp.serve({"quant_fp8": bp.Op(numpy_ops.quant_fp8, schedule="scaling=per_token format=e4m3")}, name="opliar", argv=["quant_fp8"]))
