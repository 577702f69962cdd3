#!/usr/bin/env python3
"""The loop a user would write over the batches of `bitparity scan
--kernel MANIFEST --to MAX --hidden HIDDEN --in bf16 --out bf16` (three
draws), to tell the harness's time from the kernel's.

It loads the kernel the manifest names with CuPy's RawModule, as the
scan's worker does: the fat image when the manifest names one and it is
there, else the PTX (docs/kernel-abi.md), and launches its entry with the
manifest's geometry (block, then grid and shared with `block` = the
block's x size, evaluated as gpu.Expr evaluates them) and arguments in
the manifest's order (x, w, y as device pointers; rows, hidden, in_dtype,
out_dtype and eps typed as the PTX entry declares them). Only rmsnorm
manifests are run.

For each of DRAWS input draws (seeds SEED, SEED+1, ...: MAX x HIDDEN rows
of x, standard normal, and HIDDEN weights 1 + 0.25 N(0, 1), made once on
the device with cupy.random and rounded to the input dtype, before the
clock starts) it makes the batches a scan of the items dimension makes,
in its order:

  alone        MAX launches of one row: row i of x into row i of one
               output (the items alone);
  reference    one launch on all MAX rows;
  the step     for every v in 1..MAX, one launch on rows 0..v-1 of x in
               place into one reused output, every row compared bitwise
               with itself alone and in the reference batch: one flag a
               step;
  the panel    for v < P (P = min(MAX, 64), scan.PanelItems): further
               batches of v rows, rows (first + i) % MAX for first = v,
               2v, ... < P, gathered into one batch and launched, the rows
               of the first P compared with themselves alone (one bit a
               panel row).

That is draws x (2 MAX + 1 + sum over v < P of the panel batches) launches,
the scan's batch count (49,974 for 8192 rows and three draws). No launch
is waited for: a step's flag and panel bits stay on the device and are
read once a draw, after the loop (the scan waits for each launch, so that
a fault belongs to its batch). It prints one JSON object, as
scripts/gemm_scan.py does:

  seconds          the loops' time (the module loaded and the inputs made
                   before the clock starts)
  rows_checked     every row of every step once a draw, plus the MAX rows
                   of the reference batch checked against the rows alone:
                   DRAWS x (MAX (MAX + 1) / 2 + MAX), as scripts/torch_scan.py
  panel_rows       the rows of the further panel batches compared
  launches         the kernel launches made (the scan's batches)
  differ_by_draw   per draw, the v whose step has a row differing from its
                   row alone or in the reference batch; differ their union
  classes          the v grouped by their panel bits over every draw, in the
                   order of their first v

--dry-run needs no CuPy and no GPU: it reads the manifest and the PTX
entry, evaluates the geometry at 1 and MAX rows, counts the launches and
prints the plan as one JSON object (exit 2 on a manifest it cannot run).

    python3 scripts/kernel_loop.py [MANIFEST] [MAX] [HIDDEN] [--draws D] [--seed S] [--eps E] [--in DT] [--out DT] [--dry-run]
    python3 scripts/kernel_loop.py gpu/testdata/userkernels/rmsnorm_invariant.json 8192 4096 --draws 3
"""
import argparse
import json
import os
import re
import sys
import time

from sweep_summary import summarize

PANEL = 64  # scan.PanelItems
DTYPES = {"fp32": 0, "bf16": 1, "fp16": 2}  # the kernel ABI's dtype codes
PTX_TYPES = {"u64": "int64", "s64": "int64", "b64": "int64", "u32": "int32", "s32": "int32",
             "b32": "int32", "f32": "float32", "f64": "float64"}
POINTERS = ("x", "w", "y")  # rmsnorm's tensors (docs/kernel-abi.md)


class ManifestError(Exception):
    """A manifest or image this loop cannot run."""


