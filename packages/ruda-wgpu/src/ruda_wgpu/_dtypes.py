"""Dtypes of ruda_wgpu: NumPy dtype objects, how each is stored on the GPU, and promotion.

Storage decision: WGSL has no 8- or 16-bit integers in storage buffers on most
devices (``enable i16;`` is rejected by naga) and no ``array<bool>`` in storage,
so bool, int8, int16, uint8 and uint16 are stored *widened* to one 32-bit word
per element. Every kernel computes in 32 bits and wraps the result back to the
narrow range before storing it (sign-extending shifts for signed, masks for
unsigned), so results wrap and compare exactly as NumPy's. int64/uint64 use the
device's ``shader-int64`` feature (WGSL ``i64``/``u64``). float64 (WGSL ``f64``) is
offered where the device has ``shader-f64`` and ``shader-int64``: the drivers' own
f64 ``exp``, ``log``, ``sin``... are wrong (lavapipe's return garbage, the H200's are
float-accurate and its ``log`` loses the device), so every float64 function is our
own, in ``wgsl/lib_f64.wgsl``, built from f64 arithmetic and bit operations.

float16 is not one of the standard's dtypes, so ``dtypes()`` does not list it, but it
works on every device as ``ruda_wgpu.float16``. It is stored widened to one f32 word
per element, like the narrow integers: this keeps every buffer size, offset, window
and copy in 4-byte words. Kernels compute in f32 and round each stored result to
float16 with integer operations (``round_f16`` in ``wgsl/lib_f16.wgsl``: WGSL leaves
the rounding of its own f32 -> f16 conversion to the driver). For + - * f32 has
enough bits (24 >= 2*11 + 2) that this double rounding equals a direct float16
operation; / and sqrt, which Vulkan lets be a few f32 ulp off, are corrected with
exact products, so all five round exactly as NumPy's. Other functions are computed
in f32 and rounded, as NumPy computes them for float16.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from ruda._tensordata import DTYPES as TENSOR_DTYPES
from ruda.spec import DTYPE_KINDS, promote_names

bool_ = np.dtype("bool")
int8, int16, int32, int64 = (np.dtype(n) for n in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (np.dtype(n) for n in ("uint8", "uint16", "uint32", "uint64"))
float16, float32, float64 = np.dtype("float16"), np.dtype("float32"), np.dtype("float64")
complex64, complex128 = np.dtype("complex64"), np.dtype("complex128")

#: the real dtype of each complex dtype (of its parts), and the complex dtype of each real float
REAL_OF: dict[np.dtype[Any], np.dtype[Any]] = {complex64: float32, complex128: float64}
COMPLEX_OF: dict[np.dtype[Any], np.dtype[Any]] = {float32: complex64, float64: complex128}

#: every dtype name of ruda_wgpu: the standard's 13 and float16, as ``TensorData`` carries them
ALL_NAMES: tuple[str, ...] = tuple(TENSOR_DTYPES)

#: dtype -> name; ``np.dtype.name`` is slow enough to matter on the per-operation path
NAME: dict[np.dtype[Any], str] = {np.dtype(n): n for n in ALL_NAMES}

#: the WGSL element type of the storage buffer for each dtype
STORAGE: dict[str, str] = {
    "bool": "u32",
    "int8": "i32",
    "int16": "i32",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u32",
    "uint16": "u32",
    "uint32": "u32",
    "uint64": "u64",
    "float16": "f32",
    "float32": "f32",
    "float64": "f64",
    "complex64": "vec2<f32>",
    "complex128": "vec2<f64>",
}
#: NumPy dtype of the stored words (what is uploaded and read back)
STORAGE_NP: dict[str, np.dtype[Any]] = {
    name: np.dtype(
        {
            "u32": "uint32",
            "i32": "int32",
            "i64": "int64",
            "u64": "uint64",
            "f32": "float32",
            "f64": "float64",
            "vec2<f32>": "complex64",
            "vec2<f64>": "complex128",
        }[w]
    )
    for name, w in STORAGE.items()
}

KINDS = DTYPE_KINDS


#: NumPy's scalar type -> dtype object: the namespace's dtype names are the scalar types, as in
#: NumPy (``ruda_wgpu.float32 is numpy.float32``), while arrays carry dtype objects
#: (``x.dtype == ruda_wgpu.float32``). Both are accepted wherever a dtype is.
_OF_TYPE: dict[type, np.dtype[Any]] = {np.dtype(n).type: np.dtype(n) for n in ALL_NAMES}
#: Python's own types stand for dtypes as they do in NumPy (``zeros(n, dtype=bool)``, which
#: SciPy writes) and in the other ruda namespaces: bool, int64, float64 and complex128
_OF_TYPE |= {
    bool: np.dtype("bool"),
    int: np.dtype("int64"),
    float: np.dtype("float64"),
    complex: np.dtype("complex128"),
}


def is_dtype(x: Any) -> bool:
    """Whether ``x`` is one of this namespace's dtypes (a dtype object or a NumPy scalar type)."""
    return (isinstance(x, np.dtype) and x in NAME) or (isinstance(x, type) and x in _OF_TYPE)


