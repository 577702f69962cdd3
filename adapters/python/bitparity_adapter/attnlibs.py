"""FlashInfer and flash-attn entries for the kit: attn_prefill and
attn_decode through those libraries, with their split and determinism
options as adapter flags (adapters/attn_libs.py serves them).

    attn_libs.py LIB OP [--device DEV] [--fixed-split-size N] [--disable-split-kv]
                        [--num-splits N] [--deterministic]

  LIB flashinfer  attn_prefill: BatchPrefillWithRaggedKVCacheWrapper, causal;
                  attn_decode: BatchDecodeWithPagedKVCacheWrapper on a paged
                  cache of the request's page_size tokens a page (PAGE_SIZE
                  when it names none). --fixed-split-size N and
                  --disable-split-kv go to plan() (FlashInfer's batch-invariant
                  split-KV options).
  LIB flash-attn  attn_prefill: flash_attn_varlen_func, causal (--deterministic:
                  its deterministic backward flag, passed as the library takes
                  it); attn_decode: flash_attn_with_kvcache with cache_seqlens,
                  --num-splits N (0: the library's heuristic, 1: no split); a
                  request's page_size puts the cache in pages of that many
                  tokens with a block_table (flash-attn takes pages of a
                  multiple of 256 tokens: any other is unsupported), 0 a
                  dense cache.

Both read the layout (hello "layout": "true"): a prefill request's chunk
(chunk_from > 0) runs the queries at positions >= chunk_from against every
K/V position, causal aligned bottom-right as both libraries align it when
the queries are fewer than the keys (query i sees K/V [0, chunk_from + i]);
rows below chunk_from are NaN.

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


class Unsupported(Exception):
    """The library cannot take this batch: attn_libs.py answers it as the
    kit's Unsupported (an "unsupported" error frame, not a crash)."""


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


def _chunk_out(torch, q, o, chunk_from):
    """The prefill output [S, L, H, D] of q whose rows at positions >=
    chunk_from are o [S, L - chunk_from, H, D], NaN below."""
    if chunk_from == 0:
        return o.reshape(q.shape)
    y = torch.full_like(q, float("nan"))
    y[:, chunk_from:] = o.reshape(q.shape[0], q.shape[1] - chunk_from, *q.shape[2:])
    return y


def _paged(torch, k, v, lens, page):
    """k and v [tokens, KH, D] in a paged cache [pages, page, KH, D], each
    request's pages in order: (k cache, v cache, page indptr [B+1] int32,
    the page of each request's token and its slot)."""
    B = lens.shape[0]
    pages = (lens + page - 1) // page
    indptr = torch.zeros(B + 1, dtype=torch.int32, device=k.device)
    indptr[1:] = torch.cumsum(pages, 0)
    n = int(indptr[-1].item())
    kc = k.new_zeros((n, page) + tuple(k.shape[1:]))
    vc = v.new_zeros((n, page) + tuple(v.shape[1:]))
    starts = torch.cumsum(lens, 0) - lens
    b = torch.repeat_interleave(torch.arange(B, device=k.device), lens)
    pos = torch.arange(k.shape[0], device=k.device) - torch.repeat_interleave(starts, lens)
    at = indptr[b].long() + pos // page
    kc[at, pos % page], vc[at, pos % page] = k, v
    return kc, vc, indptr


def _flash_attn(a, mod, torch, device):
    if a.op == "attn_prefill":
        def prefill(q, k, v, chunk_from=0):
            S, L = q.shape[0], q.shape[1]
            Lq = L - chunk_from
            cu_q = torch.arange(0, (S + 1) * Lq, Lq, dtype=torch.int32, device=device)
            cu_k = torch.arange(0, (S + 1) * L, L, dtype=torch.int32, device=device)
            o = mod.flash_attn_varlen_func(q[:, chunk_from:].reshape(S * Lq, *q.shape[2:]), k.reshape(S * L, *k.shape[2:]),
                                           v.reshape(S * L, *v.shape[2:]), cu_q, cu_k, Lq, L, causal=True,
                                           deterministic=a.deterministic)
            return _chunk_out(torch, q, o, chunk_from)
        return prefill

    def decode(q, k, v, lens, page_size=0):
        kw = {}
        if page_size == 0:
            kc, vc = _padded(torch, k, v, lens)
        elif page_size % 256:
            raise Unsupported("flash-attn: page size %d (its paged KV cache takes a multiple of 256)" % page_size)
        else:
            kc, vc, indptr = _paged(torch, k, v, lens, page_size)
            B, most = lens.shape[0], int((indptr[1:] - indptr[:-1]).max().item())
            table = torch.zeros((B, most), dtype=torch.int32, device=device)
            for r in range(B):
                table[r, :int(indptr[r + 1] - indptr[r])] = torch.arange(int(indptr[r]), int(indptr[r + 1]), device=device)
            kw["block_table"] = table
        o = mod.flash_attn_with_kvcache(q[:, None], kc, vc, cache_seqlens=lens.to(torch.int32),
                                        num_splits=a.num_splits, **kw)
        return o[:, 0]
    return decode


def _flashinfer(a, mod, torch, device):
    workspace = torch.empty(128 * 1024 * 1024, dtype=torch.uint8, device=device)
    if a.op == "attn_prefill":
        w = mod.BatchPrefillWithRaggedKVCacheWrapper(workspace, "NHD")

        def prefill(q, k, v, chunk_from=0):
            S, L, H, D = q.shape
            Lq = L - chunk_from
            qo = torch.arange(0, (S + 1) * Lq, Lq, dtype=torch.int32, device=device)
            kv = torch.arange(0, (S + 1) * L, L, dtype=torch.int32, device=device)
            w.plan(qo, kv, H, k.shape[2], D, causal=True, q_data_type=q.dtype, **split_kw(a))
            o = w.run(q[:, chunk_from:].reshape(S * Lq, H, D), k.reshape(S * L, *k.shape[2:]), v.reshape(S * L, *v.shape[2:]))
            return _chunk_out(torch, q, o, chunk_from)
        return prefill
    w = mod.BatchDecodeWithPagedKVCacheWrapper(workspace, "NHD")

    def decode(q, k, v, lens, page_size=0):
        B, H, D = q.shape
        page = page_size or PAGE_SIZE
        kc, vc, indptr = _paged(torch, k, v, lens, page)
        n = int(indptr[-1].item())
        last = (lens - 1) % page + 1
        w.plan(indptr, torch.arange(n, dtype=torch.int32, device=device), last.to(torch.int32),
               H, k.shape[1], D, page, q_data_type=q.dtype, **split_kw(a))
        return w.run(q, (kc, vc))
    return decode
