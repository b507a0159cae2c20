"""ruda_torch's ``linalg`` for Cubed: ``trace`` takes a NumPy dtype; every other function is
ruda_torch's own (Cubed calls ``qr``, ``svd`` and ``outer`` on chunks)."""

from __future__ import annotations

from typing import Any

import torch

import ruda_torch.linalg
from ruda_torch.cubed._dtypes import to_torch

# most of its functions are array-api-compat's, which mypy does not follow: read as Any
_linalg: Any = ruda_torch.linalg
__all__ = list(_linalg.__all__)


def trace(x: torch.Tensor, /, *, offset: int = 0, dtype: Any = None) -> torch.Tensor:
    """ruda_torch's ``linalg.trace``."""
    out: torch.Tensor = _linalg.trace(x, offset=offset, dtype=to_torch(dtype))
    return out


_DEFINED_HERE = frozenset(globals())


def __getattr__(name: str) -> Any:
    # the rest take no dtype: ruda_torch's own functions (see ruda_torch.cubed's __getattr__)
    if name in __all__ and name not in _DEFINED_HERE:
        return getattr(_linalg, name)
    raise AttributeError(f"module 'ruda_torch.cubed.linalg' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
