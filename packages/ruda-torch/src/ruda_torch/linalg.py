"""The Array API ``linalg`` extension for ruda_torch (torch.linalg via array-api-compat, plus fixes).

``eig`` and ``eigvals`` (new in 2025.12) are torch's, with the result as a
named tuple the spec describes.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from array_api_compat.torch.linalg import (
    cholesky,
    cross,
    det,
    diagonal,
    eigh,
    eigvalsh,
    inv,
    matmul,
    matrix_norm,
    matrix_power,
    matrix_rank,
    matrix_transpose,
    outer,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
    tensordot,
    trace,
    vecdot,
    vector_norm,
)
from ruda.spec import LINALG

Tensor = torch.Tensor


class EigResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


def eig(x: Tensor, /) -> EigResult:
    """Eigenvalues and eigenvectors of square matrices (complex, as the spec asks)."""
    values, vectors = torch.linalg.eig(x)
    return EigResult(values, vectors)


def eigvals(x: Tensor, /) -> Tensor:
    """Eigenvalues of square matrices (complex, as the spec asks)."""
    return torch.linalg.eigvals(x)


__all__ = [*LINALG, "eig", "eigvals"]
