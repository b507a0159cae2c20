"""The ``linalg`` extension of ruda_wgpu, computed on the GPU.

Products, norms, diagonal, trace, outer and cross in ``_linalg``; the decompositions (LU,
Cholesky, QR, Jacobi eigh and SVD) and what is built on them in ``_decompositions``.
``eig`` and ``eigvals`` of general matrices by Hessenberg reduction and the shifted QR algorithm.
"""

from __future__ import annotations

from ruda import spec

from ruda_wgpu._decompositions import *  # noqa: F403
from ruda_wgpu._linalg import cross, diagonal, matmul, outer, tensordot, trace, vecdot, vector_norm
from ruda_wgpu._manipulation import matrix_transpose

__all__ = ["LinAlgError", *spec.LINALG]  # noqa: F405  (LinAlgError: from _decompositions)
