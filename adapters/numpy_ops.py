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
  logprob       exact: "threads=1 vec=1 warp=butterfly cross=sequential"
                (row max from -Inf, a sequential fp32 sum of the oracle's
                portable exp, its portable log, two sub.rn).
  attn_prefill  causal softmax(q·kᵀ/sqrt(d))·v in float64, GQA, rounded to
  attn_decode   the output dtype: ulp bound 16 (one bound for every output
                dtype: 0-1 ulps in bf16 and fp16, up to 12 seen in fp32).

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
LOGPROB_SCHEDULE = "threads=1 vec=1 warp=butterfly cross=sequential"
# Attention is float64 here, the oracle fp32 with an online softmax: 0 or 1
# bf16/fp16 ulps apart in the tests, but up to 12 fp32 ulps on fp32 outputs
# (a campaign found it at kv=2): the bound must hold for every output dtype.
ATTN_ULP_BOUND = 16


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


# Constants of the oracle's portable exp and log (oracle/explog.go), as
# fp32 bit patterns.
def _f32(bits):
    return np.array([bits], dtype=np.uint32).view(np.float32)[0]


EXP_MAGIC = np.float32(12582912.0)  # 1.5*2^23
LOG2E, LN2_HI, LN2_LO = _f32(0x3FB8AA3B), _f32(0x3F317200), _f32(0x35BFBE8E)
SQRT2_BITS = 0x3FB504F3
EXP_COEFFS = [np.float32(c) for c in (1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5)]
LOG_COEFFS = [np.float32(c) for c in (2.0 / 9, 2.0 / 7, 2.0 / 5, 2.0 / 3)]


def _pow2(k):
    """2^k for integer arrays k in [-126, 127], from bits."""
    return np.atleast_1d((np.asarray(k, dtype=np.int64) + 127).astype(np.uint32) << np.uint32(23)).view(np.float32).reshape(np.shape(k))


def exp32(x):
    """The oracle's Exp32, elementwise: the same correctly rounded fp32
    steps, so the same bits."""
    x = np.asarray(x, dtype=np.float32)
    with np.errstate(all="ignore"):
        t = fma32(x, LOG2E, EXP_MAGIC)
        k = t - EXP_MAGIC
        r = fma32(-k, LN2_HI, x)
        r = fma32(-k, LN2_LO, r)
        p = np.full(x.shape, EXP_COEFFS[0], dtype=np.float32)
        for c in EXP_COEFFS[1:]:
            p = fma32(p, r, c)
        p = fma32(p, r, np.float32(1))
        p = fma32(p, r, np.float32(1))
        ki = np.nan_to_num(k, nan=0, posinf=0, neginf=0).astype(np.int64)
        big, small = ki > 127, ki < -125
        out = p * _pow2(np.clip(ki, -126, 127))
        if big.any():
            out = np.where(big, (p * _pow2(np.clip(ki - 1, -126, 127))) * np.float32(2), out)
        if small.any():
            out = np.where(small, (p * _pow2(np.clip(ki + 100, -126, 127))) * _pow2(-100), out)
        out = np.where(x > 89, np.float32(np.inf), out)
        out = np.where(x < -104, np.float32(0), out)
        return canon(np.where(np.isnan(x), np.float32(np.nan), out))


def log32(x):
    """The oracle's Log32, elementwise."""
    x = np.asarray(x, dtype=np.float32)
    with np.errstate(all="ignore"):
        sub = (x > 0) & (x < np.float32(1.17549435e-38))
        xs = np.where(sub, x * _pow2(23), x)
        e = np.where(sub, -23, 0).astype(np.int64)
        b = xs.view(np.uint32).astype(np.int64)
        e = e + (b >> 23) - 127
        b = (b & 0x007FFFFF) | 0x3F800000
        hi = b > SQRT2_BITS
        b = np.where(hi, b - (1 << 23), b)
        e = np.where(hi, e + 1, e)
        m = b.astype(np.uint32).view(np.float32)
        f = m - np.float32(1)
        s = f / (np.float32(2) + f)
        z = s * s
        r = np.full(x.shape, LOG_COEFFS[0], dtype=np.float32)
        for c in LOG_COEFFS[1:]:
            r = fma32(r, z, c)
        r = r * z
        l = fma32(s, r, s + s)
        ef = e.astype(np.float32)
        out = fma32(ef, LN2_HI, fma32(ef, LN2_LO, l))
        out = np.where(x == 0, np.float32(-np.inf), out)
        out = np.where(np.isposinf(x), x, out)
        out = np.where(np.isnan(x) | (x < 0), np.float32(np.nan), out)
        return canon(out)


def logprob(req):
    x = req.f32("logits")
    t = req.ints("targets")
    rows = np.arange(x.shape[0])
    with np.errstate(all="ignore"):
        # max.f32 from -Inf, NaN ignored; max(-0, +0) = +0
        m = np.fmax.reduce(x, axis=1, initial=-np.inf).astype(np.float32)
        poszero = ((x == 0) & ~np.signbit(x)).any(axis=1)
        m = np.where((m == 0) & poszero, np.float32(0), m)
        e = exp32(x - m[:, None])
        s = np.add.accumulate(e, axis=1, dtype=np.float32)[:, -1]  # ((e0+e1)+e2)+...
        lp = (x[rows, t] - m) - log32(s)
    return canon(lp)


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
        "logprob": bp.Op(logprob, schedule=LOGPROB_SCHEDULE,
                         about="numpy: the oracle's exp/log, sequential fp32 sum, exact"),
        "attn_prefill": bp.Op(attn_prefill, ulp_bound=ATTN_ULP_BOUND, about="numpy: float64 causal attention, GQA"),
        "attn_decode": bp.Op(attn_decode, ulp_bound=ATTN_ULP_BOUND, about="numpy: float64 attention over each request's cache"),
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
