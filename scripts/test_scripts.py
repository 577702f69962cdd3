"""Unit tests of the measurement scripts beside this file, run on the CPU
by `go test ./scripts/` (scripts_test.go) or directly:

    python3 -m unittest discover -s scripts -p 'test_*.py'
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))

SCAN_LOG = """\
  100056 row comparisons in 2382 batches, resident on the device, 0.361s (2.77e+05 rows/s)
  DRIFT: 300 row comparisons differ; drift map: over rows 1..256 (every value, 3 draws): rows <= 8 -> A, 9 <= rows <= 16 -> B, rows >= 17 -> A
"""


def run(*args):
    p = subprocess.run([sys.executable] + list(args), cwd=HERE, capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError("%s: exit %d\n%s%s" % (" ".join(args), p.returncode, p.stdout, p.stderr))
    return p.stdout


def have_torch():
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


class BenchSummary(unittest.TestCase):
    def summary(self, files):
        with tempfile.TemporaryDirectory() as d:
            for name, text in files.items():
                with open(os.path.join(d, name), "w") as f:
                    f.write(text if isinstance(text, str) else json.dumps(text))
            return run("bench_summary.py", d)

    def test_gemm_floor_beside_the_loop(self):
        loop = {"backend": "torch", "version": "2.11", "seconds": 0.391, "rows_checked": 99456, "panel_rows": 6048,
                "products": 2358, "differ": list(range(9, 17))}
        ops = {"backend": "torch", "version": "2.11", "seconds": 0.038, "products": 2358, "op_only": True, "differ": []}
        out = self.summary({"gemm-scan.log": SCAN_LOG, "gemm-loop-torch.json": loop, "gemm-ops.json": ops})
        self.assertIn("gemm speedup over the torch loop: 1.08x", out)
        self.assertIn("floor (scripts/gemm_scan.py --op-only: the torch loop's 2358 products and gathers, no compare): 0.038 s", out)
        rows = [l for l in out.splitlines() if "torch.matmul products alone" in l]
        self.assertEqual(len(rows), 1, out)
        self.assertIn("0.11x", rows[0])  # 0.038 / 0.361

    def test_runs_take_the_median(self):
        loop = {"backend": "torch", "version": "2.11", "rows_checked": 99456, "panel_rows": 6048, "products": 2358, "differ": []}
        files = {"gemm-loop-torch.json": dict(loop, seconds=0.391), "gemm-loop-torch.r2.json": dict(loop, seconds=0.6),
                 "gemm-loop-torch.r3.json": dict(loop, seconds=0.45)}
        for name, secs in (("gemm-scan.log", "0.361"), ("gemm-scan.r2.log", "0.5"), ("gemm-scan.r3.log", "0.3")):
            files[name] = SCAN_LOG.replace("0.361s", secs + "s")
        out = self.summary(files)
        self.assertIn("gemm speedup over the torch loop: 1.25x", out)  # 0.45 / 0.361
        self.assertIn("runs (alternated; each figure is its median run's): gemm-scan.log 0.361, 0.500, 0.300 s; "
                      "gemm-loop-torch.json 0.391, 0.600, 0.450 s", out)
        self.assertNotIn("runs", self.summary({"gemm-scan.log": SCAN_LOG, "gemm-loop-torch.json": dict(loop, seconds=0.391)}))

    def test_no_floor_without_its_file(self):
        loop = {"backend": "torch", "version": "2.11", "seconds": 0.391, "rows_checked": 99456, "panel_rows": 6048,
                "products": 2358, "differ": []}
        out = self.summary({"gemm-scan.log": SCAN_LOG, "gemm-loop-torch.json": loop})
        self.assertNotIn("floor", out)
        self.assertNotIn("products alone", out)


@unittest.skipUnless(have_torch(), "torch is not installed")
class GemmScan(unittest.TestCase):
    def test_op_only_makes_the_same_products(self):
        args = ["gemm_scan.py", "24", "16", "8", "--draws", "2", "--backend", "torch", "--device", "cpu"]
        full = json.loads(run(*args))
        ops = json.loads(run(*args, "--op-only"))
        self.assertFalse(full["op_only"])
        self.assertTrue(ops["op_only"])
        self.assertEqual(ops["products"], full["products"])
        self.assertEqual(ops["panel_rows"], full["panel_rows"])
        self.assertGreater(ops["panel_rows"], 0)
        self.assertEqual(ops["differ"], [])


if __name__ == "__main__":
    unittest.main()
