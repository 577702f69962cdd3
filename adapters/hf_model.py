#!/usr/bin/env python3
"""A Hugging Face transformers decoder as a bitparity model route.

usage: hf_model.py [--arch llama|qwen2] [--device DEV] [--attn IMPL]
                   [--batch-invariant] [--train-layout packed|padded]
                   [--deterministic]

    bitparity run --exec 'python3 adapters/hf_model.py' --duration 60s

For each request of the harness (docs/protocol.md, "The model route") it
builds the architecture's model from a tiny configuration (the harness's
layers, hidden, ffn, vocab, heads, kv_heads, head_dim, eps) with weights
drawn from torch.manual_seed(seed): nothing is downloaded. It then runs
the plan twice:

  training path   every sequence packed into one row (position ids restart
                  per sequence, a block-diagonal causal 4D mask; or, with
                  --train-layout padded, one right-padded row per
                  sequence), teacher forcing: one forward, the log-prob of
                  every next token from log_softmax(logits in fp32)
  inference path  an engine loop: at step s the requests arriving at s are
                  prefilled together (right-padded prompts); every request
                  that arrived earlier and has positions left feeds its
                  next given token in one decode batch against its own KV
                  cache (caches left-padded to the longest, the batch padded
                  with filler rows to a multiple of pad); a request leaves
                  after its reported positions

and returns both paths' log-probs and, as taps, the output of every
submodule of every layer at the positions the engine reported (in the
model's dtype): L<l>.input_layernorm, q_proj, k_proj, v_proj, attention
(o_proj's input), o_proj, post_attention_layernorm, gate_proj, up_proj,
act (down_proj's input), down_proj, out (the layer's output), then
final.norm and final.lm_head.

--attn: the attention implementation, eager, sdpa (default) or another
transformers accepts. --batch-invariant: every Linear and RMSNorm runs on
fixed chunks of 64 rows (the batch padded with zero rows), so each row sees
the same kernel whatever the batch; attention is left as it is. Those two
flags are what the H200 runs compare (docs/python.md).
"""

import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))
from bitparity_adapter import ModelResult, Op, serve  # noqa: E402

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
CHUNK = 64


def chunked(fn):
    """fn applied to fixed blocks of CHUNK rows (zero-padded): a row's
    result does not depend on how many rows came with it."""
    def run(x, *args, **kw):
        shp = x.shape
        x2 = x.reshape(-1, shp[-1])
        m = x2.shape[0]
        pad = (-m) % CHUNK
        if pad:
            x2 = torch.cat([x2, x2.new_zeros(pad, shp[-1])])
        y = torch.cat([fn(x2[i:i + CHUNK], *args, **kw) for i in range(0, x2.shape[0], CHUNK)])[:m]
        return y.reshape(*shp[:-1], y.shape[-1])
    return run


def build(args, cfg, seed, dtype, eps, device):
    import transformers
    kw = dict(vocab_size=cfg["vocab"], hidden_size=cfg["hidden"], intermediate_size=cfg["ffn"],
              num_hidden_layers=cfg["layers"], num_attention_heads=cfg["heads"],
              num_key_value_heads=cfg["kv_heads"], head_dim=cfg["head_dim"], rms_norm_eps=float(eps),
              max_position_embeddings=8192, tie_word_embeddings=False, initializer_range=0.1,
              attn_implementation=args.attn)
    if args.arch == "llama":
        config, cls = transformers.LlamaConfig(**kw), transformers.LlamaForCausalLM
    else:
        config, cls = transformers.Qwen2Config(**kw), transformers.Qwen2ForCausalLM
    torch.manual_seed(seed & (2 ** 63 - 1))
    model = cls(config)
    if hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation(args.attn)
    else:
        model.config._attn_implementation = args.attn
    model = model.to(device=device, dtype=dtype).eval()
    if args.batch_invariant:
        for mod in model.modules():
            if isinstance(mod, torch.nn.Linear) or type(mod).__name__.endswith("RMSNorm"):
                mod.forward = chunked(mod.forward)
    return model


