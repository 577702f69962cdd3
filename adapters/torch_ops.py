#!/usr/bin/env python3
"""PyTorch adapter for bitparity: the five ops through PyTorch's own kernels.

usage: torch_ops.py [OP] [--device DEV] [--sdpa-backend B] [--decode-mask M]
                    [--logprob-dtype D] [--deterministic] [--ulp-bound N]
                    [--no-invariant-claim]

    bitparity run --exec 'python3 adapters/torch_ops.py rmsnorm'

  rmsnorm       torch.nn.functional.rms_norm(x, (hidden,), w, eps) in the input
                dtype (torch < 2.4: the Llama formula, fp32 inside)
  gemm          torch.matmul(x, w) in the input dtype (cuBLAS on CUDA)
  logprob       torch.log_softmax(logits.float(), -1).gather(-1, targets):
                fp32 (--logprob-dtype native: log_softmax in the input dtype,
                then widened, the "compared in the wrong dtype" bug)
  attn_prefill  F.scaled_dot_product_attention(q, k, v, is_causal=True) on
                [seqs, heads, seq_len, head_dim], GQA by enable_gqa (by
                repeating the kv heads where the backend has no GQA). It
                reads the layout: a request's chunk (chunk_from > 0) is the
                queries at positions >= chunk_from against every K/V
                position, with the causal mask offset by chunk_from (a
                boolean attn_mask: is_causal aligns the diagonal top-left);
                rows below chunk_from are NaN. With --sdpa-backend flash
                (no masks) a chunk is unsupported.
  attn_decode   the same with one query per request against its KV cache,
                caches padded to the longest with a boolean mask; when every
                request has the same length no mask is passed (--decode-mask
                always forces one), which lets PyTorch pick another backend;
                with --sdpa-backend flash (no masks) requests of different
                lengths run as one call per length. SDPA has no paged
                cache: a request's page_size is accepted and ignored (the
                caches are dense whatever the page size)

--moe-tie-probe: no serving; state torch.topk's order among equal values
on the device (lowest index first, highest, or neither) over tie rows at
8..1024 experts and 1..4096 rows, and check that --moe-tie (lowest, the
default; highest; torch: torch.topk as it is) gives the declared order
(exit 1 when not).

  moe_route     Ops.moe_route, the router as torch runs it: torch.softmax
                in fp32, the top k by --moe-tie, the weights renormalised
                in rank order; it declares "tie=lowest" or "tie=highest"
                (--moe-tie torch: no tie-break, held to the default), and
                is compared bitwise with the oracle of that policy, whose
                exp is not torch's: bitparity scan --exec 'python3
                adapters/torch_ops.py moe_route' tests its batch
                invariance and reports where its weights leave the
                oracle's (docs/moe.md).

--device: cuda, cuda:N or cpu (default: $BITPARITY_DEVICE, else cuda when
available). --sdpa-backend: flash, efficient, cudnn or math (default: let
PyTorch choose). --deterministic: torch.use_deterministic_algorithms(True).
Inputs arrive as tensors on the device with their bits intact and outputs
leave in the dtype they were computed in; the adapter kit
(adapters/python, bitparity_adapter) rounds an fp32 output to a 16-bit
request dtype once, to nearest even, as .to() does.

Every op claims batch invariance (invariant=true) unless
--no-invariant-claim: bitparity tests the claim. None claims an oracle
schedule; the ulp bounds (rmsnorm 1, gemm 2, logprob 64 fp32 ulps,
attention 2) are what the oracle-parity relation holds it to (--ulp-bound
overrides).
"""

import argparse
import contextlib
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))
import bitparity_adapter as bp  # noqa: E402  (pip install ./adapters/python, or this checkout's copy)
from bitparity_adapter import moe  # noqa: E402


