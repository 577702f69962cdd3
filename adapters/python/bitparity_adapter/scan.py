"""The scan frames of the process protocol (docs/protocol.md, "Scans").

A scan holds the largest batch once ("hold") and then answers steps on
it ("step"): a batch made of some of the held items, answered with one
digest per output row instead of the rows themselves; full rows only for
the positions the harness names (the witnesses of a differing value).

The digest of a row of words w_0 .. w_{n-1} (the unsigned integers of the
row's wire bits: u16 for BF16 and F16, u32 for F32) is

    D(w) = sum over j of (w_j + 1) * M**(j + 1)   mod 2**64,
    M = 0x9E3779B97F4A7C15

sent as the I64 with the same bits. Go recomputes it (fuzz/external,
RowDigest). Rows that differ in one word always differ in D (M is odd).
"""

import numpy as np

from . import dtypes, frames
from .request import OP_INPUTS, Request

SCAN_VERSION = 1
M = 0x9E3779B97F4A7C15
MASK = (1 << 64) - 1
_powers = {}


def powers(n):
    """M**(j+1) mod 2**64 for j < n, as uint64."""
    p = _powers.get(n)
    if p is None:
        p = np.empty(n, dtype=np.uint64)
        x = 1
        for j in range(n):
            x = (x * M) & MASK
            p[j] = x
        _powers[n] = p
    return p


def digest_rows(words):
    """D of each row of a 2-D array of unsigned wire words (uint16 or
    uint32), as int64."""
    rows, n = words.shape
    out = np.empty(rows, dtype=np.uint64)
    if n == 0:
        out[:] = 0
        return out.view(np.int64)
    p = powers(n)
    # sum (w_j + 1) M^(j+1) = w . p + sum(p), in uint64 arithmetic (mod 2^64)
    with np.errstate(over="ignore"):
        ps = p.sum(dtype=np.uint64)
        step = max(1, (1 << 22) // n)
        for lo in range(0, rows, step):
            out[lo:lo + step] = (words[lo:lo + step].astype(np.uint64) @ p) + ps
    return out.view(np.int64)


def torch_digest_rows(y):
    """D of each row of a 2-D torch tensor (bfloat16, float16 or float32),
    computed where the tensor is (int64 arithmetic wraps mod 2**64), as a
    NumPy int64 array."""
    return _torch_digests(y).cpu().numpy()


def _torch_digests(y):
    """torch_digest_rows, left on the tensor's device."""
    import torch
    if y.dtype in (torch.bfloat16, torch.float16):
        w = y.contiguous().view(torch.int16).to(torch.int64) & 0xFFFF
    else:
        w = y.contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    n = w.shape[1]
    if n == 0:
        return torch.zeros(w.shape[0], dtype=torch.int64, device=w.device)
    ph = powers(n)
    with np.errstate(over="ignore"):
        ps = int(np.array([ph.sum(dtype=np.uint64)]).view(np.int64)[0])
    p = torch.from_numpy(ph.view(np.int64)).to(w.device)
    # sum (w_j + 1) M^(j+1) = w . p + sum(p), int64 arithmetic wrapping mod 2^64
    return (w * p).sum(dim=1) + ps


_TORCH_WIRE = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


def _is_torch(y):
    return type(y).__module__.startswith("torch")


def items_of(op, t):
    """The number of items of a batch of tensors t (wire, array): rows
    (rmsnorm, gemm, logprob), sequences (prefill), requests (decode)."""
    first = {"rmsnorm": "x", "gemm": "x", "logprob": "logits", "attn_prefill": "q", "attn_decode": "q"}[op]
    return t[first][1].shape[0]


def gather(op, t, ids):
    """The tensors of the batch whose item i is held item ids[i]."""
    ids = np.asarray(ids, dtype=np.int64)
    if op in ("rmsnorm", "gemm"):
        return {"x": (t["x"][0], t["x"][1][ids]), "w": t["w"]}
    if op == "logprob":
        return {"logits": (t["logits"][0], t["logits"][1][ids]), "targets": (t["targets"][0], t["targets"][1][ids])}
    if op == "attn_prefill":
        return {n: (t[n][0], t[n][1][ids]) for n in ("q", "k", "v")}
    tok = decode_tokens(t["kv_lens"][1], ids)
    return {"q": (t["q"][0], t["q"][1][ids]), "k": (t["k"][0], t["k"][1][tok]), "v": (t["v"][0], t["v"][1][tok]),
            "kv_lens": (t["kv_lens"][0], t["kv_lens"][1][ids])}


def decode_tokens(lens, ids):
    """The cache rows of held decode requests ids, one request after
    another."""
    lens = np.asarray(lens, dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(lens)[:-1]])
    if len(ids) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate([np.arange(start[i], start[i] + lens[i], dtype=np.int64) for i in ids])


