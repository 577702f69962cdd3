"""The path-scan frames of the process protocol (docs/protocol.md, "Path
scans: held sequences and KV cuts").

A path scan compares an attn_prefill adapter with an attn_decode adapter
over the KV length v. Both hold the scan's sequences once (a hold frame
with path="sequences": q, k, v [seqs, seq_len, heads or kv_heads,
head_dim], whatever the adapter's op) and answer steps that name KV cuts
(a tensor "cuts" I64 [K]) with the digest of every compared row:

    attn_prefill at cut v: the prefill of the held sequences cut to their
        first v tokens (the whole prefill runs), its rows of the last
        position v-1;
    attn_decode at cut v: the decode whose request s is the query of
        sequence s at position v-1 against the first v tokens of sequence
        s as its cache (kv_lens v);

seqs x heads rows a cut, sequence by sequence, head by head, the cuts one
after another: "digests" I64 [K * seqs * heads, 2] (the row, its taps),
as a step's (scan.py). Array functions on a device (torch, JAX) keep the
sequences there and digest there.
"""

import os

import numpy as np

from . import dtypes, scan
from .request import OP_INPUTS, Request

# CUTS_VERSION is the hello's scan_cuts field (attention ops): the adapter
# holds sequences and answers steps of KV cuts.
CUTS_VERSION = 1

# ENV_CUTS names the environment variable that withholds the hello's
# scan_cuts field when it is "none": the harness then sends every KV
# length's batch, as before the field existed (to compare the two).
ENV_CUTS = "BITPARITY_SCAN_CUTS"

OPS = ("attn_prefill", "attn_decode")


def cuts_field(op):
    """The hello's scan_cuts field for op: CUTS_VERSION for the attention
    ops, "" for the others or when the environment says none."""
    if op not in OPS or os.environ.get(ENV_CUTS, "").strip() == "none":
        return ""
    return str(CUTS_VERSION)


