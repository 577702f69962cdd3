"""bitparity_adapter: make Python array functions bitparity targets.

    from bitparity_adapter import serve

    def my_rmsnorm(x, w, eps):          # arrays of the kind serve was given
        ...
        return y

    serve({"rmsnorm": my_rmsnorm}, arrays="torch")

The harness (`bitparity run --exec 'python3 my_adapter.py rmsnorm'`) starts
the script once and sends it batches; the kit owns the protocol (frames,
hello, errors), the dtypes (bf16 and fp16 bits intact in, one rounding out)
and stdout (prints go to stderr). See docs/python.md.
"""

from .dtypes import DTypeError, bf16_to_f32, f32_to_bf16, round_to
from .frames import PROTOCOL, ProtocolError, read_frame, write_frame
from .model import ModelRequest, ModelResult, PlannedRequest
from .request import OPS, Request
from .serve import Op, Raw, Unsupported, serve

__all__ = [
    "serve", "Op", "Raw", "Unsupported", "Request", "OPS",
    "ModelRequest", "ModelResult", "PlannedRequest",
    "bf16_to_f32", "f32_to_bf16", "round_to", "DTypeError",
    "PROTOCOL", "ProtocolError", "read_frame", "write_frame",
]
