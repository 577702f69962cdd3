"""FlashInfer and flash-attn entries for the kit: attn_prefill and
attn_decode through those libraries, with their split and determinism
options as adapter flags (adapters/attn_libs.py serves them).

    attn_libs.py LIB OP [--device DEV] [--fixed-split-size N] [--disable-split-kv]
                        [--num-splits N] [--deterministic]

  LIB flashinfer  attn_prefill: BatchPrefillWithRaggedKVCacheWrapper, causal;
                  attn_decode: BatchDecodeWithPagedKVCacheWrapper on a paged
                  cache of PAGE_SIZE tokens a page. --fixed-split-size N and
                  --disable-split-kv go to plan() (FlashInfer's batch-invariant
                  split-KV options).
  LIB flash-attn  attn_prefill: flash_attn_varlen_func, causal (--deterministic:
                  its deterministic backward flag, passed as the library takes
                  it); attn_decode: flash_attn_with_kvcache with cache_seqlens,
                  --num-splits N (0: the library's heuristic, 1: no split).

A library that does not import here (not installed, or built for another
CUDA) is skipped: Skip says why, and the adapter exits SKIP_EXIT with that
line on stderr. This module imports neither torch nor the libraries until
an entry is built, so flag parsing and the skip path run anywhere.
"""
import argparse
import importlib
import importlib.util

# LIBS maps a library's adapter name to its Python module.
LIBS = {"flashinfer": "flashinfer", "flash-attn": "flash_attn"}
INSTALL = {"flashinfer": "pip install flashinfer-python", "flash-attn": "pip install flash-attn --no-build-isolation"}
ATTN_OPS = ("attn_prefill", "attn_decode")
PAGE_SIZE = 16  # FlashInfer decode's page size (vLLM's default block size)
SKIP_EXIT = 3


class Skip(Exception):
    """The library does not import here; the message says why."""


def parse(argv):
    """The adapter's flags; an option of the other library is an error."""
    ap = argparse.ArgumentParser(prog="attn_libs.py")
    ap.add_argument("lib", choices=tuple(LIBS))
    ap.add_argument("op", choices=ATTN_OPS)
    ap.add_argument("--device", default="")
    ap.add_argument("--fixed-split-size", type=int, default=-1, help="flashinfer: plan(fixed_split_size=N)")
    ap.add_argument("--disable-split-kv", action="store_true", help="flashinfer: plan(disable_split_kv=True)")
    ap.add_argument("--num-splits", type=int, default=0, help="flash-attn decode: num_splits (0: heuristic)")
    ap.add_argument("--deterministic", action="store_true", help="flash-attn: deterministic=True; torch deterministic algorithms")
    a = ap.parse_args(argv)
    if a.lib != "flashinfer" and (a.fixed_split_size >= 0 or a.disable_split_kv):
        ap.error("--fixed-split-size and --disable-split-kv are flashinfer options, not %s's" % a.lib)
    if a.lib != "flash-attn" and a.num_splits:
        ap.error("--num-splits is a flash-attn option, not %s's" % a.lib)
    if a.num_splits < 0:
        ap.error("--num-splits %d: want >= 0 (0: the library's heuristic)" % a.num_splits)
    if a.fixed_split_size == 0 or a.fixed_split_size < -1:
        ap.error("--fixed-split-size %d: want a positive number of KV tokens a split" % a.fixed_split_size)
    return a


def name(a):
    """The adapter's name: the library and the options that change bits."""
    s = a.lib
    if a.fixed_split_size > 0:
        s += "-split%d" % a.fixed_split_size
    if a.disable_split_kv:
        s += "-nosplit"
    if a.num_splits:
        s += "-splits%d" % a.num_splits
    if a.deterministic:
        s += "-det"
    return s


def load(lib, find_spec=importlib.util.find_spec, import_module=importlib.import_module):
    """The library's module, or Skip saying why it does not import."""
    mod = LIBS[lib]
    if find_spec(mod) is None:
        raise Skip("%s is not installed (%s): its entries are skipped" % (lib, INSTALL[lib]))
    try:
        return import_module(mod)
    except (ImportError, OSError, RuntimeError) as e:  # e.g. built for another CUDA or torch
        raise Skip("%s does not import here (%s: %s): its entries are skipped" % (lib, type(e).__name__, e)) from e


