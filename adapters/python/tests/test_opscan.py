"""The scan frames of the op packages' ops (moe_route, moe_router,
quant_fp8) in the kit: the hello's scan_ops, a hold of the op's request
tensors, steps answered with the digest of each row's column words (32
bits an int32 or float32 element, 8 a uint8 one), rows compared with the
items alone, fetched rows one tensor a column, and the environment switch
that withholds the field."""

import importlib.util
import os
import unittest

import numpy as np

from .helpers import converse, hello
from .test_scan import digest_ref
from bitparity_adapter import Op, scan


def route(logits, top_k):
    """A router whose weights of a batch of more than one token are
    halved for the tokens whose first logit is 1 (a planted batch
    dependence), and whose expert ids are the top k, lowest index first."""
    x = np.asarray(logits, np.float32)
    ids = np.argsort(-x, axis=1, kind="stable")[:, :top_k].astype(np.int32)
    w = np.take_along_axis(x, ids, axis=1).astype(np.float32)
    if x.shape[0] > 1:
        w[x[:, 0] == 1] *= np.float32(0.5)
    return ids, w


def router(x, w, top_k):
    return route(np.asarray(x, np.float32) @ np.asarray(w, np.float32), top_k)


def quant(x):
    """Codes of the low byte of each value's bits, and a scale of the row's
    first value."""
    x = np.asarray(x, np.float32)
    return (x.view(np.uint32) & 0xFF).astype(np.uint8), x[:, :1].copy()


def route_hold(rows=5, experts=6, k=2):
    x = (np.arange(rows * experts, dtype=np.float32).reshape(rows, experts) * 7 % 11).astype(np.float32)
    x[1, 0] = x[3, 0] = 1
    meta = {"frame": "hold", "seq": "1", "op": "moe_route", "in": "fp32", "experts": str(experts), "top_k": str(k)}
    return meta, [("logits", "F32", x)]


def words(ids, w):
    """A moe_route row's digest words."""
    return list(np.asarray(ids, np.int32).view(np.uint32)) + list(np.asarray(w, np.float32).view(np.uint32))


def step(seq, **m):
    return dict({"frame": "step", "seq": str(seq), "each": "false"}, **m)


def i64(name, *v):
    return (name, "I64", np.array(v, np.int64))


