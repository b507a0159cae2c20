"""The ``linalg`` extension of ruda_wgpu: matmul and friends; the rest raises NotImplementedError."""

from __future__ import annotations

from ruda import spec

from ruda_wgpu._linalg import matmul, tensordot, vecdot
from ruda_wgpu._manipulation import matrix_transpose
from ruda_wgpu._missing import fill

__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot", *fill(globals(), spec.LINALG, "linalg.")]
