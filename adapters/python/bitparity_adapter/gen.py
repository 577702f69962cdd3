"""The kit's twin of input generator version 2 (docs/corpus.md, "How a
seed becomes values"; values/doc.go states the derivation, and
gpu/kernels/gen.cuh is its C twin): rows of a seeded tensor made where the
adapter computes, bit for bit the values Go makes for the same (seed,
tensor id, dist, scale, dtype) and row keys. A hold frame with gen="2"
carries this recipe instead of the rows (docs/protocol.md, "Generated
holds").

Every value is a pure function of (seed, tensor, row key, column): the
splitmix64 draws

    d(k) = mix(mix(mix(seed ^ tensor*PHI) ^ key) + k*PHI)

and only integer operations and correctly rounded float64 + - * / sqrt,
each its own array operation (no contraction into a fused multiply-add).
NumPy computes in uint64 (wrapping); torch, which has no uint64, in int64
with the same bits: + and * wrap alike, and the right shifts and the
modulo below are made logical (unsigned) by hand. The value is rounded to
float32, then to the dtype, as Go rounds it.
"""

import numpy as np

from . import gentable

VERSION = 2
PHI = 0x9E3779B97F4A7C15
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB
_MASK = (1 << 64) - 1

# DISTS are the distributions of the recipe (values.DistCode); boundary and
# sensitive rows are chosen on the host and travel as rows.
DISTS = ("normal", "heavy", "outlier", "constant", "signed_zero", "subnormal", "near_overflow", "ties")

# SMALLEST_NORMAL and MAX_FINITE of each dtype (oracle.SmallestNormal,
# oracle.MaxFinite), as float64.
SMALLEST_NORMAL = {"bf16": 2.0 ** -126, "fp16": 2.0 ** -14, "fp32": 2.0 ** -126}
MAX_FINITE = {"bf16": float.fromhex("0x1.fep+127"), "fp16": 65504.0, "fp32": float.fromhex("0x1.fffffep+127")}
_TIES = (2.0 ** -5, 2.0 ** -4, 2.0 ** -3, 2.0 ** -2, 2.0 ** -1)

# CHUNK is the values made at once: the temporaries (a few uint64 and
# float64 arrays of it) stay a few MiB. GPU_CHUNK is the same on a GPU,
# where every chunk costs the host some sixty array calls whatever its
# size: 32 MiB temporaries make an 8192 x 4096 tensor in 8 chunks
# instead of 128 (in 128, a normal draw took 0.52 s of the adapter's
# profile on the H200 host).
CHUNK = 1 << 18
GPU_CHUNK = 1 << 22

_table = None


def table():
    """The sampler's nodes, float64 [OCTAVES * 33] (octave e, node j at
    e*33 + j)."""
    global _table
    if _table is None:
        _table = np.array([float.fromhex(h) for h in gentable.NODES], dtype=np.float64)
    return _table


