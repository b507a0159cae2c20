"""``matmul``, ``tensordot`` and ``vecdot`` for every numeric dtype on every device.

torch has no integer matrix product on CUDA ("addmm_cuda" / "dot" not
implemented for integer dtypes). There, integers are multiplied element-wise
and summed in their own dtype: exact, with the same wrap-around as the CPU
kernel, at the cost of an intermediate of size M*K*N (integer matrix products
on a GPU are rare; floats always take torch's own kernels).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from array_api_compat.torch import _aliases as _compat
from array_api_compat.torch import linalg as _compat_linalg

from ruda_torch._checks import tensor

Tensor = torch.Tensor


def _tensors(function: str, x1: object, x2: object) -> None:
    """Refuse an operand that is not a tensor, naming it (a NumPy or ruda_wgpu array had met
    torch's device checks as "'str' object has no attribute 'type'")."""
    tensor(x1, function, "x1")
    tensor(x2, function, "x2")


def _needs_integer_path(x: Tensor) -> bool:
    return x.device.type != "cpu" and not (x.is_floating_point() or x.is_complex())


def _integer_matmul(x1: Tensor, x2: Tensor) -> Tensor:
    a = x1 if x1.ndim > 1 else x1[None, :]
    b = x2 if x2.ndim > 1 else x2[:, None]
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"matmul: shapes {tuple(x1.shape)} and {tuple(x2.shape)} do not align "
            f"({a.shape[-1]} != {b.shape[-2]})"
        )
    out = (a[..., :, :, None] * b[..., None, :, :]).sum(-2, dtype=a.dtype)
    if x1.ndim == 1:
        out = out[..., 0, :]
    if x2.ndim == 1:
        out = out[..., 0]
    return out


def matmul(x1: Tensor, x2: Tensor, /) -> Tensor:
    """Matrix product with the spec's type promotion (torch refuses mixed dtypes)."""
    _tensors("matmul", x1, x2)
    x1, x2 = _compat._fix_promotion(x1, x2, only_scalar=False)
    if _needs_integer_path(x1):
        return _integer_matmul(x1, x2)
    return torch.matmul(x1, x2)


def tensordot(x1: Tensor, x2: Tensor, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> Tensor:
    """Sum of products over the last ``axes`` axes of ``x1`` and the first of ``x2`` (or the
    axes named by a pair of sequences)."""
    _tensors("tensordot", x1, x2)
    x1, x2 = _compat._fix_promotion(x1, x2, only_scalar=False)
    if isinstance(axes, int) and not isinstance(axes, bool) and axes < 0:  # (torch's: RuntimeError)
        raise ValueError(f"tensordot: axes must be non-negative, not {axes}")
    if not (isinstance(axes, int | tuple | list) and not isinstance(axes, bool)):
        raise TypeError(f"tensordot: axes is an int or a pair of sequences of axes, not {axes!r}")
    if not _needs_integer_path(x1):
        out: Tensor = torch.tensordot(x1, x2, dims=axes)  # torch/functional.py returns no annotation
        return out
    if isinstance(axes, int):
        a1, a2 = list(range(x1.ndim - axes, x1.ndim)), list(range(axes))
    else:
        a1 = [a % x1.ndim for a in axes[0]]
        a2 = [a % x2.ndim for a in axes[1]]
    free1 = [d for d in range(x1.ndim) if d not in a1]
    free2 = [d for d in range(x2.ndim) if d not in a2]
    if [x1.shape[d] for d in a1] != [x2.shape[d] for d in a2]:
        raise ValueError(
            f"tensordot: contracted axes of shapes {tuple(x1.shape)} and {tuple(x2.shape)} differ in length"
        )
    # explicit sizes and tuples: 0-d operands permute by (), and -1 is ambiguous with 0 elements
    k = math.prod(x1.shape[d] for d in a1)
    left = x1.permute((*free1, *a1)).reshape(math.prod(x1.shape[d] for d in free1), k)
    right = x2.permute((*a2, *free2)).reshape(k, math.prod(x2.shape[d] for d in free2))
    out = _integer_matmul(left, right)
    return out.reshape((*(x1.shape[d] for d in free1), *(x2.shape[d] for d in free2)))


def vecdot(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    """Dot product of vectors along ``axis`` (conjugating ``x1``), broadcasting the other axes."""
    _tensors("vecdot", x1, x2)
    x1, x2 = _compat._fix_promotion(x1, x2, only_scalar=False)
    if not _needs_integer_path(x1):
        product: Tensor = _compat_linalg.vecdot(x1, x2, axis=axis)  # array-api-compat is untyped
        return product
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError("vecdot: x1 and x2 must have the same size along the given axis")
    return (x1 * x2).sum(axis, dtype=x1.dtype)