class Sequences:
    """The sequences of a path-scan hold, and how its cuts run."""

    def __init__(self, op, o, meta, tensors, arrays):
        if op not in OPS:
            raise ValueError("hold: sequences of a path scan for op %r (want %s)" % (op, " or ".join(OPS)))
        for n in ("q", "k", "v"):
            if n not in tensors or tensors[n][1].ndim != 4:
                raise ValueError("hold: sequences want q, k, v [seqs, seq_len, heads, head_dim]; %s is %s" %
                                 (n, "missing" if n not in tensors else list(tensors[n][1].shape)))
        self.op, self.o, self.meta, self.t, self.arrays = op, o, meta, tensors, arrays
        S, L, H, D = tensors["q"][1].shape
        if tensors["k"][1].shape[:2] != (S, L) or tensors["v"][1].shape != tensors["k"][1].shape:
            raise ValueError("hold: sequences q %s, k %s, v %s: want the same seqs and seq_len" %
                             (list(tensors["q"][1].shape), list(tensors["k"][1].shape), list(tensors["v"][1].shape)))
        self.items, self.seq_len, self.heads, self.cols = S, L, H, D
        self.out = meta.get("out", "")
        if self.out not in dtypes.WIRE:
            raise ValueError("hold: output dtype %r (want bf16, fp16 or fp32)" % self.out)
        self.dev = None
        if not o.request and arrays.kind != "numpy":
            # array functions on a device: the sequences go there once.
            self.dev = {n: arrays.convert(w, a) for n, (w, a) in tensors.items() if n in ("q", "k", "v")}

    def step(self, cuts):
        """The reply of a step of KV cuts: (tap_cols, tensors), "digests"
        I64 [len(cuts) * seqs * heads, 2]."""
        cuts = np.asarray(cuts, dtype=np.int64).reshape(-1)
        if cuts.size and (cuts.min() < 1 or cuts.max() > self.seq_len):
            raise ValueError("step: KV cuts outside 1..%d (the held sequences' tokens)" % self.seq_len)
        ys, ts, taps = [], [], None
        for v in cuts.tolist():
            y, t = self.cut(v)
            tc = 0 if t is None else t.shape[1]
            if taps is not None and tc != taps:
                raise ValueError("taps of %d columns at one KV cut and %d at another" % (taps, tc))
            taps = tc
            ys.append(y)
            ts.append(t)
        rows = len(cuts) * self.items * self.heads
        d = np.zeros((rows, 2), dtype=np.int64)
        if rows:  # the cuts' rows digested together, where they are, and read once
            d[:, 0] = scan.digests(scan._cat(ys))
            if taps:
                d[:, 1] = scan.digests(scan._cat(ts))
        return taps or 0, [("digests", "I64", d)]

    def cut(self, v):
        """The compared rows at KV length v as bits (y [seqs*heads, cols],
        taps or None)."""
        S, H = self.items, self.heads
        if self.op == "attn_prefill":
            args = self._prefill(v)
            rows = S * v * H
            # the last position of each sequence, every head: row (s*v + v-1)*H + h
            pick = (((np.arange(S) * v + v - 1) * H)[:, None] + np.arange(H)[None, :]).reshape(-1)
        else:
            args = self._decode(v)
            rows, pick = S * H, None
        y, taps = self._run(args)
        yb = scan.out_bits(y, self.out, rows, self.cols)
        tb = None if taps is None else scan.tap_bits(taps, rows)
        if pick is not None:
            yb = scan._take(yb, pick)
            tb = None if tb is None else scan._take(tb, pick)
        return yb, tb

    def _prefill(self, v):
        """The prefill batch of the sequences cut to their first v tokens."""
        if self.dev is not None:
            return {n: _dense(self.dev[n][:, :v]) for n in ("q", "k", "v")}
        return {n: (w, np.ascontiguousarray(a[:, :v])) for n, (w, a) in self.t.items() if n in ("q", "k", "v")}

    def _decode(self, v):
        """The decode batch at KV length v: request s the query of sequence
        s at position v-1, its cache the sequence's first v tokens."""
        S = self.items
        lens = np.full(S, v, dtype=np.int32)
        if self.dev is not None:
            q, k, vv = self.dev["q"], self.dev["k"], self.dev["v"]
            return {"q": _dense(q[:, v - 1]), "k": _dense(k[:, :v].reshape((S * v,) + tuple(k.shape[2:]))),
                    "v": _dense(vv[:, :v].reshape((S * v,) + tuple(vv.shape[2:]))),
                    "kv_lens": self.arrays.convert("I32", lens)}
        (wq, q), (wk, k), (wv, vv) = self.t["q"], self.t["k"], self.t["v"]
        return {"q": (wq, np.ascontiguousarray(q[:, v - 1])),
                "k": (wk, np.ascontiguousarray(k[:, :v]).reshape((S * v,) + k.shape[2:])),
                "v": (wv, np.ascontiguousarray(vv[:, :v]).reshape((S * v,) + vv.shape[2:])),
                "kv_lens": ("I32", lens)}

    def _run(self, args):
        """The op on one cut's batch: (y, taps or None)."""
        if self.dev is None:
            from .serve import call
            res = call(self.op, self.o, Request(dict(self.meta, frame="request", op=self.op), args), self.arrays)
        else:
            res = self.o.fn(*[args[n] for n in OP_INPUTS[self.op]])
        return scan._split_taps(res)


def _dense(a):
    """a as a fresh dense tensor, as a request's tensor arrives: a torch
    slice of the held sequences is a view (strided, or at an offset into
    the held storage), and a backend may pick its kernel by strides and
    alignment, so the op gets a copy (a few MB at most: microseconds on a
    GPU). JAX slices are new arrays already; NumPy ops get requests."""
    if scan._kind(a) == "torch":
        import torch
        return a.clone(memory_format=torch.contiguous_format)
    return a
