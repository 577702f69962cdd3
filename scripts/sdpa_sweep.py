#!/usr/bin/env python3
"""Independent sweep of torch SDPA's prefill against its decode over the KV
length, the property `bitparity scan --exec 'python3 adapters/torch_ops.py
attn_prefill --sdpa-backend B' --exec '... attn_decode ...'` maps.

For each backend and each seed it draws one sequence of MAX tokens (q:
MAX x HEADS x HEAD_DIM, k and v: MAX x KV_HEADS x HEAD_DIM, torch.randn in
the dtype, on the device), and for every KV length v in 1..MAX runs

  prefill  F.scaled_dot_product_attention(q, k, v, is_causal=True) on the
           first v tokens ([1, heads, v, head_dim]), keeping the last
           position's output (every head)
  decode   the same call with the last query alone ([1, heads, 1,
           head_dim]) against the v tokens as its cache, no mask

and records whether the two outputs differ in any bit. GQA goes through
enable_gqa=True, or by repeating the KV heads where the backend or the
torch version has no GQA, as a user would write it. The backend is forced
with torch.nn.attention.sdpa_kernel (default: PyTorch chooses); torch
before 2.0 has no SDPA and gets the formula, as torch_ops.py. A value's
verdict stays on the device; the flags are read once a seed.

It prints one JSON object: per backend, the differing KV lengths per seed
and their union, the seconds taken. By default the inputs are its own, not
bitparity's: two sweeps agree on the lengths where the difference is
systematic (a backend's tile edge, a split chosen by length) and may
disagree where it depends on the values. With --inputs DIR it sweeps the
tensors a `bitparity scan ... --save-inputs DIR` ran on instead (one
folder per draw: q.npy [S, MAX, H, D], k.npy and v.npy [S, MAX, KH, D],
case.json naming the draw's input dtype), all S sequences at once as the
adapter gets them (prefill [S, H, v, D], decode [S, H, 1, D]), so its
differing lengths must equal bitparity's draw for draw, whatever the
values decide; the dimensions, MAX and the dtype then come from the files.

    python3 scripts/sdpa_sweep.py [--to 1024] [--backends default,flash,efficient]
        [--heads 32] [--kv-heads 8] [--head-dim 128] [--dtype bf16] [--seeds 3]
    python3 scripts/sdpa_sweep.py --inputs DIR [--backends ...]
"""
import argparse
import contextlib
import json
import sys
import time

import torch
import torch.nn.functional as F

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
BITS = {torch.bfloat16: torch.int16, torch.float16: torch.int16, torch.float32: torch.int32}
BACKENDS = {"flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION", "cudnn": "CUDNN_ATTENTION", "math": "MATH"}


def forced(backend):
    if backend == "default":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel  # torch >= 2.3
    return sdpa_kernel(getattr(SDPBackend, BACKENDS[backend]))


def attend(q, k, v, backend, **kw):
    """SDPA on [B, H, L, D] with GQA, under the backend."""
    group = q.shape[1] // k.shape[1]
    if not hasattr(F, "scaled_dot_product_attention"):  # torch < 2.0: the formula
        return math_attention(q, k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1), **kw)
    with forced(backend):
        if group > 1:
            try:
                return F.scaled_dot_product_attention(q, k, v, enable_gqa=True, **kw)
            except TypeError:  # torch < 2.5: no enable_gqa
                pass
            except RuntimeError as e:  # a forced backend without GQA
                if "No available kernel" not in str(e):
                    raise
            k = k.repeat_interleave(group, dim=1)
            v = v.repeat_interleave(group, dim=1)
        return F.scaled_dot_product_attention(q, k, v, **kw)


def math_attention(q, k, v, is_causal=False):
    """SDPA's reference formula, for torch < 2.0 (no SDPA, as torch_ops.py)."""
    s = (q @ k.transpose(-2, -1)) * (1.0 / (q.shape[-1] ** 0.5))
    if is_causal:
        n = q.shape[-2]
        s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool, device=q.device).tril(), float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def sweep(q, k, v, backend, lo, hi):
    """Flags (on the device) for KV lengths lo..hi of S sequences at once:
    q [S, N, H, D], k and v [S, N, KH, D]; a length's flag is set when the
    last position of any sequence differs between the two paths."""
    flags = torch.zeros(hi - lo + 1, dtype=torch.bool, device=q.device)
    bits = BITS[q.dtype]
    for n in range(lo, hi + 1):
        qs, ks, vs = (t[:, :n].contiguous().transpose(1, 2) for t in (q, k, v))  # [S, H, n, D]
        pre = attend(qs, ks, vs, backend, is_causal=True)[:, :, n - 1, :]  # [S, H, D]
        ql = q[:, n - 1].contiguous()[:, :, None, :]  # [S, H, 1, D]
        dec = attend(ql, ks, vs, backend)[:, :, 0, :]
        flags[n - lo] = (pre.view(bits) != dec.view(bits)).any()
    return flags