class _NumPy:
    """uint64 arithmetic on NumPy arrays."""

    def __init__(self):
        self.table = table()
        self.chunk = CHUNK

    def const(self, c):
        return np.uint64(c & _MASK)

    def shr(self, x, k):
        return x >> np.uint64(k)

    def shl(self, x, k):
        return x << np.uint64(k)

    def shlv(self, x, k):
        """x << k for an array k of shifts below 64."""
        return x << k.astype(np.uint64)

    def mod(self, x, n):
        return x % np.uint64(n)

    def f64(self, x):
        """x (below 2**53) as float64, exactly."""
        return x.astype(np.float64)

    def ints(self, x):
        """x (small) as int64."""
        return x.astype(np.int64)

    def arange(self, lo, hi):
        return np.arange(lo, hi, dtype=np.uint64)

    def where(self, c, a, b):
        return np.where(c, a, b)

    def take(self, idx):
        return self.table[idx]

    def lut(self, vals, idx):
        return np.array(vals, dtype=np.float64)[idx]

    def sqrt(self, v):
        return np.sqrt(v)

    def f32(self, v):
        return v.astype(np.float32)

    def bits(self, f, dtype):
        """float32 values f rounded to dtype, as their bits (uint16 or
        uint32)."""
        if dtype == "bf16":
            from .dtypes import f32_to_bf16
            return f32_to_bf16(f)
        if dtype == "fp16":
            return f.astype(np.float16).view(np.uint16)
        return f.view(np.uint32)

    def widen(self, b, dtype):
        """The float64 value of dtype bits b."""
        if dtype == "bf16":
            return (b.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
        if dtype == "fp16":
            return b.view(np.float16).astype(np.float64)
        return b.view(np.float32).astype(np.float64)

    def full_bits(self, shape, v, dtype):
        return np.full(shape, v, dtype=np.uint32 if dtype == "fp32" else np.uint16)

    def empty(self, rows, cols, dtype):
        return np.empty((rows, cols), dtype=np.uint32 if dtype == "fp32" else np.uint16)

    def keys(self, keys):
        return np.asarray(keys, dtype=np.uint64).reshape(-1)


class _Torch:
    """uint64 arithmetic emulated with torch int64 tensors on a device:
    the same bits, + and * wrapping mod 2**64, shifts and modulo made
    unsigned."""

    def __init__(self, device):
        import torch
        self.torch, self.device = torch, device
        self.table = torch.from_numpy(table()).to(device)
        self.chunk = CHUNK if torch.device(device).type == "cpu" else GPU_CHUNK

    def const(self, c):
        c &= _MASK
        return c - (1 << 64) if c >= 1 << 63 else c

    def shr(self, x, k):
        if k == 0:
            return x
        return (x >> k) & ((1 << (64 - k)) - 1)

    def shl(self, x, k):
        return x << k

    def shlv(self, x, k):
        return x << k

    def mod(self, x, n):
        # x unsigned = 2*(x >>> 1) + (x & 1); both parts are non-negative int64
        return ((self.shr(x, 1) % n) * 2 + (x & 1)) % n

    def f64(self, x):
        return x.to(self.torch.float64)

    def ints(self, x):
        return x

    def arange(self, lo, hi):
        return self.torch.arange(lo, hi, dtype=self.torch.int64, device=self.device)

    def where(self, c, a, b):
        t = self.torch
        if not isinstance(a, t.Tensor):
            a = t.tensor(a, dtype=b.dtype, device=self.device)
        if not isinstance(b, t.Tensor):
            b = t.tensor(b, dtype=a.dtype, device=self.device)
        return t.where(c, a, b)

    def take(self, idx):
        return self.table[idx]

    def lut(self, vals, idx):
        return self.torch.tensor(vals, dtype=self.torch.float64, device=self.device)[idx]

    def sqrt(self, v):
        return v.sqrt()

    def f32(self, v):
        return v.to(self.torch.float32)

    def bits(self, f, dtype):
        t = self.torch
        if dtype == "bf16":
            return f.to(t.bfloat16).view(t.int16)
        if dtype == "fp16":
            return f.to(t.float16).view(t.int16)
        return f.view(t.int32)

    def widen(self, b, dtype):
        t = self.torch
        if dtype == "bf16":
            return b.view(t.bfloat16).to(t.float64)
        if dtype == "fp16":
            return b.view(t.float16).to(t.float64)
        return b.view(t.float32).to(t.float64)

    def full_bits(self, shape, v, dtype):
        t = self.torch
        it = t.int32 if dtype == "fp32" else t.int16
        if v >= 1 << (31 if dtype == "fp32" else 15):
            v -= 1 << (32 if dtype == "fp32" else 16)
        return t.full(shape, v, dtype=it, device=self.device)

    def empty(self, rows, cols, dtype):
        t = self.torch
        return t.empty((rows, cols), dtype=t.int32 if dtype == "fp32" else t.int16, device=self.device)

    def keys(self, keys):
        k = np.asarray(keys, dtype=np.uint64).reshape(-1).view(np.int64)
        return self.torch.from_numpy(k.copy()).to(self.device)


def _mix(a, x):
    with np.errstate(over="ignore"):
        x = x + a.const(PHI)
        x = (x ^ a.shr(x, 30)) * a.const(_M1)
        x = (x ^ a.shr(x, 27)) * a.const(_M2)
        return x ^ a.shr(x, 31)


def _draw(a, s, k):
    """d(k) of row states s (broadcast with column draws k)."""
    with np.errstate(over="ignore"):
        if isinstance(k, int):
            return _mix(a, s + a.const(k * PHI))
        return _mix(a, s + k * a.const(PHI))


def _clz(a, x):
    """The leading zero bits of each 64-bit x (64 for 0)."""
    n = a.ints(x & a.const(0))
    for s in (32, 16, 8, 4, 2, 1):
        top = a.shr(x, 64 - s) == 0
        n = n + top * s
        x = a.where(top, a.shl(x, s), x)
    return n + (a.shr(x, 63) == 0) * 1


def _normal(a, u):
    """N(u), the inverse-CDF sampler (gen_normal)."""
    r = u & a.const(0x7FFFFFFFFFFFFFFF)
    e = _clz(a, r) - 1
    e = e.clip(max=gentable.OCTAVES - 1)
    f = a.shlv(r, e + 2)
    j = a.ints(a.shr(f, 64 - gentable.CELL_BITS))
    t = a.f64(a.shr(a.shl(f, gentable.CELL_BITS), 11)) * 2.0 ** -53
    at = e * ((1 << gentable.CELL_BITS) + 1) + j
    lo = a.take(at)
    z = lo + t * (a.take(at + 1) - lo)
    return a.where(a.shr(u, 63) == 1, -z, z)


def _values(a, dist, dtype, sigma, s, col, n):
    """The bits of columns col (a row vector) of rows with states s (a
    column vector), rows of n values (gen_value)."""
    if dist == "heavy":
        c4 = col * 4
        nn, x, y, z = (_normal(a, _draw(a, s, c4 + k)) for k in range(4))
        ss = x * x + y * y
        ss = ss + z * z
        ss = ss / 3.0 + 1e-12
        return a.bits(a.f32(nn / a.sqrt(ss) * sigma), dtype)
    if dist == "outlier":
        b = a.bits(a.f32(_normal(a, _draw(a, s, col)) * sigma), dtype)
        big = a.bits(a.f32(a.widen(b, dtype) * 1000.0), dtype)
        at = a.mod(_draw(a, s, n), n)
        return a.where(at == col, big, b)
    if dist == "constant":
        return a.bits(a.f32(_normal(a, _draw(a, s, 0)) * sigma), dtype)  # [rows, 1]: every column
    if dist == "signed_zero":
        c2 = col * 2
        cls = a.mod(_draw(a, s, c2), 3)
        b = a.bits(a.f32(_normal(a, _draw(a, s, c2 + 1)) * sigma), dtype)
        neg = a.full_bits((1,), 0x80000000 if dtype == "fp32" else 0x8000, dtype)
        zero = a.full_bits((1,), 0, dtype)
        return a.where(cls == 0, zero, a.where(cls == 1, neg, b))
    if dist == "subnormal":
        u = a.f64(a.shr(_draw(a, s, col), 11)) * 2.0 ** -53
        return a.bits(a.f32((u * 2.0 + -1.0) * SMALLEST_NORMAL[dtype]), dtype)
    if dist == "near_overflow":
        h = _draw(a, s, col)
        u = a.f64(a.shr(a.shl(h, 1), 11)) * 2.0 ** -53
        v = (0.75 * u + 0.25) * MAX_FINITE[dtype]
        return a.bits(a.f32(a.where(a.shr(h, 63) == 1, -v, v)), dtype)
    if dist == "ties":
        h = _draw(a, s, col)
        m = a.ints(a.mod(h & a.const(0xFFFFFFFF), 33)) - 16
        p = a.ints(a.mod(a.shr(h, 32), 5))
        v = a.f64(m) * a.lut(_TIES, p)
        return a.bits(a.f32(v * sigma), dtype)
    return a.bits(a.f32(_normal(a, _draw(a, s, col)) * sigma), dtype)


def _states(a, seed, tensor, keys):
    """The row states of keys (gen_state)."""
    with np.errstate(over="ignore"):
        base = _mix(a, a.keys([seed]) ^ (a.keys([tensor]) * a.const(PHI)))
        return _mix(a, base ^ a.keys(keys))


def check(dist, dtype):
    if dist not in DISTS:
        raise ValueError("generator version 2 in the kit: dist %r (want one of %s)" % (dist, ", ".join(DISTS)))
    if dtype not in SMALLEST_NORMAL:
        raise ValueError("generator version 2 in the kit: dtype %r (want bf16, fp16 or fp32)" % dtype)


def rows(seed, tensor, dist, scale, dtype, keys, cols, device=None):
    """The bits [len(keys), cols] of the rows with keys of a tensor of
    version 2: NumPy uint16 (bf16, fp16) or uint32 (fp32) when device is
    None, else a torch int16 or int32 tensor made on device."""
    check(dist, dtype)
    a = _NumPy() if device is None else _Torch(device)
    dist = "normal" if dist == "" else dist
    s_all = _states(a, seed, tensor, keys)
    n = len(keys)
    out = a.empty(n, cols, dtype)
    if n == 0 or cols == 0:
        return out
    step = max(1, a.chunk // cols)
    col = a.arange(0, cols).reshape(1, cols)
    for lo in range(0, n, step):
        s = s_all[lo:lo + step].reshape(-1, 1)
        out[lo:lo + step] = _values(a, dist, dtype, float(scale), s, col, cols)
    return out


# ---- generated holds (docs/protocol.md, "Generated holds") ----------------

# ENV_GEN names the environment variable that sets the hello's scan_gen
# field: "2" says it, "none" withholds it (the harness then sends a held
# batch's rows through the pipe, as before the field existed); unset, the
# kit says it for torch on a GPU only, where making the rows costs a few
# milliseconds against tens of MiB through the pipe. On a CPU Go makes
# them faster than NumPy does (8192 x 4096 bf16: NumPy 29 s, torch on the
# CPU 13 s, on this project's 2-core machine).
ENV_GEN = "BITPARITY_SCAN_GEN"

_WIRE = {"bf16": ("BF16", np.uint16), "fp16": ("F16", np.float16), "fp32": ("F32", np.float32)}


def field(arrays):
    """The hello's scan_gen field for an adapter of arrays (serve.Arrays):
    VERSION or "" (ENV_GEN)."""
    import os
    v = os.environ.get(ENV_GEN, "").strip()
    if v == "none":
        return ""
    if v == str(VERSION) or (arrays.kind == "torch" and arrays.device.type != "cpu"):
        return str(VERSION)
    if v:
        raise ValueError("%s=%r: want %d or none" % (ENV_GEN, v, VERSION))
    return ""


def held_tensors(meta, tensors, device=None):
    """The tensors of a hold frame with every tensor its recipe names made
    (gen="2"): returns (tensors, made), tensors with each generated one as
    (wire, NumPy array of the wire dtype) when device is None, and made
    {name: torch tensor of the dtype, on device} otherwise (tensors then
    hold the same torch tensor). A frame without gen is returned as it
    is. Fields: gen_seed, gen_tensors (names), and for each name
    gen_NAME_id, _dist, _scale, _dtype, _shape ("rows cols"); row i is
    keyed i, or by the I64 tensor NAME_keys [rows] when the frame has it."""
    g = meta.get("gen", "")
    if g == "":
        return tensors, {}
    if g != str(VERSION):
        raise ValueError("hold: gen=%r (this adapter makes generator version %d)" % (g, VERSION))
    tensors = dict(tensors)
    made = {}
    try:
        seed = int(meta["gen_seed"])
        names = meta["gen_tensors"].split()
    except (KeyError, ValueError) as e:
        raise ValueError("hold: gen=%s without a valid gen_seed and gen_tensors: %s" % (g, e))
    for n in names:
        p = "gen_%s_" % n
        try:
            tid, dist, scale, dtype = int(meta[p + "id"]), meta[p + "dist"], float(meta[p + "scale"]), meta[p + "dtype"]
            nrows, cols = (int(v) for v in meta[p + "shape"].split())
        except (KeyError, ValueError) as e:
            raise ValueError("hold: the recipe of tensor %r: %s" % (n, e))
        if n in tensors:
            raise ValueError("hold: tensor %r both sent and generated" % n)
        if n + "_keys" in tensors:
            keys = tensors.pop(n + "_keys")[1].astype(np.int64).view(np.uint64)
            if len(keys) != nrows:
                raise ValueError("hold: %d keys for the %d rows of tensor %r" % (len(keys), nrows, n))
        else:
            keys = np.arange(nrows, dtype=np.uint64)
        wire, host = _WIRE.get(dtype, (None, None))
        if wire is None:
            raise ValueError("hold: tensor %r of dtype %r (want bf16, fp16 or fp32)" % (n, dtype))
        b = rows(seed, tid, dist, scale, dtype, keys, cols, device=device)
        if device is None:
            tensors[n] = (wire, b.view(host))
        else:
            import torch
            t = b.view({"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[dtype])
            made[n] = t
            tensors[n] = (wire, t)
    return tensors, made