class Held:
    """The batch of a hold frame, and how its steps run."""

    def __init__(self, op, o, meta, tensors, arrays):
        self.op, self.o, self.meta, self.t, self.arrays = op, o, meta, tensors, arrays
        self.items = items_of(op, tensors)
        self.dev = None
        if not o.request and arrays.kind != "numpy":
            # array functions on a device: the inputs go there once.
            self.dev = {n: arrays.convert(w, a) for n, (w, a) in tensors.items()}

    def check(self, ids):
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        if ids.size and (ids.min() < 0 or ids.max() >= self.items):
            raise ValueError("step: item ids outside the %d held items" % self.items)
        return ids

    def run(self, ids):
        """The result of the op on the batch of held items ids: (req, y, taps)."""
        req = Request(dict(self.meta, frame="request"), gather(self.op, self.t, ids))
        if self.dev is None:
            from .serve import call
            res = call(self.op, self.o, req, self.arrays)
        else:
            res = self.o.fn(*self.device_args(ids))
        taps = None
        if isinstance(res, tuple):
            if len(res) != 2:
                raise TypeError("the op returned a tuple of %d values: want y or (y, taps)" % len(res))
            res, taps = res
        return req, res, taps

    def device_args(self, ids):
        op, d, arrays = self.op, self.dev, self.arrays
        if op == "attn_decode":
            tok = decode_tokens(self.t["kv_lens"][1], ids)
            sel = {"q": ids, "k": tok, "v": tok, "kv_lens": ids}
        elif op in ("rmsnorm", "gemm"):
            sel = {"x": ids}
        else:
            sel = {n: ids for n in OP_INPUTS[op]}
        args = []
        for n in OP_INPUTS[op]:
            a = d[n]
            if n in sel:
                a = a[_index(arrays, sel[n])]
            args.append(a)
        if op == "rmsnorm":
            eps = Request(self.meta, {}).eps
            args.append(float(eps))
        return args

    def step(self, ids, each, fetch, sizes=None):
        """The reply tensors of a step: digests I64 [rows, 2] (y, taps), and
        y and taps of the rows fetch names; and the taps' width. The step's
        batches: ids; each id alone (each); or with sizes, the prefixes of
        sizes[k] held items, one after another."""
        if sizes is not None:
            parts = [np.arange(int(n), dtype=np.int64) for n in sizes]
        else:
            parts = [[i] for i in ids] if each else [ids]
        dig, ys, tps, dev = [], [], [], {}
        tap_cols = 0
        for k, p in enumerate(parts):
            req, y, taps = self.run(p)
            rows, cols = req.rows(), req.cols()
            d = np.zeros((rows, 2), dtype=np.int64)
            wire = dtypes.WIRE[req.out_dtype]
            if _is_torch(y) and str(y.dtype) == "torch." + _TORCH_WIRE[req.out_dtype] and y.numel() == rows * cols:
                yd = y.reshape(rows, cols)
                dev[k] = _torch_digests(yd)  # one copy to the host for the whole step, below
                yh = None
            else:
                yd = None
                yh = _wire_rows(y, req.out_dtype, wire, rows, cols)
                d[:, 0] = digest_rows(yh.view(_UINT[wire]))
            th = None
            if taps is not None:
                th = dtypes.to_f32(taps)
                if th.size % max(rows, 1):
                    raise ValueError("taps of shape %s do not split into %d rows" % (list(th.shape), rows))
                th = th.reshape(rows, -1)
                tap_cols = th.shape[1]
                d[:, 1] = digest_rows(th.view(np.uint32))
            dig.append(d)
            if fetch is not None:
                if yh is None:
                    yh = _wire_rows(yd, req.out_dtype, wire, rows, cols)
                ys.append(yh)
                tps.append(th)
        if dev:
            import torch
            keys = sorted(dev)
            host = torch.cat([dev[k] for k in keys]).cpu().numpy()
            at = 0
            for k in keys:
                n = dig[k].shape[0]
                dig[k][:, 0] = host[at:at + n]
                at += n
        digests = np.concatenate(dig) if dig else np.zeros((0, 2), dtype=np.int64)
        out = [("digests", "I64", digests)]
        if fetch is not None:
            y = np.concatenate(ys)[fetch]
            out.append(("y", wire, y))
            if tap_cols:
                out.append(("taps", "F32", np.concatenate(tps)[fetch]))
        return tap_cols, out


_UINT = {"BF16": np.uint16, "F16": np.uint16, "F32": np.uint32}


def _wire_rows(y, out_dtype, wire, rows, cols):
    from .serve import Raw
    if isinstance(y, Raw):
        h = np.asarray(y.bits)
        if h.dtype.itemsize != frames.WIRE_NUMPY[wire].itemsize:
            raise dtypes.DTypeError("Raw output of dtype %s for a %s reply" % (h.dtype, out_dtype))
        h = h.view(frames.WIRE_NUMPY[wire])
    else:
        h = dtypes.to_wire(y, out_dtype)
    if h.size != rows * cols:
        raise ValueError("the op returned %d values (shape %s): want %d rows x %d columns = %d" %
                         (h.size, list(h.shape), rows, cols, rows * cols))
    return np.ascontiguousarray(h).reshape(rows, cols)


def _index(arrays, ids):
    if arrays.kind == "torch":
        import torch
        return torch.as_tensor(np.asarray(ids, dtype=np.int64), device=arrays.device)
    import jax.numpy as jnp
    return jnp.asarray(np.asarray(ids, dtype=np.int32))
