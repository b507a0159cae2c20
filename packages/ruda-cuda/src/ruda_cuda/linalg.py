"""The Array API ``linalg`` extension for ruda_cuda (CuPy's cuBLAS/cuSOLVER routines)."""

from __future__ import annotations

from typing import Any

import cupy
import numpy as np
from array_api_compat.cupy import linalg as _compat
from ruda import spec
from ruda.spec import EigResult

from ruda_cuda._array import Array, as_array
from ruda_cuda._functions import wrap
from ruda_cuda._fusion import realizing


@realizing
def solve(x1: Any, x2: Any, /) -> Array:
    """Solve ``x1 @ x = x2``. ``x2`` is a vector only when it is 1-D; otherwise it is a stack
    of matrices, and the stacks broadcast (CuPy treats any ``x2`` with one dimension fewer
    than ``x1`` as a stack of vectors and does not broadcast)."""
    vector = x2.ndim == 1
    b = x2[:, None] if vector else x2
    batch = np.broadcast_shapes(x1.shape[:-2], b.shape[:-2])
    a = cupy.broadcast_to(x1, batch + x1.shape[-2:])
    b = cupy.broadcast_to(b, batch + b.shape[-2:])
    if 0 in a.shape or 0 in b.shape:  # CuPy's batched solver divides by the batch size
        out = cupy.empty(b.shape, dtype=np.result_type(x1.dtype, x2.dtype))
    else:
        out = cupy.linalg.solve(a, b)
    return as_array(out[..., 0] if vector else out)


def _complex_for(dtype: np.dtype[Any]) -> np.dtype[Any]:
    return np.dtype(np.complex64 if dtype in (np.float32, np.complex64) else np.complex128)


def _require_eig() -> None:
    if not hasattr(cupy.linalg, "eig"):
        raise NotImplementedError(
            f"linalg.eig needs CuPy 14 or newer (cupy.linalg.eig); this is "
            f"CuPy {cupy.__version__}: upgrade CuPy"
        )


@realizing
def eig(x: Any, /) -> EigResult:
    """Eigenvalues and eigenvectors of general square matrices, always complex."""
    _require_eig()
    w, v = cupy.linalg.eig(x)
    dtype = _complex_for(x.dtype)
    return EigResult(as_array(w.astype(dtype, copy=False)), as_array(v.astype(dtype, copy=False)))


@realizing
def eigvals(x: Any, /) -> Array:
    """Eigenvalues of general square matrices, always complex."""
    _require_eig()
    return as_array(cupy.linalg.eigvals(x).astype(_complex_for(x.dtype), copy=False))


# array-api-compat's CuPy functions returning Array, one line each
cholesky = wrap(_compat.cholesky)
cross = wrap(_compat.cross, arrays=2)
det = wrap(_compat.det)
diagonal = wrap(_compat.diagonal)
eigh = wrap(_compat.eigh)
eigvalsh = wrap(_compat.eigvalsh)
inv = wrap(_compat.inv)
matmul = wrap(_compat.matmul, arrays=2)
matrix_norm = wrap(_compat.matrix_norm)
matrix_power = wrap(_compat.matrix_power)
matrix_rank = wrap(_compat.matrix_rank)
matrix_transpose = wrap(_compat.matrix_transpose)
outer = wrap(_compat.outer, arrays=2)
pinv = wrap(_compat.pinv)
qr = wrap(_compat.qr)
slogdet = wrap(_compat.slogdet)
svd = wrap(_compat.svd)
svdvals = wrap(_compat.svdvals)
tensordot = wrap(_compat.tensordot, arrays=2)
trace = wrap(_compat.trace)
vecdot = wrap(_compat.vecdot, arrays=2)
vector_norm = wrap(_compat.vector_norm)

__all__ = list(spec.LINALG)  # (each defined above)
