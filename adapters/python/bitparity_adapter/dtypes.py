"""Exact conversions between wire tensors and NumPy, PyTorch and JAX arrays.

Inputs keep their bits: a BF16 wire tensor becomes a torch.bfloat16 or a
JAX bfloat16 array by reinterpreting its uint16 bits, never through a float
cast; for NumPy (which has no bfloat16) it is widened to float32 by a 16-bit
shift, which is exact.

Outputs are rounded to the request's dtype at most once, the way a kernel's
store rounds: an output already in the request's dtype travels as its bits;
bf16 and fp16 widen to fp32 exactly; fp32 rounds to bf16 or fp16 to nearest
even (a NaN stays a quiet NaN); fp64 rounds to fp32. Any other conversion
(fp64 to a 16-bit dtype, which would round twice; fp16 to bf16) is refused
with an error naming both dtypes: convert inside the function.
"""

import numpy as np

# The dtype names of requests and the wire dtype of each.
WIRE = {"bf16": "BF16", "fp16": "F16", "fp32": "F32"}
KIND_OF_WIRE = {"BF16": "bf16", "F16": "fp16", "F32": "fp32"}


class DTypeError(TypeError):
    """An output whose dtype cannot be converted to the request's exactly."""


def bf16_to_f32(bits):
    """Widen bfloat16 bits (uint16) to float32, exactly."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x):
    """Round float32 values to bfloat16 bits (uint16), to nearest even; a NaN
    stays a NaN with its top mantissa bit set (quiet)."""
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    r = ((b + np.uint32(0x7FFF) + ((b >> 16) & np.uint32(1))) >> 16).astype(np.uint16)
    nan = (b & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    if nan.any():
        r[nan] = ((b[nan] >> 16) | np.uint32(0x40)).astype(np.uint16)
    return r


def wire_to_f32(wire, a):
    """A float wire tensor (BF16, F16, F32) widened to float32, exactly."""
    if wire == "BF16":
        return bf16_to_f32(a)
    return np.asarray(a).astype(np.float32)


def round_to(x, dtype):
    """Round float32 values to dtype ("bf16", "fp16", "fp32") and widen them
    back to float32: the value a kernel stores when it writes x."""
    x = np.asarray(x, dtype=np.float32)
    if dtype == "bf16":
        return bf16_to_f32(f32_to_bf16(x))
    if dtype == "fp16":
        return x.astype(np.float16).astype(np.float32)
    return x


# ---- inputs -------------------------------------------------------------

def to_numpy(wire, a):
    """A wire tensor as NumPy: float32 for BF16 (exact), float16, float32,
    int64 for integer tensors."""
    if wire in ("I32", "I64"):
        return a.astype(np.int64)
    if wire == "BF16":
        return bf16_to_f32(a)
    return np.array(a)  # a writable copy of the frame's read-only view


def to_torch(wire, a, device):
    """A wire tensor as a torch tensor on device, bits intact (bfloat16,
    float16, float32; int64 for integer tensors)."""
    import torch
    if wire in ("I32", "I64"):
        t = torch.from_numpy(a.astype(np.int64))
    elif wire == "BF16":
        t = torch.from_numpy(np.array(a).view(np.int16)).view(torch.bfloat16)
    else:
        t = torch.from_numpy(np.array(a))
    return t.to(device)


def to_jax(wire, a, device):
    """A wire tensor as a JAX array on device, bits intact (bfloat16 through
    ml_dtypes, which JAX depends on; float16, float32; int32 for integer
    tensors, JAX's default integer width)."""
    import jax
    if wire in ("I32", "I64"):
        h = a.astype(np.int32)
    elif wire == "BF16":
        import ml_dtypes
        h = np.array(a).view(ml_dtypes.bfloat16)
    else:
        h = np.array(a)
    return jax.device_put(h, device)


# ---- outputs ------------------------------------------------------------

def host_array(y):
    """An output (NumPy array, torch tensor, JAX array, anything np.asarray
    takes) as (kind, host array): kind is bf16 (the array holds uint16
    bits), fp16, fp32 or fp64."""
    mod = type(y).__module__
    if mod.startswith("torch"):
        import torch
        y = y.detach()
        if y.dtype == torch.bfloat16:
            return "bf16", y.contiguous().cpu().view(torch.int16).numpy().view(np.uint16)
        y = y.cpu().numpy()
    else:
        y = np.asarray(y)  # JAX arrays: a host copy; bfloat16 as ml_dtypes.bfloat16
    if y.dtype.name == "bfloat16":
        return "bf16", np.ascontiguousarray(y).view(np.uint16)
    kinds = {np.dtype(np.float16): "fp16", np.dtype(np.float32): "fp32", np.dtype(np.float64): "fp64"}
    if y.dtype in kinds:
        return kinds[y.dtype], y
    raise DTypeError("output dtype %s: want a floating-point array (bfloat16, float16, float32 or float64)" % y.dtype)


def to_wire(y, dtype):
    """An output as the contiguous array of the wire dtype of dtype ("bf16",
    "fp16", "fp32"), converted as the module doc says."""
    kind, h = host_array(y)
    if kind == dtype:
        return np.ascontiguousarray(h)
    if dtype == "fp32":
        if kind == "bf16":
            return bf16_to_f32(h)
        return np.ascontiguousarray(h, dtype=np.float32)  # fp16: exact; fp64: rounded once
    if kind == "fp32":
        if dtype == "bf16":
            return f32_to_bf16(h)
        return np.ascontiguousarray(h, dtype="<f2")
    raise DTypeError("output dtype %s, the request wants %s: that conversion would round twice or change formats; "
                     "return %s or float32 from the function" % (kind, dtype, dtype))


def to_f32(y):
    """A tap (fp32 or narrower) as float32, exactly."""
    kind, h = host_array(y)
    if kind == "bf16":
        return bf16_to_f32(h)
    if kind == "fp64":
        raise DTypeError("taps of dtype float64: return float32 (or narrower) taps")
    return np.ascontiguousarray(h, dtype=np.float32)


def to_column(y, wire):
    """An op package's output column (NumPy array, torch tensor, JAX array)
    as the contiguous host array of its wire dtype, exactly: I32 from any
    integer array whose values fit, U8 from uint8 or int8 bits (a torch or
    ml_dtypes float8 array is taken as its bits), F32 from float32 only
    (a float64 would round a second time)."""
    mod = type(y).__module__
    if mod.startswith("torch"):
        import torch
        y = y.detach().contiguous()
        if "float8" in str(y.dtype):
            y = y.view(torch.uint8)
        y = y.cpu().numpy()
    else:
        y = np.asarray(y)
    if "float8" in y.dtype.name:
        y = y.view(np.uint8)
    if wire == "I32":
        if y.dtype.kind not in "iu":
            raise DTypeError("column of dtype %s: want integers (int32 or int64 expert ids)" % y.dtype)
        if y.size and (y.min() < -(1 << 31) or y.max() >= 1 << 31):
            raise DTypeError("column values outside int32")
        return np.ascontiguousarray(y, dtype="<i4")
    if wire == "U8":
        if y.dtype not in (np.dtype(np.uint8), np.dtype(np.int8)):
            raise DTypeError("column of dtype %s: want uint8 bits (fp8 codes)" % y.dtype)
        return np.ascontiguousarray(y).view(np.uint8)
    if y.dtype != np.dtype(np.float32):
        raise DTypeError("column of dtype %s: want float32" % y.dtype)
    return np.ascontiguousarray(y, dtype="<f4")
