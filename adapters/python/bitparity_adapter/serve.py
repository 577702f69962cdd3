"""The adapter loop: hello, then one reply per request, until stdin closes."""

import os
import sys
import traceback

import numpy as np

from . import dtypes, frames, gen, paths, scan
from .request import OP_INPUTS, OP_KEYWORDS, OP_OUTPUTS, Request


class Unsupported(Exception):
    """Raise it from an op for a batch the adapter does not implement (a
    dtype, a shape): the harness skips the case instead of reporting a
    crash."""


class Raw:
    """An output given as the bits of the output dtype (uint16 for bf16,
    float16, float32), sent as is."""

    def __init__(self, bits):
        self.bits = bits


class Op:
    """One op of an adapter and what it declares in the hello frame.

    fn: with request=False (the default) an array function called with the
    op's inputs as arrays of the adapter's kind (serve's arrays):
        rmsnorm(x, w, eps)            -> y [rows, hidden]
        gemm(x, w)                    -> y [m, n]
        logprob(logits, targets)      -> y [rows] (or [rows, 1])
        attn_prefill(q, k, v)         -> o [seqs, seq_len, heads, head_dim]
        attn_decode(q, k, v, kv_lens) -> o [requests, heads, head_dim]
    With request=True, fn(req) gets the Request itself. Either returns y,
    or (y, taps) with taps [rows, k] fp32 intermediates; y may be a NumPy
    array, a torch tensor, a JAX array or Raw bits. The op packages' ops
    return one array per output column (request.OP_OUTPUTS), compared
    bitwise:
        moe_route(logits, top_k)      -> (expert_ids [tokens, k] ints, weights [tokens, k] float32)
        moe_router(x, w, top_k)       -> the same
        quant_fp8(x)                  -> (q [tokens, hidden] uint8 fp8 codes, scale [tokens, 1] float32)
    and declare their policy as schedule ("tie=lowest sum=sequential",
    "split_k=1", "scaling=per_token format=e4m3"), no ulp_bound.
    schedule: the oracle schedule the op implements bit for bit, in the
    form of the Go schedule's String method; empty when it claims none.
    ulp_bound: the largest ulp distance to the oracle it claims, in the
    compared dtype, when it declares no schedule.
    invariant: whether it claims batch invariance, padding invariance and
    determinism.
    layout: whether it reads the engine's layout of an attention batch
    (the hello says "layout": "true"; docs/protocol.md): a request's
    chunk_from (attn_prefill: compute the queries at positions >=
    chunk_from, attending to every K/V position up to theirs) and
    page_size (attn_decode: the tokens a page of the paged KV cache, 0
    for the adapter's own). A request function reads req.chunk_from and
    req.page_size; an array function gets them as the keyword argument
    chunk_from= (attn_prefill) or page_size= (attn_decode) on a request,
    and without it on a held scan's batches (which have no layout): give
    the keyword a default of 0. The rows below chunk_from are not
    compared: return any values there.
    """

    def __init__(self, fn, schedule="", ulp_bound=0, invariant=True, about="", request=False, layout=False):
        if not callable(fn):
            raise TypeError("Op: %r is not callable" % (fn,))
        self.fn = fn
        self.schedule = schedule
        self.ulp_bound = int(ulp_bound)
        self.invariant = bool(invariant)
        self.about = about
        self.request = bool(request)
        self.layout = bool(layout)


class Arrays:
    """How inputs reach an array function: "numpy" (float32 for bf16,
    float16, float32; int64 ids), "torch" (tensors on device, bf16 bits
    intact) or "jax" (arrays on device, bf16 bits intact)."""

    def __init__(self, kind="numpy", device=None):
        if kind not in ("numpy", "torch", "jax"):
            raise ValueError("arrays %r: want numpy, torch or jax" % kind)
        self.kind = kind
        self.device = device
        if kind == "torch":
            import torch
            if device is None:
                device = "cuda" if torch.cuda.is_available() else "cpu"
            self.device = torch.device(device)
            if self.device.type == "cuda" and self.device.index is None:
                self.device = torch.device("cuda", torch.cuda.current_device())
        elif kind == "jax":
            import jax
            self.device = jax.devices(device)[0] if isinstance(device, str) else (device or jax.devices()[0])

    def name(self):
        """The device in the hello frame: cpu, cuda:0, ..."""
        if self.kind == "numpy":
            return "cpu"
        if self.kind == "jax":
            d = self.device
            return "cuda:%d" % d.id if d.platform == "gpu" else "%s:%d" % (d.platform, d.id)
        return str(self.device)

    def versions(self):
        """What the hello's "versions" field says: the Python, NumPy and
        array library versions, and for a GPU the device, the CUDA runtime
        and the driver when the library tells them."""
        import platform
        v = ["python=%s" % platform.python_version(), "numpy=%s" % np.__version__]
        if self.kind == "torch":
            import torch
            v.append("torch=%s" % torch.__version__)
            if self.device.type == "cuda":
                v.append("cuda=%s" % torch.version.cuda)
                v.append("gpu=%s" % torch.cuda.get_device_name(self.device).replace(" ", "_"))
                drv = _nvidia_driver()
                if drv:
                    v.append("driver=%s" % drv)
        elif self.kind == "jax":
            import jax
            v.append("jax=%s" % jax.__version__)
            v.append("jax_device=%s" % str(self.device.device_kind).replace(" ", "_"))
        return " ".join(v)

    def convert(self, wire, a):
        if self.kind == "torch":
            return dtypes.to_torch(wire, a, self.device)
        if self.kind == "jax":
            return dtypes.to_jax(wire, a, self.device)
        return dtypes.to_numpy(wire, a)


