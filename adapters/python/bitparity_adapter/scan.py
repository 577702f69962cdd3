"""The scan frames of the process protocol (docs/protocol.md, "Scans").

A scan holds the largest batch once ("hold") and then answers steps on
it ("step"): a batch made of some of the held items, answered with one
digest per output row instead of the rows themselves; full rows only for
the positions the harness names (the witnesses of a differing value).

The adapter keeps the output rows (and taps) of the latest step of items
each alone (each="true") where it computed them. A step with
against="alone" is compared with them there, bitwise (the wire bits as
integers: a NaN equals itself, -0 differs from +0), and its reply names
only the rows that differ from their item alone ("differ", ascending)
with their digests: rows not named are equal to their item alone,
bitwise. A step costs the op and one compare; nothing leaves the device
for an invariant op but a few bytes.

The digest of a row of words w_0 .. w_{n-1} (the unsigned integers of the
row's wire bits: u16 for BF16 and F16, u32 for F32) is

    D(w) = sum over j of (w_j + 1) * M**(j + 1)   mod 2**64,
    M = 0x9E3779B97F4A7C15

sent as the I64 with the same bits. Go recomputes it (fuzz/external,
RowDigest). Rows that differ in one word always differ in D (M is odd).
"""

import os

import numpy as np

from . import dtypes, frames
from .request import OP_INPUTS, OP_KEYWORDS, OP_OUTPUTS, Request

SCAN_VERSION = 1
# BATCHES_VERSION is the hello's scan_batches field: the adapter takes a
# step of several batches, prefixes and gathers, in one frame ("batches").
BATCHES_VERSION = 1
M = 0x9E3779B97F4A7C15
MASK = (1 << 64) - 1
_powers = {}
_torch_powers = {}

# ENV_AGAINST names the environment variable that sets the hello's
# scan_against field: "alone" (the default) or "none", which makes the
# harness ask for every row's digest, as before against existed (to
# compare the two).
ENV_AGAINST = "BITPARITY_SCAN_AGAINST"

# KEEP_BYTES bounds the outputs a step with against="alone" keeps until it
# reads its compares (once, after its last batch): the batches past it
# are run again when they have rows to name.
KEEP_BYTES = 512 << 20


# OPS_VERSION is the hello's scan_ops field (the op packages' ops:
# moe_route, moe_router, quant_fp8): the adapter holds a scan's batch of
# its op and answers steps with a digest of each row's words (OpHeld).
OPS_VERSION = 1

# ENV_OPS names the environment variable that withholds the hello's
# scan_ops field when it is "none": the harness then sends every batch of
# an op's scan as a request, as before the field existed (to compare the
# two).
ENV_OPS = "BITPARITY_SCAN_OPS"


def ops_field(op):
    """The hello's scan_ops field for op: OPS_VERSION for the op packages'
    ops, "" for the others or when the environment says none."""
    if op not in OP_OUTPUTS or os.environ.get(ENV_OPS, "").strip() == "none":
        return ""
    return str(OPS_VERSION)


# ENV_BATCHES names the environment variable that withholds the hello's
# scan_batches field when it is "none": the harness then sends a frame a
# batch, as before the field existed (to compare the two).
ENV_BATCHES = "BITPARITY_SCAN_BATCHES"


def batches_field():
    """The hello's scan_batches field: BATCHES_VERSION, or "" when the
    environment says none."""
    return "" if os.environ.get(ENV_BATCHES, "").strip() == "none" else str(BATCHES_VERSION)


def against():
    """The hello's scan_against field: "alone", or "" when the environment
    says none."""
    v = os.environ.get(ENV_AGAINST, "alone").strip()
    return "" if v in ("", "none") else v


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
    it = torch.int16 if y.dtype in (torch.bfloat16, torch.float16) else torch.int32
    return _torch_bits_digests(y.contiguous().view(it))


