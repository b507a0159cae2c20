"""The Array API ``fft`` extension for ruda_torch (torch.fft via array-api-compat).

``fftfreq`` and ``rfftfreq`` create arrays, so they take the namespace's
default device like the other creation functions.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

import torch
from array_api_compat.torch import fft as _compat
from array_api_compat.torch.fft import *  # noqa: F403
from ruda.spec import FFT as __all__

from ruda_torch._devices import resolve

#: the standard's normalisations
_NORMS = ("backward", "ortho", "forward")


def _keywords_checked(transform: Any) -> Any:
    """``transform`` raising ValueError for a ``norm``, ``n`` or ``s`` it cannot take, as NumPy
    and the other backends do (torch raises RuntimeError: "Invalid normalization mode")."""
    name = transform.__name__.removeprefix("fft_")  # (torch names its builtins fft_fft, ...)

    @functools.wraps(transform)
    def call(x: torch.Tensor, /, **kwargs: Any) -> torch.Tensor:
        norm = kwargs.get("norm", "backward")
        if norm not in _NORMS:
            raise ValueError(f"{name}(): norm must be 'backward', 'ortho' or 'forward', not {norm!r}")
        n, s = kwargs.get("n"), kwargs.get("s")
        if n is not None and not (isinstance(n, int) and n >= 1):
            raise ValueError(f"{name}(): n must be a positive number of points, not {n!r}")
        if s is not None and not all(isinstance(k, int) and (k >= 1 or k == -1) for k in s):
            raise ValueError(f"{name}(): s holds positive numbers of points (or -1), not {tuple(s)!r}")
        out: torch.Tensor = transform(x, **kwargs)
        return out

    # (torch's transforms are builtins without one: the standard's signature, for inspect)
    call.__signature__ = _N_DIMENSIONAL if name.endswith("n") else _ONE_DIMENSIONAL  # type: ignore[attr-defined]
    return call


def _signature(*keywords: tuple[str, Any]) -> inspect.Signature:
    only, keyword = inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.KEYWORD_ONLY
    return inspect.Signature(
        [inspect.Parameter("x", only), *(inspect.Parameter(k, keyword, default=d) for k, d in keywords)]
    )


_ONE_DIMENSIONAL = _signature(("n", None), ("axis", -1), ("norm", "backward"))
_N_DIMENSIONAL = _signature(("s", None), ("axes", None), ("norm", "backward"))


@_keywords_checked
def ifft(x: torch.Tensor, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> torch.Tensor:
    """The inverse one-dimensional discrete Fourier transform. Of a real ``x`` torch returns a
    lazily conjugated tensor (its conjugate bit set), which DLPack and NumPy refuse to export:
    the conjugation is done here."""
    out: torch.Tensor = _compat.ifft(x, n=n, axis=axis, norm=norm)
    return out.resolve_conj()


@_keywords_checked
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


fft = _keywords_checked(_compat.fft)
fftn = _keywords_checked(_compat.fftn)
ifftn = _keywords_checked(_compat.ifftn)
rfft = _keywords_checked(_compat.rfft)
irfft = _keywords_checked(_compat.irfft)
rfftn = _keywords_checked(_compat.rfftn)
irfftn = _keywords_checked(_compat.irfftn)
hfft = _keywords_checked(_compat.hfft)
