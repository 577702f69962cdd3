import json
import os
import stat
import sys
import tempfile
import unittest

from . import helpers  # noqa: F401  (the kit on sys.path)
from bitparity_adapter import testing

# A stand-in for the bitparity binary: it records its arguments, prints a
# finding as bitparity's report does (or a repro verdict), writes a result
# with that finding to --json and a case file to --corpus, then exits with
# $FAKE_CODE.
FAKE = r'''#!%s
import json, os, sys
args = sys.argv[1:]
code = int(os.environ["FAKE_CODE"])
open(os.environ["FAKE_ARGS"], "w").write(json.dumps(args))
if args[0] == "repro":
    print("case 1048341096d564ee.json: model path_parity on exec:numpy-model.transformer")
    print("recorded: model path_parity on exec:numpy-model.transformer: row 17 col 113")
    print("COULD NOT REPRODUCE: every compared row is bitwise equal here (682ms)." if code == 4 else
          "REPRODUCED: the mismatch shows here too, signature ece4ce1b8caf522c (7.035s)")
    sys.exit(code)
print("bitparity run: seed 1, 5s")
if code == 1:
    print("finding 1: mismatch, batch_invariance on exec:numpy-drift.rmsnorm")
    print("  first diverging row 3, column 7: A = 0x3f80 (1), B = 0x3f81 (1.0078125), 1 ulp in bf16; 1 row differs")
    print("  drift map over rows (periodic): rows %% 32 == 0 -> B, otherwise -> A")
    print("")
print("summary")
print("  exec:numpy-drift.rmsnorm  12 cases")
if "--json" in args:
    f = {"kind": "mismatch", "relation": "batch_invariance", "target_a": "exec:numpy-drift.rmsnorm",
         "row": 3, "col": 7, "a": {"hex": "3f80"}, "b": {"hex": "3f81"}, "ulps": 1,
         "case": {"op": "rmsnorm"}}
    json.dump({"version": 1, "cases": 12, "findings": [f] if code == 1 else []},
              open(args[args.index("--json") + 1], "w"))
if "--corpus" in args and code == 1:
    d = args[args.index("--corpus") + 1]
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "1048341096d564ee.json"), "w").write("{}")
    open(os.path.join(d, ".tmp-1048341096d564ee.json-x"), "w").write("")
sys.exit(code)
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
        self.assertIn("finding 1: mismatch, batch_invariance on exec:numpy-drift.rmsnorm", str(cm.exception))
        self.assertIn("first diverging row 3, column 7", str(cm.exception))
        self.assertIn("rows % 32 == 0 -> B", str(cm.exception))
        self.assertNotIn("summary", str(cm.exception))
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

    def test_model_route_campaign_stores_cases(self):
        out = testing.run_campaign("python3 my_model.py", duration="60s", max_cases=6, corpus="cases",
                                   cwd=self.dir.name, binary_path=self.bin, env=self.env(1))
        args = json.load(open(self.args))
        self.assertEqual(args[:3], ["run", "--exec", "python3 my_model.py"])
        self.assertEqual(args[args.index("--max-cases") + 1], "6")
        self.assertEqual(args[args.index("--corpus") + 1], "cases")
        self.assertNotIn("--relations", args)
        want = os.path.join(self.dir.name, "cases", "1048341096d564ee.json")
        self.assertEqual(out.case_files, [want])  # the temp file of a write in progress is not a case
        with self.assertRaises(AssertionError) as cm:
            out.assert_clean()
        self.assertIn("case files: " + want, str(cm.exception))

    def test_repro_and_recheck(self):
        out = testing.repro("c/1048341096d564ee.json", "python3 my_model.py", binary_path=self.bin, env=self.env(4))
        self.assertEqual(json.load(open(self.args)), ["repro", "--exec", "python3 my_model.py", "c/1048341096d564ee.json"])
        out.assert_code(4)
        with self.assertRaises(AssertionError) as cm:
            out.assert_code(1)
        self.assertIn("COULD NOT REPRODUCE", str(cm.exception))
        self.assertIn("recorded: model path_parity", str(cm.exception))
        testing.recheck("c", ["python3 my_model.py"], binary_path=self.bin, env=self.env(0)).assert_code(0)
        self.assertEqual(json.load(open(self.args)), ["corpus", "recheck", "-dir", "c", "--exec", "python3 my_model.py"])

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
