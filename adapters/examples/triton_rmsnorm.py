#!/usr/bin/env python3
"""A team's own Triton kernel as a bitparity target, through the adapter kit.

usage: triton_rmsnorm.py [--warps-by-rows]

    bitparity run --exec 'python3 adapters/examples/triton_rmsnorm.py' --duration 20s

The kernel is a plain row-per-program RMSNorm: one program loads a row of
bf16/fp16/fp32 values, sums their squares in fp32 with tl.sum, and writes
(x * rstd) * w in fp32; the kit rounds it once to the case's output dtype
(writing it in the input dtype instead gave bf16-precision values where a
case asks for fp32 outputs: thousands of fp32 ulps from the oracle, which
the first H200 run of this example showed). Nothing of a row depends on the others,
so it claims batch invariance (and an ulp bound of 1 against bitparity's
oracle), and bitparity checks the claim.

--warps-by-rows plants what launch heuristics often do: 8 warps per program
for batches of 64 rows or more, 4 below. tl.sum's reduction tree follows the
warps, so the same row can get other bits in a larger batch; bitparity
should find it under batch_invariance with a drift map over rows.

This whole file is what a team writes: the kernel, a launcher taking torch
tensors, and serve().
"""

import os
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from bitparity_adapter import Op, serve  # noqa: E402


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, hidden, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < hidden
    x = tl.load(x_ptr + row * hidden + cols, mask=mask, other=0.0).to(tl.float32)
    ss = tl.sum(x * x, axis=0)
    rstd = 1.0 / tl.sqrt(ss / hidden + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = (x * rstd) * w
    tl.store(y_ptr + row * hidden + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def make_rmsnorm(warps_by_rows):
    def rmsnorm(x, w, eps):
        x = x.contiguous()
        rows, hidden = x.shape
        y = torch.empty(x.shape, dtype=torch.float32, device=x.device)
        if rows == 0:
            return y
        warps = (8 if rows >= 64 else 4) if warps_by_rows else 4
        rmsnorm_kernel[(rows,)](x, w, y, hidden, eps, BLOCK=triton.next_power_of_2(hidden), num_warps=warps)
        return y
    return rmsnorm


def main(argv):
    planted = "--warps-by-rows" in argv
    argv = [a for a in argv if a != "--warps-by-rows"]
    about = "triton %s row-per-program rmsnorm, %s" % (
        triton.__version__, "8 warps from 64 rows, 4 below" if planted else "4 warps")
    op = Op(make_rmsnorm(planted), ulp_bound=1, invariant=True, about=about)
    return serve({"rmsnorm": op}, name="triton-rmsnorm" + ("-warps" if planted else ""), arrays="torch", argv=argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
