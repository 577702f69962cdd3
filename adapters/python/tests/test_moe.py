import argparse
import importlib.util
import os
import unittest

import numpy as np

from . import helpers  # noqa: F401  (the kit on sys.path)
from bitparity_adapter import moe


def numpy_topk(tie):
    """A top-k with the given tie-break, in NumPy, standing in for torch.topk."""
    def topk(q, k):
        return moe.select(q, k, tie)
    return topk


def batch_dependent(q, k):
    """Lowest index first below 64 rows, highest from 64 on: a top-k whose
    tie-break follows the batch."""
    return moe.select(q, k, "lowest" if q.shape[0] < 64 else "highest")


class MoETest(unittest.TestCase):
    def test_select_tie_breaks(self):
        q = np.array([[0.25, 0.5, 0.25, 0.0], [1, 1, 1, 1], [np.nan, 0.5, 0.5, 0.1]], np.float32)
        np.testing.assert_array_equal(moe.select(q, 2, "lowest"), [[1, 0], [0, 1], [1, 2]])
        np.testing.assert_array_equal(moe.select(q, 2, "highest"), [[1, 2], [3, 2], [2, 1]])
        np.testing.assert_array_equal(moe.select(q, 4, "lowest")[2], [1, 2, 3, 0], "a NaN ranks below every number")
        with self.assertRaises(ValueError):
            moe.select(q, 2, "random")
        with self.assertRaises(ValueError):
            moe.select(q, 5)

    def test_renormalise_sums_in_rank_order(self):
        w = np.array([[np.float32(1), np.float32(2.0 ** -24), np.float32(2.0 ** -24)]], np.float32)
        # ((1 + 2^-24) + 2^-24) rounds to 1 twice, so every weight is w / 1.
        np.testing.assert_array_equal(moe.renormalise(w), w)
        self.assertEqual(moe.renormalise(np.array([[3, 1]], np.float32)).tolist(), [[0.75, 0.25]])

    def test_tie_rows_tie_at_the_boundary(self):
        q = moe.tie_rows(16, 32, 4, seed=3)
        self.assertTrue((q[0] == q[0, 0]).all(), "row 0: every expert tied")
        for r in range(16):
            s = np.sort(q[r])[::-1]
            self.assertEqual(s[3], s[4], "row %d: the 4th and 5th largest are equal" % r)

    def test_tie_behaviour_states_the_tie_break(self):
        for tie in moe.TIES:
            verdict, lines = moe.tie_behaviour(numpy_topk(tie), shapes=((8, 2), (32, 4)), batches=(1, 70))
            self.assertEqual(verdict, tie, lines)
            self.assertIn("experts=32 top_k=4 rows=70", lines[-1])
        verdict, lines = moe.tie_behaviour(batch_dependent, shapes=((8, 2),), batches=(1, 70))
        self.assertEqual(verdict, "undeclared", lines)
        self.assertIn("lowest index first on 1, highest on 0 of 1 tie rows", lines[0])
        self.assertIn("lowest index first on 0, highest on 70 of 70", lines[1])


def load_torch_ops():
    """adapters/torch_ops.py as a module (it is a script beside the kit)."""
    path = os.path.join(os.path.dirname(__file__), "..", "..", "torch_ops.py")
    spec = importlib.util.spec_from_file_location("torch_ops", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@unittest.skipUnless(importlib.util.find_spec("torch"), "torch is not installed")
class TorchMoETest(unittest.TestCase):
    """The torch adapter's router on the CPU: its declared tie-breaks give
    bitparity's order on tie rows, and its weights are softmax's top k
    renormalised in rank order."""

    def setUp(self):
        import torch
        self.torch = torch
        mod = load_torch_ops()
        self.ops = mod.Ops(argparse.Namespace(deterministic=False, device="cpu", sdpa_backend=""))

    def topk(self, tie):
        def run(q, k):
            return self.ops.topk_declared(self.torch.from_numpy(q), k, tie)[1].numpy()
        return run

    def test_declared_tie_breaks(self):
        for tie in moe.TIES:
            verdict, lines = moe.tie_behaviour(self.topk(tie), shapes=((8, 2), (128, 8)), batches=(1, 64))
            self.assertEqual(verdict, tie, lines)

    def test_route(self):
        torch = self.torch
        logits = torch.from_numpy(np.random.default_rng(1).standard_normal((64, 32), dtype=np.float32))
        logits[:, 5] = logits[:, 6]  # ties
        ids, w = self.ops.moe_route(logits, 4, "lowest")
        p = torch.softmax(logits, dim=-1).numpy()
        want = moe.select(p, 4, "lowest")
        np.testing.assert_array_equal(ids.numpy(), want)
        np.testing.assert_array_equal(w.numpy(), moe.renormalise(np.take_along_axis(p, want, axis=1)))
        self.assertEqual(ids.dtype, torch.int32)


if __name__ == "__main__":
    unittest.main()
