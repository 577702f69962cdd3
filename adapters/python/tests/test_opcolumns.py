"""The ops of bitparity's op packages (moe_route, moe_router, quant_fp8)
through the kit: sizes as keyword arguments, one reply tensor per output
column of the column's wire dtype, and clear errors for a column of the
wrong dtype or size."""

import unittest

import numpy as np

from .helpers import converse, hello
from bitparity_adapter import Op


def route_request(seq, rows=3, experts=4, k=2):
    x = np.arange(rows * experts, dtype=np.float32).reshape(rows, experts)
    meta = {"frame": "request", "seq": str(seq), "op": "moe_route", "in": "fp32",
            "experts": str(experts), "top_k": str(k)}
    return meta, [("logits", "F32", x)]


def quant_request(seq, rows=2, hidden=3):
    x = np.ones((rows, hidden), np.float32)
    return {"frame": "request", "seq": str(seq), "op": "quant_fp8", "in": "fp32", "hidden": str(hidden)}, [("x", "F32", x)]


class OpColumnsTest(unittest.TestCase):
    def test_route_columns(self):
        seen = {}

        def route(logits, top_k):
            seen["k"], seen["shape"] = top_k, logits.shape
            ids = np.argsort(-logits, axis=1, kind="stable")[:, :top_k]  # int64: sent as I32
            return ids, np.full(ids.shape, 0.5, np.float32)

        code, got = converse({"moe_route": Op(route, schedule="tie=lowest sum=sequential")},
                             [hello("moe_route"), route_request(1)], name="t")
        self.assertEqual(code, 0)
        h = got[0][0]
        self.assertEqual((h["op"], h["schedule"], h["scan"]), ("moe_route", "tie=lowest sum=sequential", ""))
        meta, t = got[1]
        self.assertEqual((meta["frame"], seen["k"], seen["shape"]), ("reply", 2, (3, 4)))
        self.assertEqual((t["expert_ids"][0], t["weights"][0]), ("I32", "F32"))
        np.testing.assert_array_equal(t["expert_ids"][1], [[3, 2]] * 3)
        self.assertEqual(t["weights"][1].shape, (3, 2))

    def test_quant_columns(self):
        def quant(x):
            return np.full(x.shape, 0x38, np.uint8), np.ones((x.shape[0], 1), np.float32)

        _, got = converse({"quant_fp8": quant}, [hello("quant_fp8"), quant_request(1)], name="t")
        t = got[1][1]
        self.assertEqual((t["q"][0], t["q"][1].shape, t["scale"][0], t["scale"][1].shape), ("U8", (2, 3), "F32", (2, 1)))

    def test_bad_columns_are_failures(self):
        for result, want in [
            (lambda x, top_k: (np.zeros((3, 2), np.float32), np.zeros((3, 2), np.float32)), "column expert_ids: column of dtype float32: want integers"),
            (lambda x, top_k: (np.zeros((3, 2), np.int32), np.zeros((3, 2), np.float64)), "column weights: column of dtype float64: want float32"),
            (lambda x, top_k: (np.zeros((3, 2), np.int32),), "want a tuple of 2 arrays (expert_ids, weights)"),
            (lambda x, top_k: (np.zeros(7, np.int32), np.zeros((3, 2), np.float32)), "column expert_ids: 7 values"),
        ]:
            _, got = converse({"moe_route": result}, [hello("moe_route"), route_request(1)], name="t")
            meta = got[1][0]
            self.assertEqual((meta["frame"], meta["kind"]), ("error", "failure"))
            self.assertIn(want, meta["message"])


if __name__ == "__main__":
    unittest.main()
