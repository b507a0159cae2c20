"""diff and count_nonzero, composed from kernels of the other modules."""

from __future__ import annotations

from typing import Any

from ruda_wgpu import _dtypes
from ruda_wgpu._array import Array
from ruda_wgpu._manipulation import _axes, concat
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
    x: Array, /, *, axis: int = -1, n: int = 1, prepend: Array | None = None, append: Array | None = None
) -> Array:
    """``n``-th forward difference along ``axis`` (bool arrays: not-equal)."""
    if not isinstance(x, Array) or x.ndim == 0:
        raise ValueError("diff() needs a ruda_wgpu array of at least one dimension")
    if n < 0:
        raise ValueError(f"diff(): n must be non-negative, got {n}")
    (axis,) = _axes(axis, x.ndim, "diff")
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = concat(parts, axis=axis)
    pre = (slice(None),) * axis
    for _ in range(n):
        op = "not_equal" if x.dtype.kind == "b" else "subtract"
        x = apply(op, x[(*pre, slice(1, None))], x[(*pre, slice(None, -1))])
    return x