def _torch_bits_digests(a):
    """D of each row of a 2-D torch int16 or int32 tensor of wire bits, on
    its device: the words widened to int64 (uint16 or uint32 values) in
    chunks of at most 2**24 words (2**16 on the CPU, where a chunk that
    stays in cache, and below the size malloc maps afresh, is several times
    faster), times the powers, summed (wrapping mod 2**64)."""
    import torch
    rows, n = a.shape
    if n == 0 or rows == 0:
        return torch.zeros(rows, dtype=torch.int64, device=a.device)
    key = (n, str(a.device))
    p = _torch_powers.get(key)
    if p is None:
        ph = powers(n)
        with np.errstate(over="ignore"):
            ps = int(np.array([ph.sum(dtype=np.uint64)]).view(np.int64)[0])
        p = (torch.from_numpy(ph.view(np.int64).copy()).to(a.device), ps)
        _torch_powers[key] = p
    p, ps = p
    mask = 0xFFFF if a.element_size() == 2 else 0xFFFFFFFF
    step = max(1, (1 << (16 if a.device.type == "cpu" else 24)) // n)
    out = []
    for lo in range(0, rows, step):
        w = a[lo:lo + step].to(torch.int64) & mask
        # sum (w_j + 1) M^(j+1) = w . p + sum(p), int64 arithmetic wrapping mod 2^64
        out.append((w * p).sum(dim=1) + ps)
    return out[0] if len(out) == 1 else torch.cat(out)


def items_of(op, t):
    """The number of items of a batch of tensors t (wire, array): rows
    (rmsnorm, gemm, logprob), sequences (prefill), requests (decode)."""
    first = {"rmsnorm": "x", "gemm": "x", "logprob": "logits", "attn_prefill": "q", "attn_decode": "q",
             "moe_route": "logits", "moe_router": "x", "quant_fp8": "x"}[op]
    return t[first][1].shape[0]


def rows_per_item(op, t):
    """Output rows of one item: 1 (rmsnorm, gemm, logprob), seq_len*heads
    (prefill), heads (decode)."""
    if op == "attn_prefill":
        q = t["q"][1].shape
        return q[1] * q[2]
    if op == "attn_decode":
        return t["q"][1].shape[1]
    return 1


def cols_of(op, t):
    """Output values per row (Request.cols)."""
    if op == "rmsnorm":
        return t["x"][1].shape[-1]
    if op == "gemm":
        return t["w"][1].shape[-1]
    if op == "logprob":
        return 1
    return t["q"][1].shape[-1]


def batch_selections(batches, items, held):
    """The batches of a step frame's "batches" tensor, I64 [K, 2]: row k is
    (0, n), the prefix of n held items, or (1, n), the next n ids of items
    (taken in order, every id used once). Returns one selection a batch
    (a range, or an int64 array), as step's sels."""
    b = np.asarray(batches, dtype=np.int64)
    if b.ndim != 2 or b.shape[1] != 2:
        raise ValueError("step: batches of shape %s (want [K, 2])" % list(b.shape))
    sels, at = [], 0
    for kind, n in b.tolist():
        if n < 1 or (kind == 0 and n > held):
            raise ValueError("step: a batch of %d items (the adapter holds %d)" % (n, held))
        if kind == 0:
            sels.append(range(0, n))
        elif kind == 1:
            if at + n > len(items):
                raise ValueError("step: batches take %d ids, the frame has %d" % (at + n, len(items)))
            sels.append(_selection(items[at:at + n]))
            at += n
        else:
            raise ValueError("step: batch kind %d (want 0, a prefix, or 1, gathered ids)" % kind)
    if at != len(items):
        raise ValueError("step: batches take %d ids, the frame has %d" % (at, len(items)))
    return sels


def gather(op, t, ids):
    """The tensors of the batch whose item i is held item ids[i]."""
    return {n: (w, a[ix] if ix is not None else a) for n, (w, a), ix in _picked(op, t, _selection(ids))}


def decode_tokens(lens, ids):
    """The cache rows of held decode requests ids, one request after
    another."""
    lens = np.asarray(lens, dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(lens)[:-1]])
    if len(ids) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate([np.arange(start[i], start[i] + lens[i], dtype=np.int64) for i in ids])


def _selection(ids):
    """ids as a range when they are consecutive (a prefix, an item alone:
    tensors are sliced, not gathered), else an int64 array."""
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    if ids.size and ids[-1] - ids[0] == ids.size - 1 and (ids.size == 1 or (np.diff(ids) == 1).all()):
        return range(int(ids[0]), int(ids[-1]) + 1)
    return ids


def _split_taps(res):
    """An op's result as (y, taps or None): an op returns y, or the tuple
    (y, taps)."""
    if not isinstance(res, tuple):
        return res, None
    if len(res) != 2:
        raise TypeError("the op returned a tuple of %d values: want y or (y, taps)" % len(res))
    return res


def _picked(op, t, sel):
    """(name, (wire, array), index) for every tensor of t: index is a
    slice or an int64 array along the batch dimension, None for a tensor
    the batch takes whole (w)."""
    if isinstance(sel, range):
        it = slice(sel.start, sel.stop)
    else:
        it = sel
    tok = None
    if op in _TOKEN_DIM:
        lens = np.asarray(t["kv_lens"][1], dtype=np.int64)
        if isinstance(sel, range):
            start = int(lens[:sel.start].sum())
            tok = slice(start, start + int(lens[sel.start:sel.stop].sum()))
        else:
            tok = decode_tokens(lens, sel)
    batch, tokens = _BATCH_DIM[op], _TOKEN_DIM.get(op, ())
    return [(n, t[n], it if n in batch else tok if n in tokens else None) for n in t]


