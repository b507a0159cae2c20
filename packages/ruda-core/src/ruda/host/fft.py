"""The Array API ``fft`` extension for ruda.host (NumPy's, via array-api-compat)."""

from __future__ import annotations

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
    irfftn,
    rfft,
    rfftfreq,
    rfftn,
)

from ruda.spec import FFT as __all__
