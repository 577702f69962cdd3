#!/usr/bin/env python3
"""The figures of scripts/bench-scan-gpu.sh, read from its OUTDIR: each
kind's scan beside its loop (and the rmsnorm scan beside the copy bound),
one block of lines a kind, then one summary table. A kind whose files are
not there was not run and is left out; one whose command ran but left no
figure says so and names its log.

Files read (each optional): scan.log, loop.json, copy.json (rmsnorm);
gemm-scan.log, gemm-loop-torch.json, gemm-loop-cupy.json, gemm-ops.json (gemm:
gemm-ops.json is the torch loop's products with no compare, the floor);
exec-scan.log, loop.json and ops.json (exec: ops.json is the loop's
F.rms_norm calls with no compare, the floor); kernel-scan.log, kernel-loop.json
(kernel); power-1.log, power-2.log and their .wall files (power: wall
seconds of each run).

With RUNS > 1 (bench-scan-gpu.sh) every scan and loop of rmsnorm, gemm and
exec ran RUNS times, alternated; run k's files carry ".rK" before their
extension (gemm-scan.r2.log, loop.r2.json). Each figure is then the
median run's (the lower of the two middle ones for an even count), and a
line per kind lists every run's seconds.

    python3 scripts/bench_summary.py OUTDIR [--rows R] [--hidden H] [--draws D] [--gemm-target T] [--gemm-m M] [--gemm-k K] [--gemm-n N] [--kernel MANIFEST]
"""
import argparse
import json
import os
import re
import statistics
import sys

SCAN_LINE = re.compile(r"(\d+) row comparisons in (\d+) batches, ([^,]*), ([0-9.e+]+)s \(([0-9.e+]+) rows/s\)")


def median_run(got, seconds):
    """The run of got whose seconds(run) is the median (the lower of the
    two middle ones for an even count); None when got is empty."""
    if not got:
        return None
    mid = statistics.median_low([seconds(g) for g in got])
    return next(g for g in got if seconds(g) == mid)


class Dir:
    def __init__(self, path):
        self.path = path

    def has(self, name):
        return os.path.exists(os.path.join(self.path, name))

    def text(self, name):
        try:
            return open(os.path.join(self.path, name)).read()
        except OSError:
            return None

    def runs(self, name):
        """name and the files of its later runs (name with .r2, .r3, ...
        before its extension) that are there."""
        stem, ext = os.path.splitext(name)
        names, k = [name], 2
        while self.has("%s.r%d%s" % (stem, k, ext)):
            names.append("%s.r%d%s" % (stem, k, ext))
            k += 1
        return names

    def seconds(self, name):
        """Every run's seconds of a scan log or loop JSON, in run order."""
        log = name.endswith(".log")
        got = [self.scan_one(n) if log else self.json_one(n) for n in self.runs(name)]
        return [g[0] if log else g["seconds"] for g in got if g]

    def json(self, name):
        """The JSON object of name; the median run's (by its "seconds")
        when name ran several times."""
        got = [g for g in (self.json_one(n) for n in self.runs(name)) if g is not None]
        if all(isinstance(g, dict) and "seconds" in g for g in got):
            return median_run(got, lambda g: g["seconds"])
        return got[0] if got else None

    def json_one(self, name):
        t = self.text(name)
        try:
            return json.loads(t) if t else None
        except ValueError:
            return None

    def wall(self, name):
        t = self.text(name + ".wall")
        try:
            return float(t) if t else None
        except ValueError:
            return None

    def scan(self, name):
        """(seconds, comparisons, batches, where, rows/s, verdict) of a scan
        log, or None; the median run's when name ran several times."""
        return median_run([r for r in (self.scan_one(n) for n in self.runs(name)) if r], lambda r: r[0])

    def scan_one(self, name):
        t = self.text(name)
        m = SCAN_LINE.search(t or "")
        if not m:
            return None
        verdict = "CERTIFIED" if "CERTIFIED" in t else "underpowered" if "underpowered" in t.lower() else "drift map"
        return float(m.group(4)), int(m.group(1)), int(m.group(2)), m.group(3), float(m.group(5)), verdict