# _BATCH_DIM names each op's tensors taken along the batch (a batch of
# items takes their rows), _TOKEN_DIM those taken along the tokens of the
# items' KV cache (attn_decode's k and v); every other tensor is taken
# whole (w).
_BATCH_DIM = {"rmsnorm": ("x",), "gemm": ("x",), "logprob": ("logits", "targets"), "attn_prefill": ("q", "k", "v"),
              "attn_decode": ("q", "kv_lens"), "moe_route": ("logits",), "moe_router": ("x",), "quant_fp8": ("x",)}
_TOKEN_DIM = {"attn_decode": ("k", "v")}


# ---- rows as bits, where they are ---------------------------------------
#
# A step's output rows are kept as their wire bits, [rows, cols]: a torch
# int16/int32 view or a JAX int16/int32 array on the device when the op
# returned the wire dtype there, else a host NumPy uint16/uint32 array.
# Taps likewise, as 32-bit words. The helpers below take either.

_FLOAT_OF = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
_UINT = {"BF16": np.uint16, "F16": np.uint16, "F32": np.uint32}


def _kind(a):
    m = type(a).__module__
    if m.startswith("torch"):
        return "torch"
    if m.startswith("jax"):
        return "jax"
    return "numpy"


def out_bits(y, out_dtype, rows, cols):
    """The op's output y as the wire bits of out_dtype, [rows, cols]: on
    y's device when y has that dtype there (torch, JAX), else converted on
    the host as a request's reply is (dtypes.to_wire, Raw as is)."""
    k = _kind(y)
    if k == "torch":
        float_of, bits_of = _torch_dtypes(out_dtype)
        if y.dtype == float_of and y.numel() == rows * cols:
            if y.requires_grad:
                y = y.detach()
            if y.shape != (rows, cols):
                y = y.reshape(rows, cols)
            return y.view(bits_of)
    elif k == "jax":
        import jax.numpy as jnp
        from jax import lax
        if y.dtype == getattr(jnp, _FLOAT_OF[out_dtype]) and y.size == rows * cols:
            return lax.bitcast_convert_type(y.reshape(rows, cols), jnp.int32 if out_dtype == "fp32" else jnp.int16)
    wire = dtypes.WIRE[out_dtype]
    return _wire_rows(y, out_dtype, wire, rows, cols).view(_UINT[wire])


_torch_of = {}


def _torch_dtypes(out_dtype):
    """(the torch float dtype of out_dtype, the integer dtype of its bits),
    looked up once."""
    d = _torch_of.get(out_dtype)
    if d is None:
        import torch
        d = _torch_of[out_dtype] = (getattr(torch, _FLOAT_OF[out_dtype]), torch.int32 if out_dtype == "fp32" else torch.int16)
    return d


def tap_bits(taps, rows):
    """Taps [rows, k] as the bits of their fp32 values: on the device for
    torch and JAX float32 taps, else widened on the host (dtypes.to_f32)."""
    k = _kind(taps)
    n = max(rows, 1)
    if k == "torch":
        import torch
        if taps.dtype == torch.float32 and taps.numel() % n == 0:
            return taps.detach().reshape(rows, -1).view(torch.int32)
    elif k == "jax":
        import jax.numpy as jnp
        from jax import lax
        if taps.dtype == jnp.float32 and taps.size % n == 0:
            return lax.bitcast_convert_type(taps.reshape(rows, -1), jnp.int32)
    th = dtypes.to_f32(taps)
    if th.size % n:
        raise ValueError("taps of shape %s do not split into %d rows" % (list(th.shape), rows))
    return th.reshape(rows, -1).view(np.uint32)


def _np(a):
    """a as a host NumPy array."""
    k = _kind(a)
    if k == "torch":
        return a.cpu().numpy()
    if k == "jax":
        return np.asarray(a)
    return a


def _host(a):
    """Bits as a host NumPy array of unsigned words."""
    a = _np(a)
    return a.view(np.uint16 if a.dtype.itemsize == 2 else np.uint32)


def _alike(a, b):
    """a and b of one kind: both as they are, or both on the host."""
    if _kind(a) == _kind(b):
        return a, b
    return _host(a), _host(b)


