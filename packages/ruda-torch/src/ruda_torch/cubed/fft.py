"""ruda_torch's ``fft`` for Cubed: ``fftfreq`` and ``rfftfreq`` take a NumPy dtype; every other
function is ruda_torch's own."""

from __future__ import annotations

from typing import Any

import torch

from ruda_torch import fft as _fft
from ruda_torch.cubed._chunk import as_chunk
from ruda_torch.cubed._dtypes import to_torch

__all__ = list(_fft.__all__)


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> torch.Tensor:
    """ruda_torch's ``fft.fftfreq``."""
    return as_chunk(_fft.fftfreq(n, d=d, dtype=to_torch(dtype), device=device))


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> torch.Tensor:
    """ruda_torch's ``fft.rfftfreq``."""
    return as_chunk(_fft.rfftfreq(n, d=d, dtype=to_torch(dtype), device=device))


_DEFINED_HERE = frozenset(globals())


def __getattr__(name: str) -> Any:
    # the rest take no dtype: ruda_torch's own functions (see ruda_torch.cubed's __getattr__)
    if name in __all__ and name not in _DEFINED_HERE:
        return getattr(_fft, name)
    raise AttributeError(f"module 'ruda_torch.cubed.fft' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