def evaluate(src, env):
    """Evaluates a geometry expression as gpu.Expr does: integers, names,
    + - * / % (division truncating toward zero), unary minus, parentheses,
    cdiv(a, b) = (a + b - 1) / b, min and max."""
    toks = re.findall(r"\s*(\d+|[A-Za-z_]\w*|[-+*/%(),])", src)
    if "".join(toks) != re.sub(r"\s+", "", src):
        raise ManifestError("expression %r: a character it cannot read" % src)
    pos = [0]

    def peek():
        return toks[pos[0]] if pos[0] < len(toks) else None

    def take(want=None):
        t = peek()
        if t is None or (want is not None and t != want):
            raise ManifestError("expression %r: want %s at token %d" % (src, want or "a term", pos[0] + 1))
        pos[0] += 1
        return t

    def div(a, b, op):
        if b == 0:
            raise ManifestError("expression %r: %s by zero" % (src, op))
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        return q if op == "/" else a - b * q

    def term():
        t = take()
        if t == "-":
            return -term()
        if t == "(":
            v = expr()
            take(")")
            return v
        if t.isdigit():
            return int(t)
        if t in ("cdiv", "min", "max"):
            take("(")
            a = expr()
            take(",")
            b = expr()
            take(")")
            return {"cdiv": lambda: div(a + b - 1, b, "/"), "min": lambda: min(a, b), "max": lambda: max(a, b)}[t]()
        if t in env:
            return env[t]
        raise ManifestError("expression %r: unknown name %r" % (src, t))

    def product():
        v = term()
        while peek() in ("*", "/", "%"):
            op = take()
            b = term()
            v = v * b if op == "*" else div(v, b, op)
        return v

    def expr():
        v = product()
        while peek() in ("+", "-"):
            op = take()
            b = product()
            v = v + b if op == "+" else v - b
        return v

    v = expr()
    if peek() is not None:
        raise ManifestError("expression %r: unexpected %r" % (src, peek()))
    return v


class Kernel:
    """A manifest's rmsnorm kernel: its image, entry, parameter types and
    geometry."""

    def __init__(self, path):
        try:
            m = json.load(open(path))
        except (OSError, ValueError) as e:
            raise ManifestError("kernel manifest %s: %s" % (path, e))
        self.path, self.m = path, m
        self.name = m.get("name", os.path.basename(path))
        if m.get("op") != "rmsnorm":
            raise ManifestError("kernel manifest %s: op %r: this loop runs rmsnorm kernels only" % (path, m.get("op")))
        base = os.path.dirname(path)
        self.entry, self.params = m.get("entry"), m.get("params") or []
        ptx = os.path.join(base, m["ptx"]) if m.get("ptx") else None
        fat = os.path.join(base, m["fatbin"]) if m.get("fatbin") else None
        self.image = fat if fat and os.path.exists(fat) else ptx
        if not self.image or not os.path.exists(self.image):
            raise ManifestError("kernel manifest %s: no image here (ptx %s, fatbin %s)" % (path, ptx, fat))
        if not ptx or not os.path.exists(ptx):
            raise ManifestError("kernel manifest %s: the PTX (%s) is needed for the entry's parameter types" % (path, ptx))
        self.types = self.ptx_params(open(ptx).read())
        if len(self.types) != len(self.params):
            raise ManifestError("kernel manifest %s: %d params, but the PTX entry %s takes %d"
                                % (path, len(self.params), self.entry, len(self.types)))
        for p, t in zip(self.params, self.types):
            if p in POINTERS and t != "int64":
                raise ManifestError("kernel manifest %s: pointer %s is .%s in the PTX, want 64 bits" % (path, p, t))
        self.block_src = m.get("block") or ["1"]
        self.grid_src = m.get("grid") or ["1"]
        self.shared_src = m.get("shared") or "0"

    def ptx_params(self, text):
        """The numpy type names of the PTX entry's parameters, in order."""
        mt = re.search(r"\.entry\s+%s\s*\(([^)]*)\)" % re.escape(self.entry or ""), text)
        if not mt:
            raise ManifestError("kernel manifest %s: no entry %r in its PTX" % (self.path, self.entry))
        types = []
        for t in re.findall(r"\.param\s+\.(\w+)", mt.group(1)):
            if t not in PTX_TYPES:
                raise ManifestError("kernel manifest %s: entry parameter type .%s" % (self.path, t))
            types.append(PTX_TYPES[t])
        return types

    def geometry(self, rows, hidden):
        """grid, block (3 each) and shared bytes for a batch of rows."""
        env = {"rows": rows, "hidden": hidden}
        block = [evaluate(e, env) for e in self.block_src] + [1] * (3 - len(self.block_src))
        env["block"] = block[0]
        grid = [evaluate(e, env) for e in self.grid_src] + [1] * (3 - len(self.grid_src))
        return tuple(grid), tuple(block), evaluate(self.shared_src, env)


