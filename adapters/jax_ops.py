#!/usr/bin/env python3
"""JAX adapter for bitparity: the five ops through JAX/XLA, on the kit.

usage: jax_ops.py [OP] [--device D] [--precision P] [--attention-impl I]
                  [--ulp-bound N] [--no-invariant-claim]

    bitparity run --exec 'python3 adapters/jax_ops.py gemm'

  rmsnorm       x * rsqrt(mean(x*x) + eps) in fp32, rounded to the input
                dtype, times w (the Llama/Flax formula: jnp, XLA fuses it)
  gemm          jnp.matmul(x, w) in the input dtype, fp32 accumulation
                (precision HIGHEST by default, so fp32 inputs are not
                rounded to TF32; --precision default lets XLA choose)
  logprob       jax.nn.log_softmax(logits in fp32) at the target ids
  attn_prefill  jax.nn.dot_product_attention(q, k, v, is_causal=True) on
                [seqs, seq_len, heads, head_dim] (its own layout), GQA
  attn_decode   the same with one query per request against its cache,
                caches padded to the longest and masked by
                key_value_seq_lengths

--device: gpu, cpu, ... (default: JAX's default backend).
--attention-impl: xla or cudnn (default: let JAX choose).
Arrays arrive on the device with bf16 bits intact (the kit reinterprets
them through ml_dtypes, which JAX depends on); each op returns its output in
the dtype it computed and the kit rounds fp32 to a 16-bit request dtype
once. Every op claims batch invariance unless --no-invariant-claim; the
ulp bounds are those of adapters/torch_ops.py (rmsnorm 1, gemm 2, logprob
64 fp32 ulps, attention 2), so both adapters face the same relations.
"""

import argparse
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))
import bitparity_adapter as bp  # noqa: E402  (pip install ./adapters/python, or this checkout's copy)


class Ops:
    def __init__(self, args):
        self.args = args
        self.precision = jax.lax.Precision.HIGHEST if args.precision == "highest" else None
        self.impl = args.attention_impl or None

    def rmsnorm(self, x, w, eps):
        xf = x.astype(jnp.float32)
        y = xf * jax.lax.rsqrt(jnp.mean(xf * xf, axis=-1, keepdims=True) + jnp.float32(eps))
        return y.astype(x.dtype) * w

    def gemm(self, x, w):
        return jnp.matmul(x, w, precision=self.precision)

    def logprob(self, logits, targets):
        lp = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
        return jnp.take_along_axis(lp, targets[:, None], axis=-1)

    def attention(self, q, k, v, **kw):
        try:
            return jax.nn.dot_product_attention(q, k, v, implementation=self.impl, **kw)
        except (NotImplementedError, ValueError) as e:  # a forced cudnn that cannot take the batch
            if self.impl:
                raise bp.Unsupported("dot_product_attention(implementation=%s): %s" % (self.impl, e)) from e
            raise

    def attn_prefill(self, q, k, v):
        return self.attention(q, k, v, is_causal=True)

    def attn_decode(self, q, k, v, lens):
        # q [B, H, D]; k, v [T, KH, D], the requests' caches one after another
        n = np.asarray(lens).astype(np.int64)
        B, lmax = len(n), int(n.max())
        starts = np.concatenate([[0], np.cumsum(n)[:-1]])
        pos = np.arange(lmax)
        idx = np.minimum(starts[:, None] + pos[None, :], k.shape[0] - 1)  # [B, Lmax]; past a cache: masked
        kp, vp = k[jnp.asarray(idx)], v[jnp.asarray(idx)]  # [B, Lmax, KH, D]
        o = self.attention(q[:, None], kp, vp, key_value_seq_lengths=jnp.asarray(n, dtype=jnp.int32))
        return o[:, 0]


def main(argv):
    ap = argparse.ArgumentParser(prog="jax_ops.py")
    ap.add_argument("op", nargs="?", default="", choices=("",) + bp.OPS)
    ap.add_argument("--device", default=None)
    ap.add_argument("--precision", default="highest", choices=("highest", "default"))
    ap.add_argument("--attention-impl", default="", choices=("", "xla", "cudnn"))
    ap.add_argument("--ulp-bound", type=int, default=-1)
    ap.add_argument("--no-invariant-claim", action="store_true")
    args = ap.parse_args(argv)
    ops = Ops(args)
    inv = not args.no_invariant_claim
    dev = jax.devices(args.device)[0] if args.device else jax.devices()[0]
    about = "jax %s, %s %s" % (jax.__version__, dev.platform, getattr(dev, "device_kind", ""))
    if args.attention_impl:
        about += ", attention %s" % args.attention_impl
    if args.precision != "highest":
        about += ", matmul precision %s" % args.precision

    def bound(default):
        return args.ulp_bound if args.ulp_bound >= 0 else default

    table = {
        "rmsnorm": bp.Op(ops.rmsnorm, ulp_bound=bound(1), invariant=inv, about="jnp rmsnorm; " + about),
        "gemm": bp.Op(ops.gemm, ulp_bound=bound(2), invariant=inv, about="jnp.matmul; " + about),
        "logprob": bp.Op(ops.logprob, ulp_bound=bound(64), invariant=inv, about="jax.nn.log_softmax(fp32); " + about),
        "attn_prefill": bp.Op(ops.attn_prefill, ulp_bound=bound(2), invariant=inv,
                              about="jax.nn.dot_product_attention causal; " + about),
        "attn_decode": bp.Op(ops.attn_decode, ulp_bound=bound(2), invariant=inv,
                             about="jax.nn.dot_product_attention decode, kv lengths; " + about),
    }
    name = "jax"
    if args.attention_impl:
        name += "-" + args.attention_impl
    if args.precision != "highest":
        name += "-defprec"
    return bp.serve(table, name=name, arrays="jax", device=dev, argv=[args.op] if args.op else [])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