def main(argv):
    ap = argparse.ArgumentParser(prog="bench_summary.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--rows", type=int, default=8192)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--draws", type=int, default=3)
    ap.add_argument("--gemm-target", default="cublas-gemmex")
    ap.add_argument("--gemm-m", type=int, default=256)
    ap.add_argument("--gemm-k", type=int, default=4096)
    ap.add_argument("--gemm-n", type=int, default=4096)
    ap.add_argument("--kernel", default="gpu/testdata/userkernels/rmsnorm_invariant.json")
    a = ap.parse_args(argv)
    if not os.path.isdir(a.outdir):
        print("bench_summary.py: %s is not a folder" % a.outdir, file=sys.stderr)
        return 2
    d = Dir(a.outdir)
    rows, hidden, draws = a.rows, a.hidden, a.draws
    table = []  # kind, scan s, loop name, loop s, ratio text, want text, met

    def row(kind, scan, loop_name, loop_s, want, met_of):
        ratio = loop_s / scan[0] if scan and loop_s else None
        table.append((kind, "%.3f" % scan[0] if scan else "-", loop_name, "%.3f" % loop_s if loop_s else "-",
                      "%.2fx" % ratio if ratio else "-", want,
                      "-" if ratio is None or met_of is None else ("yes" if met_of(ratio) else "no")))

    loop = d.json("loop.json")

    def runs_line(*names):
        """Every run's seconds of the files names that ran more than once."""
        parts = ["%s %s s" % (n, ", ".join("%.3f" % x for x in d.seconds(n))) for n in names if len(d.runs(n)) > 1]
        if parts:
            print("  runs (alternated; each figure is its median run's): " + "; ".join(parts))

    def torch_loop_line():
        if loop:
            print("  torch loop (scripts/torch_scan.py, torch %s): %.3f s, %d rows checked, %.3g rows/s, %d value(s) differ"
                  % (loop["torch"], loop["seconds"], loop["rows_checked"], loop["rows_per_second"], len(loop["differ"])))
        else:
            print("  torch loop: no figure (see loop.log)")

    if d.has("scan.log"):
        s, copy = d.scan("scan.log"), d.json("copy.json")
        batch_rows = draws * rows * (rows + 1) // 2
        bound_bytes = 3 * 2 * hidden * batch_rows
        print("rmsnorm: cuda-rmsnorm, rows 1..%d, hidden %d, bf16, %d draw(s)" % (rows, hidden, draws))
        if s:
            print("  scan (bitparity scan --target cuda-rmsnorm --power 0): %.3f s, %d row comparisons in %d batches, %.3g rows/s, %s"
                  % (s[0], s[1], s[2], s[4], s[5]))
        else:
            print("  scan: no figure (see scan.log)")
        torch_loop_line()
        bound = None
        if copy:
            bw = copy["bytes_per_second"]
            bound = bound_bytes / bw
            print("  copy bandwidth (device to device, read + write): %.3f TB/s" % (bw / 1e12))
            print("  bound: %.3f TB (kernel reads and writes, one read of each output) at copy bandwidth: %.3f s"
                  % (bound_bytes / 1e12, bound))
        else:
            print("  copy bandwidth: no figure (see copy.log)")
        if s and loop:
            print("  speedup over the torch loop: %.2fx (want >= 2)" % (loop["seconds"] / s[0]))
        if s and bound:
            print("  scan / bound: %.2fx (want <= 2); the scan moves %.3g TB/s of the bound's bytes"
                  % (s[0] / bound, bound_bytes / s[0] / 1e12))
        runs_line("scan.log", "loop.json")
        row("cuda-rmsnorm", s, "torch F.rms_norm loop", loop and loop["seconds"], ">= 2x", lambda r: r >= 2)
        if bound:
            table.append(("cuda-rmsnorm", "%.3f" % s[0] if s else "-", "copy bound", "%.3f" % bound,
                          "%.2fx" % (bound / s[0]) if s else "-", "scan <= 2x bound",
                          "-" if not s else ("yes" if s[0] <= 2 * bound else "no")))

    if d.has("gemm-scan.log"):
        s = d.scan("gemm-scan.log")
        print("gemm: %s, M 1..%d, K %d, N %d, bf16, %d draw(s)" % (a.gemm_target, a.gemm_m, a.gemm_k, a.gemm_n, draws))
        if s:
            print("  scan (bitparity scan --target %s --power 0): %.3f s, %d row comparisons in %d batches, %s, %s"
                  % (a.gemm_target, s[0], s[1], s[2], s[3], s[5]))
        else:
            print("  scan: no figure (see gemm-scan.log)")
        for be in ("torch", "cupy"):
            name = "gemm-loop-%s.json" % be
            if not d.has(name):
                continue
            lp = d.json(name)
            if lp:
                print("  loop (scripts/gemm_scan.py --backend %s, %s %s): %.3f s, %d rows checked, %d panel rows, %d products, %d M differ"
                      % (be, lp["backend"], lp["version"], lp["seconds"], lp["rows_checked"], lp["panel_rows"],
                         lp["products"], len(lp["differ"])))
                if s:
                    print("  gemm speedup over the %s loop: %.2fx (want >= 1.5 over torch.matmul)" % (be, lp["seconds"] / s[0]))
            else:
                print("  loop (%s): no figure (see gemm-loop-%s.log)" % (be, be))
            row(a.gemm_target, s, "torch.matmul loop" if be == "torch" else "CuPy cublasGemmEx loop",
                lp and lp["seconds"], ">= 1.5x" if be == "torch" else "-", (lambda r: r >= 1.5) if be == "torch" else None)
        runs_line("gemm-scan.log", *["gemm-loop-%s.json" % be for be in ("torch", "cupy")], "gemm-ops.json")
        ops = d.json("gemm-ops.json")
        if ops:
            print("  floor (scripts/gemm_scan.py --op-only: the torch loop's %d products and gathers, no compare): %.3f s"
                  % (ops["products"], ops["seconds"]))
            row(a.gemm_target, s, "torch.matmul products alone", ops["seconds"], "-", None)

    if d.has("exec-scan.log"):
        s = d.scan("exec-scan.log")
        print("exec: scan --exec 'python3 adapters/torch_ops.py rmsnorm', rows 1..%d, hidden %d, bf16, %d draw(s)"
              % (rows, hidden, draws))
        if s:
            print("  scan (--power 0): %.3f s, %d row comparisons in %d batches, %.3g rows/s, %s (wall %s s)"
                  % (s[0], s[1], s[2], s[4], s[5], d.wall("exec-scan")))
        else:
            print("  scan: no figure (see exec-scan.log)")
        torch_loop_line()
        ops = d.json("ops.json")
        if ops:
            print("  floor (scripts/torch_scan.py --op-only: the same F.rms_norm calls, no compare): %.3f s" % ops["seconds"])
        if s and loop:
            print("  scan speed over the torch loop: %.2fx (want >= 1)" % (loop["seconds"] / s[0]))
        runs_line("exec-scan.log", "loop.json", "ops.json")
        row("exec:torch rmsnorm", s, "torch F.rms_norm loop", loop and loop["seconds"], ">= 1x", lambda r: r >= 1)
        row("exec:torch rmsnorm", s, "F.rms_norm calls alone", ops and ops["seconds"], "-", None)

    if d.has("kernel-scan.log"):
        s, lp = d.scan("kernel-scan.log"), d.json("kernel-loop.json")
        print("kernel: scan --kernel %s, rows 1..%d, hidden %d, bf16, %d draw(s)" % (a.kernel, rows, hidden, draws))
        if s:
            print("  scan (--power 0): %.3f s, %d row comparisons in %d batches, %.3g rows/s, %s"
                  % (s[0], s[1], s[2], s[4], s[5]))
        else:
            print("  scan: no figure (see kernel-scan.log)")
        if lp:
            print("  loop (scripts/kernel_loop.py, cupy %s, %s): %.3f s, %d rows checked, %d launches, %d panel rows, %d value(s) differ"
                  % (lp["version"], os.path.basename(lp["image"]), lp["seconds"], lp["rows_checked"], lp["launches"],
                     lp["panel_rows"], len(lp["differ"])))
        else:
            print("  loop: no figure (see kernel-loop.log)")
        if s and lp:
            print("  scan / loop: %.2fx (want <= 1.2)" % (s[0] / lp["seconds"]))
        row("kernel:" + os.path.basename(a.kernel), s, "CuPy RawModule loop", lp and lp["seconds"], ">= 0.83x (scan <= 1.2x loop)",
            lambda r: r >= 1 / 1.2)

    if d.has("power-1.log"):
        print("power: scan --target cuda-rmsnorm --profile llama3-8b --to %d, default power (sensitive draws)" % rows)
        for p, what in (("1", "first run, empty sensitive cache"), ("2", "second run, draws read from the cache")):
            s, w = d.scan("power-%s.log" % p), d.wall("power-%s" % p)
            if s:
                print("  %s: scan %.3f s, wall %s s, %d row comparisons in %d batches, %s"
                      % (what, s[0], "%.3f" % w if w is not None else "-", s[1], s[2], s[5]))
                table.append(("cuda-rmsnorm power 0.99 (%s)" % ("1st" if p == "1" else "2nd, cached"), "%.3f" % s[0],
                              "wall", "%.3f" % w if w is not None else "-", "-", "-", "-"))
            elif d.has("power-%s.log" % p):
                print("  %s: no figure (see power-%s.log)" % (what, p))

    if table:
        head = ("kind", "scan s", "against", "its s", "its s / scan s", "want", "met")
        widths = [max(len(str(r[i])) for r in table + [head]) for i in range(len(head))]
        print("summary:")
        for r in [head] + table:
            print("  " + "  ".join(str(c).ljust(widths[i]) if i in (0, 2, 5) else str(c).rjust(widths[i])
                                   for i, c in enumerate(r)).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