def _differ(a, b, rows):
    """The rows of bits a whose bits differ from b's (a bool mask [rows] of
    a's kind): every row when one is missing or their widths differ. a and
    b are words of one width (Held._differ widens both or neither)."""
    if a is None and b is None:
        return None
    if a is None or b is None or a.shape != b.shape:
        return _full(a if a is not None else b, rows)
    a, b = _alike(a, b)
    k = _kind(a)
    if k == "torch":
        return (a != b).any(dim=1)
    if k == "jax":
        import jax.numpy as jnp
        return jnp.any(a != b, axis=1)
    return (a != b).any(axis=1)


def _wide(a):
    """Bits a [rows, cols] viewed as 64-bit words when a row is a whole
    number of them and the view is possible (torch, NumPy), else a as it
    is (None, JAX and 64-bit words too): rows compare equal exactly when
    their 16- or 32-bit words do, and the compare makes a quarter (or
    half) of the flags."""
    if a is None or a.ndim != 2:
        return a
    k = _kind(a)
    if k == "jax" or _itemsize(a) == 8 or (a.shape[1] * _itemsize(a)) % 8:
        return a
    try:
        if k == "torch":
            import torch
            return a.view(torch.int64)
        return a.view(np.uint64)
    except (RuntimeError, ValueError):  # not contiguous, or not aligned to 8 bytes
        return a


def _same_shape(a, b):
    """Whether a and b are both None or of one shape."""
    return a is None and b is None or a is not None and b is not None and a.shape == b.shape


def _itemsize(a):
    return a.element_size() if _kind(a) == "torch" else a.dtype.itemsize


def _full(like, rows):
    k = _kind(like)
    if k == "torch":
        import torch
        return torch.ones(rows, dtype=torch.bool, device=like.device)
    if k == "jax":
        import jax.numpy as jnp
        return jnp.ones(rows, dtype=bool)
    return np.ones(rows, dtype=bool)


def _or(a, b):
    if b is None:
        return a
    a, b = _alike(a, b)
    return a | b


def _alike_tensors(ts):
    """Whether ts are torch tensors of one shape and dtype (torch.cat
    joins them as their bits would be joined)."""
    if not ts or _kind(ts[0]) != "torch":
        return False
    cls, shape, dtype = type(ts[0]), ts[0].shape, ts[0].dtype
    return all(type(t) is cls and t.shape == shape and t.dtype == dtype for t in ts)


def _cat(parts):
    """Arrays of bits (or masks) one after another along their first
    axis."""
    if len(parts) == 1:
        return parts[0]
    kinds = {_kind(p) for p in parts}
    if len(kinds) > 1:
        parts = [_np(p) for p in parts]
        if parts[0].dtype != bool:
            parts = [_host(p) for p in parts]
        return np.concatenate(parts)
    k = kinds.pop()
    if k == "torch":
        import torch
        return torch.cat(parts)
    if k == "jax":
        import jax.numpy as jnp
        return jnp.concatenate(parts)
    return np.concatenate(parts)


def _take(a, idx):
    """Rows idx (an int64 NumPy array) of a, where a is."""
    k = _kind(a)
    if k == "torch":
        import torch
        return a[torch.as_tensor(idx, device=a.device)]
    if k == "jax":
        import jax.numpy as jnp
        return a[jnp.asarray(idx.astype(np.int32))]
    return a[idx]


def _positions(mask):
    """The positions where a bool mask is true, ascending, as int64 on
    the host: the one read of a step's compares."""
    k = _kind(mask)
    if k == "torch":
        import torch
        return torch.nonzero(mask).flatten().cpu().numpy().astype(np.int64)
    return np.flatnonzero(np.asarray(mask)).astype(np.int64)


def digests(a):
    """D of every row of bits a, as host int64: on the device for torch,
    on the host otherwise."""
    return _host_digests([_row_digests(a)])


def _row_digests(a):
    """D of every row of bits a: a torch int64 tensor on a's device for
    torch, else host int64."""
    if _kind(a) == "torch":
        return _torch_bits_digests(a)
    return digest_rows(_host(a))


def _host_digests(ds):
    """Digests of _row_digests, one after another, as host int64: one read
    from the device."""
    if ds and _kind(ds[0]) == "torch":
        import torch
        return (ds[0] if len(ds) == 1 else torch.cat(ds)).cpu().numpy()
    return np.concatenate(ds) if len(ds) > 1 else ds[0]


