#!/usr/bin/env python3
"""The loop a user would write over the comparisons of `bitparity scan
--target cublas-gemmex --to MAX --hidden K --n N --in bf16 --out bf16`
(three draws), to measure the harness's cuBLAS scan against.

With CuPy (the default when it imports) every product is the cuBLAS call
of bitparity's cublas-gemmex target, through cupy's cublas.gemmEx exactly
as scripts/cublas_sweep.py makes it (row-major y = x.w as column-major
Y^T = W^T X^T, A = W ld N, B = X ld K, C = Y ld N, bf16 A, B and C,
CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT); with torch (--backend torch, or
when CuPy is missing) it is x[:M] @ w in bf16, whichever library torch
calls for it.

For each of DRAWS input draws (seeds SEED, SEED+1, ...: MAX x K bf16 rows
of X and K x N bf16 weights W, numpy normal values, W scaled by 1/sqrt(K),
uploaded before the clock starts), it computes every row alone (MAX
products with M = 1, into one output), the MAX-row batch, and for every M
in 1..MAX:

  the step     X[:M] @ W, every row compared bitwise with itself alone and
               in the MAX-row batch: one flag a step;
  the panel    for M < P (P = min(MAX, 64)): further batches of M rows,
               rows (first + i) % MAX for first = M, 2M, ... < P, each
               gathered into a batch and multiplied, the rows of the first
               P compared with themselves alone: the class bits of M, as
               the scan's items class needs (one bit a panel row: equal or
               not; the scan also digests a differing row's bits).

A step's flag and panel bits stay on the device (no sync a step); they are
read once a draw, after the loop. It prints one JSON object:

  seconds          the loops' time (inputs made and uploaded before)
  rows_checked     every row of every step once a draw, plus the MAX rows
                   of the largest batch checked against the rows alone:
                   DRAWS x (MAX (MAX + 1) / 2 + MAX), as scripts/torch_scan.py
  panel_rows       the rows of the further panel batches compared
  products         the matrix products made (alone, the largest, the steps,
                   the panel batches)
  differ_by_draw   per draw, the M whose step has a row differing from its
                   row alone or in the largest batch; differ their union
  classes          the M grouped by their panel bits over every draw, in
                   the order of their first M

With --op-only it makes the same products and panel gathers and compares
nothing: the time any scan making these products cannot go below (its JSON
has "op_only": true and no differing M), as torch_scan.py --op-only is for
F.rms_norm.

    python3 scripts/gemm_scan.py [MAX] [K] [N] [--draws D] [--seed S] [--backend cupy|torch] [--device D] [--op-only]
    python3 scripts/gemm_scan.py 256 4096 4096 --draws 3
"""
import argparse
import json
import sys
import time

import numpy as np

from sweep_summary import summarize

PANEL = 64  # scan.PanelItems
CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT = 14, 68, -1


def bf16(a):
    """Round float32 values to bf16 (nearest even), as uint16 bits."""
    b = a.astype(np.float32).view(np.uint32)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


class CuPy:
    """Products through cublasGemmEx, as gpu/cublas.go calls it."""

    def __init__(self, K, N):
        import cupy as cp
        try:
            from cupy_backends.cuda.libs import cublas
        except ImportError:  # older CuPy
            from cupy.cuda import cublas
        self.cp, self.cublas, self.K, self.N = cp, cublas, K, N
        self.version = cp.__version__
        self.h = cp.cuda.device.get_cublas_handle()
        self.alpha = np.array(1.0, dtype=np.float32)
        self.beta = np.array(0.0, dtype=np.float32)

    def upload(self, bits):
        return self.cp.asarray(bits)

    def empty(self, rows):
        return self.cp.empty((rows, self.N), dtype=self.cp.uint16)

    def zeros(self, shape):
        return self.cp.zeros(shape, dtype=self.cp.bool_)

    def arange(self, n):
        return self.cp.arange(n)

    def gemm(self, x, w, m, y, row=0, yrow=0):
        """y[yrow:yrow+m] = x[row:row+m] . w"""
        K, N = self.K, self.N
        self.cublas.gemmEx(self.h, 0, 0, N, m, K, self.alpha.ctypes.data, w.data.ptr, CUDA_R_16BF, N,
                           x.data.ptr + 2 * K * row, CUDA_R_16BF, K, self.beta.ctypes.data,
                           y.data.ptr + 2 * N * yrow, CUDA_R_16BF, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)

    def sync(self):
        self.cp.cuda.Device().synchronize()

    def host(self, a):
        return self.cp.asnumpy(a)


