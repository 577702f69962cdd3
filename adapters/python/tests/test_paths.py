import os
import unittest

import numpy as np

from .helpers import converse, hello
from .test_scan import digest_ref

S, L, H, KH, D = 2, 5, 4, 2, 3


def prefill(q, k, v):
    """A planted prefill that shows what it got: o = q + (tokens of the
    batch), taps [rows, 1] the tokens."""
    n = np.float32(k.shape[1])
    return q + n, np.full((q.shape[0] * q.shape[1] * q.shape[2], 1), n, np.float32)


def decode(q, k, v, lens):
    """The decode twin of prefill: o = q + (the request's KV length)."""
    n = np.asarray(lens, np.float32)
    return q + n[:, None, None], np.repeat(n, q.shape[1])[:, None].astype(np.float32)


def sequences():
    rng = np.random.default_rng(1)
    q = rng.standard_normal((S, L, H, D)).astype(np.float32)
    k = rng.standard_normal((S, L, KH, D)).astype(np.float32)
    return q, k


def hold(op, q, k):
    meta = {"frame": "hold", "seq": "1", "op": op, "in": "fp32", "out": "fp32", "path": "sequences"}
    return meta, [("q", "F32", q), ("k", "F32", k), ("v", "F32", k)]


def cuts(seq, *vs):
    return {"frame": "step", "seq": str(seq), "each": "false"}, [("cuts", "I64", np.array(vs, np.int64))]


class PathsTest(unittest.TestCase):
    def test_cuts(self):
        """Both ops answer a step of KV cuts with the digests of the rows at
        each cut: the prefill's last position of the sequences cut to v
        tokens (it got all v), the decode of the query at v-1 against v
        tokens; the same rows, so the same digests."""
        q, k = sequences()
        want = []
        for v in (5, 1, 3):
            for s in range(S):
                for h in range(H):
                    y = (q[s, v - 1, h] + np.float32(v)).view(np.uint32)
                    want.append((digest_ref(y), digest_ref(np.array([v], np.float32).view(np.uint32))))
        for op, fn in (("attn_prefill", prefill), ("attn_decode", decode)):
            with self.subTest(op=op):
                code, got = converse({op: fn}, [hello(op), hold(op, q, k), cuts(2, 5, 1, 3)], name="t")
                self.assertEqual(code, 0)
                self.assertEqual(got[0][0]["scan_cuts"], "1")
                self.assertEqual(got[1][0], {"frame": "held", "seq": "1", "items": str(S)})
                meta, t = got[2]
                self.assertEqual((meta["frame"], meta["tap_cols"]), ("reply", "1"), meta)
                d = t["digests"][1]
                self.assertEqual(d.shape, (3 * S * H, 2))
                self.assertEqual([(int(a) % (1 << 64), int(b) % (1 << 64)) for a, b in d], want)

    def test_refusals(self):
        """A cut outside the held tokens, a step of items on held sequences
        and a step of cuts on a held batch are error frames; the process
        serves on."""
        q, k = sequences()
        items = ({"frame": "step", "seq": "3", "each": "false"}, [("items", "I64", np.array([0], np.int64))])
        code, got = converse({"attn_prefill": prefill}, [hello("attn_prefill"), hold("attn_prefill", q, k),
                                                         cuts(2, 6), items, cuts(4, 2)], name="t")
        self.assertEqual(code, 0)
        self.assertEqual([m["frame"] for m, _ in got], ["hello", "held", "error", "error", "reply"])
        self.assertIn("outside 1..5", got[2][0]["message"])
        self.assertIn("holds the sequences of a path scan", got[3][0]["message"])
        batch = dict(hold("attn_prefill", q, k)[0])
        del batch["path"]
        _, got = converse({"attn_prefill": prefill}, [hello("attn_prefill"), (batch, hold("attn_prefill", q, k)[1]),
                                                      cuts(2, 1)], name="t")
        self.assertEqual([m["frame"] for m, _ in got], ["hello", "held", "error"])
        self.assertIn("a batch, not sequences", got[2][0]["message"])

    def test_hello(self):
        """scan_cuts is "1" for the attention ops, empty for the others and
        with BITPARITY_SCAN_CUTS=none."""
        _, got = converse({"rmsnorm": lambda x, w, eps: x}, [hello("rmsnorm")], name="t")
        self.assertEqual(got[0][0]["scan_cuts"], "")
        os.environ["BITPARITY_SCAN_CUTS"] = "none"
        try:
            _, got = converse({"attn_decode": decode}, [hello("attn_decode")], name="t")
        finally:
            del os.environ["BITPARITY_SCAN_CUTS"]
        self.assertEqual(got[0][0]["scan_cuts"], "")
