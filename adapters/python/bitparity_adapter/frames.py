"""Frames of the bitparity process protocol, version 1.

A frame is a little-endian u64 byte count followed by one safetensors
document: a u64 header length, a JSON header ("__metadata__" maps string
keys to string values; every other key is a tensor
{"dtype", "shape", "data_offsets"}), then the tensor bytes, little-endian,
row-major, tiling the data exactly.

read_frame reads a frame with one readinto per chunk into one buffer and
views each tensor in place with numpy.frombuffer; write_frame writes the
header and each array's memory without a copy.
"""

import json
import struct

import numpy as np

PROTOCOL = 1

# Wire dtypes and the NumPy dtype their bytes are viewed as. NumPy has no
# bfloat16: BF16 tensors travel as their uint16 bits.
WIRE_NUMPY = {
    "BF16": np.dtype("<u2"),
    "F16": np.dtype("<f2"),
    "F32": np.dtype("<f4"),
    "I32": np.dtype("<i4"),
    "I64": np.dtype("<i8"),
    "U8": np.dtype("u1"),  # an op package's uint8 column (fp8 codes)
}

# The largest frame this side accepts (the harness bounds its own).
MAX_FRAME = 1 << 34


class ProtocolError(Exception):
    """The byte stream is not a well-formed frame."""


def _read_exact(f, n):
    buf = bytearray(n)
    mv = memoryview(buf)
    got = 0
    while got < n:
        k = f.readinto(mv[got:])
        if not k:
            if got == 0:
                raise EOFError
            raise ProtocolError("truncated frame: %d of %d bytes" % (got, n))
        got += k
    return buf


def read_frame(f):
    """Read one frame from the binary stream f: (metadata dict of str,
    {name: (wire dtype, read-only array)}). EOFError at a clean end of
    input; ProtocolError for anything that is not a frame."""
    n = struct.unpack("<Q", _read_exact(f, 8))[0]
    if n < 8 or n > MAX_FRAME:
        raise ProtocolError("frame length %d is not a frame length" % n)
    doc = _read_exact(f, n)
    h = struct.unpack_from("<Q", doc, 0)[0]
    if h > n - 8:
        raise ProtocolError("header length %d in a %d-byte frame" % (h, n))
    try:
        header = json.loads(bytes(doc[8:8 + h]))
    except ValueError as e:
        raise ProtocolError("header: not JSON: %s" % e) from None
    if not isinstance(header, dict):
        raise ProtocolError("header: not a JSON object")
    meta = header.pop("__metadata__", None) or {}
    base = 8 + h
    tensors = {}
    for name, e in header.items():
        try:
            wire, shape, (lo, hi) = e["dtype"], tuple(int(d) for d in e["shape"]), e["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise ProtocolError("tensor %r: entry %r" % (name, e)) from None
        dt = WIRE_NUMPY.get(wire)
        if dt is None:
            raise ProtocolError("tensor %r: dtype %r (want one of %s)" % (name, wire, ", ".join(WIRE_NUMPY)))
        count = int(np.prod(shape, dtype=np.int64))
        if lo < 0 or hi - lo != count * dt.itemsize or base + hi > n:
            raise ProtocolError("tensor %r: shape %r and data_offsets %r disagree" % (name, shape, (lo, hi)))
        a = np.frombuffer(doc, dtype=dt, count=count, offset=base + lo).reshape(shape)
        tensors[name] = (wire, a)
    return meta, tensors


def _write_all(f, b):
    mv = memoryview(b).cast("B")
    while len(mv):
        k = f.write(mv)
        if k is None:
            continue
        mv = mv[k:]


def encode_header(meta, tensors):
    """The frame's first bytes (length prefix, header length, padded JSON)
    and the contiguous arrays to write after them; tensors is a sequence of
    (name, wire dtype, array)."""
    header = {"__metadata__": {str(k): str(v) for k, v in meta.items()}}
    off = 0
    arrays = []
    tensors = [(n, w, np.ascontiguousarray(a, dtype=WIRE_NUMPY[w])) for n, w, a in tensors]
    # empty tensors last: at the end of the data they cannot share a start
    # with a tensor that has bytes (a reader that orders tensors by start
    # alone could then see a hole).
    tensors.sort(key=lambda t: t[2].nbytes == 0)
    for name, wire, a in tensors:
        header[name] = {"dtype": wire, "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        off += a.nbytes
        arrays.append(a)
    js = json.dumps(header, separators=(",", ":")).encode()
    js += b" " * ((8 - (16 + len(js)) % 8) % 8)
    return struct.pack("<QQ", 8 + len(js) + off, len(js)) + js, arrays


def write_frame(f, meta, tensors=()):
    """Write one frame to the binary stream f."""
    head, arrays = encode_header(meta, tensors)
    _write_all(f, head)
    for a in arrays:
        if a.nbytes:
            _write_all(f, a.reshape(-1).view(np.uint8))
    if hasattr(f, "flush"):
        f.flush()