class Torch:
    """Products through torch.matmul in bf16."""

    def __init__(self, K, N, device):
        import torch
        self.torch, self.K, self.N, self.device = torch, K, N, device
        self.version = torch.__version__

    def upload(self, bits):
        t = self.torch
        return t.from_numpy(bits.view(np.int16)).to(self.device).view(t.bfloat16)

    def empty(self, rows):
        return self.torch.empty((rows, self.N), dtype=self.torch.bfloat16, device=self.device)

    def zeros(self, shape):
        return self.torch.zeros(shape, dtype=self.torch.bool, device=self.device)

    def arange(self, n):
        return self.torch.arange(n, device=self.device)

    def gemm(self, x, w, m, y, row=0, yrow=0):
        self.torch.matmul(x[row:row + m], w, out=y[yrow:yrow + m])

    def sync(self):
        if self.device.startswith("cuda"):
            self.torch.cuda.synchronize()

    def host(self, a):
        return a.cpu().numpy()


def bits(be, a):
    """The compared bits of a bf16 output (uint16 for CuPy, int16 for torch)."""
    return a if isinstance(be, CuPy) else a.view(be.torch.int16)


def sweep(be, x, w, n, op_only=False):
    """Runs M = 1..n on one draw; returns the per-step flags and the panel
    bits (True: the row differs from itself alone), both on the device,
    and the counts of panel rows and products. With op_only it makes the
    same products and gathers and compares nothing (flags and bits stay
    False)."""
    P = min(n, PANEL)
    alone, ref = be.empty(n), be.empty(n)
    for i in range(n):
        be.gemm(x, w, 1, alone, row=i, yrow=i)
    be.gemm(x, w, n, ref)
    A, R = bits(be, alone), bits(be, ref)
    flags = be.zeros((n,))
    panel = be.zeros((n, P))
    y, g, yg = be.empty(n), be.upload(np.zeros((P, be.K), dtype=np.uint16)), be.empty(P)
    panel_rows, products = 0, n + 1
    idx = be.arange(n)
    for m in range(1, n + 1):
        be.gemm(x, w, m, y)
        products += 1
        if not op_only:
            Y = bits(be, y)[:m]
            dA = (Y != A[:m]).any(1)
            flags[m - 1] = (dA | (Y != R[:m]).any(1)).any()
            c = min(m, P)
            panel[m - 1, :c] = dA[:c]
        for first in range(m, P, m):
            ids = (first + idx[:m]) % n
            g[:m] = x[ids]  # the gather a user writes: rows of X into a batch
            be.gemm(g, w, m, yg)
            c = min(m, P - first)
            if not op_only:
                panel[m - 1, first:first + c] = (bits(be, yg)[:c] != A[ids[:c]]).any(1)
            panel_rows += c
            products += 1
    return flags, panel, panel_rows, products


def main(argv):
    ap = argparse.ArgumentParser(prog="gemm_scan.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("max", nargs="?", type=int, default=256, help="largest batch (M = 1..MAX)")
    ap.add_argument("k", nargs="?", type=int, default=4096)
    ap.add_argument("n", nargs="?", type=int, default=4096)
    ap.add_argument("--draws", type=int, default=3, help="input draws (seeds SEED, SEED+1, ...)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--backend", choices=["cupy", "torch"], help="default: cupy when it imports, else torch")
    ap.add_argument("--device", default="cuda", help="torch's device (cpu: a check of the loop, not a figure)")
    ap.add_argument("--op-only", action="store_true",
                    help="the same products and gathers, no compare: the floor of any scan making them")
    a = ap.parse_args(argv)
    n, K, N = a.max, a.k, a.n
    if n < 1 or K < 1 or N < 1 or a.draws < 1:
        ap.error("MAX, K, N and --draws must be >= 1")
    backend = a.backend
    if backend is None:
        try:
            import cupy  # noqa: F401
            backend = "cupy"
        except ImportError:
            backend = "torch"
    be = CuPy(K, N) if backend == "cupy" else Torch(K, N, a.device)

    draws = []
    for k in range(a.draws):
        rng = np.random.default_rng(a.seed + k)
        draws.append((be.upload(bf16(rng.standard_normal((n, K)))),
                      be.upload(bf16(rng.standard_normal((K, N)) / np.sqrt(K)))))
    x, w = draws[0]
    be.gemm(x, w, 1, be.empty(1))  # load the library's kernels before the clock
    be.sync()
    t0 = time.perf_counter()
    results = [sweep(be, x, w, n, a.op_only) for x, w in draws]
    be.sync()
    took = time.perf_counter() - t0

    per_draw, classes, panel_rows, products, checked = summarize(results, be.host, n)
    print(json.dumps({"backend": backend, "version": be.version, "rows": n, "k": K, "n": N, "draws": a.draws,
                      "seed": a.seed, "op_only": a.op_only, "differ_by_draw": per_draw, "differ": sorted(set().union(*per_draw)),
                      "classes": classes, "rows_checked": checked, "panel_rows": panel_rows,
                      "products": products, "seconds": round(took, 3),
                      "rows_per_second": round(checked / took)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