def load_inputs(d):
    """The draws of a `bitparity scan --save-inputs` folder, in order of
    their seed: [(name, q, k, v, dtype name)] with q, k, v float32 NumPy
    arrays [S, N, heads, D]."""
    import os
    import numpy as np
    draws = []
    for name in sorted(os.listdir(d)):
        p = os.path.join(d, name)
        if not os.path.isfile(os.path.join(p, "case.json")):
            continue
        case = json.load(open(os.path.join(p, "case.json")))
        q, k, v = (np.load(os.path.join(p, t + ".npy")) for t in ("q", "k", "v"))
        if q.ndim != 4 or k.shape != v.shape or q.shape[:2] != k.shape[:2] or q.shape[3] != k.shape[3]:
            raise SystemExit("sdpa_sweep.py: %s: q %s, k %s, v %s: want [S, N, H, D] and [S, N, KH, D]" % (p, q.shape, k.shape, v.shape))
        draws.append((case.get("seed", 0), name, q, k, v, case.get("in", "bf16")))
    if not draws:
        raise SystemExit("sdpa_sweep.py: no draws (folders with case.json, q.npy, k.npy, v.npy) in %s" % d)
    draws.sort(key=lambda x: x[0])
    return [x[1:] for x in draws]


def main(argv):
    ap = argparse.ArgumentParser(prog="sdpa_sweep.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="lo", type=int, default=1)
    ap.add_argument("--to", dest="hi", type=int, default=1024)
    ap.add_argument("--backends", default="default,flash,efficient")
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--kv-heads", type=int, default=8)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    ap.add_argument("--seeds", type=int, default=3, help="input draws (seeds SEED, SEED+1, ...)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--inputs", help="sweep the draws a `bitparity scan --save-inputs DIR` wrote")
    a = ap.parse_args(argv)
    saved = load_inputs(a.inputs) if a.inputs else None
    if saved:
        _, q0, k0, _, dtn = saved[0]
        a.hi, a.heads, a.kv_heads, a.head_dim, a.dtype = q0.shape[1], q0.shape[2], k0.shape[2], q0.shape[3], dtn
    backends = [b for b in a.backends.split(",") if b]
    for b in backends:
        if b != "default" and b not in BACKENDS:
            ap.error("backend %r: want default or one of %s" % (b, ", ".join(BACKENDS)))
    if not 1 <= a.lo <= a.hi or a.heads % a.kv_heads:
        ap.error("want 1 <= --from <= --to and heads a multiple of kv heads")
    dt = DTYPES[a.dtype]
    out = {"torch": torch.__version__, "device": a.device, "from": a.lo, "to": a.hi, "heads": a.heads,
           "kv_heads": a.kv_heads, "head_dim": a.head_dim, "dtype": a.dtype,
           "seeds": list(range(a.seed, a.seed + a.seeds)), "backends": {}}
    if saved:
        out["inputs"], out["seeds"], out["sequences"] = a.inputs, [d[0] for d in saved], int(saved[0][1].shape[0])
    if a.device.startswith("cuda"):
        out["gpu"] = torch.cuda.get_device_name(torch.device(a.device))
    with torch.inference_mode():
        for b in backends:
            t0 = time.perf_counter()
            per_seed, err = [], ""
            for i, s in enumerate(out["seeds"]):
                if saved:  # float32 arrays holding values of the dtype: exact
                    q, k, v = (torch.from_numpy(t).to(dt).to(a.device) for t in saved[i][1:4])
                else:
                    g = torch.Generator(device="cpu").manual_seed(s)
                    q = torch.randn(1, a.hi, a.heads, a.head_dim, generator=g).to(dt).to(a.device)
                    k = torch.randn(1, a.hi, a.kv_heads, a.head_dim, generator=g).to(dt).to(a.device)
                    v = torch.randn(1, a.hi, a.kv_heads, a.head_dim, generator=g).to(dt).to(a.device)
                try:
                    flags = sweep(q, k, v, b, a.lo, a.hi)
                except RuntimeError as e:  # the backend cannot run these shapes here
                    err = str(e).splitlines()[0]
                    break
                per_seed.append([a.lo + i for i in torch.nonzero(flags).flatten().tolist()])
            r = {"differ_by_seed": per_seed, "differ": sorted(set().union(*per_seed)),
                 "seconds": round(time.perf_counter() - t0, 3)}
            if err:
                r["error"] = err
            out["backends"][b] = r
    print(json.dumps(out))
    return 1 if any("error" in r for r in out["backends"].values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
