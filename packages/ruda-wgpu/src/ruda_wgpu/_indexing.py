"""Basic indexing: integers, slices, ellipsis and ``None`` make views, never copies."""

from __future__ import annotations

import operator
from typing import Any

from ruda_wgpu._array import Array


def _normalize(key: Any, ndim: int) -> list[Any]:
    items = list(key) if isinstance(key, tuple) else [key]
    for it in items:
        if isinstance(it, Array) and it.ndim == 0 and it.dtype.kind in "iu":
            continue
        if isinstance(it, Array | list) or (hasattr(it, "dtype") and hasattr(it, "shape")):
            raise NotImplementedError(
                "ruda_wgpu supports basic indexing (integers, slices, ..., None); integer-array and "
                "boolean-mask indexing are not implemented yet: use take() or where() instead"
            )
        if isinstance(it, bool):
            raise NotImplementedError("ruda_wgpu does not support boolean scalars as indices yet")
        if not (
            it is None or it is Ellipsis or isinstance(it, slice | int | Array) or hasattr(it, "__index__")
        ):
            raise IndexError(f"invalid index {it!r}: use integers, slices, ..., or None")
    ellipses = sum(1 for it in items if it is Ellipsis)
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    real = sum(1 for it in items if it is not None and it is not Ellipsis)
    if real > ndim:
        raise IndexError(f"too many indices for an array with {ndim} dimensions: {real} given")
    if ellipses:
        at = items.index(Ellipsis)
        items[at : at + 1] = [slice(None)] * (ndim - real)
    else:
        items += [slice(None)] * (ndim - real)
    return items


def basic_view(x: Array, key: Any) -> Array:
    """The view ``x[key]`` for a basic index."""
    items = _normalize(key, x.ndim)
    shape: list[int] = []
    strides: list[int] = []
    offset = x._offset
    axis = 0
    for it in items:
        if it is None:
            shape.append(1)
            strides.append(0)
            continue
        n, st = x.shape[axis], x._strides[axis]
        if isinstance(it, slice):
            start, stop, step = it.indices(n)
            count = len(range(start, stop, step))
            if count:
                offset += start * st
            shape.append(count)
            strides.append(st * step)
        else:
            i = operator.index(it)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            offset += (i % n) * st
        axis += 1
    return x._view(tuple(shape), tuple(strides), offset)
