"""matmul (tiled in workgroup memory), tensordot, vecdot, matrix_transpose."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

from ruda_wgpu import _dtypes
from ruda_wgpu._array import Array, contiguous, empty
from ruda_wgpu._elementwise import apply, astype
from ruda_wgpu._kernels import launch_matmul
from ruda_wgpu._manipulation import broadcast_shapes, broadcast_to, matrix_transpose, permute_dims, reshape


def _pair(x1: Any, x2: Any, fn: str) -> Any:
    if not isinstance(x1, Array) or not isinstance(x2, Array):
        raise TypeError(f"{fn}() takes two ruda_wgpu arrays, not {type(x1).__name__} and {type(x2).__name__}")
    if x1.device is not x2.device:
        raise ValueError(
            f"{fn}() got arrays on two devices, {x1.device} and {x2.device}: move one with to_device() first"
        )
    dt = _dtypes.result_type(x1, x2)
    if dt.kind not in "iuf":
        raise TypeError(f"{fn}() needs numeric arrays, not {dt.name}")
    return dt


def matmul(x1: Array, x2: Array, /) -> Array:
    """Matrix product with NumPy's rules for 1-D operands and broadcast batch dimensions."""
    dt = _pair(x1, x2, "matmul")
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("matmul() does not take 0-D arrays: use multiply()")
    a = x1 if x1.ndim > 1 else reshape(x1, (1, x1.shape[0]))
    b = x2 if x2.ndim > 1 else reshape(x2, (x2.shape[0], 1))
    (m, k), (k2, n) = a.shape[-2:], b.shape[-2:]
    if k != k2:
        raise ValueError(f"matmul(): shapes {x1.shape} and {x2.shape} do not align ({k} != {k2})")
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = contiguous(broadcast_to(a if a.dtype == dt else astype(a, dt), (*batch, m, k)))
    b = contiguous(broadcast_to(b if b.dtype == dt else astype(b, dt), (*batch, k, n)))
    out = empty((*batch, m, n), dt, x1.device)
    launch_matmul(x1.device, a._operand(), b._operand(), out._storage, math.prod(batch), m, k, n)
    shape = (*batch, m, n)
    if x1.ndim == 1:
        shape = shape[:-2] + shape[-1:]
    if x2.ndim == 1:
        shape = shape[:-1]
    return reshape(out, shape)


def tensordot(x1: Array, x2: Array, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> Array:
    """Sum of products over ``axes`` (the last ``axes`` of x1 with the first of x2, or given lists)."""
    _pair(x1, x2, "tensordot")
    if isinstance(axes, int):
        n = operator.index(axes)
        if n < 0 or n > min(x1.ndim, x2.ndim):
            raise ValueError(f"tensordot(): axes={n} is out of range for shapes {x1.shape} and {x2.shape}")
        a1, a2 = list(range(x1.ndim - n, x1.ndim)), list(range(n))
    else:
        a1 = [operator.index(a) % max(x1.ndim, 1) for a in axes[0]]
        a2 = [operator.index(a) % max(x2.ndim, 1) for a in axes[1]]
        if len(a1) != len(a2):
            raise ValueError("tensordot(): the two axis lists need the same length")
    for p, q in zip(a1, a2, strict=True):
        if x1.shape[p] != x2.shape[q] and 1 not in (x1.shape[p], x2.shape[q]):
            raise ValueError(
                f"tensordot(): axis {p} of x1 ({x1.shape[p]}) and axis {q} of x2 ({x2.shape[q]}) differ"
            )
    free1 = [d for d in range(x1.ndim) if d not in a1]
    free2 = [d for d in range(x2.ndim) if d not in a2]
    sizes = [max(x1.shape[p], x2.shape[q]) for p, q in zip(a1, a2, strict=True)]
    k = math.prod(sizes)
    s1 = tuple(x1.shape[d] for d in free1)
    s2 = tuple(x2.shape[d] for d in free2)
    y1 = broadcast_to(permute_dims(x1, (*free1, *a1)), (*s1, *sizes))
    y2 = broadcast_to(permute_dims(x2, (*a2, *free2)), (*sizes, *s2))
    prod = matmul(reshape(y1, (math.prod(s1), k)), reshape(y2, (k, math.prod(s2))))
    return reshape(prod, s1 + s2)


def vecdot(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Dot product of vectors along ``axis`` after broadcasting (real dtypes: no conjugation needed)."""
    from ruda_wgpu._statistical import sum as sum_

    _pair(x1, x2, "vecdot")
    shape = broadcast_shapes(x1.shape, x2.shape)
    if not -len(shape) <= axis < len(shape) or x1.ndim == 0 or x2.ndim == 0:
        raise ValueError(f"vecdot(): axis {axis} is out of range for shape {shape}")
    if x1.shape[axis - x1.ndim if axis >= 0 else axis] != x2.shape[axis - x2.ndim if axis >= 0 else axis]:
        raise ValueError(f"vecdot(): shapes {x1.shape} and {x2.shape} differ along axis {axis}")
    if axis >= 0:
        axis -= len(shape)
    if -axis > min(x1.ndim, x2.ndim):
        raise ValueError(f"vecdot(): axis {axis} is out of range for shapes {x1.shape} and {x2.shape}")
    product = apply("multiply", x1, x2)
    return sum_(product, axis=axis, dtype=product.dtype)


__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot"]
