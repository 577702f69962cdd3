import unittest

import numpy as np

from .helpers import converse, hello
from bitparity_adapter import ModelResult, Op, f32_to_bf16


def model_request(seq=1):
    meta = {"frame": "request", "seq": str(seq), "op": "transformer", "in": "bf16", "out": "bf16", "seed": "7",
            "taps": "true", "eps": "1e-05", "eps_bits": "3727c5ac", "layers": "1", "hidden": "8", "ffn": "16",
            "vocab": "11", "heads": "2", "kv_heads": "1", "head_dim": "4", "pad": "64"}
    i32 = lambda *v: np.array(v, np.int32)  # noqa: E731
    return meta, [("tokens", "I32", i32(1, 2, 3, 4, 5, 6, 7)), ("lens", "I32", i32(4, 3)), ("prompt", "I32", i32(1, 2)),
                  ("arrive", "I32", i32(0, 1)), ("reported", "I32", i32(2, 1))]


class ModelRouteTest(unittest.TestCase):
    def test_request_and_reply(self):
        seen = {}

        def route(req):
            seen["req"] = req
            npos = len(req.positions())
            nrep = len(req.reported_positions())
            taps = np.arange(nrep * 3, dtype=np.float32).reshape(nrep, 3)
            return ModelResult(train=np.full(npos, -1.25, np.float32), infer=np.full(npos, -1.25, np.float32),
                               taps_train={"L0.mlp": taps}, taps_infer={"L0.mlp": taps}, tap_dtype="bf16")

        _, got = converse({"transformer": Op(route)}, [hello(), model_request()], name="m")
        self.assertEqual(got[0][0]["op"], "transformer")
        meta, t = got[1]
        self.assertEqual((meta["frame"], meta["sites"]), ("reply", "L0.mlp"))
        req = seen["req"]
        self.assertEqual(req.config["hidden"], 8)
        self.assertEqual([(len(q.tokens), q.prompt, q.arrive, q.reported) for q in req.requests], [(4, 1, 0, 2), (3, 2, 1, 1)])
        self.assertEqual(req.positions(), [(0, 0), (0, 1), (0, 2), (1, 0)])
        self.assertEqual(req.reported_positions(), [(0, 0), (0, 1), (1, 0)])
        self.assertEqual(t["train"][0], "BF16")
        np.testing.assert_array_equal(t["train"][1], f32_to_bf16(np.full(4, -1.25, np.float32)))
        self.assertEqual(t["infer"][0], "F32")
        self.assertEqual((t["train/L0.mlp"][0], t["train/L0.mlp"][1].shape), ("BF16", (3, 3)))

    def test_reply_errors(self):
        def short(req):
            return ModelResult(train=np.zeros(3, np.float32), infer=np.zeros(4, np.float32))

        def one_sided(req):
            return ModelResult(train=np.zeros(4, np.float32), infer=np.zeros(4, np.float32),
                               taps_train={"L0.x": np.zeros((3, 2), np.float32)})

        for fn, msg in [(short, "the plan has 4 response positions"), (one_sided, "the inference path does not")]:
            with self.subTest(msg):
                _, got = converse({"transformer": Op(fn)}, [hello(), model_request()], name="m")
                self.assertEqual(got[1][0]["frame"], "error")
                self.assertIn(msg, got[1][0]["message"])


if __name__ == "__main__":
    unittest.main()