def _nvidia_driver():
    try:
        with open("/proc/driver/nvidia/version") as f:
            for word in f.readline().split():
                if word[:1].isdigit() and "." in word:
                    return word
    except OSError:
        pass
    return ""


def call(op, o, req, arrays):
    """Run op o on req: the function's result, before conversion."""
    if o.request:
        return o.fn(req)
    args = [arrays.convert(req.wire(n), req.bits(n)) for n in OP_INPUTS[op]]
    if op in OP_OUTPUTS:
        return o.fn(*args, **{k: req.dims[k] for k in OP_KEYWORDS[op]})
    if op == "rmsnorm":
        args.append(float(req.eps))
    if o.layout and op == "attn_prefill":
        return o.fn(*args, chunk_from=req.chunk_from)
    if o.layout and op == "attn_decode":
        return o.fn(*args, page_size=req.page_size)
    return o.fn(*args)


def reply_tensors(req, result):
    """An op's result as the reply's tensors: "y" [rows, cols] in the
    output dtype (selected rows only when the request has "rows"), and
    "taps" F32 [rows, k] when given."""
    taps = None
    if isinstance(result, tuple):
        if len(result) != 2:
            raise TypeError("the op returned a tuple of %d values: want y or (y, taps)" % len(result))
        result, taps = result
    rows, cols = req.rows(), req.cols()
    wire = dtypes.WIRE[req.out_dtype]
    if isinstance(result, Raw):
        y = np.asarray(result.bits)
        if y.dtype.itemsize != frames.WIRE_NUMPY[wire].itemsize:
            raise dtypes.DTypeError("Raw output of dtype %s for a %s reply" % (y.dtype, req.out_dtype))
        y = y.view(frames.WIRE_NUMPY[wire])
    else:
        y = dtypes.to_wire(result, req.out_dtype)
    if y.size != rows * cols:
        raise ValueError("the op returned %d values (shape %s): want %d rows x %d columns = %d" %
                         (y.size, list(y.shape), rows, cols, rows * cols))
    y = y.reshape(rows, cols)
    if taps is not None:
        taps = dtypes.to_f32(taps)
        if taps.size % rows:
            raise ValueError("taps of shape %s do not split into %d rows" % (list(taps.shape), rows))
        taps = taps.reshape(rows, -1)
    sel = req.selected()
    if sel is not None:
        y = y[sel]
        if taps is not None:
            taps = taps[sel]
    out = [("y", wire, y)]
    if taps is not None:
        out.append(("taps", "F32", taps))
    return out


def column_tensors(req, result):
    """An op package's result as the reply's tensors: one per output
    column (request.OP_OUTPUTS), in order, each [rows, width] of the
    column's wire dtype."""
    cols = OP_OUTPUTS[req.op]
    if not isinstance(result, (tuple, list)) or len(result) != len(cols):
        raise TypeError("op %s returned %s: want a tuple of %d arrays (%s)" % (
            req.op, type(result).__name__, len(cols), ", ".join(n for n, _ in cols)))
    rows, out = req.rows(), []
    for (name, wire), y in zip(cols, result):
        try:
            a = dtypes.to_column(y, wire)
        except dtypes.DTypeError as e:
            raise dtypes.DTypeError("column %s: %s" % (name, e)) from None
        if rows == 0 or a.size % rows:
            raise ValueError("column %s: %d values (shape %s) do not split into %d rows" % (name, a.size, list(a.shape), rows))
        out.append((name, wire, a.reshape(rows, -1)))
    return out


