"""``std`` and ``var`` with the spec's axes, keepdims and correction rules, and
``count_nonzero`` with ``axis=()``.

torch accepts a float correction but, where ``M - correction <= 0``, returns
inf with a warning; the spec asks for NaN. ``axis=()`` reduces over no axis
(array-api-compat's ``count_nonzero`` counted over every axis).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable

import torch
from array_api_compat import torch as _compat

from ruda_torch._checks import tensor

Tensor = torch.Tensor


def _axes(axis: int | tuple[int, ...] | None, ndim: int, function: str) -> tuple[int, ...]:
    """``axis`` as a tuple of non-negative axes of ``ndim`` dimensions; a TypeError naming
    ``function`` for what is no int or tuple of ints (a bool had been taken as axis 0 or 1)."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    normal = []
    for a in axes:
        if isinstance(a, bool) or not hasattr(a, "__index__"):
            raise TypeError(f"{function}(): an axis is an int or a tuple of ints, not {axis!r}")
        a = operator.index(a)  # (NumPy's integers and 0-d integer tensors as well)
        if not -ndim <= a < ndim:
            raise IndexError(f"{function}(): axis {a} is out of range for an array of {ndim} dimension(s)")
        normal.append(a % ndim)
    if len(set(normal)) != len(normal):
        raise ValueError(f"{function}(): axis {axis} repeats an axis")
    return tuple(normal)


def _spread(
    fn: Callable[..., Tensor],
    function: str,
    x: Tensor,
    axis: int | tuple[int, ...] | None,
    correction: float,
    keepdims: bool,
) -> Tensor:
    axes = _axes(axis, tensor(x, function).ndim, function)
    count = math.prod(x.shape[a] for a in axes)
    if not axes:  # a reduction over no axis: each element alone, so M = 1
        out = torch.abs(x - x)  # zeros, with NaN where x is NaN or infinite
        return out if 1 - correction > 0 else out.fill_(math.nan)
    if count - correction <= 0:
        shape = (
            [1 if a in axes else n for a, n in enumerate(x.shape)]
            if keepdims
            else [n for a, n in enumerate(x.shape) if a not in axes]
        )
        dtype = x.real.dtype if x.is_complex() else x.dtype
        return torch.full(shape, math.nan, dtype=dtype, device=x.device)
    return fn(x, dim=axes, correction=correction, keepdim=keepdims)


def var(
    x: Tensor,
    /,
    *,
    axis: int | tuple[int, ...] | None = None,
    correction: float = 0.0,
    keepdims: bool = False,
) -> Tensor:
    """Variance over ``axis`` with divisor ``M - correction``; NaN where that is not positive."""
    return _spread(torch.var, "var", x, axis, correction, keepdims)


def std(
    x: Tensor,
    /,
    *,
    axis: int | tuple[int, ...] | None = None,
    correction: float = 0.0,
    keepdims: bool = False,
) -> Tensor:
    """Standard deviation over ``axis`` with divisor ``M - correction``; NaN where that is not positive."""
    return _spread(torch.std, "std", x, axis, correction, keepdims)


def count_nonzero(
    x: Tensor, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False
) -> Tensor:
    """The number of non-zero elements of ``x`` over ``axis``; over no axis (``axis=()``), 1
    where an element is non-zero and 0 where it is zero."""
    if axis == ():
        return (x != 0).to(torch.int64)
    counted: Tensor = _compat.count_nonzero(x, axis=axis, keepdims=keepdims)
    return counted
