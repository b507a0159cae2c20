"""Bounds checks of integer index arrays (``take``, ``take_along_axis``, ``x[i]``, ``x[i] = v``).

CuPy wraps an index outside its axis around it, its documented difference from NumPy: code
written once would read or write another element than on every other ruda backend, without a
word. The standard leaves such indices unspecified; ruda raises IndexError, with the message
every backend gives (:func:`ruda.spec.out_of_bounds`). A check is one reduction over the
indices and a read of its one bool back, so an indexing call waits for the GPU.
"""

from __future__ import annotations

from typing import Any

import cupy
import numpy as np
from ruda import spec

from ruda_cuda import _fusion

#: whether any index is outside [-n, n) (as a signed 64-bit value: an unsigned one of 2^63 or
#: more is outside any axis)
_ANY_OUTSIDE = cupy.ReductionKernel(
    "T i, int64 n",
    "bool y",
    "(long long)i < -n || (long long)i >= n",
    "a || b",
    "y = a",
    "false",
    "ruda_any_index_outside",
)


def check(indices: Any, n: int, what: str) -> None:
    """IndexError if any of the integer ``indices`` (a CuPy or NumPy array) is outside
    ``[-n, n)``; other indices (boolean masks, Python objects) are the indexing call's to judge."""
    if not isinstance(indices, cupy.ndarray | np.ndarray) or indices.dtype.kind not in "iu":
        return
    if not indices.size:
        return
    if isinstance(indices, np.ndarray):
        outside = bool(((indices < -n) | (indices >= n)).any())
    else:
        with indices.device:
            outside = bool(_ANY_OUTSIDE(indices, np.int64(n)))
    if outside:
        raise IndexError(spec.out_of_bounds(what, n))


def check_key(shape: tuple[int, ...], key: Any) -> Any:
    """``key`` of an array of ``shape``, its pending arrays computed, after :func:`check` of each
    integer array in it against the axis it indexes (an axis past the last is the indexing
    call's to report)."""
    items = tuple(_fusion.realized(k) for k in (key if isinstance(key, tuple) else (key,)))
    # how many axes the items take: a boolean mask its own number, None and ... none
    taken = sum(k.ndim if _is_mask(k) else 0 if k is None or k is Ellipsis else 1 for k in items)
    axis = 0
    for k in items:
        if k is None:
            continue
        if k is Ellipsis:
            axis += max(len(shape) - taken, 0)
        elif _is_mask(k):
            axis += k.ndim
        else:
            if axis < len(shape):
                check(k, shape[axis], "an index array")
            axis += 1
    return items if isinstance(key, tuple) else items[0]


def _is_mask(k: Any) -> bool:
    return isinstance(k, cupy.ndarray | np.ndarray) and k.dtype == np.bool_