def warm(device, generates):
    """Runs once, on tiny tensors on a torch device, the kit's own kernels
    that a held scan's frames run: the row digests, the compares with the
    items alone and the read of their positions, and, when the adapter
    generates held rows (generates: its hello's scan_gen), the generator's
    kernels for every distribution and dtype it makes. CUDA loads a
    kernel at its first launch: this moves those loads from the scan's
    first frames to the adapter's start, as a user's loop runs its
    kernels once before it starts its clock (on an H100, a generated
    8192 x 4096 hold took 0.25 s in a fresh adapter and 0.09 s once its
    kernels were loaded). Returns the number of generator calls made."""
    import torch
    from . import gen
    a = torch.zeros((4, 8), dtype=torch.int16, device=device)
    for bits in (a, torch.zeros((4, 8), dtype=torch.int32, device=device)):
        _torch_bits_digests(bits)
        m = (_wide(bits) != _wide(bits)).any(dim=1)
        _positions(_cat([m, m]))
        _take(bits, np.array([1, 2], dtype=np.int64))
    n = 0
    if generates:
        for dist in gen.DISTS:
            for dtype in gen.SMALLEST_NORMAL:
                gen.rows(1, 1, dist, 1.0, dtype, np.arange(2, dtype=np.uint64), 8, device=device)
                n += 1
    return n


class Alone:
    """The rows of the latest step of items each alone, kept where they
    were computed: y and taps as bits, and for every held item the first
    row of its first run in that step (-1 when it did not run)."""

    def __init__(self, ids, y, taps, kr, items):
        ids = np.asarray(ids, dtype=np.int64)
        self.y, self.taps, self.kr, self.n = y, taps, kr, len(ids)
        # the same bits as 64-bit words where the rows allow (_wide), made
        # once: a step's compare then widens only its own rows
        self.wide = (_wide(y), _wide(taps))
        self.at = np.full(items, -1, dtype=np.int64)
        u, first = np.unique(ids, return_index=True)
        self.at[u] = first * kr
        self.ident = bool((ids == np.arange(len(ids))).all())

    def rows(self, sel, wide=False):
        """The rows (y, taps) of the items of sel alone: a slice of the kept
        rows when they are in order, else gathered; with wide, of their
        64-bit words (self.wide)."""
        kr = self.kr
        y, taps = self.wide if wide else (self.y, self.taps)
        if isinstance(sel, range) and self.ident and sel.stop <= self.n:
            s = slice(sel.start * kr, sel.stop * kr)
            return y[s], (None if taps is None else taps[s])
        items = np.arange(sel.start, sel.stop, dtype=np.int64) if isinstance(sel, range) else sel
        at = self.at[items]
        if (at < 0).any():
            raise ValueError("step against the items alone: item %d did not run in the latest step of items each alone"
                             % int(items[np.argmax(at < 0)]))
        idx = (at[:, None] + np.arange(kr, dtype=np.int64)[None, :]).reshape(-1)
        return _take(y, idx), (None if taps is None else _take(taps, idx))


class _Part:
    """One batch of a step: its first row in the step, its rows, its
    output and taps as bits."""

    def __init__(self, at, rows, y, taps):
        self.at, self.rows, self.y, self.taps = at, rows, y, taps


