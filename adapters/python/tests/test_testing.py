import json
import os
import stat
import sys
import tempfile
import unittest

from . import helpers  # noqa: F401  (the kit on sys.path)
from bitparity_adapter import testing

# A stand-in for the bitparity binary: it records its arguments and writes a
# result with one finding to --json, then exits with $FAKE_CODE.
FAKE = r'''#!%s
import json, os, sys
args = sys.argv[1:]
open(os.environ["FAKE_ARGS"], "w").write(json.dumps(args))
if "--json" in args:
    f = {"kind": "mismatch", "relation": "batch_invariance", "target_a": "exec:numpy-drift.rmsnorm",
         "row": 3, "col": 7, "a": {"hex": "3f80"}, "b": {"hex": "3f81"}, "ulps": 1,
         "case": {"op": "rmsnorm"}}
    json.dump({"version": 1, "cases": 12, "findings": [f] if os.environ["FAKE_CODE"] == "1" else []},
              open(args[args.index("--json") + 1], "w"))
sys.exit(int(os.environ["FAKE_CODE"]))
'''


class TestingHelperTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.bin = os.path.join(self.dir.name, "bitparity")
        with open(self.bin, "w") as f:
            f.write(FAKE % sys.executable)
        os.chmod(self.bin, os.stat(self.bin).st_mode | stat.S_IEXEC)
        self.args = os.path.join(self.dir.name, "args.json")

    def tearDown(self):
        self.dir.cleanup()

    def env(self, code):
        return {"FAKE_ARGS": self.args, "FAKE_CODE": str(code)}

    def test_campaign_with_a_finding(self):
        out = testing.run_campaign(["python3 a.py rmsnorm", "python3 b.py gemm"], duration="5s",
                                   relations=["batch_invariance"], binary_path=self.bin, env=self.env(1))
        args = json.load(open(self.args))
        self.assertEqual(args[:5], ["run", "--exec", "python3 a.py rmsnorm", "--exec", "python3 b.py gemm"])
        self.assertIn("--relations", args)
        self.assertEqual((out.code, out.cases, len(out.findings)), (1, 12, 1))
        with self.assertRaises(AssertionError) as cm:
            out.assert_clean()
        self.assertIn("exec:numpy-drift.rmsnorm", str(cm.exception))
        self.assertIn("row 3 col 7", str(cm.exception))
        out.assert_code(1)

    def test_clean_case(self):
        out = testing.run_case({"op": "rmsnorm", "targets": ["exec:x.rmsnorm"]}, "python3 x.py rmsnorm",
                               binary_path=self.bin, env=self.env(0))
        args = json.load(open(self.args))
        self.assertEqual(args[:4], ["run", "--exec", "python3 x.py rmsnorm", "--case"])
        self.assertEqual(json.loads(args[4])["op"], "rmsnorm")
        out.assert_clean()
        with self.assertRaises(AssertionError):
            out.assert_code(1)

    def test_missing_binary(self):
        old = os.environ.pop("BITPARITY", None)
        path = os.environ.get("PATH", "")
        os.environ["PATH"] = self.dir.name + "/nowhere"
        try:
            with self.assertRaises(FileNotFoundError) as cm:
                testing.binary()
            self.assertIn("$BITPARITY", str(cm.exception))
        finally:
            os.environ["PATH"] = path
            if old is not None:
                os.environ["BITPARITY"] = old

    def test_no_pytest_needed(self):
        self.assertNotIn("pytest", testing.__dict__)


if __name__ == "__main__":
    unittest.main()
