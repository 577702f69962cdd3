import io
import struct
import unittest

import numpy as np

from .helpers import frame_bytes
from bitparity_adapter import frames


class FrameTest(unittest.TestCase):
    def test_round_trip(self):
        x = np.arange(12, dtype=np.float32).reshape(3, 4)
        ids = np.array([5, -1, 7], dtype=np.int32)
        b = frame_bytes({"frame": "reply", "seq": 3}, [("y", "F32", x), ("ids", "I32", ids)])
        n, h = struct.unpack_from("<QQ", b)
        self.assertEqual(n + 8, len(b))
        self.assertEqual((16 + h) % 8, 0, "header padded so tensor data is 8-byte aligned")
        meta, t = frames.read_frame(io.BytesIO(b))
        self.assertEqual(meta, {"frame": "reply", "seq": "3"})
        self.assertEqual(t["y"][0], "F32")
        np.testing.assert_array_equal(t["y"][1], x)
        np.testing.assert_array_equal(t["ids"][1], ids)

    def test_empty_tensor(self):
        b = frame_bytes({"frame": "reply"}, [("y", "BF16", np.zeros((0, 4), np.uint16))])
        _, t = frames.read_frame(io.BytesIO(b))
        self.assertEqual(t["y"][1].shape, (0, 4))

    def test_clean_eof(self):
        with self.assertRaises(EOFError):
            frames.read_frame(io.BytesIO(b""))

    def test_bad_streams(self):
        good = frame_bytes({"frame": "hello"}, [("y", "F32", np.ones(4, np.float32))])
        cases = {
            "truncated": good[:-3],
            "not a frame length": struct.pack("<Q", 3) + b"abc",
            "not JSON": struct.pack("<QQ", 8 + 8, 8) + b"{nojson}",
            "header length": struct.pack("<QQ", 16, 99) + b"        ",
            "dtype": self._with_entry('{"y":{"dtype":"U16","shape":[1],"data_offsets":[0,2]}}', 2),
            "disagree": self._with_entry('{"y":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}', 4),
        }
        for what, b in cases.items():
            with self.subTest(what):
                with self.assertRaises(frames.ProtocolError) as cm:
                    frames.read_frame(io.BytesIO(b))
                self.assertIn(what, str(cm.exception))

    @staticmethod
    def _with_entry(js, nbytes):
        js = js.encode()
        js += b" " * ((8 - (16 + len(js)) % 8) % 8)
        return struct.pack("<QQ", 8 + len(js) + nbytes, len(js)) + js + b"\0" * nbytes


if __name__ == "__main__":
    unittest.main()
