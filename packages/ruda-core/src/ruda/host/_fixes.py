"""Functions where ``array_api_compat.numpy`` does not conform, done right.

Each fix is exact for the spec's special cases and costs nothing on the
common path beyond one extra mask for the cases NumPy gets wrong. The creation
functions refuse what NumPy would hold in a dtype the standard does not have
(objects, text, dates), as the other backends do.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from array_api_compat import numpy as _compat
from numpy.lib.array_utils import normalize_axis_tuple

from ruda.spec import finfo_object, no_array_from, no_fill


def finfo(type: Any, /) -> finfo_object:
    """Like ``numpy.finfo`` but with the spec's Python-float attributes."""
    info = np.finfo(type.dtype if isinstance(type, (np.ndarray, np.generic)) else type)
    return finfo_object.of(info, info.dtype)


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None) -> np.ndarray:
    """``obj`` as a NumPy array, as array-api-compat makes it; an object NumPy would keep as
    dtype object (None, a dict, mixed sequences) or read as text, bytes or dates raises a
    TypeError, as on the other backends: none of those is a dtype of the standard."""
    out: np.ndarray = _compat.asarray(obj, dtype=dtype, device=device, copy=copy)
    if out.dtype.kind in _NOT_STANDARD:
        if out.dtype == object and not isinstance(obj, np.ndarray):
            mixed = isinstance(obj, list | tuple)
            raise no_array_from("a sequence of mixed or huge values" if mixed else type(obj).__name__)
        raise TypeError(
            f"asarray(): ruda.host has no dtype {out.dtype} (the standard's are numbers and bool)"
        )
    return out


#: NumPy's dtype kinds that the standard has no dtype of: objects, text, bytes, records, dates
_NOT_STANDARD = frozenset("OUSVMm")


def arange(
    start: float, /, stop: float | None = None, step: float = 1, *, dtype: Any = None, device: Any = None
) -> np.ndarray:
    """``start``, ``start + step``, ... up to ``stop`` (excluded); a step of zero is a ValueError
    (NumPy's is a ZeroDivisionError), as on the other backends."""
    if step == 0:
        raise ValueError("arange(): step must not be zero")
    out: np.ndarray = _compat.arange(start, stop, step, dtype=dtype, device=device)
    return out


def full(shape: Any, fill_value: complex, *, dtype: Any = None, device: Any = None) -> np.ndarray:
    """An array of ``shape`` filled with ``fill_value``, a number or bool (NumPy's would be of
    text, or of dtype object, for a string or None; see :func:`asarray`)."""
    out: np.ndarray = _compat.full(shape, _fill(fill_value, "full"), dtype=dtype, device=device)
    return out


def full_like(x: np.ndarray, /, fill_value: complex, *, dtype: Any = None, device: Any = None) -> np.ndarray:
    """An array like ``x`` filled with ``fill_value``, a number or bool (see :func:`full`)."""
    out: np.ndarray = _compat.full_like(x, _fill(fill_value, "full_like"), dtype=dtype, device=device)
    return out


def _fill(value: Any, function: str) -> Any:
    """``value`` when it is a number or bool (Python's or NumPy's, or a 0-d array of one); else
    the TypeError the other backends raise."""
    if isinstance(value, bool | int | float | complex) or (
        isinstance(value, np.generic | np.ndarray) and value.dtype.kind not in _NOT_STANDARD
    ):
        return value
    raise no_fill(function, value)


def expm1(x: np.ndarray, /) -> np.ndarray:
    """``exp(x) - 1``, accurate near zero; complex input follows the spec's special cases."""
    if not np.iscomplexobj(x):
        return np.asarray(np.expm1(x))
    # NumPy has no complex expm1 of its own worth the name: write it from real parts,
    # expm1(a+ib) = expm1(a)cos(b) - 2 sin^2(b/2) + i e^a sin(b), which keeps precision
    # for small |z|; the non-finite cases are exp(z) - 1, whose special cases the spec shares.
    a, b = x.real, x.imag
    with np.errstate(invalid="ignore", over="ignore"):
        half = np.sin(b / 2)
        real = np.expm1(a) * np.cos(b) - 2 * half * half + 0.0  # + 0.0: expm1(-0+0j) is +0 (spec)
        imag = np.where(b == 0, b, np.exp(a) * np.sin(b))
        out = _complex(real, imag, x.dtype)
        special = ~(np.isfinite(a) & np.isfinite(b))
        if special.any():
            out[special] = np.exp(x[special]) - 1
    return out


