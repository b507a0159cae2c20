"""The Array API ``fft`` extension for ruda_cuda (cuFFT through CuPy).

The n-dimensional transforms name their axes explicitly before calling CuPy,
which otherwise gets output shapes wrong when ``s`` is given without ``axes``;
``-1`` in ``s`` means "the input's length", as the standard says. CuPy's ``rfftn`` and
``irfftn`` also get the output shape wrong when the axes are not in increasing order
(``rfftn(x, s=(1, 2), axes=(1, 0))`` of a (1, 2) array gives (1, 2), not (2, 1)): those are
computed as their definition reads, a real transform over the last axis and complex ones over
the others.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from array_api_compat.cupy import fft as _compat
from ruda import spec

from ruda_cuda._array import Array
from ruda_cuda._creation import _on_device
from ruda_cuda._functions import require_arrays, wrap


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


_REAL = {"rfftn", "irfftn"}


def _increasing(axes: Sequence[int], ndim: int) -> bool:
    normal = [a % ndim if ndim else a for a in axes]
    return all(a < b for a, b in itertools.pairwise(normal))


def _real_in_steps(name: str, x: Any, shape: Sequence[int] | None, axes: Sequence[int], norm: str) -> Array:
    """``rfftn`` as ``rfft`` over the last of ``axes`` then ``fftn`` over the others, ``irfftn``
    as ``ifftn`` then ``irfft`` (each norm is a product of one factor per axis)."""
    last = None if shape is None else shape[-1]
    rest = None if shape is None else tuple(shape[:-1])
    if name == "rfftn":
        half = wrap(_compat.rfft)(x, n=last, axis=axes[-1], norm=norm)
        return wrap(_compat.fftn)(half, s=rest, axes=tuple(axes[:-1]), norm=norm)  # type: ignore[no-any-return]
    full = wrap(_compat.ifftn)(x, s=rest, axes=tuple(axes[:-1]), norm=norm)
    return wrap(_compat.irfft)(full, n=last, axis=axes[-1], norm=norm)  # type: ignore[no-any-return]


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
        require_arrays(name, x)  # (before x's shape is read)
        shape, axes_ = _shape_and_axes(x, s, axes, inverse_real=name == "irfftn")
        if name in _REAL and axes_ is not None and not _increasing(axes_, x.ndim):
            return _real_in_steps(name, x, shape, axes_, norm)
        return function(x, s=shape, axes=axes_, norm=norm)  # type: ignore[no-any-return]

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = f"The Array API ``fft.{name}`` over cuFFT, with explicit axes."
    return transform


# the n-dimensional transforms with explicit axes, the frequencies on the array's device, and
# array-api-compat's CuPy functions returning Array, one line each
fftn = _nd("fftn")
ifftn = _nd("ifftn")
rfftn = _nd("rfftn")
irfftn = _nd("irfftn")
fftfreq = _on_device(_compat.fftfreq)
rfftfreq = _on_device(_compat.rfftfreq)
fft = wrap(_compat.fft)
ifft = wrap(_compat.ifft)
rfft = wrap(_compat.rfft)
irfft = wrap(_compat.irfft)
hfft = wrap(_compat.hfft)
ihfft = wrap(_compat.ihfft)
fftshift = wrap(_compat.fftshift)
ifftshift = wrap(_compat.ifftshift)

__all__ = list(spec.FFT)  # (each defined above)
