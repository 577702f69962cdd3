#!/usr/bin/env python3
"""NumPy adapter for bitparity: the five ops, moe_route, moe_router and
quant_fp8 on the CPU, NumPy only.

usage: numpy_ops.py [OP] [--blas] [--drift] [--attn-tile N]
                    [--moe-tie lowest|highest] [--moe-tie-high-from N]
                    [--fp8-scaling per_token|per_tensor] [--fp8-format e4m3|e5m2]

    bitparity run --exec 'python3 adapters/numpy_ops.py rmsnorm'

What each op declares (hello frame):

  rmsnorm       exact: the oracle schedule "threads=1 vec=1 warp=butterfly
                cross=sequential out=(x*rstd)*w" bit for bit (a sequential
                fp32 sum of fma(x, x, acc), div.rn, sqrt.rn, (x*rstd)*w).
  gemm          exact: "splitk=1 combine=sequential" (acc = fma(x, w, acc)
                for k ascending from +0).
  gemm --blas   np.matmul in float32 (your BLAS: OpenBLAS, MKL, ...), not
                exact: ulp bound 2 in the output dtype.
  rmsnorm --drift
                a planted drift (a negative control for the exec route):
                the sum of squares runs backwards (hidden descending) when
                rows % 32 == 0, forwards otherwise; it claims batch
                invariance and an ulp bound of 2, so bitparity must find it
                under batch_invariance.
  logprob       exact: "threads=1 vec=1 warp=butterfly cross=sequential"
                (row max from -Inf, a sequential fp32 sum of the oracle's
                portable exp, its portable log, two sub.rn).
  attn_prefill  exact: "tile=64 splits=1", the oracle's flash-style online
  attn_decode   softmax (fma dot products, the portable exp, a rescale per
                tile of 64 KV tokens; decode combines its one split), GQA.
                Both read the layout (hello "layout": "true"): a prefill
                request's chunk_from computes only the chunk's queries
                (positions >= chunk_from; the rows below are NaN, not
                compared), each attending to K/V [0, i] in tiles counted
                from position 0, so its rows are the whole prompt's bit for
                bit; a decode request's page_size is accepted and ignored:
                there is no paged cache here, and the rows are the same
                whatever the page size.

  moe_route     exact: "tie=lowest sum=sequential" (--moe-tie highest:
                "tie=highest ..."), ops/moeroute's loop: the oracle's exp,
                a sequential fp32 denominator, top-k with the declared
                tie-break, the weights renormalised in rank order.
  moe_route --moe-tie-high-from N
                a planted drift (a control): declares the tie-break but
                breaks ties highest index first in batches of N tokens or
                more (drift-moe-route-tie-high-128's model).
  moe_router    exact: "split_k=1", the router GEMM x.w as one fp32 fma
                chain per logit, then moe_route's oracle.
  quant_fp8     exact: "scaling=per_token format=e4m3" (--fp8-scaling,
                --fp8-format), ops/quantfp8's loop; per_tensor scaling
                claims no invariance (a row depends on the batch's amax).

Exact ops emulate fp32 fused multiply-add: the product of two fp32 values is
exact in float64; the float64 sum is made round-to-odd (TwoSum error, one
ulp toward it when the last bit is even), which rounds correctly to fp32.
For bf16 and fp16 inputs whose products neither overflow nor underflow the
product is exact in fp32, so a plain fp32 add is the fma (fast path). NaN
results are the canonical NaN 0x7fffffff, as PTX fp32 arithmetic gives.

--attn-tile N: the attention ops rescale per tile of N KV tokens instead of
64 (schedule "tile=N splits=1"): a prefill with --attn-tile 48 against the
tile-64 decode is the seed's drift, a control for path scans (docs/scan.md).
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))
import bitparity_adapter as bp  # noqa: E402  (pip install ./adapters/python, or this checkout's copy)
from bitparity_adapter import moe  # noqa: E402

CANONICAL_NAN = np.array([0x7FFFFFFF], dtype=np.uint32).view(np.float32)[0]
RMSNORM_SCHEDULE = "threads=1 vec=1 warp=butterfly cross=sequential out=(x*rstd)*w"
GEMM_SCHEDULE = "splitk=1 combine=sequential"
LOGPROB_SCHEDULE = "threads=1 vec=1 warp=butterfly cross=sequential"



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


def rmsnorm_drift(req):
    """rmsnorm with a planted batch dependence: for rows % 32 == 0 the fp32
    sum of squares runs from the last column to the first."""
    x, w = req.f32("x"), req.f32("w")
    rows = x.shape[0]
    if rows % 32 == 0:
        x = x[:, ::-1]
    with np.errstate(all="ignore"):
        ss = np.zeros(rows, dtype=np.float32)
        for j in range(x.shape[1]):
            ss = fma32(x[:, j], x[:, j], ss)
        rstd = np.float32(1) / np.sqrt(ss / np.float32(x.shape[1]) + req.eps)
        if rows % 32 == 0:
            x = x[:, ::-1]
        return canon((x * rstd[:, None]) * w[None, :])


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


ATTN_TILE = 64
ATTN_SCHEDULE = "tile=%d splits=1" % ATTN_TILE


def _scale(d):
    """The oracle's softmax scale: div.rn(1, sqrt.rn(d)) in fp32."""
    return np.float32(1) / np.sqrt(np.float32(d))


