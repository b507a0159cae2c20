"""The Array API ``fft`` extension, computed on the remote server."""

from __future__ import annotations

from typing import Any

from ruda import spec as _spec

from ruda_remote import _dispatch
from ruda_remote._functions import forward as _forward

for _name in _spec.FFT:
    globals()[_name] = _forward(f"fft.{_name}")


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Any:
    """Sample frequencies of a discrete Fourier transform, made on the server."""
    return _dispatch.call("fft.fftfreq", (n,), _kwargs(d, dtype), device=_dispatch.device_or_default(device))


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Any:
    """Sample frequencies of a real discrete Fourier transform, made on the server."""
    return _dispatch.call("fft.rfftfreq", (n,), _kwargs(d, dtype), device=_dispatch.device_or_default(device))


def _kwargs(d: float, dtype: Any) -> dict[str, Any]:
    return {"d": d} if dtype is None else {"d": d, "dtype": dtype}


__all__ = list(_spec.FFT)
