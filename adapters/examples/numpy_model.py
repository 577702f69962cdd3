#!/usr/bin/env python3
"""A model route in NumPy: a tiny decoder, its training path and its engine.

usage: numpy_model.py [--drift | --drift-from N] [--drift-prompt-from P]

    bitparity run --exec 'python3 adapters/examples/numpy_model.py' --duration 20s

This is the reference of the model route (docs/protocol.md, "The model
route") that runs anywhere NumPy does; adapters/hf_model.py does the same
with a Hugging Face model. The decoder: embedding, per layer RMSNorm,
grouped-query causal attention (no RoPE), output projection, residual,
RMSNorm, SiLU-gated MLP, residual; final RMSNorm, LM head. Weights and
activations are rounded to the request's dtype after every op; every
reduction runs in fp32, sequentially, one row at a time, so each row's bits
depend on nothing but its own inputs: the training path (every sequence
packed into one batch, teacher forcing) and the engine (prefill of the
arriving prompts, then one decode batch per step against per-request KV
caches, padded to a multiple of pad, requests joining and leaving) agree
bit for bit.

--drift plants what split-KV decode kernels do: in a decode batch of two or
more live requests, attention sums its weighted values from the last cached
token to the first. bitparity should report the log-prob or tap difference
at L0.attention with a drift map over the batch size (batch 1 agrees).
--drift-from N plants the same from N live requests on (--drift is
--drift-from 2): `bitparity scan --exec ... --dim requests` maps it as
"requests <= N-1 -> A, requests >= N -> B".
--drift-prompt-from P plants what a prefill kernel chosen by prompt
length does: a prefill of two or more prompts, the longest P tokens or
more, sums its attention backwards: `bitparity scan --exec ... --dim
prompt` (the other prompts shorter than P) maps it as "prompt <= P-1 ->
A, prompt >= P -> B".
The route is exec:numpy-model.transformer with or without --drift (its
hello's about says which), so a finding recorded with --drift replays
without it as on a fixed build: `bitparity repro --exec
'python3 adapters/examples/numpy_model.py' CASE` says COULD NOT REPRODUCE.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from bitparity_adapter import ModelResult, Op, round_to, serve  # noqa: E402


class Decoder:
    def __init__(self, cfg, seed, dtype, eps):
        self.cfg, self.dtype, self.eps = cfg, dtype, np.float32(eps)
        rng = np.random.default_rng(seed)
        H, F, V = cfg["hidden"], cfg["ffn"], cfg["vocab"]
        qw, kw = cfg["heads"] * cfg["head_dim"], cfg["kv_heads"] * cfg["head_dim"]

        def w(*shape):
            return self.round(rng.standard_normal(shape).astype(np.float32) / np.float32(np.sqrt(shape[0])))

        self.embed = self.round(rng.standard_normal((V, H)).astype(np.float32))
        self.layers = [dict(wq=w(H, qw), wk=w(H, kw), wv=w(H, kw), wo=w(qw, H), gate=w(H, F), up=w(H, F), down=w(F, H))
                       for _ in range(cfg["layers"])]
        self.lm = w(H, V)

    def round(self, x):
        return round_to(x, self.dtype)

    @staticmethod
    def linear(x, w):
        """x [n, k] @ w [k, m] in fp32, k ascending: row-independent."""
        acc = np.zeros((x.shape[0], w.shape[1]), np.float32)
        for k in range(w.shape[0]):
            acc += x[:, k, None] * w[None, k, :]
        return acc

    def rmsnorm(self, x):
        ss = np.zeros(x.shape[0], np.float32)
        for j in range(x.shape[1]):
            ss += x[:, j] * x[:, j]
        rstd = np.float32(1) / np.sqrt(ss / np.float32(x.shape[1]) + self.eps)
        return self.round(x * rstd[:, None])

    def attend(self, q, k, v, n, reverse=False):
        """Causal attention of query rows q [r, heads, d] over keys and
        values k, v [r, L, kv_heads, d] (row i's own cache), the first n[i]
        of them; fp32, sequential over d and over tokens."""
        r, nh, d = q.shape
        g = nh // k.shape[2]
        kk = np.repeat(k, g, axis=2)  # [r, L, heads, d]
        vv = np.repeat(v, g, axis=2)
        L = k.shape[1]
        s = np.zeros((r, L, nh), np.float32)
        for j in range(d):
            s += q[:, None, :, j] * kk[:, :, :, j]
        s *= np.float32(1) / np.sqrt(np.float32(d))
        valid = np.arange(L)[None, :] < n[:, None]
        s = np.where(valid[:, :, None], s, np.float32(-np.inf))
        m = s.max(axis=1)
        p = np.where(valid[:, :, None], np.exp(s - m[:, None, :]), np.float32(0)).astype(np.float32)
        l = np.zeros((r, nh), np.float32)
        o = np.zeros((r, nh, d), np.float32)
        order = range(L - 1, -1, -1) if reverse else range(L)
        for t in order:
            l += p[:, t]
            o += p[:, t, :, None] * vv[:, t]
        return self.round(o / l[:, :, None])

    def forward(self, tokens, attention, tap):
        """One batch of token rows; attention(layer, q, k, v) returns the
        attention output rows; tap(site, rows) records what the runner
        wants. Returns the fp32 log-softmax rows of the logits."""
        cfg = self.cfg
        h = self.embed[tokens]
        for li, L in enumerate(self.layers):
            a = self.rmsnorm(h)
            tap("L%d.input_layernorm" % li, a)
            q = self.round(self.linear(a, L["wq"])).reshape(len(tokens), cfg["heads"], cfg["head_dim"])
            k = self.round(self.linear(a, L["wk"])).reshape(len(tokens), cfg["kv_heads"], cfg["head_dim"])
            v = self.round(self.linear(a, L["wv"])).reshape(len(tokens), cfg["kv_heads"], cfg["head_dim"])
            o = attention(li, q, k, v).reshape(len(tokens), -1)
            tap("L%d.attention" % li, o)
            o = self.round(self.linear(o, L["wo"]))
            tap("L%d.o_proj" % li, o)
            h = self.round(h + o)
            m = self.rmsnorm(h)
            tap("L%d.post_attention_layernorm" % li, m)
            g, u = self.linear(m, L["gate"]), self.linear(m, L["up"])
            g, u = self.round(g), self.round(u)
            x = self.round(self.round(g / (np.float32(1) + np.exp(-g))) * u)
            x = self.round(self.linear(x, L["down"]))
            tap("L%d.mlp" % li, x)
            h = self.round(h + x)
        f = self.rmsnorm(h)
        tap("final.norm", f)
        logits = self.round(self.linear(f, self.lm))
        tap("final.lm_head", logits)
        mx = logits.max(axis=1)
        s = np.zeros(len(tokens), np.float32)
        for j in range(logits.shape[1]):
            s += np.exp(logits[:, j] - mx)
        return logits - mx[:, None] - np.log(s)[:, None]


class Taps:
    """Tap rows by (path, site) and response position."""

    def __init__(self):
        self.rows = {}
        self.want = {}  # batch row -> response position, for the running forward

    def __call__(self, site, a):
        d = self.rows.setdefault(site, {})
        for row, pos in self.want.items():
            d[pos] = np.array(a[row], dtype=np.float32).reshape(-1)

    def matrix(self, site, positions):
        return np.stack([self.rows[site][p] for p in positions])


def run(req, drift_from, prompt_from=0):
    cfg = req.config
    model = Decoder(cfg, req.seed, req.in_dtype, req.eps)
    reqs = req.requests
    base = np.concatenate([[0], np.cumsum([q.response for q in reqs])]).astype(int)
    npos = int(base[-1])
    reported = [int(base[r]) + j for r, q in enumerate(reqs) for j in range(q.reported)]

    # Training path: every sequence packed into one batch.
    toks = np.concatenate([q.tokens for q in reqs])
    starts = np.concatenate([[0], np.cumsum([len(q.tokens) for q in reqs])]).astype(int)
    seg = np.repeat(np.arange(len(reqs)), [len(q.tokens) for q in reqs])
    pos_in_seq = np.arange(len(toks)) - starts[seg]
    tt = Taps()
    tt.want = {int(starts[r] + q.prompt + j - 1): int(base[r]) + j for r, q in enumerate(reqs) for j in range(q.reported)}

    def packed_attention(li, q, k, v):
        # row t attends to its own sequence's tokens up to itself
        kc = np.zeros((len(toks), max(len(x.tokens) for x in reqs)) + k.shape[1:], np.float32)
        vc = np.zeros_like(kc)
        for r, x in enumerate(reqs):
            a, b = starts[r], starts[r] + len(x.tokens)
            kc[a:b, :b - a], vc[a:b, :b - a] = k[a:b], v[a:b]
        return model.attend(q, kc, vc, pos_in_seq + 1)

    lp = model.forward(toks, packed_attention, tt)
    train = np.zeros(npos, np.float32)
    for r, q in enumerate(reqs):
        for j in range(q.response):
            t = starts[r] + q.prompt + j - 1
            train[base[r] + j] = lp[t, q.tokens[q.prompt + j]]

    # Inference path: prefill arrivals, then one padded decode batch a step.
    infer = np.zeros(npos, np.float32)
    ti = Taps()
    cache = {}  # (request, layer) -> (k [n, kvh, d], v)
    done = {r: 0 for r in range(len(reqs))}  # positions computed
    step = 0
    while any(done[r] < q.reported for r, q in enumerate(reqs)):
        arrivals = [r for r, q in enumerate(reqs) if q.arrive == step]
        if arrivals:  # prefill: the arrivals' prompts as rows of one batch
            rows = np.concatenate([reqs[r].tokens[:reqs[r].prompt] for r in arrivals])
            owner = np.repeat(arrivals, [reqs[r].prompt for r in arrivals])
            at = np.concatenate([np.arange(reqs[r].prompt) for r in arrivals])
            ends = np.cumsum([reqs[r].prompt for r in arrivals]) - 1
            ti.want = {int(e): int(base[r]) for e, r in zip(ends, arrivals) if reqs[r].reported > 0}

            def prefill_attention(li, q, k, v):
                for r in arrivals:
                    sel = owner == r
                    cache[(r, li)] = (k[sel], v[sel])
                L = max(reqs[r].prompt for r in arrivals)
                kc = np.zeros((len(rows), L) + k.shape[1:], np.float32)
                vc = np.zeros_like(kc)
                for i in range(len(rows)):
                    kk, vv = cache[(int(owner[i]), li)]
                    kc[i, :len(kk)], vc[i, :len(kk)] = kk, vv
                return model.attend(q, kc, vc, at + 1, reverse=0 < prompt_from <= L and len(arrivals) >= 2)

            lp = model.forward(rows, prefill_attention, ti)
            for e, r in zip(ends, arrivals):
                if reqs[r].reported > 0:
                    infer[base[r]] = lp[e, reqs[r].tokens[reqs[r].prompt]]
                    done[r] = 1
        live = [r for r, q in enumerate(reqs) if q.arrive < step and 0 < done[r] < q.reported]
        if live:  # decode: each live request feeds its previous token
            feed = np.array([reqs[r].tokens[reqs[r].prompt + done[r] - 1] for r in live])
            ti.want = {i: int(base[r]) + done[r] for i, r in enumerate(live)}
            n = np.array([reqs[r].prompt + done[r] for r in live])  # cache length after this token

            def decode_attention(li, q, k, v):
                L = int(n.max())
                kc = np.zeros((len(live), L) + k.shape[1:], np.float32)
                vc = np.zeros_like(kc)
                for i, r in enumerate(live):
                    kk, vv = cache[(r, li)]
                    kk, vv = np.concatenate([kk, k[i:i + 1]]), np.concatenate([vv, v[i:i + 1]])
                    cache[(r, li)] = (kk, vv)
                    kc[i, :len(kk)], vc[i, :len(kk)] = kk, vv
                return model.attend(q, kc, vc, n, reverse=0 < drift_from <= len(live))

            lp = model.forward(feed, decode_attention, ti)
            for i, r in enumerate(live):
                j = done[r]
                infer[base[r] + j] = lp[i, reqs[r].tokens[reqs[r].prompt + j]]
                done[r] += 1
        step += 1

    sites = list(tt.rows)
    return ModelResult(train=train, infer=infer,
                       taps_train={s: tt.matrix(s, reported) for s in sites},
                       taps_infer={s: ti.matrix(s, reported) for s in sites},
                       tap_dtype=req.in_dtype if req.in_dtype != "fp32" else "")


def main(argv):
    drift_from, prompt_from = 0, 0  # 0: no planted drift
    rest = []
    it = iter(argv)
    for a in it:
        if a == "--drift":
            drift_from = 2
        elif a in ("--drift-from", "--drift-prompt-from"):
            n = int(next(it, "0"))
            if n < 1:
                sys.exit("numpy_model.py: %s N: want N >= 1" % a)
            if a == "--drift-from":
                drift_from = n
            else:
                prompt_from = n
        else:
            rest.append(a)
    about = "numpy reference decoder, sequential fp32 reductions" + (
        "; planted drift: decode attention sums backwards for %d+ live requests" % drift_from if drift_from else "") + (
        "; planted drift: prefill attention sums backwards for 2+ prompts of up to %d+ tokens" % prompt_from if prompt_from else "")
    op = Op(lambda req: run(req, drift_from, prompt_from), request=True, invariant=True, about=about)
    return serve({"transformer": op}, name="numpy-model", argv=rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