def _max32(a, b):
    """PTX max.f32 elementwise: NaN loses to a number, max(-0, +0) = +0."""
    m = np.fmax(a, b)
    zero = (m == 0) & ((a == 0) & ~np.signbit(a) | (b == 0) & ~np.signbit(b))
    return np.where(zero, np.float32(0), m).astype(np.float32)


def _attend(q, k, v, grp, kvh, n, in_dtype, tile=ATTN_TILE):
    """The oracle's attendRange over KV tokens [0, n[r]) for each row r, in
    tiles of `tile` (ATTN_TILE; a divisor of it), vectorized over rows:

        m = -Inf, l = +0, acc = +0
        per tile: s[j] = fma-dot(q, k[j]) * scale; mt = max(m, s[j]...)
                  alpha = Exp32(m - mt); l *= alpha; acc *= alpha
                  for j ascending: p = Exp32(s[j] - mt); l += p; acc = fma(p, v[j], acc)
                  m = mt

    q is [R, D]; k, v are [G, Lp, KH, D] (Lp a multiple of the tile, zero
    padded); row r reads group grp[r] and kv head kvh[r]. Returns m, l, acc.
    Tokens past n[r] get score -Inf and value 0, which leave l and acc as
    they are (p = +0)."""
    R, D = q.shape
    scale = _scale(D)
    m = np.full(R, -np.inf, dtype=np.float32)
    l = np.zeros(R, dtype=np.float32)
    acc = np.zeros((R, D), dtype=np.float32)
    T = tile
    exact = products_exact(in_dtype, q, k)
    with np.errstate(all="ignore"):
        for t0 in range(0, int(n.max()) if R else 0, T):
            act = np.nonzero(n > t0)[0]
            idx = t0 + np.arange(T)
            kt = k[grp[act, None], idx[None, :], kvh[act, None]]  # [A, T, D]
            vt = v[grp[act, None], idx[None, :], kvh[act, None]]
            qa = q[act]
            if exact:  # products exact in fp32: a plain add is the fma
                prods = qa[:, None, :] * kt
                dot = np.add.accumulate(np.concatenate([np.zeros(prods.shape[:2] + (1,), np.float32), prods], axis=2),
                                        axis=2, dtype=np.float32)[..., -1]
            else:
                dot = np.zeros(kt.shape[:2], dtype=np.float32)
                for d in range(D):
                    dot = fma32(qa[:, None, d], kt[:, :, d], dot)
            sc = dot * scale
            valid = idx[None, :] < n[act, None]
            sc = np.where(valid, sc, np.float32(-np.inf)).astype(np.float32)
            ma = m[act]
            mt = ma
            for j in range(T):
                mt = _max32(mt, sc[:, j])
            alpha = exp32(ma - mt)
            la = l[act] * alpha
            aa = acc[act] * alpha[:, None]
            p = exp32(sc - mt[:, None])  # [A, T]; +0 where invalid
            la = np.add.accumulate(np.concatenate([la[:, None], p], axis=1), axis=1, dtype=np.float32)[:, -1]
            for j in range(T):
                aa = fma32(p[:, j, None], vt[:, j, :], aa)
            m[act], l[act], acc[act] = mt, la, aa
    return m, l, acc