class Held:
    """The batch of a hold frame, and how its steps run."""

    def __init__(self, op, o, meta, tensors, arrays):
        from . import gen
        on_device = not o.request and arrays.kind == "torch"
        # a generated hold (gen="2"): the rows made here, on the device for torch
        tensors, made = gen.held_tensors(meta, tensors, arrays.device if on_device else None)
        self.op, self.o, self.meta, self.t, self.arrays = op, o, meta, tensors, arrays
        self.items = items_of(op, tensors)
        self.out = meta.get("out", "")
        if self.out not in dtypes.WIRE:
            raise ValueError("hold: output dtype %r (want bf16, fp16 or fp32)" % self.out)
        self.kr, self.cols = rows_per_item(op, tensors), cols_of(op, tensors)
        self.eps = Request(meta, {}).eps
        self.alone = None
        self.dev = None
        self.sliced, self.tail = None, []
        if not o.request and arrays.kind != "numpy":
            # array functions on a device: the inputs go there once.
            self.dev = {n: made[n] if n in made else arrays.convert(w, a) for n, (w, a) in tensors.items()}
            if op not in _TOKEN_DIM and all(n in self.dev for n in OP_INPUTS[op]):
                # the arguments of a batch of consecutive items, in order:
                # (tensor, sliced along the batch), then eps
                batch = _BATCH_DIM[op]
                self.sliced = [(self.dev[n], n in batch) for n in OP_INPUTS[op]]
                self.tail = [float(self.eps)] if op == "rmsnorm" else []

    def check(self, ids):
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        if ids.size and (ids.min() < 0 or ids.max() >= self.items):
            raise ValueError("step: item ids outside the %d held items" % self.items)
        return ids

    def run(self, sel):
        """The op on the batch of held items sel (a range: sliced; an int64
        array: gathered): (y, taps or None)."""
        if self.sliced is not None and isinstance(sel, range):  # the steps' common case, in few calls
            it = slice(sel.start, sel.stop)
            return _split_taps(self.o.fn(*[a[it] if along else a for a, along in self.sliced], *self.tail))
        picked = _picked(self.op, self.t, sel)
        if self.dev is None:
            t = {n: (w, a[ix] if ix is not None else a) for n, (w, a), ix in picked}
            from .serve import call
            res = call(self.op, self.o, Request(dict(self.meta, frame="request"), t), self.arrays)
        else:
            args = {n: self.dev[n] if ix is None else self.dev[n][self._index(ix)] for n, _, ix in picked}
            args = [args[n] for n in OP_INPUTS[self.op]]
            if self.op == "rmsnorm":
                args.append(float(self.eps))
            res = self.o.fn(*args)
        return _split_taps(res)

    def _index(self, ix):
        if isinstance(ix, slice):
            return ix
        return _index(self.arrays, ix)

    def part(self, sel, at):
        """Run the batch sel and keep its output as bits."""
        y, taps = self.run(sel)
        return self._bits(at, len(sel) * self.kr, y, taps)

    def _bits(self, at, rows, y, taps):
        """The part of rows rows from row at whose output is y, taps."""
        yb = out_bits(y, self.out, rows, self.cols)
        tb = None if taps is None else tap_bits(taps, rows)
        return _Part(at, rows, yb, tb)

    def _each(self, sels):
        """The parts of the batches sels, one item each, run one after
        another: one part when the outputs are torch tensors of one shape
        and dtype (their taps too), joined where they are and made bits
        once; else a part a batch, as part makes it."""
        outs = [self.run(sel) for sel in sels]
        kr = self.kr
        if _alike_tensors([y for y, _ in outs]) and (_alike_tensors([t for _, t in outs]) or all(t is None for _, t in outs)):
            import torch
            y = torch.cat([y for y, _ in outs])
            t = None if outs[0][1] is None else torch.cat([t for _, t in outs])
            return [self._bits(0, len(outs) * kr, y, t)]
        return [self._bits(i * kr, kr, y, t) for i, (y, t) in enumerate(outs)]

    def step(self, ids, each, fetch, sizes=None, against=False, batches=None):
        """The reply of a step: (tap_cols, tensors). The step's batches:
        ids; each id alone (each: its rows are kept as the items alone);
        with sizes, the prefixes of sizes[k] held items, one after
        another; or with batches, those selections (batch_selections),
        one after another. Without against: "digests" I64 [rows, 2] (y,
        taps) of every row; with against: "differ" I64 [k], the rows whose
        bits differ from their item alone, and "digests" I64 [k, 2] of
        those. With fetch, also "y" and "taps" of the rows fetch names."""
        if batches is not None:
            if each or sizes is not None or fetch is not None:
                raise ValueError("step: batches with each=true, sizes or rows")
            sels = batches
        elif sizes is not None:
            sels = [range(0, int(n)) for n in sizes]
        elif each:
            sels = [range(int(i), int(i) + 1) for i in ids]
        else:
            sels = [_selection(ids)]
        if each:
            if against:
                raise ValueError("step: against=alone with each=true")
            self.alone = None  # replaced by this step's rows, or gone when it fails
        elif against and self.alone is None:
            raise ValueError("step: against=alone before a step of items each alone")
        if against:
            return self._against(sels, fetch)
        keep = each or fetch is not None
        parts, dy, dt, taps, at = [], [], [], None, 0
        for p in self._each(sels) if each else (self.part(sel, None) for sel in sels):
            p.at = at
            taps = _tap_cols(taps, p)
            at += p.rows
            if keep:
                parts.append(p)
            else:  # digested at once, the rows dropped; the digests read once, below
                dy.append(_row_digests(p.y))
                dt.append(None if p.taps is None else _row_digests(p.taps))
        y = t = None
        if keep:
            y = _cat([p.y for p in parts]) if parts else np.zeros((0, self.cols), dtype=np.uint16)
            t = _cat([p.taps for p in parts]) if parts and taps else None
            dy = [_row_digests(y)]
            dt = [None if t is None else _row_digests(t)]
        d = np.zeros((at, 2), dtype=np.int64)
        if at:
            d[:, 0] = _host_digests(dy)
            if taps:
                d[:, 1] = _host_digests(dt)
        if each:
            self.alone = Alone(ids, y, t, self.kr, self.items)
        return taps or 0, [("digests", "I64", d)] + self._fetched(y, t, fetch)

    def _against(self, sels, fetch):
        """A step compared with the items alone (see step). On a device
        (CUDA, JAX) every batch's compare is queued where it runs and the
        compares are read once, after the last batch; the outputs of the
        batches stay until then, up to KEEP_BYTES of them, and a batch past
        that is run again when it has rows to name (and must name the same
        rows again). On the host (NumPy, torch on the CPU) nothing waits:
        each batch's rows are named as it ends, and its output dropped."""
        named = []  # per batch: (its rows named, their digests)
        queued, masks = [], []  # the batches whose compares are read at the end
        taps, at, size = None, 0, 0
        for sel in sels:
            p = self.part(sel, at)
            taps = _tap_cols(taps, p)
            m = self._differ(p, sel)
            at += p.rows
            if fetch is None and _on_host(p.y):
                local = _positions(m)
                named.append((local + p.at, self._named(p, local)))
                continue
            size += _nbytes(p.y) + _nbytes(p.taps)
            if size > KEEP_BYTES and fetch is None:
                p.y = p.taps = None  # run again if it differs
            queued.append((len(named), p, sel))
            masks.append(m)
            named.append(None)
        if masks:
            pos = _positions(_cat(masks))
            starts = np.cumsum([0] + [p.rows for _, p, _ in queued])  # the queued rows, one batch after another
            bounds = np.searchsorted(pos, starts)
            for k, (i, p, sel) in enumerate(queued):
                local = pos[bounds[k]:bounds[k + 1]] - starts[k]
                if len(local) and p.y is None:
                    at = p.at
                    p = self.part(sel, at)
                    if not np.array_equal(_positions(self._differ(p, sel)), local):
                        raise RuntimeError("the batch of items %s gave other rows the second time: the op is not "
                                           "deterministic" % _describe(sel))
                named[i] = (local + p.at, self._named(p, local))
        pos = np.concatenate([n[0] for n in named]) if named else np.zeros(0, dtype=np.int64)
        d = np.concatenate([n[1] for n in named]) if named else np.zeros((0, 2), dtype=np.int64)
        out = [("differ", "I64", pos.astype(np.int64)), ("digests", "I64", d)]
        if fetch is not None:  # fetch comes with one batch of items (no sizes): every part kept
            y = _cat([p.y for _, p, _ in queued])
            t = _cat([p.taps for _, p, _ in queued]) if taps else None
            out += self._fetched(y, t, fetch)
        return taps or 0, out

    def _named(self, p, local):
        """The digests I64 [len(local), 2] of rows local of part p."""
        d = np.zeros((len(local), 2), dtype=np.int64)
        if len(local):
            d[:, 0] = digests(_take(p.y, local))
            if p.taps is not None:
                d[:, 1] = digests(_take(p.taps, local))
        return d

    def _differ(self, p, sel):
        """The rows of part p (the batch sel) that differ from their items
        alone, as a bool mask where p is: compared as 64-bit words
        (_wide) when both sides of the values and of the taps widen, else
        as they are."""
        a, at = _wide(p.y), _wide(p.taps)
        ry, rt = self.alone.rows(sel, wide=True)
        if not (_same_shape(a, ry) and _same_shape(at, rt)):  # a side whose words could not widen
            a, at = p.y, p.taps
            ry, rt = self.alone.rows(sel)
        return _or(_differ(a, ry, p.rows), _differ(at, rt, p.rows))

    def _fetched(self, y, t, fetch):
        if fetch is None:
            return []
        wire = dtypes.WIRE[self.out]
        out = [("y", wire, _host(_take(y, fetch)).view(frames.WIRE_NUMPY[wire]))]
        if t is not None:
            out.append(("taps", "F32", _host(_take(t, fetch)).view(np.float32)))
        return out


