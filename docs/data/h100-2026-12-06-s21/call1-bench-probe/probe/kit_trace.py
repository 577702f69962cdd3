"""Session 21 probe: adapters/torch_ops.py with the kit's frames timed.
Writes JSON to $KIT_TRACE: per frame (kind, detail, wait before it, time
answering it) and the time inside the kit's sync points (_positions,
_host_digests) and the items-alone runs (_each)."""
import atexit, json, os, sys, time
root = os.getcwd()
sys.path.insert(0, os.path.join(root, "adapters")); sys.path.insert(0, os.path.join(root, "adapters", "python"))
import importlib
S = importlib.import_module("bitparity_adapter.serve")
SC = importlib.import_module("bitparity_adapter.scan")
import torch_ops
rec, acc = [], {}
last = [time.perf_counter()]
def timed(name, f):
    def w(*a, **k):
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            d = time.perf_counter() - t
            c = acc.setdefault(name, [0, 0.0]); c[0] += 1; c[1] += d
    return w
orig_answer = S.Loop.answer
def answer(self, meta, tensors, seq):
    t = time.perf_counter(); wait = t - last[0]
    try:
        return orig_answer(self, meta, tensors, seq)
    finally:
        e = time.perf_counter(); last[0] = e
        det = {k: meta.get(k) for k in ("each", "against", "gen", "dist") if meta.get(k)}
        for k in ("sizes", "batches", "items", "x"):
            if k in tensors:
                det[k] = list(tensors[k][1].shape)
        rec.append([meta.get("frame"), det, round(wait, 5), round(e - t, 5)])
S.Loop.answer = answer
SC._positions = timed("_positions", SC._positions)
SC._host_digests = timed("_host_digests", SC._host_digests)
SC.Held._each = timed("_each", SC.Held._each)
SC.Held.__init__ = timed("Held.__init__", SC.Held.__init__)
def dump():
    with open(os.environ.get("KIT_TRACE", "/tmp/kit_trace.json"), "w") as f:
        json.dump({"frames": rec, "acc": acc}, f)
atexit.register(dump)
sys.exit(torch_ops.main(sys.argv[1:]))