def check_dtype(dtype: Any) -> np.dtype[Any]:
    """Return ``dtype`` as a dtype object, or raise a TypeError that names what was given."""
    if isinstance(dtype, np.dtype) and dtype in NAME:
        return dtype
    if isinstance(dtype, type) and dtype in _OF_TYPE:
        return _OF_TYPE[dtype]
    if not isinstance(dtype, type | np.dtype) and hasattr(dtype, "dtype") and hasattr(dtype, "shape"):
        # an array where a dtype belongs: its repr would read all of it back, to print it whole
        raise TypeError(
            f"an array ({type(dtype).__name__} of shape {tuple(dtype.shape)}) is not a dtype: pass its .dtype"
        )
    raise TypeError(
        f"{dtype!r} is not a dtype of ruda_wgpu: use one of ruda_wgpu.{', ruda_wgpu.'.join(ALL_NAMES)}"
    )


def dtype_of(x: Any) -> np.dtype[Any]:
    """The dtype of ``x``, a dtype or an array (scalar types have a ``dtype`` attribute too)."""
    return check_dtype(x) if is_dtype(x) else check_dtype(getattr(x, "dtype", x))


def kind_of(dt: np.dtype[Any]) -> str:
    """'b' bool, 'i' signed, 'u' unsigned, 'f' real float, 'c' complex."""
    return _KINDS[dt.kind]


