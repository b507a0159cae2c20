"""The Array API ``linalg`` extension for ruda.host: NumPy's, via array-api-compat, plus the
2025.12 functions ``eig`` and ``eigvals`` with the spec's complex results."""

from __future__ import annotations

import numpy as np
from array_api_compat.numpy.linalg import (
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

from ruda.host._checks import named
from ruda.spec import LINALG as __all__
from ruda.spec import EigResult


def _complex_of(x: np.ndarray) -> np.dtype[np.complexfloating]:
    return np.result_type(x.dtype, np.complex64)  # float32 -> complex64, float64 -> complex128


def eig(x: np.ndarray, /) -> EigResult:
    """Eigenvalues and eigenvectors of a general square matrix (or stack), always complex:
    NumPy returns a real dtype when every eigenvalue happens to be real; the spec does not."""
    values, vectors = np.linalg.eig(x)
    dtype = _complex_of(x)
    return EigResult(values.astype(dtype, copy=False), vectors.astype(dtype, copy=False))


def eigvals(x: np.ndarray, /) -> np.ndarray:
    """Eigenvalues of a general square matrix (or stack), always complex (see :func:`eig`)."""
    return np.linalg.eigvals(x).astype(_complex_of(x), copy=False)


# array-api-compat's functions that read an attribute of what they are given first (see
# ruda._arguments)
eigvalsh = named(eigvalsh)
matrix_rank = named(matrix_rank)
matrix_transpose = named(matrix_transpose)
pinv = named(pinv)