def _pad_tokens(x, lp):
    """Zero-pad axis 1 of x to lp."""
    out = np.zeros((x.shape[0], lp) + x.shape[2:], dtype=np.float32)
    out[:, :x.shape[1]] = x
    return out


def attn_prefill(req, tile=None):
    """The rows at positions >= req.chunk_from (all for a whole prompt),
    each over K/V [0, i] in tiles of `tile` (ATTN_TILE) from position 0;
    the rows below chunk_from are NaN."""
    q, k, v = req.f32("q"), req.f32("k"), req.f32("v")
    S, L, H, D = q.shape
    group = H // k.shape[2]
    tile = tile or ATTN_TILE
    lp = -(-L // ATTN_TILE) * ATTN_TILE
    rows = np.arange(S * L * H)
    h, i, s = rows % H, (rows // H) % L, rows // H // L
    chunk = np.nonzero(i >= req.chunk_from)[0]
    y = np.full((S * L * H, D), np.nan, dtype=np.float32)
    m, l, acc = _attend(q.reshape(-1, D)[chunk], _pad_tokens(k, lp), _pad_tokens(v, lp), s[chunk], h[chunk] // group,
                        i[chunk] + 1, req.in_dtype, tile)
    with np.errstate(all="ignore"):
        y[chunk] = acc / l[:, None]
    return canon(y)


def attn_decode(req):
    q, k, v = req.f32("q"), req.f32("k"), req.f32("v")  # [B, H, D], [T, KH, D]
    lens = req.ints("kv_lens")
    B, H, D = q.shape
    KH = k.shape[1]
    lp = max(1, -(-int(lens.max()) // ATTN_TILE)) * ATTN_TILE if B else ATTN_TILE
    kp = np.zeros((B, lp, KH, D), dtype=np.float32)
    vp = np.zeros((B, lp, KH, D), dtype=np.float32)
    off = 0
    for b, n in enumerate(lens):
        kp[b, :n], vp[b, :n] = k[off:off + n], v[off:off + n]
        off += n
    rows = np.arange(B * H)
    b, h = rows // H, rows % H
    m, l, acc = _attend(q.reshape(-1, D), kp, vp, b, h // (H // KH), lens[b], req.in_dtype)
    with np.errstate(all="ignore"):
        # one split: w = Exp32(m - M) with M = m; den = fma(w, l, +0); num = fma(w, acc, +0)
        w = exp32(m - m)
        den = fma32(w, l, np.float32(0))
        num = fma32(w[:, None], acc, np.float32(0))
        return canon(num / den[:, None])


# ---- the op packages' ops: moe_route and quant_fp8 (docs/moe.md) ----------

def moe_route(logits, top_k, tie="lowest", tie_high_from=0):
    """bitparity's moe_route oracle (ops/moeroute), bit for bit, on logits
    [tokens, experts] (fp32, or bf16 held in fp32): m = the row max
    (max.f32, NaN skipped), p = Exp32(x - m) (the oracle's exp), the
    denominator S = ((p[0] + p[1]) + ...) + p[E-1] in fp32, q = p / S; the
    top k of q in rank order with the declared tie-break (moe.select: a
    larger q first, among equal q the lowest index first, or the highest;
    NaN last); the weights q[ids] renormalised by their sum in rank order
    (moe.renormalise). NaNs are the canonical NaN. Returns expert_ids
    [tokens, k] int32 and weights [tokens, k] fp32.

    tie_high_from > 0 plants a drift (a control): from that many tokens on,
    ties go to the highest index, whatever the declared tie-break."""
    x = np.asarray(logits, dtype=np.float32)
    if tie_high_from and x.shape[0] >= tie_high_from:
        tie = "highest"
    with np.errstate(all="ignore"):
        m = np.fmax.reduce(x, axis=1)
        p = exp32((x - m[:, None]).astype(np.float32))
        s = p[:, 0].copy()
        for e in range(1, p.shape[1]):
            s = (s + p[:, e]).astype(np.float32)
        q = canon((p / s[:, None]).astype(np.float32))
        ids = moe.select(q, top_k, tie)
        w = canon(moe.renormalise(np.take_along_axis(q, ids, axis=1)))
    return ids.astype(np.int32), w


def moe_router(x, w, top_k):
    """bitparity's moe_router oracle (ops/moerouter) at split_k=1, bit for
    bit: the logits l[t, e] = fma(x[t, h], w[h, e], acc) for h ascending
    from +0 (the GEMM's one chain), then moe_route (tie=lowest
    sum=sequential). x [tokens, hidden], w [hidden, experts]."""
    x, w = np.asarray(x, dtype=np.float32), np.asarray(w, dtype=np.float32)
    acc = np.zeros((x.shape[0], w.shape[1]), dtype=np.float32)
    with np.errstate(all="ignore"):
        for h in range(x.shape[1]):
            acc = fma32(x[:, h, None], w[None, h, :], acc)
    return moe_route(canon(acc), top_k)


FP8 = {"e4m3": (3, 7, 448.0), "e5m2": (2, 15, 57344.0)}


def fp8_encode(y, fmt):
    """quantfp8.Encode elementwise: fp32 y to fp8 codes (uint8), round to
    nearest even with saturation at the largest finite value, NaN 0x7f,
    zero keeping its sign; exact in float64 (frexp, ldexp, rint)."""
    mant, bias, fmax = FP8[fmt]
    y = np.asarray(y, dtype=np.float64)
    sign = np.signbit(y).astype(np.uint8) << np.uint8(7)
    a = np.abs(y)
    emin = 1 - bias
    with np.errstate(all="ignore"):
        _, ex = np.frexp(a)
        e = np.where(a >= np.ldexp(1.0, emin), ex - 1, emin)
        n = np.rint(np.ldexp(a, mant - e))
        v = np.minimum(np.ldexp(n, e - mant), fmax)
        _, ev = np.frexp(v)
        ev = ev - 1
        frac = np.ldexp(v, -ev) - 1
        normal = ((ev + bias) << mant) | np.ldexp(frac, mant).astype(np.int64)
        sub = v < np.ldexp(1.0, emin)
        bits = np.where(sub, np.where(np.isfinite(n), n, 0).astype(np.int64), normal)
    return np.where(np.isnan(y), 0x7F, sign | bits.astype(np.uint8)).astype(np.uint8)


def quant_fp8(x, scaling="per_token", fmt="e4m3"):
    """bitparity's quant_fp8 oracle (ops/quantfp8), bit for bit, on x
    [tokens, hidden]: amax = max |x| over the row (per_token) or over the
    batch (per_tensor), NaN skipped, from +0; scale = amax / fmax in fp32
    (448 e4m3, 57344 e5m2), 1 when amax is 0; q = fp8_encode(x / scale).
    Returns q [tokens, hidden] uint8 and scale [tokens, 1] fp32."""
    x = np.asarray(x, dtype=np.float32)
    a = np.abs(x)
    a = np.where(np.isnan(a), np.float32(0), a)
    amax = a.max(axis=1) if x.shape[1] else np.zeros(x.shape[0], np.float32)
    if scaling == "per_tensor":
        amax = np.full(x.shape[0], amax.max() if amax.size else 0, dtype=np.float32)
    with np.errstate(all="ignore"):
        scale = np.where(amax == 0, np.float32(1), (amax / np.float32(FP8[fmt][2])).astype(np.float32)).astype(np.float32)
        q = fp8_encode((x / scale[:, None]).astype(np.float32), fmt)
    return q, scale[:, None]


def str_flag(argv, flag, default, choices):
    """The value of --flag V in argv (removed), one of choices."""
    if flag not in argv:
        return default
    i = argv.index(flag)
    v = argv[i + 1] if i + 1 < len(argv) else None
    if v not in choices:
        sys.stderr.write("%s: %s wants one of %s\n" % (os.path.basename(sys.argv[0]), flag, ", ".join(choices)))
        raise SystemExit(2)
    del argv[i:i + 2]
    return v


def int_flag(argv, flag, default, least):
    """The number after flag in argv, both removed from argv, or default
    where argv has no flag. Where what follows flag is not a number >=
    least it says so on stderr, naming the script, and exits 2."""
    if flag not in argv:
        return default
    i = argv.index(flag)
    try:
        v = int(argv[i + 1])
    except (IndexError, ValueError):
        v = None
    if v is None or v < least:
        sys.stderr.write("%s: %s wants a number >= %d\n" % (os.path.basename(sys.argv[0]), flag, least))
        raise SystemExit(2)
    del argv[i:i + 2]
    return v


def main(argv):
    global ATTN_TILE, ATTN_SCHEDULE
    blas = "--blas" in argv
    drift = "--drift" in argv
    argv = [a for a in argv if a not in ("--blas", "--drift")]
    ATTN_TILE = int_flag(argv, "--attn-tile", ATTN_TILE, 1)
    ATTN_SCHEDULE = "tile=%d splits=1" % ATTN_TILE
    tie = str_flag(argv, "--moe-tie", "lowest", moe.TIES)
    tie_from = int_flag(argv, "--moe-tie-high-from", 0, 1)
    scaling = str_flag(argv, "--fp8-scaling", "per_token", ("per_token", "per_tensor"))
    fmt = str_flag(argv, "--fp8-format", "e4m3", tuple(FP8))

    def op(fn, **kw):
        return bp.Op(fn, request=True, **kw)

    ops = {
        "rmsnorm": op(rmsnorm, schedule=RMSNORM_SCHEDULE, about="numpy: sequential fp32 fma sum, exact"),
        "gemm": op(gemm, schedule=GEMM_SCHEDULE, about="numpy: sequential fp32 fma over k, exact"),
        "logprob": op(logprob, schedule=LOGPROB_SCHEDULE,
                      about="numpy: the oracle's exp/log, sequential fp32 sum, exact"),
        "attn_prefill": op(attn_prefill, schedule=ATTN_SCHEDULE, layout=True,
                           about="numpy: the oracle's tiled online softmax, exact; a chunk's rows are the whole prompt's"),
        "attn_decode": op(attn_decode, schedule=ATTN_SCHEDULE, layout=True,
                          about="numpy: the oracle's tiled online softmax, one split, exact; no paged cache: page_size is ignored"),
        "moe_route": bp.Op(lambda logits, top_k: moe_route(logits, top_k, tie, tie_from), schedule="tie=%s sum=sequential" % tie,
                           about="numpy: the oracle's softmax (Exp32, sequential sum), top-k tie=%s, renormalised, exact" % tie),
        "moe_router": bp.Op(moe_router, schedule="split_k=1",
                            about="numpy: the router GEMM as one fp32 fma chain, then moe_route's oracle, exact"),
        "quant_fp8": bp.Op(lambda x: quant_fp8(x, scaling, fmt), schedule="scaling=%s format=%s" % (scaling, fmt),
                           invariant=scaling == "per_token",
                           about="numpy: %s %s scaling, exact" % (scaling, fmt)),
    }
    name = "numpy"
    if ATTN_TILE != 64:
        name = "numpy-tile%d" % ATTN_TILE
    if blas:
        name = "numpy-blas"
        ops["gemm"] = op(gemm_blas, ulp_bound=2, about="numpy: np.matmul float32 (BLAS %s)" % blas_name())
    if scaling != "per_token" or fmt != "e4m3":
        name += "-%s-%s" % (scaling.replace("_", "-"), fmt)
    if tie != "lowest":
        name += "-tie-" + tie
    if tie_from:
        name = "numpy-drift"
        ops["moe_route"].about = "numpy: planted drift, ties to the highest index from %d tokens on (declares tie=%s)" % (tie_from, tie)
    if drift:
        name = "numpy-drift"
        ops["rmsnorm"] = op(rmsnorm_drift, ulp_bound=2,
                            about="numpy: planted drift, the sum of squares backwards when rows % 32 == 0")
    return bp.serve(ops, name=name, argv=argv)


def blas_name():
    try:
        cfg = np.show_config(mode="dicts")  # numpy >= 1.25
        return cfg["Build Dependencies"]["blas"]["name"]
    except Exception:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
