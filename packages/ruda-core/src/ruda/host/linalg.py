"""The Array API ``linalg`` extension for ruda.host (NumPy's, via array-api-compat)."""

from __future__ import annotations

from array_api_compat.numpy.linalg import (  # noqa: F401  (re-exported)
    cholesky, cross, det, diagonal, eigh, eigvalsh, inv, matmul, matrix_norm, matrix_power,
    matrix_rank, matrix_transpose, outer, pinv, qr, slogdet, solve, svd, svdvals, tensordot,
    trace, vecdot, vector_norm,
)

from ruda.spec import LINALG as __all__  # noqa: F401
