"""A test adapter for rmsnorm that answers y = x, except on a batch of 13
rows, where it misbehaves the way argv[1] says:

  crash        exits with status 3 after a word on stderr
  segv         kills itself with SIGSEGV
  hang         sleeps instead of answering
  garbage      writes 64 bytes of 0xff instead of a frame
  badjson      a frame whose header is not JSON
  dtype        y as F32 instead of the output dtype
  shape        y with one row missing
  seq          the reply carries the wrong seq
  noy          a reply without y
  exception    the op raises ValueError (an error frame of kind failure)
  unsupported  the op raises bp.Unsupported
  stdout       prints to stdout first (the module must keep frames clean)
  huge         announces an 8 GiB frame and sends 1 MiB of it
  big          announces a frame 1 MiB larger than the reply can be
  exit         exits with status 0, answering nothing
  hellohang    (any batch) sleeps instead of answering the hello
  hang3        (any batch) sleeps instead of answering the third request
"""
import os
import signal
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "adapters", "python"))
import bitparity_adapter as bp  # noqa: E402
from bitparity_adapter.serve import Conn, reply_tensors  # noqa: E402

mode = sys.argv[1]


def op(req):
    x = req.f32("x")
    if x.shape[0] == 13:
        if mode == "exception":
            raise ValueError("planted failure")
        if mode == "unsupported":
            raise bp.Unsupported("13 rows are not supported")
        if mode == "stdout":
            print("hello from print")
            os.write(1, b"hello from fd 1\n")
    return x


def main():
    conn = Conn()
    requests = 0
    while True:
        try:
            meta, tensors = conn.read()
        except EOFError:
            return 0
        seq = meta["seq"]
        if meta["frame"] == "hello":
            if mode == "hellohang":
                time.sleep(3600)
            conn.write({"frame": "hello", "protocol": 1, "seq": seq, "op": "rmsnorm",
                        "name": "misbehave-" + mode, "invariant": "true", "ulp_bound": 0})
            continue
        req = bp.Request(meta, tensors)
        requests += 1
        if mode == "hang3" and requests == 3:
            time.sleep(3600)
        trigger = req.f32("x").shape[0] == 13
        if trigger and mode == "crash":
            sys.stderr.write("boom: planted crash\n")
            sys.stderr.flush()
            os._exit(3)
        if trigger and mode == "segv":
            os.kill(os.getpid(), signal.SIGSEGV)
        if trigger and mode == "hang":
            time.sleep(3600)
        if trigger and mode in ("huge", "big"):
            n = 8 << 30 if mode == "huge" else 64 * 13 * 2 + 13 * 72 * 4 + (64 << 10) + (1 << 20)
            conn.out.write(struct.pack("<Q", n) + b"\0" * (1 << 20))
            conn.out.flush()
            time.sleep(3600)
        if trigger and mode == "exit":
            os._exit(0)
        if trigger and mode == "garbage":
            conn.out.write(b"\xff" * 64)
            continue
        if trigger and mode == "badjson":
            js = b"{not json}      "
            conn.out.write(struct.pack("<QQ", 8 + len(js), len(js)) + js)
            continue
        try:
            out = reply_tensors(req, op(req))
        except bp.Unsupported as e:
            conn.write({"frame": "error", "seq": seq, "kind": "unsupported", "message": str(e)})
            continue
        except Exception as e:
            conn.write({"frame": "error", "seq": seq, "kind": "failure", "message": str(e)})
            continue
        if trigger and mode == "dtype":
            out = [("y", "F32", req.f32("x"))]
        if trigger and mode == "shape":
            out = [(n, w, a[:-1]) for n, w, a in out]
        if trigger and mode == "seq":
            seq = str(int(seq) + 7)
        if trigger and mode == "noy":
            out = []
        conn.write({"frame": "reply", "seq": seq}, out)


sys.exit(main())
