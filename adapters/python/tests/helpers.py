"""Shared pieces of the kit's tests: the kit on sys.path, a conversation
with serve() over in-memory streams."""
import io
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from bitparity_adapter import frames  # noqa: E402
from bitparity_adapter.serve import serve  # noqa: E402


def frame_bytes(meta, tensors=()):
    b = io.BytesIO()
    frames.write_frame(b, meta, tensors)
    return b.getvalue()


def converse(ops, sent, **kw):
    """Run serve(ops) on the frames sent (a list of (meta, tensors)); return
    its exit status and the frames it answered."""
    inp = io.BytesIO(b"".join(frame_bytes(m, t) for m, t in sent))
    out = io.BytesIO()
    err, sys.stderr = sys.stderr, io.StringIO()  # the kit logs tracebacks there
    try:
        code = serve(ops, stdin=inp, stdout=out, argv=kw.pop("argv", []), **kw)
    finally:
        sys.stderr = err
    out.seek(0)
    got = []
    while True:
        try:
            got.append(frames.read_frame(out))
        except EOFError:
            return code, got


def hello(op=""):
    return {"frame": "hello", "protocol": "1", "seq": "0", "op": op}, ()
