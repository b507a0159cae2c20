"""The Array API ``fft`` extension for ruda_torch (torch.fft via array-api-compat).

``fftfreq`` and ``rfftfreq`` create arrays, so they take the namespace's
default device like the other creation functions.
"""

from __future__ import annotations

from typing import Any

import torch
from array_api_compat.torch import fft as _compat
from array_api_compat.torch.fft import *  # noqa: F403
from ruda.spec import FFT as __all__

from ruda_torch._devices import resolve


def ifft(x: torch.Tensor, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> torch.Tensor:
    """The inverse one-dimensional discrete Fourier transform. Of a real ``x`` torch returns a
    lazily conjugated tensor (its conjugate bit set), which DLPack and NumPy refuse to export:
    the conjugation is done here."""
    out: torch.Tensor = _compat.ifft(x, n=n, axis=axis, norm=norm)
    return out.resolve_conj()


def ihfft(
    x: torch.Tensor, /, *, n: int | None = None, axis: int = -1, norm: str = "backward"
) -> torch.Tensor:
    """The inverse discrete Fourier transform of a real signal with Hermitian symmetry (its
    conjugate bit resolved, as :func:`ifft`'s)."""
    out: torch.Tensor = _compat.ihfft(x, n=n, axis=axis, norm=norm)
    return out.resolve_conj()


def fftfreq(
    n: int, /, *, d: float = 1.0, dtype: torch.dtype | None = None, device: Any = None
) -> torch.Tensor:
    """Sample frequencies of an ``n``-point discrete Fourier transform."""
    # torch.fft's functions are built by _add_docstr, which mypy sees as Any
    out: torch.Tensor = torch.fft.fftfreq(n, d, dtype=dtype, device=resolve(device))
    return out


def rfftfreq(
    n: int, /, *, d: float = 1.0, dtype: torch.dtype | None = None, device: Any = None
) -> torch.Tensor:
    """Sample frequencies of an ``n``-point real discrete Fourier transform (non-negative half)."""
    out: torch.Tensor = torch.fft.rfftfreq(n, d, dtype=dtype, device=resolve(device))
    return out
