import importlib.util
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


@unittest.skipUnless(importlib.util.find_spec("torch"), "torch is not installed")
class TorchScanTest(unittest.TestCase):
    def test_device_digest_is_the_host_digest(self):
        import torch
        dev = "cuda" if torch.cuda.is_available() else "cpu"
        bits = np.random.default_rng(2).integers(0, 1 << 16, size=(7, 33)).astype(np.uint16)
        t = torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16).to(dev)
        np.testing.assert_array_equal(scan.torch_digest_rows(t), scan.digest_rows(bits))
        f = np.random.default_rng(3).standard_normal((5, 9)).astype(np.float32)
        np.testing.assert_array_equal(scan.torch_digest_rows(torch.from_numpy(f).to(dev)), scan.digest_rows(f.view(np.uint32)))

    def test_torch_arrays_hold_on_the_device(self):
        import torch
        hold_meta, tensors = rms_request(1, rows=5, hidden=4)
        ids = ("items", "I64", np.array([3, 0, 4], dtype=np.int64))
        fetch = ("rows", "I64", np.array([0, 1, 2], dtype=np.int64))
        code, got = converse({"rmsnorm": lambda x, w, eps: x * 2}, [
            hello("rmsnorm"), (dict(hold_meta, frame="hold"), tensors),
            ({"frame": "step", "seq": "2", "each": "false"}, [ids, fetch])], name="t", arrays="torch")
        self.assertEqual(code, 0)
        meta, t = got[2]
        self.assertEqual(meta["frame"], "reply", meta)
        y = t["y"][1]
        x = tensors[0][2]
        np.testing.assert_array_equal(y, f32_to_bf16(bf16_to_f32(x[[3, 0, 4]]) * 2))
        for r in range(3):
            self.assertEqual(int(t["digests"][1][r, 0]) % (1 << 64), digest_ref(y[r]))


if __name__ == "__main__":
    unittest.main()
