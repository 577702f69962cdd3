import unittest

import numpy as np

from .helpers import converse, hello
from .test_serve import rms_request
from bitparity_adapter import bf16_to_f32, f32_to_bf16, scan

M = 0x9E3779B97F4A7C15


def digest_ref(words):
    d, p = 0, 1
    for w in words:
        p = (p * M) % (1 << 64)
        d = (d + (int(w) + 1) * p) % (1 << 64)
    return d


class ScanTest(unittest.TestCase):
    def test_digest_is_the_documented_formula(self):
        rng = np.random.default_rng(1)
        words = rng.integers(0, 1 << 16, size=(5, 37), dtype=np.uint64).astype(np.uint16)
        got = scan.digest_rows(words).view(np.uint64)
        for r in range(5):
            self.assertEqual(int(got[r]), digest_ref(words[r]))

    def test_hold_then_steps(self):
        hold_meta, tensors = rms_request(1, rows=5, hidden=4)
        hold_meta = dict(hold_meta, frame="hold")
        step = {"frame": "step", "seq": "2", "each": "false"}
        each = {"frame": "step", "seq": "3", "each": "true"}
        ids = ("items", "I64", np.array([4, 1], dtype=np.int64))
        fetch = ("rows", "I64", np.array([1], dtype=np.int64))
        code, got = converse({"rmsnorm": lambda x, w, eps: x * 2}, [
            hello("rmsnorm"), (hold_meta, tensors), (step, [ids, fetch]), (each, [ids])], name="t")
        self.assertEqual(code, 0)
        self.assertEqual(got[0][0]["scan"], "1")
        self.assertEqual((got[1][0]["frame"], got[1][0]["items"]), ("held", "5"))
        meta, t = got[2]
        self.assertEqual((meta["frame"], meta["tap_cols"]), ("reply", "0"))
        d = t["digests"][1]
        self.assertEqual(d.shape, (2, 2))
        x = tensors[0][2]
        y = t["y"][1]
        np.testing.assert_array_equal(y[0], f32_to_bf16(bf16_to_f32(x[1]) * 2))
        self.assertEqual(int(d[1, 0]) % (1 << 64), digest_ref(y[0]))
        np.testing.assert_array_equal(got[3][1]["digests"][1], d)  # each item alone: the same rows here

    def test_step_before_hold_is_an_error(self):
        code, got = converse({"rmsnorm": lambda x, w, eps: x}, [
            hello("rmsnorm"), ({"frame": "step", "seq": "1"}, [])], name="t")
        self.assertEqual(code, 0)
        self.assertEqual(got[1][0]["frame"], "error")
        self.assertIn("step before hold", got[1][0]["message"])


if __name__ == "__main__":
    unittest.main()
