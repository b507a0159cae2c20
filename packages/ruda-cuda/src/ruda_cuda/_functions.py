"""Manipulation, indexing, searching, set, sorting, statistical, utility and
linear-algebra functions of ruda_cuda: array-api-compat's CuPy functions
returning :class:`Array`, and fixes where CuPy differs from the standard.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cupy
import numpy as np
from array_api_compat import cupy as _compat
from ruda import spec

from ruda_cuda import _fused_kernels, _fusion
from ruda_cuda._array import Array, as_array, as_arrays
from ruda_cuda._fusion import LazyArray, realizing


def wrap(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` returning :class:`Array` (``inspect.signature`` still shows its own), with
    pending arguments computed first."""
    function = realizing(function)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return as_arrays(function(*args, **kwargs))

    wrapper.__name__ = wrapper.__qualname__ = getattr(function, "__name__", "function")
    wrapper.__doc__ = function.__doc__
    wrapper.__wrapped__ = function  # type: ignore[attr-defined]  # inspect.signature follows it
    return wrapper


@realizing
def repeat(x: Any, repeats: Any, /, *, axis: int | None = None) -> Array:
    """Repeat elements; ``repeats`` may be an int or an integer array (CuPy takes only ints or
    lists, so an array is read back: the output's shape depends on its values anyway)."""
    if isinstance(repeats, cupy.ndarray):
        if repeats.dtype.kind not in "iu":
            raise TypeError(f"repeats must be an integer array, not {repeats.dtype}")
        repeats = int(repeats) if repeats.ndim == 0 else repeats.tolist()
    return as_array(cupy.repeat(x, repeats, axis=axis))


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape that ``shapes`` broadcast to (pure shape arithmetic, no GPU work)."""
    return tuple(int(n) for n in np.broadcast_shapes(*shapes))


@realizing
def broadcast_arrays(*arrays: Any) -> tuple[Array, ...]:
    """The arrays broadcast against each other, as a tuple of views."""
    return tuple(as_arrays(cupy.broadcast_arrays(*arrays)))


@realizing
def unstack(x: Any, /, *, axis: int = 0) -> tuple[Array, ...]:
    """The slices of ``x`` along ``axis``, as a tuple of views."""
    return tuple(as_arrays(list(_compat.unstack(x, axis=axis))))


def fusing(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """The reduction ``function`` (``name``: sum, prod, max, min, any, all), which with fusion
    on ends a pending chain in the same kernel where that gives the same result bit for bit
    (:func:`ruda_cuda._fusion.reduce`); otherwise the chain is computed first."""

    def reduction(x: Any, /, **kwargs: Any) -> Any:
        if type(x) is LazyArray and kwargs.keys() <= {"axis", "keepdims", "dtype"}:
            fused = _fusion.reduce(name, x, **kwargs)
            if fused is not None:
                return fused
        return function(x, **kwargs)

    reduction.__name__ = reduction.__qualname__ = name
    reduction.__doc__ = function.__doc__
    reduction.__wrapped__ = function  # type: ignore[attr-defined]  # inspect.signature follows it
    return reduction


_SPECIAL = {"repeat", "broadcast_shapes", "broadcast_arrays", "unstack"}
_NAMES = (
    spec.INDEXING_FUNCTIONS
    + spec.LINEAR_ALGEBRA_FUNCTIONS
    + spec.MANIPULATION_FUNCTIONS
    + spec.SEARCHING_FUNCTIONS
    + spec.SET_FUNCTIONS
    + spec.SORTING_FUNCTIONS
    + spec.STATISTICAL_FUNCTIONS
    + spec.UTILITY_FUNCTIONS
)
globals().update({name: wrap(getattr(_compat, name)) for name in _NAMES if name not in _SPECIAL})
globals().update({name: fusing(name, globals()[name]) for name in _fused_kernels.REDUCTIONS})

__all__ = sorted(_NAMES)
