"""One request of the harness: an op, dtypes, eps and the input tensors."""

import numpy as np

from . import dtypes

# The input tensors of each op, in the order an array function takes them.
OP_INPUTS = {
    "rmsnorm": ("x", "w"),
    "gemm": ("x", "w"),
    "logprob": ("logits", "targets"),
    "attn_prefill": ("q", "k", "v"),
    "attn_decode": ("q", "k", "v", "kv_lens"),
    "moe_route": ("logits",),
    "moe_router": ("x", "w"),
    "quant_fp8": ("x",),
}
OPS = tuple(OP_INPUTS)

# The ops of bitparity's op packages (docs/protocol.md, "Ops of the op
# packages"): each request field that is one of the op's sizes, and the
# reply's tensors (the op's output columns), each a name and a wire dtype,
# shape [rows, width]. An array function of such an op returns one array
# per column, in this order; it takes the sizes its inputs' shapes do not
# give (top_k) as keyword arguments.
OP_DIMS = {
    "moe_route": ("experts", "top_k"),
    "moe_router": ("hidden", "experts", "top_k"),
    "quant_fp8": ("hidden",),
}
OP_OUTPUTS = {
    "moe_route": (("expert_ids", "I32"), ("weights", "F32")),
    "moe_router": (("expert_ids", "I32"), ("weights", "F32")),
    "quant_fp8": (("q", "U8"), ("scale", "F32")),
}
OP_KEYWORDS = {"moe_route": ("top_k",), "moe_router": ("top_k",), "quant_fp8": ()}


class Request:
    """One batch.

    op: "rmsnorm", "gemm", "logprob", "attn_prefill", "attn_decode", or an
    op package's: "moe_route", "moe_router", "quant_fp8".
    in_dtype, out_dtype: "bf16", "fp16" or "fp32" (out is the dtype of the
    reply's "y"; "fp32" for logprob).
    eps: a numpy float32, bit-exact (from eps_bits).
    chunk_from: attn_prefill's chunk (an adapter whose hello says
    "layout": "true"): the queries at positions >= chunk_from are the
    chunk's, attending to K/V of every position up to theirs (the earlier
    ones a cached prefix); 0 for a whole prompt.
    page_size: attn_decode's page size of the paged KV cache, 0 for the
    adapter's own.
    meta: every metadata field as sent.
    Tensor names and shapes (docs/protocol.md):
      rmsnorm       x [rows, hidden], w [hidden]
      gemm          x [m, k], w [k, n]
      logprob       logits [rows, vocab], targets I32 [rows]
      attn_prefill  q [seqs, seq_len, heads, head_dim],
                    k, v [seqs, seq_len, kv_heads, head_dim]
      attn_decode   q [requests, heads, head_dim],
                    k, v [total_kv, kv_heads, head_dim] (the requests'
                    caches one after another), kv_lens I32 [requests]
      moe_route     logits [tokens, experts]
      moe_router    x [tokens, hidden], w [hidden, experts]
      quant_fp8     x [tokens, hidden]
    dims: an op package's sizes by name ({"experts": 128, "top_k": 8}).
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
        self.chunk_from = _count(meta, "chunk_from")
        self.page_size = _count(meta, "page_size")
        self.dims = {d: _count(meta, d) for d in OP_DIMS.get(self.op, ())}
        self._t = tensors
        self._f32 = {}

    def names(self):
        """The names of the request's tensors, sorted."""
        return sorted(self._t)

    def has(self, name):
        return name in self._t

    def wire(self, name):
        """The wire dtype of tensor name (BF16, F16, F32, I32, I64)."""
        self._need(name)
        return self._t[name][0]

    def bits(self, name):
        """The tensor as received: uint16 bits for BF16, float16, float32,
        int32 or int64; a read-only view of the frame buffer."""
        self._need(name)
        return self._t[name][1]

    def f32(self, name):
        """The tensor widened to float32 (exact for bf16 and fp16)."""
        if name not in self._f32:
            self._need(name)
            w, a = self._t[name]
            self._f32[name] = dtypes.wire_to_f32(w, a)
        return self._f32[name]

    def ints(self, name):
        """An integer tensor as int64."""
        return self.bits(name).astype(np.int64)

    def _need(self, name):
        if name not in self._t:
            raise KeyError("request %s has no tensor %r (it has %s)" % (self.seq, name, ", ".join(self.names()) or "none"))

    def rows(self):
        """Output rows of the whole batch, in the op's row order: tokens
        (rmsnorm, gemm, logprob), seqs*seq_len*heads (prefill),
        requests*heads (decode)."""
        if self.op in OP_DIMS:
            return self.bits(OP_INPUTS[self.op][0]).shape[0]
        if self.op in ("rmsnorm", "gemm"):
            return self.bits("x").shape[0]
        if self.op == "logprob":
            return self.bits("logits").shape[0]
        q = self.bits("q").shape
        if self.op == "attn_prefill":
            return q[0] * q[1] * q[2]
        return q[0] * q[1]

    def cols(self):
        """Output values per row: hidden (rmsnorm), n (gemm), 1 (logprob),
        head_dim (attention)."""
        if self.op == "rmsnorm":
            return self.bits("x").shape[-1]
        if self.op == "gemm":
            return self.bits("w").shape[-1]
        if self.op == "logprob":
            return 1
        return self.bits("q").shape[-1]

    def selected(self):
        """The output rows the harness asked for (the "rows" tensor), or
        None for all."""
        return self.ints("rows") if "rows" in self._t else None


def _count(meta, field):
    """A decimal field >= 0 of meta; 0 when absent."""
    v = meta.get(field, "0")
    try:
        n = int(v, 10)
    except ValueError:
        n = -1
    if n < 0:
        raise ValueError("field %r: %r, want a decimal >= 0" % (field, v))
    return n
