"""The adapter side of the bitparity process protocol, version 1.

An adapter is a program that runs one op for the bitparity harness. The
harness starts it once and speaks to it over stdin/stdout in frames; stderr
is the adapter's log (shown by the harness when something goes wrong). The
full specification is docs/protocol.md; this module implements it so that an
adapter is a function per op:

    import bitparity_proto as bp

    def rmsnorm(req):                    # req: bp.Request
        x, w = req.f32("x"), req.f32("w")
        ...
        return y                         # float32 array, rows x cols

    bp.serve("myadapter", {"rmsnorm": bp.Op(rmsnorm, ulp_bound=1)})

Frames: a little-endian u64 byte count, then a safetensors document (u64
header length, JSON header with "__metadata__" string fields and one entry
per tensor, raw little-endian tensor bytes). Tensors are read with
numpy.frombuffer straight from the frame buffer and written straight from
the arrays' memory: no base64, no JSON numbers, no extra copies.

Only NumPy is required. NumPy has no bfloat16: BF16 tensors arrive as
uint16 bits (Request.bits) and are widened exactly to float32 by a 16-bit
shift (Request.f32); float32 results are rounded to bf16 to nearest even
(NaN stays a quiet NaN), the rounding the harness's oracle uses.
"""

import json
import os
import struct
import sys
import traceback

import numpy as np

PROTOCOL = 1

OPS = ("rmsnorm", "gemm", "logprob", "attn_prefill", "attn_decode")

_NP = {
    "BF16": np.dtype("<u2"),
    "F16": np.dtype("<f2"),
    "F32": np.dtype("<f4"),
    "I32": np.dtype("<i4"),
    "I64": np.dtype("<i8"),
}
_WIRE = {"bf16": "BF16", "fp16": "F16", "fp32": "F32"}


class Unsupported(Exception):
    """Raise it from an op for a batch the adapter does not implement (a
    dtype, a shape): the harness skips the case instead of reporting a
    crash."""


class Raw:
    """An output given as the bits of the output dtype (uint16 for bf16 and
    fp16, float32 or uint32 for fp32), sent as is: no rounding, no copy. Use
    it when the computation already produced the output dtype (torch)."""

    def __init__(self, bits):
        self.bits = bits


class Op:
    """One op of an adapter and what it declares in the hello frame.

    fn(req) returns the outputs for every row of the batch: an array (or
    Raw) whose size is rows x cols in the op's row order; or a tuple
    (y, taps) with taps a float32 rows x k array of fp32 intermediates.
    schedule: the oracle schedule the op implements bit for bit, in the
    form of the Go schedule's String method (e.g. "splitk=1
    combine=sequential"); empty when it does not claim one.
    ulp_bound: the largest ulp distance to the oracle it claims, in the
    compared dtype, when it declares no schedule.
    invariant: whether it claims batch invariance, padding invariance and
    determinism.
    """

    def __init__(self, fn, schedule="", ulp_bound=0, invariant=True, about=""):
        self.fn = fn
        self.schedule = schedule
        self.ulp_bound = int(ulp_bound)
        self.invariant = bool(invariant)
        self.about = about


# ---- dtype conversions --------------------------------------------------

