"""Elementwise functions of ruda_cuda.

Most are CuPy's ufuncs under the standard's names, given the standard's
signatures (``f(x, /)``, ``f(x1, x2, /)``) and returning :class:`Array`.
Binary functions take a Python scalar for either operand (CuPy 14 promotes
it weakly, as the standard asks). The ones CuPy computes non-conformingly run
the kernels of :mod:`ruda_cuda._kernels` instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import cupy
import numpy as np
from array_api_compat import cupy as _compat
from ruda import spec

from ruda_cuda import _fusion, _kernels
from ruda_cuda._array import Array, as_array
from ruda_cuda._functions import wrap


def _streamable(x: Any) -> bool:
    return (
        isinstance(x, cupy.ndarray)
        and x.size >= _kernels.STREAM_MIN_SIZE
        and x.dtype.name in _kernels.VECTOR_DTYPES
        and x.flags.c_contiguous
        and x.data.ptr % 16 == 0
    )


def _stream(name: str, *arrays: Any) -> Array | None:
    """``name`` on ``arrays`` through a streaming kernel, or None when they do not qualify
    (then CuPy's own kernel runs)."""
    first = arrays[0]
    if not all(_streamable(x) for x in arrays):
        return None
    if any(x.shape != first.shape or x.dtype != first.dtype or x.device != first.device for x in arrays):
        return None
    with first.device:
        out = cupy.empty(first.shape, first.dtype)
        blocks = _kernels.stream_blocks(first.size, first.device)
        kernel = _kernels.stream_kernel(name, first.dtype.name)
        kernel((blocks,), (512,), (*arrays, out, np.int64(first.size)))
    return as_array(out)


def _unary(name: str, ufunc: Callable[[Any], Any]) -> Callable[[Any], Any]:
    streaming = name in _kernels.STREAM_UNARY

    def eager(x: Any) -> Array:
        if streaming and (out := _stream(name, x)) is not None:
            return out
        return as_array(ufunc(x))

    def function(x: Any, /) -> Any:
        return _fusion.call(ufunc, (x,), eager)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"The Array API ``{name}``, elementwise (CuPy's ``{ufunc.__name__}``)."
    return function


def _binary(name: str, ufunc: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    streaming = name in _kernels.STREAM_BINARY

    def eager(x1: Any, x2: Any) -> Array:
        if streaming and (out := _stream(name, x1, x2)) is not None:
            return out
        return as_array(ufunc(x1, x2))

    def function(x1: Any, x2: Any, /) -> Any:
        return _fusion.call(ufunc, (x1, x2), eager)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"The Array API ``{name}``, elementwise (CuPy's ``{ufunc.__name__}``)."
    return function


def _complex_patched(name: str, ufunc: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A unary function whose complex special cases are patched after CuPy computes it
    (fused, on real input, as the plain ufunc it is there)."""
    patch = _kernels.COMPLEX_PATCH[name]

    def eager(x: Any) -> Array:
        out = ufunc(x)
        if out.dtype.kind == "c":
            out = patch(x, out)
        return as_array(out)

    def function(x: Any, /) -> Any:
        if getattr(getattr(x, "dtype", None), "kind", "c") != "c":  # a real array, pending or not
            return _fusion.call(ufunc, (x,), eager)
        return eager(_fusion.realized(x))

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (
        f"The Array API ``{name}``; complex input follows the standard's special "
        "cases, which CuPy's complex functions miss."
    )
    return function


# CuPy's ufuncs under the standard's names, one line each
abs = _unary("abs", cupy.absolute)
acos = _unary("acos", cupy.arccos)
asin = _unary("asin", cupy.arcsin)
asinh = _unary("asinh", cupy.arcsinh)
atan = _unary("atan", cupy.arctan)
atanh = _unary("atanh", cupy.arctanh)
bitwise_invert = _unary("bitwise_invert", cupy.invert)
conj = _unary("conj", cupy.conj)
cos = _unary("cos", cupy.cos)
cosh = _unary("cosh", cupy.cosh)
exp = _unary("exp", cupy.exp)
expm1 = _unary("expm1", cupy.expm1)
imag = _unary("imag", cupy.imag)
isfinite = _unary("isfinite", cupy.isfinite)
isinf = _unary("isinf", cupy.isinf)
isnan = _unary("isnan", cupy.isnan)
logical_not = _unary("logical_not", cupy.logical_not)
negative = _unary("negative", cupy.negative)
positive = _unary("positive", cupy.positive)
real = _unary("real", cupy.real)
reciprocal = _unary("reciprocal", cupy.reciprocal)
signbit = _unary("signbit", cupy.signbit)
sin = _unary("sin", cupy.sin)
sinh = _unary("sinh", cupy.sinh)
square = _unary("square", cupy.square)
tan = _unary("tan", cupy.tan)

add = _binary("add", cupy.add)
atan2 = _binary("atan2", cupy.arctan2)
bitwise_and = _binary("bitwise_and", cupy.bitwise_and)
bitwise_left_shift = _binary("bitwise_left_shift", cupy.left_shift)
bitwise_or = _binary("bitwise_or", cupy.bitwise_or)
bitwise_right_shift = _binary("bitwise_right_shift", cupy.right_shift)
bitwise_xor = _binary("bitwise_xor", cupy.bitwise_xor)
copysign = _binary("copysign", cupy.copysign)
divide = _binary("divide", cupy.divide)
equal = _binary("equal", cupy.equal)
greater = _binary("greater", cupy.greater)
greater_equal = _binary("greater_equal", cupy.greater_equal)
hypot = _binary("hypot", cupy.hypot)
less = _binary("less", cupy.less)
less_equal = _binary("less_equal", cupy.less_equal)
logaddexp = _binary("logaddexp", cupy.logaddexp)
logical_and = _binary("logical_and", cupy.logical_and)
logical_or = _binary("logical_or", cupy.logical_or)
logical_xor = _binary("logical_xor", cupy.logical_xor)
maximum = _binary("maximum", cupy.maximum)
minimum = _binary("minimum", cupy.minimum)
multiply = _binary("multiply", cupy.multiply)
not_equal = _binary("not_equal", cupy.not_equal)
pow = _binary("pow", cupy.power)
subtract = _binary("subtract", cupy.subtract)

# those whose complex special cases CuPy misses
acosh = _complex_patched("acosh", cupy.arccosh)
log = _complex_patched("log", cupy.log)
log1p = _complex_patched("log1p", cupy.log1p)
sqrt = _complex_patched("sqrt", cupy.sqrt)
tanh = _complex_patched("tanh", cupy.tanh)

ceil = wrap(_compat.ceil)
floor = wrap(_compat.floor)
trunc = wrap(_compat.trunc)
sign = wrap(_compat.sign)
clip = wrap(_compat.clip)


@_fusion.realizing
def round(x: Any, /) -> Array:
    """Round to the nearest integer, halves to even; integers and booleans are returned as they
    are, in their own dtype (CuPy's ``rint`` would make them floats)."""
    if x.dtype.kind in "biu":
        return as_array(x.copy())
    return as_array(cupy.rint(x) if x.dtype.kind == "f" else cupy.around(x))


def _log_base(name: str, ufunc: Callable[[Any], Any], base: float) -> Callable[[Any], Array]:
    kernel = _kernels.REAL_LOG[name]

    @_fusion.realizing
    def function(x: Any, /) -> Array:
        if isinstance(x, cupy.ndarray) and x.dtype.kind == "f":
            return as_array(kernel(x))
        if isinstance(x, cupy.ndarray) and x.dtype.kind == "c":
            return as_array(_kernels.COMPLEX_CHANGE_OF_BASE(log(x), math.log(base)))
        return as_array(ufunc(x))

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (
        f"The Array API ``{name}``; NaN for every negative input, subnormals included; for complex "
        "input ``log(x)`` with each part divided by the base's logarithm."
    )
    return function


log2 = _log_base("log2", cupy.log2, 2.0)
log10 = _log_base("log10", cupy.log10, 10.0)


def _same_dtype(x1: Any, x2: Any) -> tuple[Any, Any, np.dtype[Any]]:
    """Both operands at their promoted dtype (a Python scalar becomes a NumPy scalar of it)."""
    if not isinstance(x1, cupy.ndarray) and not isinstance(x2, cupy.ndarray):
        raise TypeError(
            f"at least one operand must be an array, not {type(x1).__name__} and {type(x2).__name__}"
        )
    dtype = np.result_type(*(x.dtype if isinstance(x, cupy.ndarray) else x for x in (x1, x2)))

    def cast(x: Any) -> Any:
        return x.astype(dtype, copy=False) if isinstance(x, cupy.ndarray) else dtype.type(x)

    return cast(x1), cast(x2), dtype


def _integers(x1: Any, x2: Any) -> bool:
    """Whether both operands are integers (arrays, pending arrays or Python ints)."""
    return all(
        (type(x) is int) or getattr(getattr(x, "dtype", None), "kind", "") in ("i", "u") for x in (x1, x2)
    )


def _exact_division(name: str, ufunc: Any, float_kernel: Any, doc: str) -> Callable[[Any, Any], Any]:
    """``floor_divide`` or ``remainder``: CuPy's ufunc on integers (fused where fusion is on),
    ruda_cuda's exact kernel on floats."""

    def integer(x1: Any, x2: Any) -> Array:
        return as_array(ufunc(x1, x2))

    def function(x1: Any, x2: Any, /) -> Any:
        if _integers(x1, x2) and (pending := _fusion.record(ufunc, (x1, x2), integer)) is not None:
            return pending
        x1, x2 = _fusion.realized(x1), _fusion.realized(x2)
        a, b, dtype = _same_dtype(x1, x2)
        return as_array(float_kernel(a, b)) if dtype.kind == "f" else integer(x1, x2)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


floor_divide = _exact_division(
    "floor_divide",
    cupy.floor_divide,
    _kernels.FLOOR_DIVIDE,
    "``floor(x1 / x2)`` rounded exactly (as Python's ``//``), with the standard's special cases.",
)
remainder = _exact_division(
    "remainder",
    cupy.remainder,
    _kernels.REMAINDER,
    "``x1 - floor_divide(x1, x2) * x2`` computed exactly, with the sign of ``x2``.",
)


@_fusion.realizing
def nextafter(x1: Any, x2: Any, /) -> Array:
    """The next representable value after ``x1`` towards ``x2`` (``x2`` itself when equal)."""
    a, b, _ = _same_dtype(x1, x2)
    return as_array(_kernels.NEXTAFTER_EQUAL(a, b, cupy.nextafter(a, b)))


__all__ = list(spec.ELEMENTWISE_FUNCTIONS)  # (each defined above)
