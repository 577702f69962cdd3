"""The model route: a whole decoder's train path against its inference path.

The harness sends op "transformer" requests (docs/protocol.md, "The model
route"): a model configuration, the weights' seed and a plan of requests
(tokens, prompt lengths, arrival steps, reported counts). The adapter runs
its model twice, as a trainer (the sequences packed, teacher forcing) and as
an inference engine (prefill, then KV-cached decode in padded batches that
requests join and leave), and returns both paths' log-probs of every
response position and, as taps, the outputs of each layer's submodules at
the positions the engine reported. The harness compares and localises.
"""

from dataclasses import dataclass, field

import numpy as np

from . import dtypes

CONFIG_FIELDS = ("layers", "hidden", "ffn", "vocab", "heads", "kv_heads", "head_dim", "pad")


@dataclass
class PlannedRequest:
    """One sequence of the plan: tokens (prompt then response, teacher
    forcing), the prompt length, the engine step it arrives at, and how many
    response positions the engine reports before the request leaves."""
    tokens: np.ndarray
    prompt: int
    arrive: int
    reported: int

    @property
    def response(self):
        return len(self.tokens) - self.prompt


class ModelRequest:
    """One model-route request.

    config: {layers, hidden, ffn, vocab, heads, kv_heads, head_dim, pad}
    (pad: the engine pads decode batches to a multiple of it).
    seed: the weights' seed. in_dtype: weights and activations; out_dtype:
    the declared training dtype. eps: the RMSNorm epsilon (float32, exact).
    requests: the plan (PlannedRequest). want_taps: whether the harness
    asks for taps.

    Response positions are numbered request by request: position
    base[r] + j (0 <= j < response of r) is the log-prob of token
    prompt + j given the tokens before it.
    """

    def __init__(self, meta, tensors):
        self.meta = meta
        self.seq = meta.get("seq", "")
        self.in_dtype = meta.get("in", "bf16")
        self.out_dtype = meta.get("out", "bf16")
        self.seed = int(meta.get("seed", "0"))
        self.want_taps = meta.get("taps") == "true"
        bits = meta.get("eps_bits")
        self.eps = np.array([int(bits or "0", 16)], dtype=np.uint32).view(np.float32)[0]
        try:
            self.config = {k: int(meta[k]) for k in CONFIG_FIELDS}
        except KeyError as e:
            raise ValueError("model request %s: field %s missing" % (self.seq, e)) from None
        need = ("tokens", "lens", "prompt", "arrive", "reported")
        for n in need:
            if n not in tensors:
                raise ValueError("model request %s: tensor %r missing" % (self.seq, n))
        toks = tensors["tokens"][1].astype(np.int64)
        lens = tensors["lens"][1].astype(np.int64)
        if int(lens.sum()) != len(toks):
            raise ValueError("model request %s: lens add up to %d, tokens has %d" % (self.seq, lens.sum(), len(toks)))
        self.requests = []
        at = 0
        for r, n in enumerate(lens):
            self.requests.append(PlannedRequest(toks[at:at + n], int(tensors["prompt"][1][r]),
                                                int(tensors["arrive"][1][r]), int(tensors["reported"][1][r])))
            at += n

    def positions(self):
        """Every response position as (request, j), in position order."""
        return [(r, j) for r, q in enumerate(self.requests) for j in range(q.response)]

    def reported_positions(self):
        """The positions the engine reports, as (request, j): the rows of
        every tap."""
        return [(r, j) for r, q in enumerate(self.requests) for j in range(q.reported)]


@dataclass
class ModelResult:
    """What a model route returns.

    train: [positions] the trainer's log-probs (any float dtype; rounded to
    the training dtype once). infer: [positions] the engine's log-probs
    (fp32 or narrower), +0 where it did not report. taps_train and
    taps_infer: {site: [reported positions, width]} in execution order (the
    first site a drift reaches is the first that differs); the two paths'
    arrays of a site have the same dtype and shape. Site names are free
    text without commas or slashes, e.g. "L0.self_attn" or "final.lm_head".
    tap_dtype: "bf16" or "fp16" sends fp32 taps in that dtype (rounded to
    nearest even: exact for values already rounded to it, as activations
    of a bf16 model are), so that findings count ulps of the model's
    dtype; empty sends each tap in its own dtype.
    """
    train: object
    infer: object
    taps_train: dict = field(default_factory=dict)
    taps_infer: dict = field(default_factory=dict)
    tap_dtype: str = ""


def _tap(a, tap_dtype=""):
    kind, h = dtypes.host_array(a)
    if tap_dtype and kind == "fp32":
        kind, h = tap_dtype, dtypes.to_wire(h, tap_dtype)
    wire = {"bf16": "BF16", "fp16": "F16", "fp32": "F32"}.get(kind)
    if wire is None:
        raise dtypes.DTypeError("tap of dtype %s: want fp32 or narrower" % kind)
    return wire, np.ascontiguousarray(h)


def model_reply(req, res):
    """A ModelResult as the reply's metadata and tensors."""
    if not isinstance(res, ModelResult):
        raise TypeError("the model route returned %s: want a ModelResult" % type(res).__name__)
    npos = len(req.positions())
    train = dtypes.to_wire(res.train, req.out_dtype).reshape(-1)
    infer = dtypes.to_wire(res.infer, "fp32").reshape(-1)
    if train.size != npos or infer.size != npos:
        raise ValueError("log-probs: train has %d values, infer %d, the plan has %d response positions" % (train.size, infer.size, npos))
    out = [("train", dtypes.WIRE[req.out_dtype], train), ("infer", "F32", infer)]
    nrep = len(req.reported_positions())
    sites = []
    for site, a in res.taps_train.items():
        if "," in site or "/" in site:
            raise ValueError("tap site %r: no commas or slashes" % site)
        if site not in res.taps_infer:
            raise ValueError("tap site %r: the train path has it, the inference path does not" % site)
        wa, ha = _tap(a, res.tap_dtype)
        wb, hb = _tap(res.taps_infer[site], res.tap_dtype)
        if wa != wb or ha.shape != hb.shape or ha.shape[0] != nrep:
            raise ValueError("tap site %r: train %s %s, infer %s %s: want the same dtype and shape [%d reported positions, width]" %
                             (site, wa, list(ha.shape), wb, list(hb.shape), nrep))
        out.append(("train/" + site, wa, ha.reshape(nrep, -1)))
        out.append(("infer/" + site, wb, hb.reshape(nrep, -1)))
        sites.append(site)
    return {"sites": ",".join(sites)}, out