def split_kw(a):
    """FlashInfer plan() keywords of the split options set."""
    kw = {}
    if a.fixed_split_size > 0:
        kw["fixed_split_size"] = a.fixed_split_size
    if a.disable_split_kv:
        kw["disable_split_kv"] = True
    return kw


def entry(a, mod, torch, device):
    """The op function of a.op through a.lib: the kit passes q, k, v
    (prefill: [seqs, seq_len, heads, head_dim] and [seqs, seq_len,
    kv_heads, head_dim]; decode: q [requests, heads, head_dim], k and v
    [tokens, kv_heads, head_dim], the caches one after another, and lens)."""
    if a.lib == "flash-attn":
        return _flash_attn(a, mod, torch, device)
    return _flashinfer(a, mod, torch, device)


def _padded(torch, k, v, lens):
    """k and v [tokens, KH, D] as [B, Lmax, KH, D], zero past each length."""
    B, lmax = lens.shape[0], int(lens.max().item())
    starts = torch.cumsum(lens, 0) - lens
    b = torch.repeat_interleave(torch.arange(B, device=k.device), lens)
    pos = torch.arange(k.shape[0], device=k.device) - torch.repeat_interleave(starts, lens)
    kp = k.new_zeros((B, lmax) + tuple(k.shape[1:]))
    vp = v.new_zeros((B, lmax) + tuple(v.shape[1:]))
    kp[b, pos], vp[b, pos] = k, v
    return kp, vp


def _flash_attn(a, mod, torch, device):
    if a.op == "attn_prefill":
        def prefill(q, k, v):
            S, L = q.shape[0], q.shape[1]
            cu = torch.arange(0, (S + 1) * L, L, dtype=torch.int32, device=device)
            o = mod.flash_attn_varlen_func(q.reshape(S * L, *q.shape[2:]), k.reshape(S * L, *k.shape[2:]),
                                           v.reshape(S * L, *v.shape[2:]), cu, cu, L, L, causal=True,
                                           deterministic=a.deterministic)
            return o.reshape(q.shape)
        return prefill

    def decode(q, k, v, lens):
        kp, vp = _padded(torch, k, v, lens)
        o = mod.flash_attn_with_kvcache(q[:, None], kp, vp, cache_seqlens=lens.to(torch.int32),
                                        num_splits=a.num_splits)
        return o[:, 0]
    return decode


def _flashinfer(a, mod, torch, device):
    workspace = torch.empty(128 * 1024 * 1024, dtype=torch.uint8, device=device)
    if a.op == "attn_prefill":
        w = mod.BatchPrefillWithRaggedKVCacheWrapper(workspace, "NHD")

        def prefill(q, k, v):
            S, L, H, D = q.shape
            indptr = torch.arange(0, (S + 1) * L, L, dtype=torch.int32, device=device)
            w.plan(indptr, indptr, H, k.shape[2], D, causal=True, q_data_type=q.dtype, **split_kw(a))
            o = w.run(q.reshape(S * L, H, D), k.reshape(S * L, *k.shape[2:]), v.reshape(S * L, *v.shape[2:]))
            return o.reshape(q.shape)
        return prefill
    w = mod.BatchDecodeWithPagedKVCacheWrapper(workspace, "NHD")

    def decode(q, k, v, lens):
        B, H, D = q.shape
        KH = k.shape[1]
        pages = (lens + PAGE_SIZE - 1) // PAGE_SIZE
        indptr = torch.zeros(B + 1, dtype=torch.int32, device=device)
        indptr[1:] = torch.cumsum(pages, 0)
        n = int(indptr[-1].item())
        kc = k.new_zeros((n, PAGE_SIZE, KH, D))
        vc = v.new_zeros((n, PAGE_SIZE, KH, D))
        starts = torch.cumsum(lens, 0) - lens
        b = torch.repeat_interleave(torch.arange(B, device=device), lens)
        pos = torch.arange(k.shape[0], device=device) - torch.repeat_interleave(starts, lens)
        page = indptr[b].long() + pos // PAGE_SIZE
        kc[page, pos % PAGE_SIZE], vc[page, pos % PAGE_SIZE] = k, v
        last = (lens - 1) % PAGE_SIZE + 1
        w.plan(indptr, torch.arange(n, dtype=torch.int32, device=device), last.to(torch.int32),
               H, KH, D, PAGE_SIZE, q_data_type=q.dtype, **split_kw(a))
        return w.run(q, (kc, vc))
    return decode