def column_words(op, cols):
    """The op package's output columns (one array a column, as its array
    function returns them) as the words of its rows' digests, [rows, n]
    uint32 on the host: the columns one after another, each element one
    word, the 32 bits of an int32 or float32 element, the byte of a uint8
    one (dtypes.to_column's wire dtypes)."""
    spec = OP_OUTPUTS[op]
    if not isinstance(cols, (tuple, list)) or len(cols) != len(spec):
        raise TypeError("op %s returned %s: want a tuple of %d arrays (%s)" % (
            op, type(cols).__name__, len(spec), ", ".join(n for n, _ in spec)))
    words, rows = [], None
    for (name, wire), y in zip(spec, cols):
        try:
            a = dtypes.to_column(y, wire)
        except dtypes.DTypeError as e:
            raise dtypes.DTypeError("column %s: %s" % (name, e)) from None
        if rows is None:
            rows = a.shape[0] if a.ndim else 1
        if rows == 0 or a.size % rows:
            raise ValueError("column %s: %d values (shape %s) do not split into %d rows" % (name, a.size, list(a.shape), rows))
        a = a.reshape(rows, -1)
        words.append(a.astype(np.uint32) if wire == "U8" else a.view(np.uint32))
    return np.ascontiguousarray(np.concatenate(words, axis=1))


