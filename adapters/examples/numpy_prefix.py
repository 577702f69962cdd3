#!/usr/bin/env python3
"""A NumPy attention prefill with a planted drift on the cached prefix: a
negative control for the chunk and prefix scans of adapters.

usage: numpy_prefix.py [--block N]    (N = 16 by default)

It reads the layout (hello "layout": "true"). A whole prompt, and a chunk
whose cached prefix (chunk_from) is not a whole number of N-token pages,
is the oracle's prefill bit for bit (adapters/numpy_ops.py: KV tiles of 64
from position 0). A chunk past a prefix of k*N tokens takes a
"page-aligned path" that reads the KV in tiles of N, the way a prefix-cache
kernel did where the prefix ended on a block boundary (SGLang #22819). It
declares batch invariance and the schedule "tile=64 splits=1", so a scan
of the prefix length must give the exact map
`prefix % 16 == 0 -> B, otherwise -> A`, and a scan of chunk sizes the
chunk sizes whose chunks start on a page (every chunk size that is a
multiple of 16, and any other whose later chunk starts on one: c <= the
prompt length with a multiple of c that is a multiple of 16 below it):

    bitparity scan --exec 'python3 adapters/examples/numpy_prefix.py' --dim prefix --to 79 --seq-len 80 --heads 4 --kv-heads 2 --head-dim 16
"""

import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
sys.path.insert(0, os.path.join(here, "..", "python"))
import bitparity_adapter as bp  # noqa: E402
import numpy_ops  # noqa: E402


def prefix_prefill(block):
    def fn(req):
        f = req.chunk_from
        return numpy_ops.attn_prefill(req, tile=block if f > 0 and f % block == 0 else None)
    return fn


def main(argv):
    block = numpy_ops.int_flag(argv, "--block", 16, 1)
    if numpy_ops.ATTN_TILE % block:
        print("numpy_prefix.py: --block %d: want a divisor of %d" % (block, numpy_ops.ATTN_TILE), file=sys.stderr)
        return 2
    op = bp.Op(prefix_prefill(block), request=True, schedule=numpy_ops.ATTN_SCHEDULE, layout=True,
               about="numpy: planted drift, KV tiles of %d for a chunk past a prefix of a whole number of %d-token pages" % (block, block))
    return bp.serve({"attn_prefill": op}, name="numpy-prefix", argv=argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
