"""The Array API ``linalg`` extension for ruda_torch (torch.linalg via array-api-compat, plus fixes).

``eig`` and ``eigvals`` (new in 2025.12) are torch's, with the result as a
named tuple the spec describes; ``matmul``, ``tensordot`` and ``vecdot`` also
take integers on CUDA (see ``_contraction``).
"""

from __future__ import annotations

import math

import torch
from array_api_compat.torch import linalg as _compat
from array_api_compat.torch.linalg import *  # noqa: F403
from ruda.spec import LINALG, EigResult, QRResult

from ruda_torch._checks import named
from ruda_torch._contraction import matmul, tensordot, vecdot

Tensor = torch.Tensor


def qr(x: Tensor, /, *, mode: str = "reduced") -> QRResult:
    """QR decomposition; ``R`` is exactly upper triangular (torch's CUDA solver can leave
    non-zeros, NaN for non-finite input, below the diagonal)."""
    if mode not in ("reduced", "complete"):  # (torch's is a RuntimeError, and it takes "r")
        raise ValueError(f"qr(): mode must be 'reduced' or 'complete', not {mode!r}")
    q, r = torch.linalg.qr(x, mode=mode)
    return QRResult(q, torch.triu(r))


def eig(x: Tensor, /) -> EigResult:
    """Eigenvalues and eigenvectors of square matrices (complex, as the spec asks)."""
    values, vectors = torch.linalg.eig(x)
    return EigResult(values, vectors)


def eigvals(x: Tensor, /) -> Tensor:
    """Eigenvalues of square matrices (complex, as the spec asks)."""
    values: Tensor = torch.linalg.eigvals(x)  # built by _add_docstr, which mypy sees as Any
    return values


def matrix_norm(x: Tensor, /, *, keepdims: bool = False, ord: float | str | None = "fro") -> Tensor:
    """The norm of each matrix of ``x``; an ``ord`` the standard does not name raises ValueError
    (torch's is a RuntimeError)."""
    if ord not in _MATRIX_ORDS:
        raise ValueError(
            f"matrix_norm(): ord must be one of 1, 2, inf, -1, -2, -inf, 'fro', 'nuc', not {ord!r}"
        )
    out: Tensor = _compat.matrix_norm(x, keepdims=keepdims, ord=ord)
    return out


#: the matrix norms the standard names (None is the Frobenius norm, as in NumPy)
_MATRIX_ORDS = (1, 2, math.inf, -1, -2, -math.inf, "fro", "nuc", None)


# array-api-compat's functions that read an attribute of what they are given first (see
# ruda._arguments)
cross = named(_compat.cross)
matrix_transpose = named(_compat.matrix_transpose)
solve = named(_compat.solve)

__all__ = [*LINALG, "eig", "eigvals"]