class Ops:
    def __init__(self, args):
        self.args = args
        if args.deterministic:  # before CUDA starts: cuBLAS reads it once
            os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        dev = args.device or os.environ.get("BITPARITY_DEVICE") or ("cuda" if torch.cuda.is_available() else "cpu")
        self.device = torch.device(dev)
        if self.device.type == "cuda" and self.device.index is None:
            self.device = torch.device("cuda", torch.cuda.current_device())
        if args.deterministic:
            torch.use_deterministic_algorithms(True)

    def describe(self):
        s = "torch %s" % torch.__version__
        if not hasattr(F, "scaled_dot_product_attention"):
            s += " (no SDPA: attention by the math formula)"
        if self.device.type == "cuda":
            s += ", %s, CUDA %s" % (torch.cuda.get_device_name(self.device), torch.version.cuda)
        if self.args.sdpa_backend:
            s += ", sdpa backend %s" % self.args.sdpa_backend
        if self.args.deterministic:
            s += ", deterministic algorithms"
        return s

    def sdpa_context(self):
        b = self.args.sdpa_backend
        if not b:
            return contextlib.nullcontext()
        from torch.nn.attention import SDPBackend, sdpa_kernel  # torch >= 2.3
        names = {"flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
                 "cudnn": "CUDNN_ATTENTION", "math": "MATH"}
        return sdpa_kernel(getattr(SDPBackend, names[b]))

    def sdpa(self, q, k, v, **kw):
        """scaled_dot_product_attention with GQA ([B, H, L, D] layout)."""
        group = q.shape[1] // k.shape[1]
        if not hasattr(F, "scaled_dot_product_attention"):  # torch < 2.0
            return _sdpa_math(q, k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1), **kw)
        with self.sdpa_context():
            if group > 1:
                try:
                    return F.scaled_dot_product_attention(q, k, v, enable_gqa=True, **kw)
                except TypeError:  # torch < 2.5: no enable_gqa
                    pass
                except RuntimeError as e:  # a forced backend without GQA support
                    if "No available kernel" not in str(e):
                        raise
                k = k.repeat_interleave(group, dim=1)
                v = v.repeat_interleave(group, dim=1)
            return F.scaled_dot_product_attention(q, k, v, **kw)

    # ---- ops: array functions (the kit passes tensors on self.device and
    # calls them under torch.inference_mode(): no decorator here) ----

    def rmsnorm(self, x, w, eps):
        if hasattr(F, "rms_norm"):
            return F.rms_norm(x, (x.shape[-1],), weight=w, eps=eps)
        xf = x.float()  # torch < 2.4: the Llama/HF formula
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w

    def gemm(self, x, w):
        return torch.matmul(x, w)

    def logprob(self, logits, targets):
        if self.args.logprob_dtype == "native":
            return torch.log_softmax(logits, dim=-1).gather(-1, targets[:, None]).float()
        return torch.log_softmax(logits.float(), dim=-1).gather(-1, targets[:, None])

    def attn_prefill(self, q, k, v, chunk_from=0):
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # [S, H, L, D]
        if chunk_from == 0:
            return self.sdpa(q, k, v, is_causal=True).transpose(1, 2)  # [S, L, H, D]
        L = q.shape[2]
        pos = torch.arange(L, device=q.device)
        mask = pos[None, :] <= pos[chunk_from:, None]  # [L - chunk_from, L]: query i sees K/V [0, i]
        o = self.sdpa(q[:, :, chunk_from:], k, v, attn_mask=mask)
        y = torch.full_like(q, float("nan"))
        y[:, :, chunk_from:] = o
        return y.transpose(1, 2)

    def attn_decode(self, q, k, v, lens, page_size=0):
        # q [B, H, D]; k, v [T, KH, D], the requests' caches one after another
        B, T = q.shape[0], k.shape[0]
        lmax = int(lens.max().item())
        same = bool((lens == lmax).all().item())
        if not same and self.args.sdpa_backend == "flash":
            return self._decode_by_length(q, k, v, lens)
        if same:
            kp = k.view(B, lmax, k.shape[1], k.shape[2])
            vp = v.view(B, lmax, v.shape[1], v.shape[2])
        else:
            b = torch.repeat_interleave(torch.arange(B, device=self.device), lens)
            starts = torch.cumsum(lens, 0) - lens
            pos = torch.arange(T, device=self.device) - torch.repeat_interleave(starts, lens)
            kp = k.new_zeros((B, lmax, k.shape[1], k.shape[2]))
            vp = v.new_zeros((B, lmax, v.shape[1], v.shape[2]))
            kp[b, pos] = k
            vp[b, pos] = v
        kw = {}
        if not same or self.args.decode_mask == "always":
            mask = torch.arange(lmax, device=self.device)[None, :] < lens[:, None]  # [B, Lmax]
            kw["attn_mask"] = mask[:, None, None, :]
        o = self.sdpa(q[:, :, None, :], kp.transpose(1, 2), vp.transpose(1, 2), **kw)  # [B, H, 1, D]
        return o[:, :, 0, :]

    def moe_route(self, logits, k, tie):
        """The MoE router as a model runs it in torch (bitparity's op
        moe_route, docs/moe.md): torch.softmax in fp32, the top k
        (topk_declared), the k weights renormalised by their sum in rank
        order. Returns ids [rows, k] int32 and weights [rows, k] fp32."""
        w, ids = self.topk_declared(torch.softmax(logits.float(), dim=-1), k, tie)
        total = w[:, 0].clone()
        for j in range(1, k):
            total = total + w[:, j]
        return ids.to(torch.int32), w / total[:, None]

    def topk_declared(self, p, k, tie):
        """The k largest of p [rows, experts], values and indices in rank
        order. tie "torch": torch.topk as it is (torch documents no order
        among equal values); "lowest" or "highest": a stable descending
        sort, so equal values keep index order, the lowest index first (on
        the row flipped: the highest). A NaN sorts first in torch; the op
        ranks it last: softmax of finite logits makes none."""
        if tie == "torch":
            return torch.topk(p, k, dim=-1, sorted=True)
        q = p if tie == "lowest" else p.flip(-1)
        w, ids = torch.sort(q, dim=-1, descending=True, stable=True)
        w, ids = w[:, :k], ids[:, :k]
        if tie == "highest":
            ids = p.shape[-1] - 1 - ids
        return w, ids

    def _decode_by_length(self, q, k, v, lens):
        """Decode without a mask (flash takes none): requests grouped by KV
        length, one SDPA call per length, in order of first appearance."""
        starts = (torch.cumsum(lens, 0) - lens).tolist()
        ls = lens.tolist()
        out = torch.empty_like(q)
        for n in dict.fromkeys(ls):
            idx = [b for b, x in enumerate(ls) if x == n]
            kb = torch.stack([k[starts[b]:starts[b] + n] for b in idx])  # [G, n, KH, D]
            vb = torch.stack([v[starts[b]:starts[b] + n] for b in idx])
            o = self.sdpa(q[idx][:, :, None, :], kb.transpose(1, 2), vb.transpose(1, 2))
            out[idx] = o[:, :, 0, :]
        return out


