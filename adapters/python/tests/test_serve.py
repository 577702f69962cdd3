import unittest

import numpy as np

from .helpers import converse, hello
from bitparity_adapter import Op, Raw, Unsupported, f32_to_bf16


def rms_request(seq, rows=3, hidden=4, dtype="bf16", extra=()):
    x = np.linspace(-1, 1, rows * hidden, dtype=np.float32).reshape(rows, hidden)
    w = np.ones(hidden, np.float32)
    wire = {"bf16": "BF16", "fp32": "F32"}[dtype]
    enc = f32_to_bf16 if dtype == "bf16" else (lambda a: a)
    meta = {"frame": "request", "seq": str(seq), "op": "rmsnorm", "in": dtype, "out": dtype,
            "eps": "1e-06", "eps_bits": "358637bd"}
    return meta, [("x", wire, enc(x)), ("w", wire, enc(w))] + list(extra)


class ServeTest(unittest.TestCase):
    def test_hello_declares_the_op(self):
        code, got = converse({"rmsnorm": Op(lambda x, w, eps: x, schedule="", ulp_bound=3, about="mine")},
                             [hello("rmsnorm")], name="t")
        self.assertEqual(code, 0)
        meta = got[0][0]
        self.assertEqual((meta["frame"], meta["op"], meta["name"], meta["ulp_bound"], meta["about"], meta["device"]),
                         ("hello", "rmsnorm", "t.rmsnorm", "3", "mine", "cpu"))

    def test_single_op_is_chosen_without_a_name(self):
        _, got = converse({"gemm": lambda x, w: x @ w}, [hello("")], name="t")
        self.assertEqual(got[0][0]["op"], "gemm")

    def test_array_function_gets_exact_inputs_and_eps(self):
        seen = {}

        def f(x, w, eps):
            seen["x"], seen["eps"] = x, eps
            return x * np.float32(2)

        _, got = converse({"rmsnorm": f}, [hello("rmsnorm"), rms_request(1)], name="t")
        meta, t = got[1]
        self.assertEqual((meta["frame"], meta["seq"]), ("reply", "1"))
        self.assertEqual(seen["x"].dtype, np.float32)
        self.assertEqual(np.float32(seen["eps"]).view(np.uint32), 0x358637BD)
        self.assertEqual(t["y"][0], "BF16")
        np.testing.assert_array_equal(t["y"][1], f32_to_bf16(seen["x"] * 2))

    def test_rows_and_taps(self):
        rows = ("rows", "I64", np.array([2, 0], np.int64))

        def f(x, w, eps):
            return x, np.arange(x.shape[0] * 2, dtype=np.float32).reshape(-1, 2)

        _, got = converse({"rmsnorm": f}, [hello("rmsnorm"), rms_request(1, extra=[rows])], name="t")
        t = got[1][1]
        self.assertEqual(t["y"][1].shape, (2, 4))
        np.testing.assert_array_equal(t["taps"][1], np.array([[4, 5], [0, 1]], np.float32))

    def test_request_style_and_raw(self):
        op = Op(lambda req: Raw(req.bits("x")), request=True)
        _, got = converse({"rmsnorm": op}, [hello("rmsnorm"), rms_request(1)], name="t")
        meta, t = got[1]
        self.assertEqual(meta["frame"], "reply")
        self.assertEqual(t["y"][1].shape, (3, 4))

    def test_errors_keep_serving(self):
        calls = []

        def f(x, w, eps):
            calls.append(x.shape[0])
            if x.shape[0] == 2:
                raise Unsupported("two rows")
            if x.shape[0] == 3:
                raise RuntimeError("CUDA error: planted")
            if x.shape[0] == 4:
                return x[:-1]  # one row short
            return x

        sent = [hello("rmsnorm"), rms_request(1, rows=2), rms_request(2, rows=3), rms_request(3, rows=4),
                rms_request(4, rows=5)]
        code, got = converse({"rmsnorm": f}, sent, name="t")
        self.assertEqual(code, 0)
        kinds = [(m["frame"], m.get("kind", ""), m["seq"]) for m, _ in got[1:]]
        self.assertEqual(kinds, [("error", "unsupported", "1"), ("error", "failure", "2"),
                                 ("error", "failure", "3"), ("reply", "", "4")])
        self.assertIn("RuntimeError: CUDA error: planted", got[2][0]["message"])
        self.assertIn("want 4 rows x 4 columns", got[3][0]["message"])

    def test_hello_refusals(self):
        for what, ops, msg, argv in [
            ("unknown op", {"gemm": lambda x, w: x}, "not implemented", []),
            ("no op named", {"gemm": lambda x, w: x, "rmsnorm": lambda x, w, e: x}, "no op", []),
        ]:
            with self.subTest(what):
                _, got = converse(ops, [hello("" if what == "no op named" else "logprob")], name="t", argv=argv)
                self.assertEqual(got[0][0]["frame"], "error")
                self.assertIn(msg, got[0][0]["message"])
        _, got = converse({"gemm": lambda x, w: x}, [({"frame": "hello", "protocol": "2", "seq": "0", "op": "gemm"}, ())])
        self.assertIn("protocol", got[0][0]["message"])

    def test_bad_command_line(self):
        code, got = converse({"gemm": lambda x, w: x}, [], name="t", argv=["nope"])
        self.assertEqual((code, got), (2, []))


if __name__ == "__main__":
    unittest.main()
