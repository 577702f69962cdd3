"""Exact conversions for PyTorch and JAX arrays; each test is skipped where
its framework is not installed (the H200 runs them all)."""
import importlib.util
import unittest

import numpy as np

from . import helpers  # noqa: F401  (the kit on sys.path)
from bitparity_adapter import dtypes

BITS = np.array([0x3F80, 0xBF81, 0x0001, 0x8000, 0x7F80, 0x7FC1, 0xFF7F], np.uint16)  # incl. subnormal, -0, inf, NaN


@unittest.skipUnless(importlib.util.find_spec("torch"), "torch is not installed")
class TorchTest(unittest.TestCase):
    def test_bf16_bits_in_and_out(self):
        import torch
        t = dtypes.to_torch("BF16", BITS, "cpu")
        self.assertEqual(t.dtype, torch.bfloat16)
        np.testing.assert_array_equal(t.view(torch.int16).numpy().view(np.uint16), BITS)
        np.testing.assert_array_equal(dtypes.to_wire(t, "bf16"), BITS)
        np.testing.assert_array_equal(dtypes.to_wire(t, "fp32").view(np.uint32)[:4], BITS[:4].astype(np.uint32) << 16)

    def test_fp32_output_rounds_once_like_to(self):
        import torch
        x = torch.randn(1000, generator=torch.Generator().manual_seed(1))
        np.testing.assert_array_equal(dtypes.to_wire(x, "bf16"),
                                      x.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16))

    def test_ids_and_strided(self):
        import torch
        self.assertEqual(dtypes.to_torch("I32", np.array([1, 2], np.int32), "cpu").dtype, torch.int64)
        x = torch.arange(12, dtype=torch.float32).reshape(3, 4).t()  # not contiguous
        np.testing.assert_array_equal(dtypes.to_wire(x, "fp32"), x.numpy())


@unittest.skipUnless(importlib.util.find_spec("jax"), "jax is not installed")
class JaxTest(unittest.TestCase):
    def test_bf16_bits_in_and_out(self):
        import jax
        import jax.numpy as jnp
        a = dtypes.to_jax("BF16", BITS, jax.devices()[0])
        self.assertEqual(a.dtype, jnp.bfloat16)
        np.testing.assert_array_equal(dtypes.to_wire(a, "bf16"), BITS)
        self.assertEqual(dtypes.to_jax("I64", np.array([3], np.int64), jax.devices()[0]).dtype, jnp.int32)


if __name__ == "__main__":
    unittest.main()
