"""The Array API ``fft`` extension for ruda_cuda (cuFFT through CuPy).

The n-dimensional transforms name their axes explicitly before calling CuPy,
which otherwise gets output shapes wrong when ``s`` is given without ``axes``;
``-1`` in ``s`` means "the input's length", as the standard says.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from array_api_compat.cupy import fft as _compat
from ruda import spec

from ruda_cuda._array import Array
from ruda_cuda._creation import _on_device
from ruda_cuda._functions import wrap

_NDIM = {"fftn", "ifftn", "rfftn", "irfftn"}


def _shape_and_axes(
    x: Any, s: Sequence[int] | None, axes: Sequence[int] | None, inverse_real: bool
) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
    if axes is None:
        axes = tuple(range(x.ndim)) if s is None else tuple(range(-len(s), 0))
    axes = tuple(axes)
    if s is None:
        return None, axes
    if len(s) != len(axes):
        raise ValueError(f"s and axes must have the same length, got s={tuple(s)} and axes={axes}")
    sizes = []
    for i, (n, axis) in enumerate(zip(s, axes, strict=True)):
        if n == -1:
            m = x.shape[axis]
            n = 2 * (m - 1) if inverse_real and i == len(axes) - 1 else m
        sizes.append(int(n))
    return tuple(sizes), axes


def _nd(name: str) -> Any:
    function = wrap(getattr(_compat, name))

    def transform(
        x: Any,
        /,
        *,
        s: Sequence[int] | None = None,
        axes: Sequence[int] | None = None,
        norm: str = "backward",
    ) -> Array:
        shape, axes_ = _shape_and_axes(x, s, axes, inverse_real=name == "irfftn")
        return function(x, s=shape, axes=axes_, norm=norm)  # type: ignore[no-any-return]

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = f"The Array API ``fft.{name}`` over cuFFT, with explicit axes."
    return transform


globals().update({name: _nd(name) for name in _NDIM})
globals().update({name: _on_device(getattr(_compat, name)) for name in ("fftfreq", "rfftfreq")})
globals().update(
    {name: wrap(getattr(_compat, name)) for name in spec.FFT if name not in _NDIM | {"fftfreq", "rfftfreq"}}
)

__all__ = sorted(spec.FFT)