def tanh(x: np.ndarray, /) -> np.ndarray:
    """Hyperbolic tangent; complex input follows the spec's special cases (NumPy's does not)."""
    if not np.iscomplexobj(x):
        return np.asarray(np.tanh(x))
    out = np.asarray(np.tanh(x))  # writable even for 0-d input, where NumPy returns a scalar
    a, b = x.real, x.imag
    # tanh(+-inf + iy) = +-1 + 0j with the zero signed like y (spec: +inf + iy, y > 0 -> 1 + 0j;
    # the rest by symmetry), and +-1 + 0j for non-finite y
    big = np.isinf(a)
    if big.any():
        zero_imag = np.where(np.isfinite(b), np.copysign(0.0, b), 0.0)
        out[big] = _complex(np.copysign(1.0, a), zero_imag, out.dtype)[big]
    # tanh(+0 + i NaN) and tanh(+0 + i inf) = +0 + i NaN
    zero_nan = (a == 0) & ~np.isfinite(b)
    if zero_nan.any():
        out[zero_nan] = _complex(a, np.nan, out.dtype)[zero_nan]
    return out


def _complex(real: Any, imag: Any, dtype: Any) -> np.ndarray:
    # Built part by part: ``real + 1j * imag`` turns an infinite imag into NaN + inf j.
    out = np.empty(np.broadcast_shapes(np.shape(real), np.shape(imag)), dtype=dtype)
    out.real, out.imag = real, imag
    return out


def floor_divide(x1: Any, x2: Any, /) -> Any:
    """``floor(x1 / x2)``; where exactly one operand is infinite, the spec's signed
    infinities and zeros (NumPy returns NaN or -1 there)."""
    with np.errstate(invalid="ignore"):  # the cases NumPy calls invalid are the ones fixed below
        out = _compat.floor_divide(x1, x2)
    if out.dtype.kind != "f":
        return out
    a, b = np.asarray(x1), np.asarray(x2)
    fix = np.isinf(a) != np.isinf(b)
    fix &= ~(np.isnan(a) | np.isnan(b))
    if not fix.any():
        return out
    with np.errstate(invalid="ignore", divide="ignore"):
        exact = np.divide(a, b).astype(out.dtype)
    # inf // finite is inf; finite // inf is floor(+-0) = +-0, except -finite // inf = -0 (spec)
    if out.ndim == 0:
        return exact
    out[fix] = np.broadcast_to(exact, out.shape)[fix]
    return out


def clip(x: np.ndarray, /, min: Any = None, max: Any = None) -> Any:
    """Clamp ``x`` to ``[min, max]`` keeping ``x``'s dtype.

    For a floating array with Python-number bounds NumPy's own ``clip`` already keeps the dtype
    (NEP 50) and treats NaN as the standard does, so it is called directly; array-api-compat's
    general version, kept for every other case, costs several extra passes over the data.
    """
    if isinstance(x, np.ndarray) and x.dtype.kind == "f" and _python_real(min) and _python_real(max):
        return np.clip(x, min, max)
    return _compat.clip(x, min, max)


def _python_real(bound: Any) -> bool:
    return bound is None or type(bound) in (int, float)


def pow(x1: Any, x2: Any, /) -> Any:
    """``x1 ** x2``. For a real exponent of exactly 0.5 given as a scalar or 0-d array NumPy
    takes a square root, which gives -0 for -0 and NaN for -inf, where the spec has +0 and
    +inf (an array exponent goes NumPy's general way, which is right)."""
    if isinstance(x1, np.ndarray) and x1.dtype.kind == "f" and np.ndim(x2) == 0 and x2 == 0.5:
        fix = (x1 == 0) | (x1 == -np.inf)
        if fix.any():  # (their magnitudes' square roots are the spec's results)
            x1 = np.where(fix, np.abs(x1), x1)
    return _compat.pow(x1, x2)


def var(x: np.ndarray, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Any:
    """Variance; NaN where ``N - correction <= 0``, as the spec says (NumPy divides by zero then,
    giving inf)."""
    return _dispersion(_compat.var, x, axis, correction, keepdims)


def std(x: np.ndarray, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Any:
    """Standard deviation; NaN where ``N - correction <= 0`` (see :func:`var`)."""
    return _dispersion(_compat.std, x, axis, correction, keepdims)


def _dispersion(fn: Any, x: np.ndarray, axis: Any, correction: float, keepdims: bool) -> Any:
    # (NumPy's own check: an axis out of range is an AxisError, a float one a TypeError)
    axes = (
        range(x.ndim)
        if axis is None
        else normalize_axis_tuple(axis if type(axis) is tuple else (axis,), x.ndim)
    )
    count = math.prod(x.shape[a] for a in axes)
    if count - correction > 0:
        return fn(x, axis=axis, correction=correction, keepdims=keepdims)
    with warnings.catch_warnings():  # (NumPy's warning of the division by zero fixed here)
        warnings.simplefilter("ignore", RuntimeWarning)
        out = fn(x, axis=axis, correction=correction, keepdims=keepdims)
    return np.full_like(out, np.nan)
