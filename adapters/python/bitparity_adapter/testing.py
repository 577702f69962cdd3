"""Run bitparity from a test suite (pytest or unittest; pytest is optional).

    from bitparity_adapter.testing import run_campaign, run_case, repro

    def test_my_rmsnorm_is_batch_invariant():
        out = run_campaign(["python3 my_adapter.py rmsnorm"], duration="10s",
                           relations=["batch_invariance", "determinism"])
        out.assert_clean()          # exit 0, no finding; else the findings in words

    def test_my_model_trains_as_it_serves():      # a model route (op transformer)
        out = run_campaign(["python3 my_model.py"], duration="60s", max_cases=12,
                           corpus="bitparity-cases")
        out.assert_clean()          # a finding is a case file in bitparity-cases/

    def test_the_fix_holds():
        repro("tests/cases/1048341096d564ee.json", "python3 my_model.py").assert_code(4)

Each call runs the bitparity binary ($BITPARITY, else `bitparity` on PATH)
in a subprocess (with --json for run), and returns an Outcome: the exit
code (0 nothing found, 1 a finding, 2 bad usage or input, 3 internal or
device failure, 4 could not reproduce, 5 a target stalled), the parsed
result, the output and the case files a run stored.
"""

import glob
import json
import os
import shutil
import subprocess
import tempfile

EXIT_NAMES = {0: "nothing found", 1: "finding", 2: "usage or bad input", 3: "internal or device failure",
              4: "could not reproduce", 5: "stalled"}


def binary(path=None):
    """The bitparity binary: path, $BITPARITY, or `bitparity` on PATH."""
    b = path or os.environ.get("BITPARITY") or shutil.which("bitparity")
    if not b:
        raise FileNotFoundError("no bitparity binary: set $BITPARITY or put bitparity on PATH "
                                "(go build -o bin/bitparity ./cmd/bitparity)")
    return b


class Outcome:
    """One bitparity invocation: code, stdout, stderr, result (the --json
    result as a dict, None when none was written), args and case_files (the
    case files in the run's corpus folder, sorted; empty without one)."""

    def __init__(self, args, code, stdout, stderr, result, case_files=()):
        self.args, self.code, self.stdout, self.stderr, self.result = args, code, stdout, stderr, result
        self.case_files = list(case_files)

    @property
    def findings(self):
        return (self.result or {}).get("findings") or []

    @property
    def cases(self):
        return (self.result or {}).get("cases", 0)

    def describe(self):
        """The outcome in words: the exit code, then each finding as
        bitparity printed it (its minimal case, first diverging row and
        column, both values, the drift map, the repro line), the case files
        and, unless the exit is 0 or 1, the end of stderr."""
        lines = ["bitparity exited %d (%s): %s" % (self.code, EXIT_NAMES.get(self.code, "?"), " ".join(self.args))]
        lines += _finding_blocks(self.stdout)
        if self.case_files:
            lines.append("case files: " + " ".join(self.case_files))
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


def _finding_blocks(stdout):
    """The findings of bitparity's own report (its "finding N:" blocks up to
    the summary), else the verdict lines of a repro."""
    out, inside = [], False
    for line in stdout.splitlines():
        if line.startswith("finding "):
            inside = True
        elif line.startswith("summary") or (inside and not line.strip()):
            inside = False
        if inside:
            out.append(line)
    if out:
        return out
    verdicts = ("recorded:", "here:", "REPRODUCED", "COULD NOT REPRODUCE", "REGRESSION", "PASSED", "  adapter ")
    return [line for line in stdout.splitlines() if line.startswith(verdicts)]


def _run(args, bp, timeout, env, cwd, corpus=None):
    with tempfile.TemporaryDirectory(prefix="bitparity-") as d:
        js = os.path.join(d, "result.json")
        full = [binary(bp)] + args
        if args[0] == "run":
            full += ["--json", js]
            if corpus:
                full += ["--corpus", corpus]
        p = subprocess.run(full, capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, **(env or {})), cwd=cwd)
        result = None
        if os.path.exists(js):
            with open(js) as f:
                result = json.load(f)
        files = []
        if corpus:
            files = sorted(glob.glob(os.path.join(os.path.join(cwd or ".", corpus), "[0-9a-f]" * 16 + ".json")))
        return Outcome(full[1:], p.returncode, p.stdout, p.stderr, result, files)


def _exec_flags(execs):
    if isinstance(execs, str):
        execs = [execs]
    out = []
    for e in execs:
        out += ["--exec", e]
    return out


def run_case(case, execs, binary_path=None, timeout=600, env=None, cwd=None):
    """Run one case (a dict or its JSON, as a finding's repro line prints
    it, a model-route case too) on the adapters execs (command lines)."""
    js = case if isinstance(case, str) else json.dumps(case, separators=(",", ":"))
    return _run(["run"] + _exec_flags(execs) + ["--case", js], binary_path, timeout, env, cwd)


def run_campaign(execs, duration="10s", seed=1, relations=None, targets=None, max_cases=None, corpus=None,
                 extra=(), binary_path=None, timeout=None, env=None, cwd=None):
    """A short seeded campaign over the adapters execs (and targets, e.g.
    "oracle-rmsnorm"); relations limits the relations (names as in
    `bitparity list`; a model route runs logprob_parity and path_parity).
    A model route (an adapter whose hello declares op transformer) runs
    alone: its train path against its inference path. max_cases stops after
    that many cases; corpus is a folder (relative to cwd) where each finding
    is stored as a case file when found (Outcome.case_files; `repro`
    replays one). extra: more flags (e.g. ["--no-shrink"])."""
    args = ["run"] + _exec_flags(execs) + ["--duration", str(duration), "--seed", str(seed),
                                            "--expect-controls=false"]
    if relations:
        args += ["--relations", ",".join(relations)]
    if targets:
        args += ["--targets", ",".join(targets)]
    if max_cases:
        args += ["--max-cases", str(max_cases)]
    args += list(extra)
    return _run(args, binary_path, timeout or 600, env, cwd, corpus)


def repro(case_file, execs=(), binary_path=None, timeout=600, env=None, cwd=None):
    """`bitparity repro --exec ... FILE`: exit 1 reproduced, 4 could not,
    2 the case needs an adapter execs does not serve."""
    return _run(["repro"] + _exec_flags(execs) + [case_file], binary_path, timeout, env, cwd)


def recheck(corpus, execs=(), binary_path=None, timeout=600, env=None, cwd=None):
    """`bitparity corpus recheck -dir CORPUS --exec ...`: replays every open
    finding, marks the ones that no longer reproduce fixed; exit 1 when one
    still fails, 0 when all are fixed."""
    return _run(["corpus", "recheck", "-dir", corpus] + _exec_flags(execs), binary_path, timeout, env, cwd)