def bf16_to_f32(bits):
    """Widen bfloat16 bits (uint16) to float32, exactly."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x):
    """Round float32 values to bfloat16 bits (uint16), to nearest even; a
    NaN stays a NaN with its top mantissa bit set (quiet)."""
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    r = ((b + np.uint32(0x7FFF) + ((b >> 16) & np.uint32(1))) >> 16).astype(np.uint16)
    nan = (b & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    if nan.any():
        r[nan] = ((b[nan] >> 16) | np.uint32(0x40)).astype(np.uint16)
    return r


def to_f32(arr, wire):
    """Widen a tensor of wire dtype BF16, F16 or F32 to float32."""
    if wire == "BF16":
        return bf16_to_f32(arr)
    return np.asarray(arr).astype(np.float32)


def round_to(x, dtype):
    """Round float32 values x to dtype ("bf16", "fp16", "fp32") and widen
    them back to float32: the value a kernel stores when it writes x."""
    x = np.asarray(x, dtype=np.float32)
    if dtype == "bf16":
        return bf16_to_f32(f32_to_bf16(x))
    if dtype == "fp16":
        return x.astype(np.float16).astype(np.float32)
    return x


def encode(x, dtype):
    """float32 values -> a contiguous array of the wire dtype of dtype."""
    x = np.asarray(x, dtype=np.float32)
    if dtype == "bf16":
        return f32_to_bf16(x)
    if dtype == "fp16":
        return x.astype("<f2")
    return np.ascontiguousarray(x, dtype="<f4")


# ---- requests -----------------------------------------------------------

class Request:
    """One batch: op, dtypes, eps and the input tensors.

    op: "rmsnorm", "gemm", "logprob", "attn_prefill" or "attn_decode".
    in_dtype, out_dtype: "bf16", "fp16" or "fp32" (out is what the reply's
    "y" must be; "fp32" for logprob).
    eps: a numpy float32, bit-exact (from eps_bits).
    Tensor names and shapes (docs/protocol.md):
      rmsnorm       x [rows, hidden], w [hidden]
      gemm          x [m, k], w [k, n]
      logprob       logits [rows, vocab], targets I32 [rows]
      attn_prefill  q [seqs, seq_len, heads, head_dim],
                    k, v [seqs, seq_len, kv_heads, head_dim]
      attn_decode   q [requests, heads, head_dim],
                    k, v [total_kv, kv_heads, head_dim] (requests' caches
                    one after another), kv_lens I32 [requests]
    """

    def __init__(self, meta, tensors):
        self.meta = meta
        self.op = meta.get("op", "")
        self.seq = meta.get("seq", "")
        self.in_dtype = meta.get("in", "")
        self.out_dtype = meta.get("out", "")
        bits = meta.get("eps_bits")
        if bits:
            self.eps = np.array([int(bits, 16)], dtype=np.uint32).view(np.float32)[0]
        else:
            self.eps = np.float32(meta.get("eps", "0"))
        self._t = tensors
        self._f32 = {}

    def names(self):
        return sorted(self._t)

    def wire(self, name):
        """The wire dtype of tensor name (BF16, F16, F32, I32, I64)."""
        return self._t[name][0]

    def bits(self, name):
        """The tensor as received: uint16 bits for BF16, float16, float32,
        int32 or int64; a read-only view of the frame buffer."""
        return self._t[name][1]

    def f32(self, name):
        """The tensor widened to float32 (exact for bf16 and fp16)."""
        if name not in self._f32:
            w, a = self._t[name]
            self._f32[name] = to_f32(a, w)
        return self._f32[name]

    def ints(self, name):
        """An integer tensor as int64."""
        return self._t[name][1].astype(np.int64)

    def cols(self):
        """Output values per row: hidden (rmsnorm), n (gemm), 1 (logprob),
        head_dim (attention)."""
        if self.op == "rmsnorm":
            return self._t["x"][1].shape[-1]
        if self.op == "gemm":
            return self._t["w"][1].shape[-1]
        if self.op == "logprob":
            return 1
        return self._t["q"][1].shape[-1]


# ---- frames -------------------------------------------------------------

class ProtocolError(Exception):
    pass


class _Conn:
    def __init__(self):
        # Frames go to the original stdout; anything else the process
        # writes to fd 1 (print, C libraries) lands on stderr instead of
        # corrupting the stream.
        self.inp = open(os.dup(0), "rb", buffering=0)
        self.out = open(os.dup(1), "wb", buffering=0)
        os.dup2(2, 1)
        sys.stdout = sys.stderr

    def _read_exact(self, n):
        buf = bytearray(n)
        mv = memoryview(buf)
        got = 0
        while got < n:
            k = self.inp.readinto(mv[got:])
            if not k:
                if got == 0:
                    raise EOFError
                raise ProtocolError("truncated frame: %d of %d bytes" % (got, n))
            got += k
        return buf

    def read(self):
        """Read one frame: (metadata dict, {name: (wire dtype, array)})."""
        n = struct.unpack("<Q", self._read_exact(8))[0]
        if n < 8:
            raise ProtocolError("frame length %d" % n)
        doc = self._read_exact(n)
        h = struct.unpack_from("<Q", doc, 0)[0]
        if h > n - 8:
            raise ProtocolError("header length %d in a %d-byte frame" % (h, n))
        header = json.loads(bytes(doc[8:8 + h]))
        meta = header.pop("__metadata__", {}) or {}
        base = 8 + h
        tensors = {}
        for name, e in header.items():
            dt = _NP.get(e["dtype"])
            if dt is None:
                raise ProtocolError("tensor %r: dtype %r" % (name, e["dtype"]))
            lo, hi = e["data_offsets"]
            shape = tuple(e["shape"])
            count = int(np.prod(shape, dtype=np.int64))
            if hi - lo != count * dt.itemsize or base + hi > n:
                raise ProtocolError("tensor %r: shape %r and data_offsets %r disagree" % (name, shape, (lo, hi)))
            a = np.frombuffer(doc, dtype=dt, count=count, offset=base + lo).reshape(shape)
            tensors[name] = (e["dtype"], a)
        return meta, tensors

    def _write_all(self, b):
        mv = memoryview(b).cast("B")
        while len(mv):
            k = self.out.write(mv)
            mv = mv[k:]

    def write(self, meta, tensors=()):
        """Write one frame; tensors is a sequence of (name, wire dtype,
        contiguous array)."""
        header = {"__metadata__": {k: str(v) for k, v in meta.items()}}
        off = 0
        arrays = []
        for name, wire, a in tensors:
            a = np.ascontiguousarray(a)
            header[name] = {"dtype": wire, "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
            off += a.nbytes
            arrays.append(a)
        js = json.dumps(header, separators=(",", ":")).encode()
        js += b" " * ((8 - (16 + len(js)) % 8) % 8)
        self._write_all(struct.pack("<QQ", 8 + len(js) + off, len(js)) + js)
        for a in arrays:
            if a.nbytes:
                self._write_all(a.reshape(-1).view(np.uint8))


def _reply(req, result):
    """Turn an op's result into the reply tensors: y of shape [rows, cols]
    in the output dtype (selected rows only when the request has "rows"),
    and taps (float32 [rows, k]) when given."""
    taps = None
    if isinstance(result, tuple):
        result, taps = result
    cols = req.cols()
    wire = _WIRE[req.out_dtype]
    if isinstance(result, Raw):
        y = np.asarray(result.bits)
        if wire == "F32" and y.dtype != np.float32:
            y = y.view(np.float32)
        y = y.reshape(-1, cols).view(_NP[wire])
    else:
        y = encode(np.asarray(result).reshape(-1, cols), req.out_dtype).reshape(-1, cols)
    if taps is not None:
        taps = np.asarray(taps, dtype=np.float32).reshape(y.shape[0], -1)
    if "rows" in req.names():
        rows = req.ints("rows")
        y = y[rows]
        if taps is not None:
            taps = taps[rows]
    out = [("y", wire, y)]
    if taps is not None:
        out.append(("taps", "F32", taps))
    return out


def serve(name, ops, device="cpu", about="", argv=None):
    """Run the adapter: answer the harness's frames until stdin closes.

    name: the adapter's name (the harness calls the target exec:NAME.OP).
    ops: {op name: Op}. argv (sys.argv[1:] when None) may name one op:
    the adapter then serves only that op. Returns the exit status.
    """
    if argv is None:
        argv = sys.argv[1:]
    only = argv[0] if argv else ""
    if only and only not in ops:
        sys.stderr.write("%s: unknown op %r (have %s)\n" % (name, only, ", ".join(sorted(ops))))
        return 2
    conn = _Conn()
    op = None
    while True:
        try:
            meta, tensors = conn.read()
        except EOFError:
            return 0
        kind = meta.get("frame")
        seq = meta.get("seq", "")
        try:
            if kind == "hello":
                want = meta.get("op") or only
                if meta.get("protocol") != str(PROTOCOL):
                    raise Unsupported("protocol %r: this adapter speaks %d" % (meta.get("protocol"), PROTOCOL))
                if not want:
                    raise Unsupported("no op: name one on the command line or in the hello (have %s)" % ", ".join(sorted(ops)))
                if only and want != only:
                    raise Unsupported("this adapter was started for %r, the harness asked for %r" % (only, want))
                if want not in ops:
                    raise Unsupported("op %r not implemented (have %s)" % (want, ", ".join(sorted(ops))))
                op = want
                o = ops[op]
                conn.write({
                    "frame": "hello", "protocol": PROTOCOL, "seq": seq, "op": op,
                    "name": "%s.%s" % (name, op), "device": device,
                    "invariant": "true" if o.invariant else "false",
                    "schedule": o.schedule, "ulp_bound": o.ulp_bound,
                    "about": o.about or about,
                })
            elif kind == "request":
                if op is None:
                    raise ProtocolError("request before hello")
                if meta.get("op") != op:
                    raise Unsupported("request for op %r, this adapter runs %r" % (meta.get("op"), op))
                req = Request(meta, tensors)
                out = _reply(req, ops[op].fn(req))
                conn.write({"frame": "reply", "seq": seq}, out)
            else:
                raise ProtocolError("unknown frame kind %r" % kind)
        except Unsupported as e:
            conn.write({"frame": "error", "seq": seq, "kind": "unsupported", "message": str(e)})
        except Exception as e:  # the op failed: report it, keep serving
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
            conn.write({"frame": "error", "seq": seq, "kind": "failure",
                        "message": "%s: %s" % (type(e).__name__, e)})
