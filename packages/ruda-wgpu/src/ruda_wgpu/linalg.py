"""The ``linalg`` extension of ruda_wgpu: matmul and friends; the rest raises NotImplementedError."""

from __future__ import annotations

from ruda_wgpu._linalg import matmul, tensordot, vecdot
from ruda_wgpu._manipulation import matrix_transpose
from ruda_wgpu._missing import MISSING_LINALG, not_implemented

for _name in MISSING_LINALG:
    globals()[_name] = not_implemented(f"linalg.{_name}")

__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot", *MISSING_LINALG]