class OpHeld(Held):
    """The batch of a hold frame of an op package's op (moe_route,
    moe_router, quant_fp8) and how its steps run: as Held's, a row an
    item, whose bits are the words of its columns (column_words), no
    taps; fetched rows go back one tensor a column, as a request's reply."""

    def __init__(self, op, o, meta, tensors, arrays):
        if op not in OP_OUTPUTS:
            raise ValueError("hold: op %r is not an op package's (want %s)" % (op, ", ".join(OP_OUTPUTS)))
        self.op, self.o, self.meta, self.t, self.arrays = op, o, meta, tensors, arrays
        self.items = items_of(op, tensors)
        self.dims = Request(meta, {}).dims
        # each column's width: the elements of a row (its words)
        k = self.dims.get("top_k", 0)
        self.widths = [self.dims["hidden"], 1] if op == "quant_fp8" else [k, k]
        self.kr, self.cols, self.alone, self.dev = 1, sum(self.widths), None, None
        if not o.request and arrays.kind != "numpy":
            # array functions on a device: the inputs go there once.
            self.dev = {n: arrays.convert(w, a) for n, (w, a) in tensors.items()}

    def run(self, sel):
        """The op's columns on the batch of held items sel."""
        picked = _picked(self.op, self.t, sel)
        kw = {k: self.dims[k] for k in OP_KEYWORDS[self.op]}
        if self.dev is None:
            from .serve import call
            t = {n: (w, a[ix] if ix is not None else a) for n, (w, a), ix in picked}
            return call(self.op, self.o, Request(dict(self.meta, frame="request"), t), self.arrays)
        args = {n: self.dev[n] if ix is None else self.dev[n][self._index(ix)] for n, _, ix in picked}
        return self.o.fn(*[args[n] for n in OP_INPUTS[self.op]], **kw)

    def part(self, sel, at):
        rows = len(sel)
        w = column_words(self.op, self.run(sel))
        if w.shape[0] != rows:
            raise ValueError("op %s returned %d rows for a batch of %d items" % (self.op, w.shape[0], rows))
        if w.shape[1] != self.cols:
            raise ValueError("op %s returned rows of %d words, want %d (%s)" % (
                self.op, w.shape[1], self.cols, ", ".join("%s %d" % (n, c) for (n, _), c in zip(OP_OUTPUTS[self.op], self.widths))))
        return _Part(at, rows, w, None)

    def _each(self, sels):
        """A part a batch: an op's columns are joined as words (part)."""
        return [self.part(sel, None) for sel in sels]

    def _fetched(self, y, t, fetch):
        """The rows fetch of bits y as the op's columns, one tensor a
        column [len(fetch), width] of its wire dtype."""
        if fetch is None:
            return []
        rows = _host(_take(y, fetch)).astype(np.uint32, copy=False)
        out, at = [], 0
        for (name, wire), width in zip(OP_OUTPUTS[self.op], self.widths):
            c = np.ascontiguousarray(rows[:, at:at + width])
            at += width
            if wire == "U8":
                a = c.astype(np.uint8)
            else:
                a = c.view("<i4" if wire == "I32" else "<f4")
            out.append((name, wire, a))
        return out


def _on_host(a):
    """Whether bits a are computed synchronously on the host (NumPy, torch
    on the CPU): reading a compare there waits for nothing."""
    k = _kind(a)
    return k == "numpy" or (k == "torch" and a.device.type == "cpu")


def _nbytes(a):
    if a is None:
        return 0
    if _kind(a) == "torch":
        return a.numel() * a.element_size()
    return a.nbytes


def _describe(sel):
    if isinstance(sel, range):
        return "%d..%d" % (sel.start, sel.stop - 1)
    return "[%s]" % " ".join(str(int(i)) for i in sel[:8]) + (" ..." if len(sel) > 8 else "")


def _tap_cols(taps, p):
    """The step's taps width after part p: every batch of a step has the
    same (a frame has one tap_cols)."""
    tc = 0 if p.taps is None else p.taps.shape[1]
    if taps is not None and tc != taps:
        raise ValueError("taps of %d columns in one batch of the step and %d in another" % (taps, tc))
    return tc


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