class OpScanTest(unittest.TestCase):
    def kinds(self):
        yield "numpy"
        if importlib.util.find_spec("torch"):
            yield "torch"

    def test_hello(self):
        _, got = converse({"moe_route": route}, [hello("moe_route")], name="t")
        h = got[0][0]
        self.assertEqual((h["scan"], h["scan_ops"], h["scan_against"]), ("", "1", "alone"))
        _, got = converse({"rmsnorm": lambda x, w, eps: x}, [hello("rmsnorm")], name="t")
        self.assertEqual((got[0][0]["scan"], got[0][0]["scan_ops"]), ("1", ""))

    def test_withheld(self):
        os.environ[scan.ENV_OPS] = "none"
        try:
            _, got = converse({"moe_route": route}, [hello("moe_route"), route_hold()], name="t")
        finally:
            del os.environ[scan.ENV_OPS]
        self.assertEqual(got[0][0]["scan_ops"], "")
        self.assertEqual((got[1][0]["frame"], got[1][0]["kind"]), ("error", "unsupported"))

    def test_route_steps(self):
        for kind in self.kinds():
            with self.subTest(arrays=kind):
                self.check_route(kind)

    def check_route(self, kind):
        meta, t = route_hold()
        x = t[0][2]
        sent = [hello("moe_route"), (meta, t),
                (step(2, each="true"), [i64("items", 0, 1, 2, 3, 4)]),
                (step(3, against="alone"), [i64("items", 0, 1, 2, 3), i64("rows", 1, 2)]),
                (step(4, against="alone"), [i64("sizes", 1, 5)]),
                (step(5), [i64("items", 3, 1, 2, 4), ("batches", "I64", np.array([[1, 2], [0, 2], [1, 2]], np.int64))]),
                (step(6), [i64("items", 3, 1), i64("rows", 0)])]
        fn = route
        if kind == "torch":
            import torch

            def fn(logits, top_k):
                ids, w = route(logits.cpu().numpy(), top_k)
                return torch.from_numpy(ids.astype(np.int64)), torch.from_numpy(w)
        code, got = converse({"moe_route": Op(fn, schedule="tie=lowest sum=sequential")}, sent, name="t", arrays=kind)
        self.assertEqual(code, 0)
        self.assertEqual((got[1][0]["frame"], got[1][0]["items"]), ("held", "5"), got[1][0])

        def digest(rows, batch):
            ids, w = route(x[rows], 2) if batch else [np.concatenate(c) for c in zip(*(route(x[r:r + 1], 2) for r in rows))]
            return [digest_ref(words(ids[i], w[i])) for i in range(len(rows))]

        def got_digests(t):
            return [int(v) % (1 << 64) for v in t["digests"][1][:, 0]]

        alone = digest(range(5), False)
        self.assertEqual(got_digests(got[2][1]), alone)
        meta, t = got[3]
        self.assertEqual(list(t["differ"][1]), [1, 3])  # tokens 1 and 3 halved in a batch
        self.assertEqual(got_digests(t), [digest([0, 1, 2, 3], True)[i] for i in (1, 3)])
        ids, w = route(x[[0, 1, 2, 3]], 2)
        self.assertEqual(t["expert_ids"][0], "I32")
        np.testing.assert_array_equal(t["expert_ids"][1], ids[[1, 2]])
        np.testing.assert_array_equal(t["weights"][1].view(np.uint32), w[[1, 2]].view(np.uint32))
        meta, t = got[4]
        self.assertEqual(list(t["differ"][1]), [2, 4])  # prefix 1: none; prefix 5: rows 1 and 3, at 1+1, 1+3
        meta, t = got[5]
        self.assertEqual(got_digests(t), digest([3, 1], True) + digest([0, 1], True) + digest([2, 4], True))
        meta, t = got[6]
        self.assertEqual(got_digests(t), digest([3, 1], True))
        self.assertEqual(digest_ref(words(t["expert_ids"][1][0], t["weights"][1][0])), got_digests(t)[0])

    def test_router_holds_weights_whole(self):
        x = np.arange(12, dtype=np.float32).reshape(4, 3) % 5
        w = (np.arange(6, dtype=np.float32).reshape(3, 2) - 2) / 4
        meta = {"frame": "hold", "seq": "1", "op": "moe_router", "in": "fp32", "hidden": "3", "experts": "2", "top_k": "1"}
        sent = [hello("moe_router"), (meta, [("x", "F32", x), ("w", "F32", w)]),
                (step(2), [i64("items", 2, 0)])]
        _, got = converse({"moe_router": router}, sent, name="t")
        ids, wt = router(x[[2, 0]], w, 1)
        want = [digest_ref(words(ids[i], wt[i])) for i in range(2)]
        self.assertEqual([int(v) % (1 << 64) for v in got[2][1]["digests"][1][:, 0]], want)

    def test_quant_bytes_are_words(self):
        x = np.array([[1.5, -2.25, 3.0], [0.1, 0.2, 0.3]], np.float32)
        meta = {"frame": "hold", "seq": "1", "op": "quant_fp8", "in": "fp32", "hidden": "3"}
        sent = [hello("quant_fp8"), (meta, [("x", "F32", x)]), (step(2), [i64("items", 1, 0), i64("rows", 0, 1)])]
        _, got = converse({"quant_fp8": quant}, sent, name="t")
        t = got[2][1]
        q, s = quant(x[[1, 0]])
        want = [digest_ref(list(q[i].astype(np.uint32)) + list(s[i].view(np.uint32))) for i in range(2)]
        self.assertEqual([int(v) % (1 << 64) for v in t["digests"][1][:, 0]], want)
        self.assertEqual((t["q"][0], t["scale"][0]), ("U8", "F32"))
        np.testing.assert_array_equal(t["q"][1], q)
        np.testing.assert_array_equal(t["scale"][1].view(np.uint32), s.view(np.uint32))

    def test_wrong_width(self):
        meta, t = route_hold()
        sent = [hello("moe_route"), (meta, t), (step(2), [i64("items", 0)])]
        _, got = converse({"moe_route": lambda logits, top_k: route(logits, top_k + 1)}, sent, name="t")
        self.assertEqual(got[2][0]["frame"], "error")
        self.assertIn("rows of 6 words, want 4 (expert_ids 2, weights 2)", got[2][0]["message"])


if __name__ == "__main__":
    unittest.main()