def panel_batches(n):
    """The further panel batches of every v < P: sum of len(range(v, P, v))."""
    p = min(n, PANEL)
    return sum(len(range(v, p, v)) for v in range(1, p))


def plan(k, a):
    n = a.max
    return {"dry_run": True, "kernel": k.name, "image": k.image, "entry": k.entry,
            "params": dict(zip(k.params, k.types)), "rows": n, "hidden": a.hidden, "draws": a.draws,
            "in": a.in_dt, "out": a.out_dt,
            "geometry_1": k.geometry(1, a.hidden), "geometry_max": k.geometry(n, a.hidden),
            "launches": a.draws * (2 * n + 1 + panel_batches(n)),
            "rows_checked": a.draws * (n * (n + 1) // 2 + n)}


class Loop:
    """The launches and compares on the device, through CuPy."""

    def __init__(self, k, hidden, eps, in_dt, out_dt):
        import cupy as cp
        import numpy as np
        self.cp, self.np, self.k, self.hidden = cp, np, k, hidden
        self.mod = cp.RawModule(path=k.image)
        self.fn = self.mod.get_function(k.entry)
        self.in_dt, self.out_dt = in_dt, out_dt
        self.in_bytes = 4 if in_dt == "fp32" else 2
        self.out_word = cp.uint32 if out_dt == "fp32" else cp.uint16
        self.scalars = {"hidden": hidden, "eps": eps, "in_dtype": DTYPES[in_dt], "out_dtype": DTYPES[out_dt]}

    def values(self, rs, shape, scale=1.0, shift=0.0):
        """Normal values made on the device, as the input dtype's bits."""
        cp = self.cp
        v = rs.standard_normal(shape, dtype=cp.float32) * cp.float32(scale) + cp.float32(shift)
        if self.in_dt == "fp32":
            return v.view(cp.uint32)
        if self.in_dt == "fp16":
            return v.astype(cp.float16).view(cp.uint16)
        b = v.view(cp.uint32)  # bf16, nearest even (finite values)
        return ((b + cp.uint32(0x7FFF) + ((b >> 16) & cp.uint32(1))) >> 16).astype(cp.uint16)

    def empty(self, rows):
        return self.cp.empty((rows, self.hidden), dtype=self.out_word)

    def launch(self, x, w, y, rows, xrow=0, yrow=0):
        """y[yrow:yrow+rows] = kernel(x[xrow:xrow+rows], w), not waited for."""
        np, k = self.np, self.k
        grid, block, shared = k.geometry(rows, self.hidden)
        ptr = {"x": x.data.ptr + xrow * self.hidden * self.in_bytes, "w": w.data.ptr,
               "y": y.data.ptr + yrow * y.strides[0]}
        args = []
        for p, t in zip(k.params, k.types):
            v = ptr[p] if p in ptr else (rows if p == "rows" else self.scalars[p])
            args.append(getattr(np, t)(v))
        self.fn(grid, block, tuple(args), shared_mem=shared)

    def sweep(self, x, w, n):
        """Runs v = 1..n on one draw; returns the per-step flags and the
        panel bits (True: the row differs from itself alone), on the device,
        and the counts of panel rows and launches."""
        cp = self.cp
        P = min(n, PANEL)
        alone, ref = self.empty(n), self.empty(n)
        for i in range(n):
            self.launch(x, w, alone, 1, xrow=i, yrow=i)
        self.launch(x, w, ref, n)
        flags = cp.zeros((n,), dtype=cp.bool_)
        panel = cp.zeros((n, P), dtype=cp.bool_)
        y, g, yg = self.empty(n), cp.empty((P, x.shape[1]), dtype=x.dtype), self.empty(P)
        idx = cp.arange(n)
        panel_rows, launches = 0, n + 1
        for v in range(1, n + 1):
            self.launch(x, w, y, v)
            dA = (y[:v] != alone[:v]).any(1)
            flags[v - 1] = (dA | (y[:v] != ref[:v]).any(1)).any()
            c = min(v, P)
            panel[v - 1, :c] = dA[:c]
            launches += 1
            for first in range(v, P, v):
                ids = (first + idx[:v]) % n
                g[:v] = x[ids]  # the gather a user writes: rows of x into a batch
                self.launch(g, w, yg, v)
                c = min(v, P - first)
                panel[v - 1, first:first + c] = (yg[:c] != alone[ids[:c]]).any(1)
                panel_rows += c
                launches += 1
        return flags, panel, panel_rows, launches


def main(argv):
    ap = argparse.ArgumentParser(prog="kernel_loop.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("manifest", nargs="?", default="gpu/testdata/userkernels/rmsnorm_invariant.json")
    ap.add_argument("max", nargs="?", type=int, default=8192, help="largest batch (rows 1..MAX)")
    ap.add_argument("hidden", nargs="?", type=int, default=4096)
    ap.add_argument("--draws", type=int, default=3, help="input draws (seeds SEED, SEED+1, ...)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eps", type=float, default=1e-6, help="as bitparity scan's --eps default")
    ap.add_argument("--in", dest="in_dt", choices=sorted(DTYPES), default="bf16")
    ap.add_argument("--out", dest="out_dt", choices=sorted(DTYPES), default="bf16")
    ap.add_argument("--dry-run", action="store_true", help="print the plan; no CuPy, no GPU")
    a = ap.parse_args(argv)
    n = a.max
    if n < 1 or a.hidden < 1 or a.draws < 1:
        ap.error("MAX, HIDDEN and --draws must be >= 1")
    try:
        k = Kernel(a.manifest)
        for dt, what in ((a.in_dt, "in"), (a.out_dt, "out")):
            if dt not in k.m.get(what, []):
                raise ManifestError("kernel manifest %s: %s %s not in the manifest's %s %s"
                                    % (a.manifest, what, dt, what, k.m.get(what)))
        geometry = plan(k, a)
    except ManifestError as e:
        print("kernel_loop.py: %s" % e, file=sys.stderr)
        return 2
    if a.dry_run:
        print(json.dumps(geometry))
        return 0

    lp = Loop(k, a.hidden, a.eps, a.in_dt, a.out_dt)
    cp = lp.cp
    draws = []
    for d in range(a.draws):
        rs = cp.random.RandomState(a.seed + d)
        draws.append((lp.values(rs, (n, a.hidden)), lp.values(rs, (a.hidden,), 0.25, 1.0)))
    x, w = draws[0]
    lp.launch(x, w, lp.empty(1), 1)  # load the module before the clock
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    results = [lp.sweep(x, w, n) for x, w in draws]
    cp.cuda.Device().synchronize()
    took = time.perf_counter() - t0

    per_draw, classes, panel_rows, launches, checked = summarize(results, cp.asnumpy, n)
    print(json.dumps({"backend": "cupy", "version": cp.__version__, "kernel": k.name, "image": k.image,
                      "rows": n, "hidden": a.hidden, "draws": a.draws, "seed": a.seed, "eps": a.eps,
                      "in": a.in_dt, "out": a.out_dt, "differ_by_draw": per_draw,
                      "differ": sorted(set().union(*per_draw)), "classes": classes,
                      "rows_checked": checked, "panel_rows": panel_rows, "launches": launches,
                      "seconds": round(took, 3), "rows_per_second": round(checked / took)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
