"""The Array API ``fft`` extension for ruda.host (NumPy's, via array-api-compat).

The n-dimensional transforms name their axes before calling NumPy when only ``s`` is given:
the standard's default is the last ``len(s)`` axes, and NumPy 2 deprecates leaving them out
(a later NumPy will read ``s`` differently).
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
    hfft,
    ifft,
    ifftshift,
    ihfft,
    irfft,
    rfft,
    rfftfreq,
)

from ruda.spec import FFT as __all__

Array = np.ndarray[Any, Any]


def _axes(x: Array, s: Sequence[int] | None, axes: Sequence[int] | None) -> Sequence[int] | None:
    """``axes`` as given, or the last ``len(s)`` axes where only ``s`` is."""
    if axes is None and s is not None:
        return tuple(range(x.ndim - len(s), x.ndim))
    return axes


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
    if s is not None and len(s) and s[-1] == -1:
        last = -1 if axes is None or not len(axes) else axes[-1]
        s = (*s[:-1], 2 * (x.shape[last] - 1))
    return _compat.irfftn(x, s=s, axes=axes, norm=norm)  # type: ignore[no-any-return]