def sites(model):
    """(site, module, "in" or "out") in execution order."""
    out = []
    m = model.model
    for i, layer in enumerate(m.layers):
        a, p = layer.self_attn, layer.mlp
        out += [("L%d.input_layernorm" % i, layer.input_layernorm, "out"),
                ("L%d.q_proj" % i, a.q_proj, "out"), ("L%d.k_proj" % i, a.k_proj, "out"),
                ("L%d.v_proj" % i, a.v_proj, "out"), ("L%d.attention" % i, a.o_proj, "in"),
                ("L%d.o_proj" % i, a.o_proj, "out"),
                ("L%d.post_attention_layernorm" % i, layer.post_attention_layernorm, "out"),
                ("L%d.gate_proj" % i, p.gate_proj, "out"), ("L%d.up_proj" % i, p.up_proj, "out"),
                ("L%d.act" % i, p.down_proj, "in"), ("L%d.down_proj" % i, p.down_proj, "out"),
                ("L%d.out" % i, layer, "out")]
    return out + [("final.norm", m.norm, "out"), ("final.lm_head", model.lm_head, "out")]


class Capture:
    """Forward hooks that keep, per site, the rows of the tokens the runner
    names (want: batch indices, sequence indices, response positions)."""

    def __init__(self, model):
        self.rows, self.want, self.handles = {}, None, []
        for name, mod, which in sites(model):
            self.rows[name] = {}
            if which == "in":
                self.handles.append(mod.register_forward_pre_hook(self._hook(name, lambda a, o: a[0])))
            else:
                self.handles.append(mod.register_forward_hook(
                    self._hook(name, lambda a, o: o[0] if isinstance(o, tuple) else o)))

    def _hook(self, name, pick):
        def fn(mod, args, out=None):
            if self.want is None:
                return
            b, s, pos = self.want
            x = pick(args, out)
            sel = x[b, s].detach().to("cpu")
            d = self.rows[name]
            for i, p in enumerate(pos):
                d[p] = sel[i]
        return fn

    def matrix(self, name, positions):
        return torch.stack([self.rows[name][p] for p in positions])

    def close(self):
        for h in self.handles:
            h.remove()


def cache_layers(cache):
    """[(keys, values)] per layer of a transformers cache, [batch, kv_heads,
    tokens, head_dim], whatever the version's cache class."""
    if hasattr(cache, "layers"):
        return [(layer.keys, layer.values) for layer in cache.layers]
    if hasattr(cache, "key_cache"):
        return list(zip(cache.key_cache, cache.value_cache))
    return [(k, v) for k, v in cache]


def make_cache(kv):
    from transformers import DynamicCache
    c = DynamicCache()
    for i, (k, v) in enumerate(kv):
        c.update(k, v, i)
    return c