class Conn:
    """The adapter's end of the pipes. Frames go to the original stdout;
    anything else written to file descriptor 1 afterwards (print, C
    libraries, CUDA warnings) lands on stderr instead of corrupting the
    stream."""

    def __init__(self, stdin=None, stdout=None):
        if stdin is not None:
            self.inp, self.out = stdin, stdout
            return
        self.inp = open(os.dup(0), "rb", buffering=0)
        self.out = open(os.dup(1), "wb", buffering=0)
        os.dup2(2, 1)
        sys.stdout = sys.stderr

    def read(self):
        return frames.read_frame(self.inp)

    def write(self, meta, tensors=()):
        frames.write_frame(self.out, meta, tensors)


def _default_name():
    base = os.path.basename(sys.argv[0] or "adapter")
    return os.path.splitext(base)[0] or "adapter"


def _options(fn):
    return fn if isinstance(fn, Op) else Op(fn)


def serve(ops, name=None, device=None, arrays="numpy", about="", argv=None, stdin=None, stdout=None):
    """Run the adapter: answer the harness's frames until stdin closes, and
    return the exit status (0; 2 for a bad command line).

    ops: {op name: array function or Op}; op names are rmsnorm, gemm,
    logprob, attn_prefill, attn_decode, the op packages' moe_route,
    moe_router and quant_fp8, and transformer (the model route, a
    function of a ModelRequest: see bitparity_adapter.model).
    name: the adapter's name (the target is exec:NAME.OP); the script's
    file name when None.
    arrays, device: what the array functions take: "numpy", "torch" or
    "jax" arrays, on device (torch: cuda when available; jax: its default
    device). device may also be a string naming where a request-style
    adapter computes. With "torch" every frame is answered under
    torch.inference_mode(), entered once for the whole conversation: the
    functions need no decorator of their own, and a held scan's steps
    skip autograd's bookkeeping on every slice and view (a decorator
    entered on every call costs about 10 us on a GPU host).
    argv: sys.argv[1:] when None; its first element, when given, names the
    one op this process serves (the harness may then send op "").
    stdin, stdout: binary streams to use instead of the process's own
    (tests); stdout is then not redirected.
    """
    if argv is None:
        argv = sys.argv[1:]
    name = name or _default_name()
    table = {k: _options(v) for k, v in ops.items()}
    only = argv[0] if argv else ""
    if only and only not in table:
        sys.stderr.write("%s: unknown op %r (have %s)\n" % (name, only, ", ".join(sorted(table))))
        return 2
    arr = Arrays(arrays, device if arrays != "numpy" else None)
    where = device if (arrays == "numpy" and isinstance(device, str)) else arr.name()
    conn = Conn(stdin, stdout)
    loop = Loop(name, table, only, arr, where, about, conn)
    if arr.kind == "torch":
        import torch
        with torch.inference_mode():
            return loop.run()
    return loop.run()


