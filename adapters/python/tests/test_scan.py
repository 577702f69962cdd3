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


# The bits of the planted op of AgainstAloneTest, by row (the tag in column
# 0 of x): (y alone, y in a batch, tap alone, tap in a batch); None keeps
# x, or the tap 1.0. Rows 1, 2 and 4 differ from themselves alone bitwise;
# row 3 is a NaN with the same payload both times (equal, though a float
# compare calls NaN unequal to itself).
PLANTED = {
    1: (0x00000000, 0x80000000, None, None),  # +0 alone, -0 in a batch
    2: (0x7FC00000, 0x7FC00001, None, None),  # two NaN payloads
    3: (0x7FC00002, 0x7FC00002, None, None),  # the same NaN
    4: (None, None, 0x00000000, 0x80000000),  # equal y, taps +0 and -0
}
HIDDEN = 4


def planted(xp):
    """The planted op for arrays of module xp (numpy or torch): fp32 y and
    taps [rows, 1] set by PLANTED from each row's tag."""
    def fn(x, w, eps):
        batch = x.shape[0] > 1
        y = x * 1
        taps = x[:, :1] * 0 + 1
        tags = [int(v) for v in x[:, 0].tolist()]
        yb, tb = y.view(xp.int32), taps.view(xp.int32)
        for r, tag in enumerate(tags):
            if tag in PLANTED:
                ya, yn, ta, tn = PLANTED[tag]
                if ya is not None:
                    yb[r] = _i32(yn if batch else ya)
                if ta is not None:
                    tb[r] = _i32(tn if batch else ta)
        return y, taps
    return fn


def _i32(u):
    return u - (1 << 32) if u >= 1 << 31 else u


def planted_bits(tag, batch):
    """The expected wire words of row tag's y and taps."""
    ya, yn, ta, tn = PLANTED.get(tag, (None, None, None, None))
    y = yn if batch else ya
    t = tn if batch else ta
    x = np.array([tag] + [0.5] * (HIDDEN - 1), np.float32).view(np.uint32)
    ys = [y] * HIDDEN if y is not None else list(x)
    ts = [t if t is not None else int(np.array([1.0], np.float32).view(np.uint32)[0])]
    return ys, ts


def planted_hold(rows=5):
    x = np.full((rows, HIDDEN), 0.5, np.float32)
    x[:, 0] = np.arange(rows)
    meta = {"frame": "hold", "seq": "1", "op": "rmsnorm", "in": "fp32", "out": "fp32",
            "eps": "1e-06", "eps_bits": "358637bd"}
    return meta, [("x", "F32", x), ("w", "F32", np.ones(HIDDEN, np.float32))]


