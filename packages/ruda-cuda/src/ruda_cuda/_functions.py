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
from ruda._arguments import bad_argument

from ruda_cuda import _bounds, _fusion
from ruda_cuda._array import Array, as_array, as_arrays
from ruda_cuda._fusion import LazyArray, realizing, takes


def wrap(function: Callable[..., Any], arrays: int = 0) -> Callable[..., Any]:
    """``function`` returning :class:`Array` (``inspect.signature`` still shows its own), with
    pending arguments computed first; its first ``arrays`` arguments must be arrays (CuPy's
    ``matmul(x, None)`` crashes the process)."""
    function = realizing(function)
    name = getattr(function, "__name__", "function")

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        require_arrays(name, *args[:arrays])
        return as_arrays(function(*args, **kwargs))

    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = function.__doc__
    wrapper.__wrapped__ = function  # type: ignore[attr-defined]  # inspect.signature follows it
    return wrapper


def require_arrays(name: str, *values: Any) -> None:
    """The TypeError naming the function ``name`` for the first of ``values`` that is no
    ruda_cuda array (or another library's array: see :mod:`ruda._arguments`)."""
    for value in values:
        if not isinstance(value, cupy.ndarray | LazyArray):
            refusal = bad_argument(name, (value,), {}, "ruda_cuda", takes, "ruda_cuda arrays")
            raise refusal or TypeError(f"{name}() takes ruda_cuda arrays, not {type(value).__name__}")


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
def take(x: Any, indices: Any, /, *, axis: int | None = None) -> Array:
    """``x``'s elements at ``indices`` along ``axis`` (array-api-compat's); one out of bounds
    raises IndexError, where CuPy wraps it around (see :mod:`ruda_cuda._bounds`)."""
    _checked(x, indices, axis, "take()")
    return as_array(_compat.take(x, indices, axis=axis))


@realizing
def take_along_axis(x: Any, indices: Any, /, *, axis: int = -1) -> Array:
    """``x``'s elements at ``indices`` matched along ``axis`` (array-api-compat's); one out of
    bounds raises IndexError, where CuPy wraps it around (see :mod:`ruda_cuda._bounds`)."""
    _checked(x, indices, axis, "take_along_axis()")
    return as_array(_compat.take_along_axis(x, indices, axis=axis))


def _checked(x: Any, indices: Any, axis: int | None, what: str) -> None:
    """:func:`ruda_cuda._bounds.check` of ``indices`` against ``x``'s axis ``axis`` (see
    :func:`ruda.spec.indexed_axis`, which refuses an axis ``x`` lacks); what is no array, or
    axis None of several axes, is array-api-compat's to report."""
    if not isinstance(x, cupy.ndarray):
        return
    axis = spec.indexed_axis(what, axis, x.ndim)
    if axis is None:
        return
    _bounds.check(indices, x.shape[axis], what)


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


# array-api-compat's CuPy functions returning Array, one line each; the reductions of a pending
# chain run in the chain's kernel where that gives the same bits (see fusing)
matmul = wrap(_compat.matmul, arrays=2)
matrix_transpose = wrap(_compat.matrix_transpose)
tensordot = wrap(_compat.tensordot, arrays=2)
vecdot = wrap(_compat.vecdot, arrays=2)
broadcast_to = wrap(_compat.broadcast_to)
concat = wrap(_compat.concat)
expand_dims = wrap(_compat.expand_dims)
flip = wrap(_compat.flip)
moveaxis = wrap(_compat.moveaxis)
permute_dims = wrap(_compat.permute_dims)
reshape = wrap(_compat.reshape)
roll = wrap(_compat.roll)
squeeze = wrap(_compat.squeeze)
stack = wrap(_compat.stack)
tile = wrap(_compat.tile)
argmax = wrap(_compat.argmax)
argmin = wrap(_compat.argmin)
count_nonzero = wrap(_compat.count_nonzero)
nonzero = wrap(_compat.nonzero)
searchsorted = wrap(_compat.searchsorted)
where = wrap(_compat.where)
isin = wrap(_compat.isin)
unique_all = wrap(_compat.unique_all)
unique_counts = wrap(_compat.unique_counts)
unique_inverse = wrap(_compat.unique_inverse)
unique_values = wrap(_compat.unique_values)
argsort = wrap(_compat.argsort)
sort = wrap(_compat.sort)
cumulative_sum = wrap(_compat.cumulative_sum)
cumulative_prod = wrap(_compat.cumulative_prod)
max = fusing("max", wrap(_compat.max))
mean = wrap(_compat.mean)
min = fusing("min", wrap(_compat.min))
prod = fusing("prod", wrap(_compat.prod))
std = wrap(_compat.std)
sum = fusing("sum", wrap(_compat.sum))
var = wrap(_compat.var)
all = fusing("all", wrap(_compat.all))
any = fusing("any", wrap(_compat.any))
diff = wrap(_compat.diff)

__all__ = [  # (each defined above)
    *spec.INDEXING_FUNCTIONS,
    *spec.LINEAR_ALGEBRA_FUNCTIONS,
    *spec.MANIPULATION_FUNCTIONS,
    *spec.SEARCHING_FUNCTIONS,
    *spec.SET_FUNCTIONS,
    *spec.SORTING_FUNCTIONS,
    *spec.STATISTICAL_FUNCTIONS,
    *spec.UTILITY_FUNCTIONS,
]