def _sdpa_math(q, k, v, attn_mask=None, is_causal=False):
    """The reference formula of F.scaled_dot_product_attention, for torch
    < 2.0 only (there is no SDPA kernel to test there; this keeps the
    adapter's layouts, GQA and masks testable)."""
    s = (q @ k.transpose(-2, -1)) * (1.0 / (q.shape[-1] ** 0.5))
    if is_causal:
        L = q.shape[-2]
        s = s.masked_fill(~torch.ones(L, L, dtype=torch.bool, device=q.device).tril(), float("-inf"))
    if attn_mask is not None:
        s = s.masked_fill(~attn_mask, float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def moe_tie_probe(ops, tie):
    """--moe-tie-probe: states torch.topk's order among equal values on the
    adapter's device (bp.moe.tie_behaviour: rows whose k-th and (k+1)-th
    probabilities are equal, at 8..1024 experts and 1..4096 rows), then
    checks that the declared tie-break --moe-tie gives bitparity's order
    on the same rows. Exit 0 when it does, 1 when not."""
    def run(tie):
        def topk(q, k):
            _, ids = ops.topk_declared(torch.from_numpy(q).to(ops.device), k, tie)
            return ids.cpu().numpy()
        return topk
    verdict, lines = moe.tie_behaviour(run("torch"))
    print("torch.topk on ties (%s): %s" % (ops.describe(), {
        "lowest": "lowest index first on every tie row",
        "highest": "highest index first on every tie row",
        "undeclared": "no one tie-break: declare one (--moe-tie lowest|highest)"}[verdict]))
    for line in lines:
        print("  " + line)
    if tie == "torch":
        return 0
    got, lines = moe.tie_behaviour(run(tie))
    print("declared --moe-tie %s (stable sort): %s" % (tie, "holds on every tie row" if got == tie else "does NOT hold"))
    if got != tie:
        for line in lines:
            print("  " + line)
        return 1
    return 0


def main(argv):
    ap = argparse.ArgumentParser(prog="torch_ops.py")
    ap.add_argument("op", nargs="?", default="", choices=("",) + bp.OPS)
    ap.add_argument("--device", default="")
    ap.add_argument("--sdpa-backend", default="", choices=("", "flash", "efficient", "cudnn", "math"))
    ap.add_argument("--decode-mask", default="auto", choices=("auto", "always"))
    ap.add_argument("--logprob-dtype", default="fp32", choices=("fp32", "native"))
    ap.add_argument("--deterministic", action="store_true")
    ap.add_argument("--ulp-bound", type=int, default=-1)
    ap.add_argument("--no-invariant-claim", action="store_true")
    ap.add_argument("--moe-tie", default="lowest", choices=("lowest", "highest", "torch"))
    ap.add_argument("--moe-tie-probe", action="store_true")
    args = ap.parse_args(argv)
    ops = Ops(args)
    if args.moe_tie_probe:
        return moe_tie_probe(ops, args.moe_tie)
    inv = not args.no_invariant_claim
    about = ops.describe()

    def bound(default):
        return args.ulp_bound if args.ulp_bound >= 0 else default

    def capable(fn):
        """A dtype the build has no kernel for ("not implemented for
        'Half'" on CPU), or a forced SDPA backend that cannot take the
        batch ("No available kernel", e.g. flash with a mask), is
        unsupported, not a crash."""
        def run(*args, **kw):
            try:
                return fn(*args, **kw)
            except RuntimeError as e:
                if "not implemented for" in str(e) or "No available kernel" in str(e):
                    raise bp.Unsupported(str(e)) from e
                raise
        return run

    table = {
        "rmsnorm": bp.Op(capable(ops.rmsnorm), ulp_bound=bound(1), invariant=inv, about="F.rms_norm; " + about),
        "gemm": bp.Op(capable(ops.gemm), ulp_bound=bound(2), invariant=inv, about="torch.matmul; " + about),
        "logprob": bp.Op(capable(ops.logprob), ulp_bound=bound(64), invariant=inv,
                         about="log_softmax(%s)+gather; %s" % (args.logprob_dtype, about)),
        "attn_prefill": bp.Op(capable(ops.attn_prefill), ulp_bound=bound(2), invariant=inv, layout=True,
                              about="SDPA causal; " + about),
        "attn_decode": bp.Op(capable(ops.attn_decode), ulp_bound=bound(2), invariant=inv, layout=True,
                             about="SDPA decode (mask %s); %s" % (args.decode_mask, about)),
        "moe_route": bp.Op(capable(lambda logits, top_k: ops.moe_route(logits, top_k, args.moe_tie)),
                           schedule="" if args.moe_tie == "torch" else "tie=%s sum=sequential" % args.moe_tie,
                           invariant=inv, about="torch.softmax fp32, top-k tie=%s; %s" % (args.moe_tie, about)),
    }
    name = "torch"
    if args.sdpa_backend:
        name += "-" + args.sdpa_backend
    if args.logprob_dtype == "native":
        name += "-nativelp"
    if args.deterministic:
        name += "-det"
    if args.moe_tie != "lowest":
        name += "-tie-" + args.moe_tie
    return bp.serve(table, name=name, arrays="torch", device=ops.device, argv=[args.op] if args.op else [])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