class AgainstAloneTest(unittest.TestCase):
    """A step with against="alone" names the rows whose bits differ from
    their item alone (+0 and -0 differ, a NaN equals itself), with their
    digests, for every kind of array the kit takes."""

    def kinds(self):
        yield "numpy", np
        if importlib.util.find_spec("torch"):
            import torch
            yield "torch", torch

    def test_hello_offers_against_alone(self):
        _, got = converse({"rmsnorm": lambda x, w, eps: x}, [hello("rmsnorm")], name="t")
        self.assertEqual(got[0][0]["scan_against"], "alone")

    def test_named_rows(self):
        for kind, xp in self.kinds():
            with self.subTest(arrays=kind):
                self.check(kind, xp)

    def check(self, kind, xp):
        step = lambda seq, **m: dict({"frame": "step", "seq": str(seq), "each": "false"}, **m)
        items = lambda *ids: ("items", "I64", np.array(ids, np.int64))
        sent = [hello("rmsnorm"), planted_hold(),
                (step(2, against="alone"), [items(0, 1)]),  # before the items alone: an error
                (step(3, each="true"), [items(0, 1, 2, 3, 4)]),
                (step(4, against="alone"), [items(0, 1, 2, 3, 4), ("rows", "I64", np.array([1, 3], np.int64))]),
                (step(5, against="alone"), [("sizes", "I64", np.array([2, 5], np.int64))]),
                (step(6, against="alone"), [items(3, 1)]),
                (step(7), [items(3, 1)])]
        code, got = converse({"rmsnorm": planted(xp)}, sent, name="t", arrays=kind)
        self.assertEqual(code, 0)
        self.assertEqual(got[2][0]["frame"], "error")
        self.assertIn("before a step of items each alone", got[2][0]["message"])

        meta, t = got[3]
        self.assertEqual((meta["frame"], meta["tap_cols"]), ("reply", "1"), meta)
        d = t["digests"][1]
        for tag in range(5):
            ys, ts = planted_bits(tag, False)
            self.assertEqual((int(d[tag, 0]) % (1 << 64), int(d[tag, 1]) % (1 << 64)), (digest_ref(ys), digest_ref(ts)))

        def named(reply, rows_tags):
            meta, t = reply
            self.assertEqual(meta["frame"], "reply", meta)
            self.assertEqual(t["differ"][0], "I64")
            self.assertEqual(list(t["differ"][1]), [r for r, _ in rows_tags])
            d = t["digests"][1]
            self.assertEqual(d.shape, (len(rows_tags), 2))
            for i, (_, tag) in enumerate(rows_tags):
                ys, ts = planted_bits(tag, True)
                self.assertEqual((int(d[i, 0]) % (1 << 64), int(d[i, 1]) % (1 << 64)), (digest_ref(ys), digest_ref(ts)))
            return t

        t = named(got[4], [(1, 1), (2, 2), (4, 4)])
        np.testing.assert_array_equal(t["y"][1].view(np.uint32), [planted_bits(1, True)[0], planted_bits(3, True)[0]])
        named(got[5], [(1, 1), (3, 1), (4, 2), (6, 4)])
        named(got[6], [(1, 1)])
        meta, t = got[7]  # the same batch without against: every row's digest
        self.assertEqual(t["digests"][1].shape, (2, 2))
        self.assertNotIn("differ", t)
        self.assertEqual(int(t["digests"][1][1, 0]) % (1 << 64), digest_ref(planted_bits(1, True)[0]))

    def test_batches(self):
        """A step of several batches in one frame (prefixes and gathered
        ids, "batches") names the differing rows across all of them, as the
        same batches sent one a frame would; without against it answers
        every row's digest; a frame whose batches do not use its ids, or
        name another kind, is an error."""
        for kind, xp in self.kinds():
            with self.subTest(arrays=kind):
                step = lambda seq, **m: dict({"frame": "step", "seq": str(seq), "each": "false"}, **m)
                items = lambda *ids: ("items", "I64", np.array(ids, np.int64))
                batches = lambda *b: ("batches", "I64", np.array(b, np.int64).reshape(-1, 2))
                sent = [hello("rmsnorm"), planted_hold(),
                        (step(3, each="true"), [items(0, 1, 2, 3, 4)]),
                        (step(4, against="alone"), [items(3, 1), batches((0, 2), (1, 2), (0, 5))]),
                        (step(5), [items(3, 1), batches((0, 2), (1, 2), (0, 5))]),
                        (step(6, against="alone"), [items(3, 1, 2), batches((0, 2), (1, 2))]),
                        (step(7, against="alone"), [items(3), batches((2, 1))])]
                code, got = converse({"rmsnorm": planted(xp)}, sent, name="t", arrays=kind)
                self.assertEqual(code, 0)
                self.assertEqual(got[0][0]["scan_batches"], "1")
                meta, t = got[3]
                self.assertEqual(meta["frame"], "reply", meta)
                # rows: prefix 2 (tags 0 1), gather (tags 3 1), prefix 5 (tags 0..4)
                want = [(1, 1), (3, 1), (5, 1), (6, 2), (8, 4)]
                self.assertEqual(list(t["differ"][1]), [r for r, _ in want])
                for i, (_, tag) in enumerate(want):
                    ys, ts = planted_bits(tag, True)
                    d = t["digests"][1]
                    self.assertEqual((int(d[i, 0]) % (1 << 64), int(d[i, 1]) % (1 << 64)), (digest_ref(ys), digest_ref(ts)))
                meta, t = got[4]
                d = t["digests"][1]
                self.assertEqual(d.shape, (9, 2))
                for r, tag in enumerate([0, 1, 3, 1, 0, 1, 2, 3, 4]):
                    self.assertEqual(int(d[r, 0]) % (1 << 64), digest_ref(planted_bits(tag, True)[0]))
                self.assertEqual(got[5][0]["frame"], "error")
                self.assertIn("take 2 ids, the frame has 3", got[5][0]["message"])
                self.assertEqual(got[6][0]["frame"], "error")
                self.assertIn("batch kind 2", got[6][0]["message"])

    def test_queued_as_on_a_device(self):
        # the path of CUDA and JAX arrays (compares read once a step, at
        # its end), taken here by host arrays; then with no output kept,
        # so that every batch with rows to name runs again.
        keep, on_host = scan.KEEP_BYTES, scan._on_host
        scan._on_host = lambda a: False
        try:
            for scan.KEEP_BYTES in (keep, 0):
                for kind, xp in self.kinds():
                    with self.subTest(arrays=kind, keep=scan.KEEP_BYTES):
                        self.check(kind, xp)
        finally:
            scan.KEEP_BYTES, scan._on_host = keep, on_host

    def test_a_batch_run_again_must_name_the_same_rows(self):
        calls = []

        def flaky(x, w, eps):  # row 0 negated on the first batch of several rows, not the second
            y = x * 1
            if x.shape[0] > 1:
                calls.append(1)
                if len(calls) % 2:
                    y[0] = -y[0]
            return y

        keep, on_host = scan.KEEP_BYTES, scan._on_host
        scan.KEEP_BYTES, scan._on_host = 0, (lambda a: False)  # as on a device, nothing kept
        try:
            _, got = converse({"rmsnorm": flaky}, [
                hello("rmsnorm"), planted_hold(),
                ({"frame": "step", "seq": "2", "each": "true"}, [("items", "I64", np.arange(5, dtype=np.int64))]),
                ({"frame": "step", "seq": "3", "each": "false", "against": "alone"},
                 [("sizes", "I64", np.array([3], np.int64))])], name="t")
        finally:
            scan.KEEP_BYTES, scan._on_host = keep, on_host
        self.assertEqual(got[3][0]["frame"], "error", got[3][0])
        self.assertIn("not deterministic", got[3][0]["message"])

    def test_none_in_the_environment(self):
        import os
        os.environ[scan.ENV_AGAINST] = "none"
        try:
            _, got = converse({"rmsnorm": lambda x, w, eps: x}, [hello("rmsnorm")], name="t")
        finally:
            del os.environ[scan.ENV_AGAINST]
        self.assertEqual(got[0][0]["scan_against"], "")


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
    def test_items_alone_joined_or_not(self):
        """A step of items each alone on torch arrays gives the numpy
        arrays' digests and taps, whether the outputs are joined at once
        (one shape and dtype) or made bits one by one (shapes that
        differ: some one-row outputs flattened)."""
        import torch
        hold_meta, tensors = rms_request(1, rows=6, hidden=4)
        hold_meta = dict(hold_meta, frame="hold")
        ids = ("items", "I64", np.array([5, 0, 3, 3, 1], dtype=np.int64))
        each = {"frame": "step", "seq": "2", "each": "true"}

        def taps(x):
            return x[:, :2].float() if hasattr(x, "float") else x[:, :2].astype(np.float32)

        def joined(x, w, eps):
            return x * 2, taps(x)

        calls = []

        def ragged(x, w, eps):  # every other one-row output comes back as [hidden]
            calls.append(1)
            y = x * 2
            if int(y.shape[0]) == 1 and len(calls) % 2:
                y = y.reshape(-1)
            return y, taps(x)

        want = None
        for fn in (joined, ragged):
            for arrays in ("numpy", "torch"):
                code, got = converse({"rmsnorm": fn}, [hello("rmsnorm"), (hold_meta, tensors), (each, [ids])], name="t", arrays=arrays)
                self.assertEqual(code, 0)
                meta, t = got[2]
                self.assertEqual((meta["frame"], meta["tap_cols"]), ("reply", "2"), (fn.__name__, arrays, meta))
                d = t["digests"][1]
                if want is None:
                    want = d
                np.testing.assert_array_equal(d, want, err_msg="%s on %s arrays" % (fn.__name__, arrays))

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


@unittest.skipUnless(importlib.util.find_spec("torch"), "torch is not installed")
class WarmTest(unittest.TestCase):
    """scan.warm runs the kit's kernels once on tiny tensors (here on the
    CPU; the hello calls it for a torch adapter on CUDA): one generator
    call for every distribution and dtype when the adapter generates, none
    otherwise, and the generator then still makes the rows it made
    before."""

    def test_warm(self):
        import torch
        from bitparity_adapter import gen
        cpu = torch.device("cpu")
        keys = np.arange(3, dtype=np.uint64)
        before = gen.rows(7, 2, "heavy", 1.0, "bf16", keys, 16, device=cpu).clone()
        self.assertEqual(scan.warm(cpu, False), 0)
        self.assertEqual(scan.warm(cpu, True), len(gen.DISTS) * len(gen.SMALLEST_NORMAL))
        self.assertTrue(torch.equal(gen.rows(7, 2, "heavy", 1.0, "bf16", keys, 16, device=cpu), before))


if __name__ == "__main__":
    unittest.main()
