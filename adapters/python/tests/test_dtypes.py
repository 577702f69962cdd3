import unittest

import numpy as np

from . import helpers  # noqa: F401  (the kit on sys.path)
from bitparity_adapter import dtypes


def f32(bits):
    return np.array(bits, dtype=np.uint32).view(np.float32)


class DTypeTest(unittest.TestCase):
    def test_bf16_round_trip_every_pattern(self):
        bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
        back = dtypes.f32_to_bf16(dtypes.bf16_to_f32(bits))
        nan = (bits & 0x7FFF) > 0x7F80
        np.testing.assert_array_equal(back[~nan], bits[~nan])
        self.assertTrue((back[nan] & 0x40).all(), "NaNs stay quiet NaNs")

    def test_bf16_rounding_to_nearest_even(self):
        cases = [  # fp32 bits -> bf16 bits
            (0x3F808000, 0x3F80),  # tie, even below
            (0x3F818000, 0x3F82),  # tie, odd below: up
            (0x3F808001, 0x3F81),  # just above the tie
            (0x3F807FFF, 0x3F80),  # just below
            (0x7F7FFFFF, 0x7F80),  # max float rounds to +Inf
            (0x80000000, 0x8000),  # -0 keeps its sign
            (0x7F800001, 0x7FC0),  # a signalling NaN becomes quiet
        ]
        for src, want in cases:
            with self.subTest(hex(src)):
                self.assertEqual(int(dtypes.f32_to_bf16(f32([src]))[0]), want)

    def test_to_wire(self):
        x = f32([0x3F818000, 0x3F800001])
        np.testing.assert_array_equal(dtypes.to_wire(x, "bf16"), np.array([0x3F82, 0x3F80], np.uint16))
        np.testing.assert_array_equal(dtypes.to_wire(x, "fp32").view(np.uint32), np.array([0x3F818000, 0x3F800001], np.uint32))
        h = np.array([1.5, -2.0], np.float16)
        self.assertEqual(dtypes.to_wire(h, "fp16").tobytes(), h.tobytes(), "same dtype: bits as they are")
        np.testing.assert_array_equal(dtypes.to_wire(h, "fp32"), np.array([1.5, -2.0], np.float32))

    def test_refused_conversions(self):
        for y, dt, word in [(np.ones(2, np.float64), "bf16", "fp64"), (np.ones(2, np.float16), "bf16", "fp16"),
                            (np.ones(2, np.int32), "fp32", "int32")]:
            with self.subTest("%s to %s" % (y.dtype, dt)):
                with self.assertRaises(dtypes.DTypeError) as cm:
                    dtypes.to_wire(y, dt)
                self.assertIn(word, str(cm.exception))

    def test_numpy_inputs(self):
        bits = np.array([0x3F80, 0xC000], np.uint16)
        np.testing.assert_array_equal(dtypes.to_numpy("BF16", bits), np.array([1.0, -2.0], np.float32))
        self.assertEqual(dtypes.to_numpy("I32", np.array([3], np.int32)).dtype, np.int64)
        a = dtypes.to_numpy("F32", np.frombuffer(np.ones(2, np.float32).tobytes(), np.float32))
        a[0] = 5  # writable: the kit copies the frame's read-only view


if __name__ == "__main__":
    unittest.main()
