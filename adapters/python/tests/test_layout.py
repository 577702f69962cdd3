"""An engine's layout (docs/protocol.md): the hello's layout field, a
request's chunk_from and page_size, and the NumPy kit's exact chunk."""
import os
import sys
import unittest

import numpy as np

from .helpers import converse, hello
from bitparity_adapter import Op

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import numpy_ops  # noqa: E402


def prefill_request(seq, layout=None, S=2, L=20, H=2, KH=1, D=8):
    rng = np.random.default_rng(seq)
    q = rng.standard_normal((S, L, H, D)).astype(np.float32)
    k = rng.standard_normal((S, L, KH, D)).astype(np.float32)
    v = rng.standard_normal((S, L, KH, D)).astype(np.float32)
    meta = {"frame": "request", "seq": str(seq), "op": "attn_prefill", "in": "fp32", "out": "fp32",
            "eps": "0", "eps_bits": "00000000"}
    meta.update(layout or {})
    return meta, [("q", "F32", q), ("k", "F32", k), ("v", "F32", v)]


class LayoutTest(unittest.TestCase):
    def test_hello_says_layout(self):
        for layout, want in [(False, ""), (True, "true")]:
            _, got = converse({"attn_prefill": Op(lambda q, k, v, **kw: q, layout=layout)}, [hello("attn_prefill")], name="t")
            self.assertEqual(got[0][0]["layout"], want)

    def test_array_function_gets_the_layout(self):
        seen = {}

        def prefill(q, k, v, chunk_from):
            seen["chunk_from"] = chunk_from
            return q

        def decode(q, k, v, lens, page_size):
            seen["page_size"] = page_size
            return q
        _, got = converse({"attn_prefill": Op(prefill, layout=True)},
                          [hello("attn_prefill"), prefill_request(1, {"chunk_from": "7"})], name="t")
        self.assertEqual((got[1][0]["frame"], seen["chunk_from"]), ("reply", 7))
        q = np.zeros((2, 3, 4), np.float32)
        req = ({"frame": "request", "seq": "1", "op": "attn_decode", "in": "fp32", "out": "fp32", "page_size": "32"},
               [("q", "F32", q), ("k", "F32", np.zeros((5, 1, 4), np.float32)), ("v", "F32", np.zeros((5, 1, 4), np.float32)),
                ("kv_lens", "I32", np.array([3, 2], np.int32))])
        _, got = converse({"attn_decode": Op(decode, layout=True)}, [hello("attn_decode"), req], name="t")
        self.assertEqual((got[1][0]["frame"], seen["page_size"]), ("reply", 32))

    def test_bad_field_is_an_error(self):
        _, got = converse({"attn_prefill": Op(lambda req: req.f32("q"), request=True, layout=True)},
                          [hello("attn_prefill"), prefill_request(1, {"chunk_from": "-1"})], name="t")
        self.assertEqual(got[1][0]["frame"], "error")
        self.assertIn("chunk_from", got[1][0]["message"])

    def test_numpy_chunk_is_the_whole_prompt(self):
        """numpy_ops' prefill of a chunk from every position gives the
        whole prompt's rows bit for bit, NaN below the chunk."""
        op = Op(numpy_ops.attn_prefill, request=True, layout=True)
        _, got = converse({"attn_prefill": op}, [hello("attn_prefill"), prefill_request(1)], name="t")
        whole = got[1][1]["y"][1].reshape(2, 20, 2, 8)
        for f in (1, 5, 16, 19):
            _, got = converse({"attn_prefill": op}, [hello("attn_prefill"), prefill_request(1, {"chunk_from": str(f)})], name="t")
            y = got[1][1]["y"][1].reshape(2, 20, 2, 8)
            np.testing.assert_array_equal(y[:, f:].view(np.uint32), whole[:, f:].view(np.uint32), "chunk from %d" % f)
            self.assertTrue(np.isnan(y[:, :f]).all(), "chunk from %d" % f)


if __name__ == "__main__":
    unittest.main()
