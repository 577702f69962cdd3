import importlib.util
import unittest

import numpy as np

from bitparity_adapter import gen


class ChunkTest(unittest.TestCase):
    """gen.rows makes the same bits however many values a chunk holds (a
    GPU makes GPU_CHUNK at once, NumPy and a CPU CHUNK): rows that span
    several chunks, and a last chunk cut short, against one chunk."""

    def test_chunks_give_the_same_rows(self):
        keys = np.array([0, 1, 2, 3, 4, 5, 6, 1 << 40, 9, 10, 11], dtype=np.uint64)
        devices = [None]
        if importlib.util.find_spec("torch"):
            devices.append("cpu")
        saved = gen.CHUNK
        try:
            for dev in devices:
                for dist in ("normal", "heavy", "outlier"):
                    gen.CHUNK = 1 << 18
                    whole = _bits(gen.rows(7, 1, dist, 1.0, "bf16", keys, 67, device=dev))
                    gen.CHUNK = 2 * 67  # two rows a chunk: six chunks, the last of one row
                    chunked = _bits(gen.rows(7, 1, dist, 1.0, "bf16", keys, 67, device=dev))
                    self.assertTrue(np.array_equal(whole, chunked), "%s on %s" % (dist, dev or "numpy"))
        finally:
            gen.CHUNK = saved


def _bits(r):
    return np.asarray(r.numpy() if hasattr(r, "numpy") else r).view(np.uint16)


if __name__ == "__main__":
    unittest.main()
