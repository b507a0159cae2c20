"""The Array API ``fft`` extension for ruda.host (NumPy's, via array-api-compat)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from array_api_compat.numpy.fft import (
    fft,
    fftfreq,
    fftn,
    fftshift,
    hfft,
    ifft,
    ifftn,
    ifftshift,
    ihfft,
    irfft,
    rfft,
    rfftfreq,
    rfftn,
)
from array_api_compat.numpy.fft import irfftn as _irfftn

from ruda.spec import FFT as __all__


def irfftn(
    x: np.ndarray[Any, Any],
    /,
    *,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str = "backward",
) -> np.ndarray[Any, Any]:
    """NumPy's, except that ``s[-1] == -1`` stands for ``2 (m - 1)``, as the standard says (and
    as without ``s``); NumPy reads it as the input's length ``m``."""
    if s is not None and len(s) and s[-1] == -1:
        last = -1 if axes is None or not len(axes) else axes[-1]
        s = (*s[:-1], 2 * (x.shape[last] - 1))
    return _irfftn(x, s=s, axes=axes, norm=norm)  # type: ignore[no-any-return]
