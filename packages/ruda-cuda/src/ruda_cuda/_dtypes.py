"""Data type functions of ruda_cuda (dtypes are NumPy's, as in CuPy)."""

from __future__ import annotations

from typing import Any

import cupy
import numpy as np
from array_api_compat import cupy as _compat
from ruda.spec import finfo_object, iinfo_object

from ruda_cuda._array import Array, to_device
from ruda_cuda._devices import native_device
from ruda_cuda._fusion import LazyArray, realizing

isdtype = _compat.isdtype


def _dtype_of(type: Any) -> Any:
    return type.dtype if isinstance(type, (cupy.ndarray, LazyArray, np.ndarray, np.generic)) else type


def finfo(type: Any, /) -> finfo_object:
    """Limits of a floating dtype (or of an array's dtype)."""
    info = np.finfo(_dtype_of(type))
    return finfo_object.of(info, info.dtype)


def iinfo(type: Any, /) -> iinfo_object:
    """Limits of an integer dtype (or of an array's dtype)."""
    info = np.iinfo(_dtype_of(type))
    return iinfo_object.of(info, info.dtype)


def result_type(*arrays_and_dtypes: Any) -> np.dtype[Any]:
    """The promoted dtype; Python scalars take part weakly (they adopt the array's kind)."""
    if not arrays_and_dtypes:
        raise ValueError("result_type needs at least one array or dtype")
    args = [a.dtype if isinstance(a, (cupy.ndarray, LazyArray)) else a for a in arrays_and_dtypes]
    if all(isinstance(a, (bool, int, float, complex)) for a in args):
        raise ValueError("result_type needs at least one array or dtype, not only Python scalars")
    return np.result_type(*args)


def can_cast(from_: Any, to: Any, /) -> bool:
    """Whether ``from_`` (a dtype or array) casts to ``to`` under the promotion rules."""
    return bool(np.can_cast(_dtype_of(from_), to))


@realizing
def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Array:
    """``x`` as ``dtype``, on ``device`` when given."""
    out = x.astype(dtype, copy=copy)
    if device is not None:
        moved = to_device(out, native_device(device))
        return moved
    return out if isinstance(out, Array) else out.view(type=Array)


__all__ = ["astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type"]
