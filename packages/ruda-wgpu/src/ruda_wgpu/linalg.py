"""The ``linalg`` extension of ruda_wgpu.

Products, norms (except the spectral ones), diagonal, trace, outer, cross and
matrix_power are computed on the GPU; the decompositions and what needs them
(cholesky, det, eig*, inv, pinv, qr, slogdet, solve, svd*, matrix_rank) raise
NotImplementedError naming themselves.
"""

from __future__ import annotations

from ruda import spec

from ruda_wgpu._linalg import (
    cross,
    diagonal,
    matmul,
    matrix_norm,
    matrix_power,
    outer,
    tensordot,
    trace,
    vecdot,
    vector_norm,
)
from ruda_wgpu._manipulation import matrix_transpose
from ruda_wgpu._missing import fill

__all__ = [
    "cross",
    "diagonal",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_transpose",
    "outer",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
    *fill(globals(), spec.LINALG, "linalg."),
]
