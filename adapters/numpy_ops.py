#!/usr/bin/env python3
"""NumPy adapter for bitparity: the five ops on the CPU, NumPy only.

usage: numpy_ops.py [OP] [--blas]

    bitparity run --exec 'python3 adapters/numpy_ops.py rmsnorm'

What each op declares (hello frame):

  rmsnorm       exact: the oracle schedule "threads=1 vec=1 warp=butterfly
                cross=sequential out=(x*rstd)*w" bit for bit (a sequential
                fp32 sum of fma(x, x, acc), div.rn, sqrt.rn, (x*rstd)*w).
  gemm          exact: "splitk=1 combine=sequential" (acc = fma(x, w, acc)
                for k ascending from +0).
  gemm --blas   np.matmul in float32 (your BLAS: OpenBLAS, MKL, ...), not
                exact: ulp bound 2 in the output dtype.
  logprob       float64 log-softmax gathered at the target, rounded to fp32:
                ulp bound 64 (fp32 ulps).
  attn_prefill  causal softmax(q·kᵀ/sqrt(d))·v in float64, GQA, rounded to
  attn_decode   the output dtype: ulp bound 2.

Exact ops emulate fp32 fused multiply-add: the product of two fp32 values is
exact in float64; the float64 sum is made round-to-odd (TwoSum error, one
ulp toward it when the last bit is even), which rounds correctly to fp32.
For bf16 and fp16 inputs whose products neither overflow nor underflow the
product is exact in fp32, so a plain fp32 add is the fma (fast path). NaN
results are the canonical NaN 0x7fffffff, as PTX fp32 arithmetic gives.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bitparity_proto as bp  # noqa: E402

CANONICAL_NAN = np.array([0x7FFFFFFF], dtype=np.uint32).view(np.float32)[0]
RMSNORM_SCHEDULE = "threads=1 vec=1 warp=butterfly cross=sequential out=(x*rstd)*w"
GEMM_SCHEDULE = "splitk=1 combine=sequential"


def canon(x):
    """Replace every NaN by the canonical NaN (bits 0x7fffffff)."""
    x = np.asarray(x, dtype=np.float32)
    nan = np.isnan(x)
    if nan.any():
        x = x.copy()
        x[nan] = CANONICAL_NAN
    return x


def fma32(a, b, c):
    """fp32 a*b+c rounded once to nearest even (broadcasting)."""
    p = np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)
    c64 = np.asarray(c, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        s = p + c64
        bb = s - p
        e = (p - (s - bb)) + (c64 - bb)
        fix = (e != 0) & np.isfinite(s) & ((s.view(np.uint64) & np.uint64(1)) == 0)
        if fix.any():
            s = np.where(fix, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)
        return s.astype(np.float32)


def products_exact(in_dtype, a, b):
    """True when every product a[i]*b[j] is exact in fp32: inputs of at
    most 11 significant bits (bf16, fp16), finite, and products that stay
    in fp32's normal range (or are zero)."""
    if in_dtype not in ("bf16", "fp16"):
        return False
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return False
    aa, ab = np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64))
    if aa.size == 0 or ab.size == 0:
        return True
    if aa.max() * ab.max() >= 2.0 ** 127:
        return False
    nza, nzb = aa[aa > 0], ab[ab > 0]
    if nza.size and nzb.size and nza.min() * nzb.min() < 2.0 ** -126:
        return False
    return True


def rmsnorm(req):
    x, w = req.f32("x"), req.f32("w")
    rows, hidden = x.shape
    with np.errstate(all="ignore"):
        if products_exact(req.in_dtype, x, x):
            ss = np.add.accumulate(x * x, axis=1, dtype=np.float32)[:, -1] if hidden else np.zeros(rows, np.float32)
        else:
            ss = np.zeros(rows, dtype=np.float32)
            for j in range(hidden):
                ss = fma32(x[:, j], x[:, j], ss)
        mean = ss / np.float32(hidden)
        rstd = np.float32(1) / np.sqrt(mean + req.eps)
        y = (x * rstd[:, None]) * w[None, :]
    taps = np.stack([canon(ss), canon(rstd)], axis=1)
    return canon(y), taps