class Loop:
    """The adapter's conversation with the harness (docs/protocol.md)."""

    def __init__(self, name, ops, only, arrays, device, about, conn):
        self.name, self.ops, self.only = name, ops, only
        self.arrays, self.device, self.about, self.conn = arrays, device, about, conn
        self.op = None
        self.held = None

    def run(self):
        while True:
            try:
                meta, tensors = self.conn.read()
            except EOFError:
                return 0
            except frames.ProtocolError as e:
                sys.stderr.write("%s: %s\n" % (self.name, e))
                return 3
            seq = meta.get("seq", "")
            try:
                self.answer(meta, tensors, seq)
            except BrokenPipeError:
                return 0
            except Unsupported as e:
                self.conn.write({"frame": "error", "seq": seq, "kind": "unsupported", "message": str(e)})
            except Exception as e:  # the op failed: report it, keep serving
                traceback.print_exc(file=sys.stderr)
                sys.stderr.flush()
                self.conn.write({"frame": "error", "seq": seq, "kind": "failure",
                                 "message": "%s: %s" % (type(e).__name__, e)})

    def answer(self, meta, tensors, seq):
        kind = meta.get("frame")
        if kind == "hello":
            self.hello(meta, seq)
        elif kind == "request":
            if self.op is None:
                raise frames.ProtocolError("request before hello")
            if meta.get("op") != self.op:
                raise Unsupported("request for op %r, this adapter runs %r" % (meta.get("op"), self.op))
            o = self.ops[self.op]
            if self.op == "transformer":
                from .model import ModelRequest, model_reply
                req = ModelRequest(meta, tensors)
                out_meta, out = model_reply(req, o.fn(req))
                self.conn.write(dict({"frame": "reply", "seq": seq}, **out_meta), out)
                return
            req = Request(meta, tensors)
            if self.op in OP_OUTPUTS:
                out = column_tensors(req, call(self.op, o, req, self.arrays))
            else:
                out = reply_tensors(req, call(self.op, o, req, self.arrays))
            self.conn.write({"frame": "reply", "seq": seq}, out)
        elif kind == "hold":
            self.need_scan(meta)
            self.held = None  # the old batch goes first
            if meta.get("path", "") not in ("", "sequences"):
                raise ValueError("hold: path=%r (this adapter holds: sequences)" % meta["path"])
            kind = paths.Sequences if meta.get("path") == "sequences" else scan.OpHeld if self.op in OP_OUTPUTS else scan.Held
            self.held = kind(self.op, self.ops[self.op], meta, tensors, self.arrays)
            self.conn.write({"frame": "held", "seq": seq, "items": self.held.items})
        elif kind == "step":
            if self.held is None:
                raise frames.ProtocolError("step before hold")
            if isinstance(self.held, paths.Sequences) != ("cuts" in tensors):
                raise ValueError("step: %s, but the adapter holds %s" % (
                    "KV cuts" if "cuts" in tensors else "a step of items",
                    "the sequences of a path scan" if isinstance(self.held, paths.Sequences) else "a batch, not sequences"))
            if "cuts" in tensors:
                tap_cols, out = self.held.step(tensors["cuts"][1])
                self.conn.write({"frame": "reply", "seq": seq, "tap_cols": tap_cols}, out)
                return
            ids = self.held.check(tensors["items"][1] if "items" in tensors else np.zeros(0, dtype=np.int64))
            fetch = tensors["rows"][1].astype(np.int64) if "rows" in tensors else None
            sizes = None
            if "sizes" in tensors:
                sizes = tensors["sizes"][1].astype(np.int64)
                if sizes.size and (sizes.min() < 1 or sizes.max() > self.held.items):
                    raise ValueError("step: prefix sizes outside 1..%d" % self.held.items)
            batches = None
            if "batches" in tensors:
                batches = scan.batch_selections(tensors["batches"][1], ids, self.held.items)
            against = meta.get("against", "")
            if against not in ("", "alone"):
                raise ValueError("step: against=%r (this adapter compares with: alone)" % against)
            tap_cols, out = self.held.step(ids, meta.get("each") == "true", fetch, sizes, against == "alone", batches)
            self.conn.write({"frame": "reply", "seq": seq, "tap_cols": tap_cols}, out)
        else:
            raise frames.ProtocolError("unknown frame kind %r" % kind)

    def need_scan(self, meta):
        if self.op is None:
            raise frames.ProtocolError("hold before hello")
        if self.op == "transformer" or (self.op in OP_OUTPUTS and not scan.ops_field(self.op)):
            raise Unsupported("op %s does not scan with held batches" % self.op)
        if meta.get("op") != self.op:
            raise Unsupported("hold for op %r, this adapter runs %r" % (meta.get("op"), self.op))

    def hello(self, meta, seq):
        want = meta.get("op") or self.only
        if meta.get("protocol") != str(frames.PROTOCOL):
            raise Unsupported("protocol %r: this adapter speaks %d" % (meta.get("protocol"), frames.PROTOCOL))
        if not want and len(self.ops) == 1:
            want = next(iter(self.ops))
        if not want:
            raise Unsupported("no op: name one on the command line or in the hello (have %s)" % ", ".join(sorted(self.ops)))
        if self.only and want != self.only:
            raise Unsupported("this adapter was started for %r, the harness asked for %r" % (self.only, want))
        if want not in self.ops:
            raise Unsupported("op %r not implemented (have %s)" % (want, ", ".join(sorted(self.ops))))
        self.op = want
        o = self.ops[want]
        held = want not in ("transformer",) + tuple(OP_OUTPUTS)  # the ops the scan frames carry
        held_op = scan.ops_field(want)  # an op package's op: its own scan frames (scan_ops)
        scan_gen = gen.field(self.arrays) if held else ""
        if (held or held_op) and self.arrays.kind == "torch" and self.arrays.device.type == "cuda":
            scan.warm(self.arrays.device, scan_gen != "")
        self.conn.write({
            "frame": "hello", "protocol": frames.PROTOCOL, "seq": seq, "op": want,
            "name": "%s.%s" % (self.name, want), "device": self.device,
            "invariant": "true" if o.invariant else "false",
            "schedule": o.schedule, "ulp_bound": o.ulp_bound,
            "layout": "true" if o.layout else "",  # "" as before the field: an old certificate's hello stays equal
            "about": o.about or self.about,
            "versions": self.arrays.versions(), "backend": self.arrays.kind,
            "scan": str(scan.SCAN_VERSION) if held else "",
            "scan_against": scan.against() if held or held_op else "",
            "scan_batches": scan.batches_field() if held else "",
            "scan_gen": scan_gen,
            "scan_cuts": paths.cuts_field(want),
            "scan_ops": held_op,
        })
