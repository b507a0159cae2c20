"""The Array API ``linalg`` extension for ruda_torch (torch.linalg via array-api-compat, plus fixes).

``eig`` and ``eigvals`` (new in 2025.12) are torch's, with the result as a
named tuple the spec describes; ``matmul``, ``tensordot`` and ``vecdot`` also
take integers on CUDA (see ``_contraction``).
"""

from __future__ import annotations

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


# array-api-compat's functions that read an attribute of what they are given first (see
# ruda._arguments)
cross = named(_compat.cross)
matrix_transpose = named(_compat.matrix_transpose)
solve = named(_compat.solve)

__all__ = [*LINALG, "eig", "eigvals"]