def gemm(req):
    x, w = req.f32("x"), req.f32("w")
    m, k = x.shape
    n = w.shape[1]
    acc = np.zeros((m, n), dtype=np.float32)
    with np.errstate(all="ignore"):
        if products_exact(req.in_dtype, x, w):
            for j in range(k):
                acc += x[:, j, None] * w[None, j, :]
        else:
            for j in range(k):
                acc = fma32(x[:, j, None], w[None, j, :], acc)
    return canon(acc)


def gemm_blas(req):
    with np.errstate(all="ignore"):
        return canon(np.matmul(req.f32("x"), req.f32("w")))


def logprob(req):
    lg = req.f32("logits").astype(np.float64)
    t = req.ints("targets")
    with np.errstate(all="ignore"):
        m = lg.max(axis=1)
        s = np.exp(lg - m[:, None]).sum(axis=1)
        lp = (lg[np.arange(lg.shape[0]), t] - m) - np.log(s)
    return canon(lp.astype(np.float32))


def _scale(d):
    """The oracle's softmax scale: div.rn(1, sqrt.rn(d)) in fp32."""
    return np.float64(np.float32(1) / np.sqrt(np.float32(d)))


def _softmax_v(scores, v):
    """softmax over the last axis of scores (float64, -inf masked) times v."""
    m = scores.max(axis=-1, keepdims=True)
    p = np.exp(scores - m)
    return (p @ v) / p.sum(axis=-1, keepdims=True)


def attn_prefill(req):
    q, k, v = (req.f32(n).astype(np.float64) for n in ("q", "k", "v"))
    seqs, seq_len, heads, d = q.shape
    group = heads // k.shape[2]
    k = np.repeat(k, group, axis=2).transpose(0, 2, 1, 3)  # [S, H, L, D]
    v = np.repeat(v, group, axis=2).transpose(0, 2, 1, 3)
    qh = q.transpose(0, 2, 1, 3)
    with np.errstate(all="ignore"):
        s = (qh @ k.transpose(0, 1, 3, 2)) * _scale(d)  # [S, H, L, L]
        s = np.where(np.tril(np.ones((seq_len, seq_len), dtype=bool)), s, -np.inf)
        o = _softmax_v(s, v)  # [S, H, L, D]
    return canon(o.transpose(0, 2, 1, 3).astype(np.float32))


def attn_decode(req):
    q = req.f32("q").astype(np.float64)  # [B, H, D]
    k, v = req.f32("k").astype(np.float64), req.f32("v").astype(np.float64)
    lens = req.ints("kv_lens")
    reqs, heads, d = q.shape
    group = heads // k.shape[1]
    out = np.empty(q.shape, dtype=np.float32)
    off = 0
    with np.errstate(all="ignore"):
        for b, n in enumerate(lens):
            kb = np.repeat(k[off:off + n], group, axis=1).transpose(1, 0, 2)  # [H, L, D]
            vb = np.repeat(v[off:off + n], group, axis=1).transpose(1, 0, 2)
            s = (kb @ q[b][:, :, None])[:, :, 0] * _scale(d)  # [H, L]
            out[b] = _softmax_v(s[:, None, :], vb)[:, 0, :]
            off += n
    return canon(out)


def main(argv):
    blas = "--blas" in argv
    argv = [a for a in argv if a != "--blas"]
    ops = {
        "rmsnorm": bp.Op(rmsnorm, schedule=RMSNORM_SCHEDULE,
                         about="numpy: sequential fp32 fma sum, exact"),
        "gemm": bp.Op(gemm, schedule=GEMM_SCHEDULE, about="numpy: sequential fp32 fma over k, exact"),
        "logprob": bp.Op(logprob, ulp_bound=64, about="numpy: float64 log-softmax + gather"),
        "attn_prefill": bp.Op(attn_prefill, ulp_bound=2, about="numpy: float64 causal attention, GQA"),
        "attn_decode": bp.Op(attn_decode, ulp_bound=2, about="numpy: float64 attention over each request's cache"),
    }
    name = "numpy"
    if blas:
        name = "numpy-blas"
        ops["gemm"] = bp.Op(gemm_blas, ulp_bound=2, about="numpy: np.matmul float32 (BLAS %s)" % blas_name())
    return bp.serve(name, ops, device="cpu", argv=argv)


def blas_name():
    try:
        cfg = np.show_config(mode="dicts")  # numpy >= 1.25
        return cfg["Build Dependencies"]["blas"]["name"]
    except Exception:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