_KINDS = {"b": "b", "i": "i", "u": "u", "f": "f", "c": "c"}


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind``: a dtype, a kind name, or a tuple of those."""
    dtype = check_dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in KINDS:
            raise ValueError(f"unknown dtype kind {kind!r}: expected one of {', '.join(KINDS)}")
        return NAME[dtype] in KINDS[kind] or (NAME[dtype] == "float16" and kind in _FLOAT16_KINDS)
    return bool(dtype == check_dtype(kind))


# float16 is outside the standard's 13 dtypes (so dtypes(kind=...) leaves it out), but it is a
# real floating dtype, as NumPy says too.
_FLOAT16_KINDS = ("real floating", "numeric")


@functools.cache  # (a few hundred pairs at most; the elementwise path asks often)
def promote(a: np.dtype[Any], b: np.dtype[Any], *, mixed_kinds: bool = True) -> np.dtype[Any]:
    """The Array API promotion of two dtypes; TypeError where none is defined.

    Beyond the standard, which leaves mixed kinds to the library: an integer with a floating
    (or complex) dtype gives the floating one, as in PyTorch. NumPy widens instead (int32 with
    float32 gives float64), which would ask for float64 on GPUs that lack it. Booleans mix with
    nothing. ``mixed_kinds=False`` keeps to the standard (``can_cast`` does).
    """
    if a == b:
        return a
    name = promote_names(a.name, b.name)
    if name is None and mixed_kinds:
        ka, kb = kind_of(a), kind_of(b)
        if ka in "iu" and kb in "fc":
            name = b.name
        elif ka in "fc" and kb in "iu":
            name = a.name
    if name is None:
        raise TypeError(f"{a.name} and {b.name} do not promote: convert one explicitly with astype() first")
    return np.dtype(name)


def result_type(*items: Any) -> np.dtype[Any]:
    """Promote dtypes and arrays (Python scalars take the dtype of the arrays, or a default float
    of the first array's device: see :func:`with_scalar`)."""
    dtypes = []
    scalars = []
    device = None
    for it in items:
        if is_dtype(it):
            dtypes.append(check_dtype(it))
        elif hasattr(it, "dtype") and is_dtype(it.dtype):
            dtypes.append(it.dtype)
            if device is None:
                device = getattr(it, "device", None)
        elif isinstance(it, bool | int | float | complex):
            scalars.append(it)
        else:
            raise TypeError(f"result_type takes dtypes, arrays or Python scalars, not {type(it).__name__}")
    if not dtypes:
        if not scalars:
            raise ValueError("result_type needs at least one dtype or array")
        return _scalars_alone(scalars)
    # the floating and complex dtypes first: each integer then gives way to them one by one, as
    # in a pair, so that the order does not matter (int64 with uint64 alone has no promotion:
    # folded first, result_type(int64, uint64, float32) had raised where float32 came first)
    dtypes.sort(key=lambda dt: kind_of(dt) not in "fc")
    out: np.dtype[Any] = dtypes[0]
    for dt in dtypes[1:]:
        out = promote(out, dt)
    for s in scalars:
        out = with_scalar(s, out, device)
    return out


def _scalars_alone(scalars: list[Any]) -> np.dtype[Any]:
    """The dtype ``asarray`` gives these Python scalars on the default device. The standard asks
    for an array or dtype among them; NumPy answers without one, and SciPy asks so."""
    from ruda_wgpu._engine import default_device
    from ruda_wgpu._info import default_dtype_of_scalars

    return default_dtype_of_scalars(default_device(), scalars)


def with_scalar(value: Any, dtype: np.dtype[Any], device: Any = None) -> np.dtype[Any]:
    """The dtype of an operation of arrays of ``dtype`` with the Python scalar ``value``: that
    dtype; for a Python complex with real floating arrays the complex dtype of their precision
    (as the standard has it since 2024.12: ``1j * x`` of float32 is complex64); for a Python
    float or complex with integer arrays, which the standard leaves to the library, the default
    real or complex floating dtype of ``device`` (the default device for None), as PyTorch's
    (``x * 0.5`` of int64 is float32; NumPy's would be float64). A TypeError when the scalar
    cannot combine with them (see :func:`check_scalar_kind`)."""
    if type(value) is complex and dtype in COMPLEX_OF:
        return COMPLEX_OF[dtype]
    if isinstance(value, float | complex) and kind_of(dtype) in "iu":
        from ruda_wgpu._engine import default_device
        from ruda_wgpu._info import default_dtypes_of

        kind = "complex floating" if isinstance(value, complex) else "real floating"
        return default_dtypes_of(device if device is not None else default_device())[kind]
    check_scalar_kind(value, dtype)
    return dtype


def floats_to_integers(values: np.ndarray[Any, Any], dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    """Host floats converted to integer ``dtype`` as kernels convert them (``f32_to_i32`` and its
    kin in ``wgsl/lib_f32.wgsl``), so that ``asarray(floats, dtype=int32)`` gives what
    ``astype`` gives: truncated, NaN as 0, beyond the 32- or 64-bit type the kernel converts
    through saturated at its limits (below an unsigned one, its signed minimum wrapped into
    it), then narrowed as integers wrap. NumPy leaves those to the C library."""
    bits = 64 if dtype.itemsize == 8 else 32
    signed, unsigned = np.dtype(f"int{bits}"), np.dtype(f"uint{bits}")
    t = np.trunc(np.where(np.isnan(values), 0.0, values))
    high, low = t >= 2.0 ** (bits - 1), t < -(2.0 ** (bits - 1))
    out = np.where(high | low, 0.0, t).astype(signed)
    out[high] = np.iinfo(signed).max
    out[low] = np.iinfo(signed).min
    if dtype.kind == "u":
        out = out.view(unsigned)
        top = high & (t < 2.0**bits)
        out[top] = t[top].astype(unsigned)
        out[t >= 2.0**bits] = np.iinfo(unsigned).max
    return out.astype(dtype)


def check_scalar_kind(value: Any, dtype: np.dtype[Any]) -> None:
    """Raise a TypeError when a Python scalar cannot combine with an array of ``dtype``."""
    k = kind_of(dtype)
    ok = (
        (isinstance(value, bool) and k == "b")
        or (isinstance(value, int) and not isinstance(value, bool) and k in "iufc")
        or (isinstance(value, float) and k in "fc")
        or (isinstance(value, complex) and k == "c")
    )
    if not ok:
        raise TypeError(f"a Python {type(value).__name__} cannot combine with an array of dtype {dtype.name}")


def can_cast(from_: Any, to: Any) -> bool:
    """Whether ``from_`` (a dtype or array) casts to ``to`` by the promotion rules, or, across kinds,
    without losing its kind's values as NumPy's "safe" casting says (bool and integers to floats)."""
    src = dtype_of(from_)
    to = check_dtype(to)
    if src == to:
        return True
    try:
        return bool(promote(src, to, mixed_kinds=False) == to)
    except TypeError:
        # the standard leaves casts across kinds to the library; these are NumPy's
        return bool(src.kind in "biu" and np.can_cast(src, to, casting="safe"))


class finfo_object:  # noqa: N801  (the spec's name)
    """Machine limits of a floating-point dtype (the spec's ``finfo`` result)."""

    def __init__(self, dtype: np.dtype[Any]) -> None:
        info = np.finfo(dtype)
        dtype = info.dtype  # the real dtype of a complex one, as the standard says
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.smallest_normal = float(info.smallest_normal)
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"finfo({', '.join(f'{k}={v}' for k, v in vars(self).items())})"


class iinfo_object:  # noqa: N801  (the spec's name)
    """Limits of an integer dtype (the spec's ``iinfo`` result)."""

    def __init__(self, dtype: np.dtype[Any]) -> None:
        info = np.iinfo(dtype)
        self.bits, self.max, self.min, self.dtype = int(info.bits), int(info.max), int(info.min), dtype

    def __repr__(self) -> str:
        return f"iinfo({', '.join(f'{k}={v}' for k, v in vars(self).items())})"


def finfo(type: Any) -> finfo_object:
    """Limits of a floating dtype (or of an array's dtype)."""
    dt = dtype_of(type)
    if kind_of(dt) not in "fc":
        raise TypeError(f"finfo needs a floating dtype, not {dt.name}; use iinfo for integers")
    return finfo_object(dt)


def iinfo(type: Any) -> iinfo_object:
    """Limits of an integer dtype (or of an array's dtype)."""
    dt = dtype_of(type)
    if kind_of(dt) not in "iu":
        raise TypeError(f"iinfo needs an integer dtype, not {dt.name}; use finfo for floats")
    return iinfo_object(dt)
