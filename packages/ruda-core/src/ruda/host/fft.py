"""The Array API ``fft`` extension for ruda.host (NumPy's, via array-api-compat).

The n-dimensional transforms name their axes before calling NumPy when only ``s`` is given:
the standard's default is the last ``len(s)`` axes, and NumPy 2 deprecates leaving them out
(a later NumPy will read ``s`` differently). The transforms with a real output (``irfft``,
``hfft``, ``irfftn``) of an input empty along that output's axis, zero-padded to a length,
give zeros: NumPy's read memory they never wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from array_api_compat.numpy import fft as _compat
from array_api_compat.numpy.fft import (
    fft,
    fftfreq,
    fftshift,
    ifft,
    ifftshift,
    ihfft,
    rfft,
    rfftfreq,
)

from ruda.host._checks import named
from ruda.spec import FFT as __all__

Array = np.ndarray[Any, Any]


def _axes(x: Array, s: Sequence[int] | None, axes: Sequence[int] | None) -> Sequence[int] | None:
    """``axes`` as given, or the last ``len(s)`` axes where only ``s`` is."""
    if axes is None and s is not None:
        return tuple(range(x.ndim - len(s), x.ndim))
    return axes


def _padded_from_one(x: Array, axis: int) -> Array:
    """``x``, or where it is empty along ``axis``, one zero there: zero-padded to any length,
    the two are the same input, and NumPy's real-output transforms of the empty one return
    memory they never wrote."""
    if x.shape[axis] != 0:
        return x
    shape = list(x.shape)
    shape[axis] = 1
    return np.zeros(shape, dtype=x.dtype)


def _real_output(transform: Callable[..., Array]) -> Callable[..., Array]:
    def run(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
        padded = x if n is None else _padded_from_one(x, axis)
        return transform(padded, n=n, axis=axis, norm=norm)

    run.__name__ = run.__qualname__ = transform.__name__
    run.__doc__ = transform.__doc__
    return run


irfft = _real_output(_compat.irfft)
hfft = _real_output(_compat.hfft)


def _n_dimensional(transform: Callable[..., Array]) -> Callable[..., Array]:
    def run(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
            norm: str = "backward") -> Array:  # fmt: skip
        return transform(x, s=s, axes=_axes(x, s, axes), norm=norm)

    run.__name__ = run.__qualname__ = transform.__name__
    run.__doc__ = transform.__doc__
    return run


fftn = _n_dimensional(_compat.fftn)
ifftn = _n_dimensional(_compat.ifftn)
rfftn = _n_dimensional(_compat.rfftn)


def irfftn(
    x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str = "backward"
) -> Array:
    """NumPy's, except that ``s[-1] == -1`` stands for ``2 (m - 1)``, as the standard says (and
    as without ``s``); NumPy reads it as the input's length ``m``."""
    axes = _axes(x, s, axes)
    last = -1 if axes is None or not len(axes) else axes[-1]
    if s is not None and len(s):
        if s[-1] == -1:
            s = (*s[:-1], 2 * (x.shape[last] - 1))
        x = _padded_from_one(x, last)
    return _compat.irfftn(x, s=s, axes=axes, norm=norm)  # type: ignore[no-any-return]


# the transforms read their argument's dtype first (see ruda._arguments)
fft = named(fft)
ifft = named(ifft)
fftn = named(fftn)
ifftn = named(ifftn)
rfft = named(rfft)
irfft = named(irfft)
rfftn = named(rfftn)
irfftn = named(irfftn)
hfft = named(hfft)
ihfft = named(ihfft)
