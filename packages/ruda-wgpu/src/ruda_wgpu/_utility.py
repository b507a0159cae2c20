"""diff and count_nonzero, composed from kernels of the other modules."""

from __future__ import annotations

import operator
from typing import Any

from ruda_wgpu import _dtypes
from ruda_wgpu._array import Array, check_scalar_range
from ruda_wgpu._creation import full
from ruda_wgpu._manipulation import _axis, concat
from ruda_wgpu._ops import apply, astype
from ruda_wgpu._statistical import _reduce, _sum_dtype


def count_nonzero(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:
    """Number of non-zero elements over ``axis`` (default integer dtype)."""
    if not isinstance(x, Array):
        raise TypeError(f"count_nonzero() takes a ruda_wgpu array, not {type(x).__name__}")
    nz = astype(x, _dtypes.bool_) if x.dtype.kind != "b" else x
    acc = _sum_dtype(nz, None)
    return _reduce(nz, axis, keepdims, acc, "sum", "count_nonzero")


def diff(
    x: Array,
    /,
    *,
    axis: int = -1,
    n: int = 1,
    prepend: Array | bool | int | float | complex | None = None,
    append: Array | bool | int | float | complex | None = None,
) -> Array:
    """``n``-th forward difference along ``axis`` (bool arrays: not-equal). ``prepend`` and
    ``append`` may be Python scalars, as NumPy takes them: one element along ``axis``."""
    if not isinstance(x, Array):
        raise TypeError(f"diff() takes a ruda_wgpu array, not {type(x).__name__}")
    if x.ndim == 0:
        raise ValueError("diff() needs a ruda_wgpu array of at least one dimension")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff(): n must be non-negative, got {n}")
    axis = _axis(axis, x.ndim, "diff")
    if n == 0:  # (as NumPy: x itself, without prepend or append)
        return x
    edge = (*x.shape[:axis], 1, *x.shape[axis + 1 :])
    parts = [_edge(prepend, edge, axis, x, "prepend"), x, _edge(append, edge, axis, x, "append")]
    present = [p for p in parts if p is not None]
    if len(present) > 1:
        x = concat(present, axis=axis)
    pre = (slice(None),) * axis
    # (each difference is one element shorter: past the axis's length the result stays empty)
    for _ in range(min(n, x.shape[axis])):
        op = "not_equal" if x.dtype.kind == "b" else "subtract"
        x = apply(op, x[(*pre, slice(1, None))], x[(*pre, slice(None, -1))])
    return x


def _edge(value: Any, shape: tuple[int, ...], axis: int, x: Array, name: str) -> Array | None:
    """``value`` to put before or after ``x`` (argument ``name`` of diff): an array of ``x``'s
    shape outside ``axis`` as it is, a Python scalar as an array of ``shape`` in ``x``'s dtype
    (of its kind, and in its range). Anything else is a TypeError or ValueError that names diff
    and the argument, checked here because concat's own would name concat."""
    if value is None:
        return None
    if isinstance(value, Array):
        if value.ndim != x.ndim or (*value.shape[:axis], 1, *value.shape[axis + 1 :]) != shape:
            raise ValueError(
                f"diff(): {name} must have the shape of x {x.shape} except along axis {axis}, "
                f"not {value.shape}"
            )
        return value
    if not isinstance(value, bool | int | float | complex):
        raise TypeError(
            f"diff(): {name} must be a ruda_wgpu array or a Python scalar, not {type(value).__name__}"
        )
    _dtypes.check_scalar_kind(value, x.dtype)
    check_scalar_range(value, x.dtype)
    return full(shape, value, dtype=x.dtype, device=x.device)
