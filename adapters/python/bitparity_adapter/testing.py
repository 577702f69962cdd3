"""Run bitparity from a test suite (pytest or unittest; pytest is optional).

    from bitparity_adapter.testing import run_campaign, run_case

    def test_my_rmsnorm_is_batch_invariant():
        out = run_campaign(["python3 my_adapter.py rmsnorm"], duration="10s",
                           relations=["batch_invariance", "determinism"])
        out.assert_clean()          # exit 0, no finding; else the findings in words

Each call runs the bitparity binary ($BITPARITY, else `bitparity` on PATH)
in a subprocess with --json, and returns an Outcome: the exit code (0
nothing found, 1 a finding, 2 bad usage or input, 3 internal or device
failure, 4 could not reproduce), the parsed result and the output.
"""

import json
import os
import shutil
import subprocess
import tempfile

EXIT_NAMES = {0: "nothing found", 1: "finding", 2: "usage or bad input", 3: "internal or device failure",
              4: "could not reproduce"}


def binary(path=None):
    """The bitparity binary: path, $BITPARITY, or `bitparity` on PATH."""
    b = path or os.environ.get("BITPARITY") or shutil.which("bitparity")
    if not b:
        raise FileNotFoundError("no bitparity binary: set $BITPARITY or put bitparity on PATH "
                                "(go build -o bin/bitparity ./cmd/bitparity)")
    return b


class Outcome:
    """One bitparity invocation: code, stdout, stderr, result (the --json
    result as a dict, None when none was written) and args."""

    def __init__(self, args, code, stdout, stderr, result):
        self.args, self.code, self.stdout, self.stderr, self.result = args, code, stdout, stderr, result

    @property
    def findings(self):
        return (self.result or {}).get("findings") or []

    @property
    def cases(self):
        return (self.result or {}).get("cases", 0)

    def describe(self):
        """The outcome in words: exit code and each finding's first lines."""
        lines = ["bitparity exited %d (%s): %s" % (self.code, EXIT_NAMES.get(self.code, "?"), " ".join(self.args))]
        for f in self.findings:
            c = f.get("case", {})
            lines.append("  %s %s on %s: %s row %s col %s: %s vs %s, %s ulps" % (
                c.get("op"), f.get("relation"), f.get("target_a"), f.get("kind"), f.get("row"), f.get("col"),
                f.get("a", {}).get("hex"), f.get("b", {}).get("hex"), f.get("ulps")))
            if f.get("message"):
                lines.append("    " + f["message"][:400])
            if f.get("error"):
                lines.append("    " + f["error"][:400])
        if self.code not in (0, 1):
            lines.append(self.stderr.strip()[-2000:])
        return "\n".join(lines)

    def assert_clean(self):
        """Raise AssertionError (with describe()) unless bitparity exited 0
        with no finding."""
        if self.code != 0 or self.findings:
            raise AssertionError(self.describe())

    def assert_code(self, code):
        if self.code != code:
            raise AssertionError("want exit %d (%s); %s" % (code, EXIT_NAMES.get(code, "?"), self.describe()))


def _run(args, bp, timeout, env, cwd):
    with tempfile.TemporaryDirectory(prefix="bitparity-") as d:
        js = os.path.join(d, "result.json")
        full = [binary(bp)] + args + ["--json", js] if args[0] == "run" else [binary(bp)] + args
        p = subprocess.run(full, capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, **(env or {})), cwd=cwd)
        result = None
        if os.path.exists(js):
            with open(js) as f:
                result = json.load(f)
        return Outcome(full[1:], p.returncode, p.stdout, p.stderr, result)


def _exec_flags(execs):
    if isinstance(execs, str):
        execs = [execs]
    out = []
    for e in execs:
        out += ["--exec", e]
    return out


def run_case(case, execs, binary_path=None, timeout=600, env=None, cwd=None):
    """Run one case (a dict or its JSON, as a finding's repro line prints
    it) on the adapters execs (command lines)."""
    js = case if isinstance(case, str) else json.dumps(case, separators=(",", ":"))
    return _run(["run"] + _exec_flags(execs) + ["--case", js], binary_path, timeout, env, cwd)


def run_campaign(execs, duration="10s", seed=1, relations=None, targets=None, extra=(),
                 binary_path=None, timeout=None, env=None, cwd=None):
    """A short seeded campaign over the adapters execs (and targets, e.g.
    "oracle-rmsnorm"); relations limits the relations (names as in
    `bitparity list`). extra: more flags (e.g. ["--no-shrink"])."""
    args = ["run"] + _exec_flags(execs) + ["--duration", str(duration), "--seed", str(seed),
                                            "--expect-controls=false"]
    if relations:
        args += ["--relations", ",".join(relations)]
    if targets:
        args += ["--targets", ",".join(targets)]
    args += list(extra)
    return _run(args, binary_path, timeout or 600, env, cwd)


def repro(case_file, execs=(), binary_path=None, timeout=600, env=None, cwd=None):
    """`bitparity repro --exec ... FILE`: exit 1 reproduced, 4 could not."""
    return _run(["repro"] + _exec_flags(execs) + [case_file], binary_path, timeout, env, cwd)
