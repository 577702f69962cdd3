"""The FlashInfer and flash-attn entries' flags and skip path: no torch,
numpy or library needed (attnlibs is loaded by its path, past the kit's
__init__, which imports numpy)."""
import contextlib
import importlib.util
import io
import os
import unittest

_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bitparity_adapter", "attnlibs.py")
_spec = importlib.util.spec_from_file_location("attnlibs", _path)
attnlibs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(attnlibs)


def parse_error(argv):
    """The argparse error message of argv, or None."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            attnlibs.parse(argv)
    except SystemExit:
        return err.getvalue()
    return None


class FlagsTest(unittest.TestCase):
    def test_options_and_names(self):
        for argv, name, kw in [
            (["flashinfer", "attn_decode"], "flashinfer", {}),
            (["flashinfer", "attn_decode", "--fixed-split-size", "2048"], "flashinfer-split2048", {"fixed_split_size": 2048}),
            (["flashinfer", "attn_prefill", "--disable-split-kv"], "flashinfer-nosplit", {"disable_split_kv": True}),
            (["flash-attn", "attn_decode", "--num-splits", "1", "--deterministic"], "flash-attn-splits1-det", {}),
        ]:
            a = attnlibs.parse(argv)
            self.assertEqual(attnlibs.name(a), name, argv)
            self.assertEqual(attnlibs.split_kw(a), kw, argv)

    def test_bad_flags(self):
        for argv, want in [
            (["flash-attn", "attn_decode", "--fixed-split-size", "64"], "flashinfer options"),
            (["flash-attn", "attn_decode", "--disable-split-kv"], "flashinfer options"),
            (["flashinfer", "attn_decode", "--num-splits", "2"], "flash-attn option"),
            (["flash-attn", "attn_decode", "--num-splits", "-1"], "want >= 0"),
            (["flashinfer", "attn_decode", "--fixed-split-size", "0"], "positive"),
            (["flashinfer", "rmsnorm"], "invalid choice"),
            (["cudnn", "attn_decode"], "invalid choice"),
        ]:
            msg = parse_error(argv)
            self.assertIsNotNone(msg, argv)
            self.assertIn(want, msg, argv)


class SkipTest(unittest.TestCase):
    def test_not_installed(self):
        with self.assertRaises(attnlibs.Skip) as c:
            attnlibs.load("flashinfer", find_spec=lambda m: None)
        self.assertIn("flashinfer is not installed (pip install flashinfer-python)", str(c.exception))

    def test_import_fails(self):
        def broken(m):
            raise ImportError("libcudart.so.12: cannot open shared object file")
        with self.assertRaises(attnlibs.Skip) as c:
            attnlibs.load("flash-attn", find_spec=lambda m: object(), import_module=broken)
        self.assertIn("flash-attn does not import here (ImportError: libcudart.so.12", str(c.exception))

    def test_loads(self):
        mod = object()
        self.assertIs(attnlibs.load("flash-attn", find_spec=lambda m: object(), import_module=lambda m: mod), mod)

    def test_adapter_exits_skip(self):
        """The adapter script on a host without the library: exit 3 and the
        reason, before torch is imported."""
        import subprocess
        import sys
        if importlib.util.find_spec("flashinfer") is not None:
            self.skipTest("flashinfer is installed here")
        script = os.path.join(os.path.dirname(_path), "..", "..", "attn_libs.py")
        p = subprocess.run([sys.executable, script, "flashinfer", "attn_decode"], capture_output=True, text=True)
        self.assertEqual(p.returncode, attnlibs.SKIP_EXIT, p.stderr)
        self.assertIn("flashinfer is not installed", p.stderr)


if __name__ == "__main__":
    unittest.main()