class Route:
    def __init__(self, args):
        self.args = args
        dev = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.device = torch.device(dev)
        if args.deterministic:
            torch.use_deterministic_algorithms(True)
        self.layout = args.train_layout

    def about(self):
        import transformers
        s = "transformers %s %s, torch %s, attn %s, train %s" % (
            transformers.__version__, args_arch(self.args), torch.__version__, self.args.attn, self.layout)
        if self.device.type == "cuda":
            s += ", %s" % torch.cuda.get_device_name(self.device)
        if self.args.batch_invariant:
            s += ", linear+rmsnorm in fixed %d-row chunks" % CHUNK
        if self.args.deterministic:
            s += ", deterministic algorithms"
        return s

    @torch.inference_mode()
    def __call__(self, req):
        dtype = DTYPES[req.in_dtype]
        model = build(self.args, req.config, req.seed, dtype, req.eps, self.device)
        reqs = req.requests
        base = np.concatenate([[0], np.cumsum([q.response for q in reqs])]).astype(int)
        reported = [int(base[r]) + j for r, q in enumerate(reqs) for j in range(q.reported)]
        cap = Capture(model)
        try:
            try:
                train = self.train(model, reqs, base, cap)
            except Exception as e:
                if self.layout != "packed":
                    raise
                # this transformers refuses the packed row's 4D mask: say so, train padded from now on
                print("hf_model: packed training layout failed (%s: %s); using --train-layout padded" %
                      (type(e).__name__, e), file=sys.stderr)
                self.layout = "padded"
                cap.rows = {s: {} for s in cap.rows}
                train = self.train(model, reqs, base, cap)
            tt = {s: cap.matrix(s, reported) for s in cap.rows}
            cap.rows = {s: {} for s in cap.rows}
            infer = self.infer(model, reqs, base, cap, req.config["pad"])
            ti = {s: cap.matrix(s, reported) for s in cap.rows}
        finally:
            cap.close()
        return ModelResult(train=train, infer=infer, taps_train=tt, taps_infer=ti)

    def train(self, model, reqs, base, cap):
        dev = self.device
        npos = int(base[-1])
        lens = [len(q.tokens) for q in reqs]
        if self.layout == "packed":
            toks = torch.tensor(np.concatenate([q.tokens for q in reqs]), device=dev)[None]
            starts = np.concatenate([[0], np.cumsum(lens)]).astype(int)
            pos = torch.tensor(np.concatenate([np.arange(n) for n in lens]), device=dev)[None]
            seg = torch.repeat_interleave(torch.arange(len(reqs), device=dev), torch.tensor(lens, device=dev))
            T = toks.shape[1]
            allowed = (seg[:, None] == seg[None, :]) & torch.ones(T, T, dtype=torch.bool, device=dev).tril()
            dtype = next(model.parameters()).dtype
            mask = torch.zeros(T, T, dtype=dtype, device=dev).masked_fill(~allowed, torch.finfo(dtype).min)[None, None]
            where = [(0, int(starts[r]) + q.prompt + j - 1) for r, q in enumerate(reqs) for j in range(q.response)]
            kw = dict(input_ids=toks, position_ids=pos, attention_mask=mask)
        else:
            L = max(lens)
            ids = torch.zeros(len(reqs), L, dtype=torch.long, device=dev)
            am = torch.zeros(len(reqs), L, dtype=torch.long, device=dev)
            for r, q in enumerate(reqs):
                ids[r, :lens[r]] = torch.tensor(q.tokens, device=dev)
                am[r, :lens[r]] = 1
            pos = torch.arange(L, device=dev)[None].expand(len(reqs), L)
            where = [(r, q.prompt + j - 1) for r, q in enumerate(reqs) for j in range(q.response)]
            kw = dict(input_ids=ids, position_ids=pos, attention_mask=am)
        b = torch.tensor([w[0] for w in where], device=dev)
        s = torch.tensor([w[1] for w in where], device=dev)
        positions = list(range(npos))
        cap.want = (b, s, positions)
        out = model(use_cache=False, **kw)
        cap.want = None
        nxt = torch.tensor([int(q.tokens[q.prompt + j]) for q in reqs for j in range(q.response)], device=dev)
        lp = torch.log_softmax(out.logits[b, s].float(), dim=-1).gather(-1, nxt[:, None])[:, 0]
        return lp.cpu().numpy()

    def infer(self, model, reqs, base, cap, pad):
        dev = self.device
        infer = np.zeros(int(base[-1]), np.float32)
        caches = {}  # request -> [(k [1, kvh, n, d], v)] per layer
        done = [0] * len(reqs)
        step = 0
        while any(done[r] < q.reported for r, q in enumerate(reqs)):
            arrivals = [r for r, q in enumerate(reqs) if q.arrive == step and q.reported > 0]
            if arrivals:  # prefill: right-padded prompts, one batch
                P = [reqs[r].prompt for r in arrivals]
                L = max(P)
                ids = torch.zeros(len(arrivals), L, dtype=torch.long, device=dev)
                am = torch.zeros(len(arrivals), L, dtype=torch.long, device=dev)
                for i, r in enumerate(arrivals):
                    ids[i, :P[i]] = torch.tensor(reqs[r].tokens[:P[i]], device=dev)
                    am[i, :P[i]] = 1
                pos = torch.arange(L, device=dev)[None].expand(len(arrivals), L)
                b = torch.arange(len(arrivals), device=dev)
                s = torch.tensor([p - 1 for p in P], device=dev)
                cap.want = (b, s, [int(base[r]) for r in arrivals])
                out = model(input_ids=ids, attention_mask=am, position_ids=pos, use_cache=True)
                cap.want = None
                nxt = torch.tensor([int(reqs[r].tokens[P[i]]) for i, r in enumerate(arrivals)], device=dev)
                lp = torch.log_softmax(out.logits[b, s].float(), dim=-1).gather(-1, nxt[:, None])[:, 0].cpu().numpy()
                kv = cache_layers(out.past_key_values)
                for i, r in enumerate(arrivals):
                    infer[base[r]] = lp[i]
                    done[r] = 1
                    caches[r] = [(k[i:i + 1, :, :P[i]].clone(), v[i:i + 1, :, :P[i]].clone()) for k, v in kv]
            live = [r for r, q in enumerate(reqs) if q.arrive < step and 0 < done[r] < q.reported]
            if live:  # decode: one token per live request, caches left-padded
                B = len(live)
                Bp = -(-B // pad) * pad if pad > 0 else B
                n = [caches[r][0][0].shape[2] for r in live]
                L = max(n)
                ids = torch.zeros(Bp, 1, dtype=torch.long, device=dev)
                am = torch.zeros(Bp, L + 1, dtype=torch.long, device=dev)
                am[:, L] = 1
                pos = torch.zeros(Bp, 1, dtype=torch.long, device=dev)
                k0, v0 = caches[live[0]][0]
                kv = []
                for li in range(len(caches[live[0]])):
                    K = k0.new_zeros(Bp, k0.shape[1], L, k0.shape[3])
                    V = v0.new_zeros(Bp, v0.shape[1], L, v0.shape[3])
                    for i, r in enumerate(live):
                        K[i, :, L - n[i]:] = caches[r][li][0][0]
                        V[i, :, L - n[i]:] = caches[r][li][1][0]
                    kv.append((K, V))
                for i, r in enumerate(live):
                    q = reqs[r]
                    ids[i, 0] = int(q.tokens[q.prompt + done[r] - 1])
                    am[i, L - n[i]:L] = 1
                    pos[i, 0] = n[i]
                b = torch.arange(B, device=dev)
                s = torch.zeros(B, dtype=torch.long, device=dev)
                cap.want = (b, s, [int(base[r]) + done[r] for r in live])
                out = model(input_ids=ids, attention_mask=am, position_ids=pos,
                            past_key_values=make_cache(kv), use_cache=True)
                cap.want = None
                nxt = torch.tensor([int(reqs[r].tokens[reqs[r].prompt + done[r]]) for r in live], device=dev)
                lp = torch.log_softmax(out.logits[b, s].float(), dim=-1).gather(-1, nxt[:, None])[:, 0].cpu().numpy()
                kv = cache_layers(out.past_key_values)
                for i, r in enumerate(live):
                    infer[base[r] + done[r]] = lp[i]
                    done[r] += 1
                    caches[r] = [(k[i:i + 1, :, L - n[i]:].clone(), v[i:i + 1, :, L - n[i]:].clone()) for k, v in kv]
            step += 1
        return infer


def args_arch(args):
    return {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM"}[args.arch]


def main(argv):
    ap = argparse.ArgumentParser(prog="hf_model.py")
    ap.add_argument("op", nargs="?", default="", choices=("", "transformer"))
    ap.add_argument("--arch", default="llama", choices=("llama", "qwen2"))
    ap.add_argument("--device", default="")
    ap.add_argument("--attn", default="sdpa")
    ap.add_argument("--batch-invariant", action="store_true")
    ap.add_argument("--train-layout", default="packed", choices=("packed", "padded"))
    ap.add_argument("--deterministic", action="store_true")
    args = ap.parse_args(argv)
    if args.deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    route = Route(args)
    name = "hf-%s-%s" % (args.arch, args.attn) + ("-bi" if args.batch_invariant else "") + (
        "-padded" if args.train_layout == "padded" else "")
    op = Op(route, invariant=True, about=route.about())
    return serve({"transformer": op}, name=name, device=str(route.device), argv=[args.op] if args.op else [])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
