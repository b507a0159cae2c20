"""``__array_namespace_info__`` for ruda_cuda: what CuPy really offers on each GPU."""

from __future__ import annotations

from typing import Any

import cupy
import numpy as np
from ruda.host._info import DEFAULT_DTYPES
from ruda.spec import dtype_names

from ruda_cuda._devices import device_count, native_device

#: CuPy's limit on dimensions (cupy/_core/_carray.pxd, MAX_NDIM).
MAX_DIMENSIONS = 64


class __array_namespace_info__:  # noqa: N801  (the standard's name)
    """Capabilities, devices and dtypes of ruda_cuda.

    Every GPU is one device; each has all 13 dtypes of the standard (CUDA and
    ROCm GPUs compute float64 and complex128 natively).

    Examples
    --------
    >>> info = ruda_cuda.__array_namespace_info__()
    >>> info.devices()
    (<CUDA Device 0>,)
    >>> info.default_dtypes()["real floating"]
    dtype('float64')
    """

    def capabilities(self) -> dict[str, Any]:
        """Boolean indexing and data-dependent shapes work (they synchronise with the GPU);
        CuPy arrays have at most 64 dimensions."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": MAX_DIMENSIONS}

    def default_device(self) -> cupy.cuda.Device:
        """The current CUDA device (``cuda:0`` unless changed with ``with cupy.cuda.Device(n)``)."""
        return cupy.cuda.Device()

    def devices(self) -> tuple[cupy.cuda.Device, ...]:
        """One device per GPU: ``cupy.cuda.Device(0)``, ... (written ``cuda:0``, ...)."""
        return tuple(cupy.cuda.Device(i) for i in range(device_count()))

    def default_dtypes(self, *, device: Any = None) -> dict[str, np.dtype[Any]]:
        """float64, complex128, int64 and int64 indices, on every GPU."""
        _check(device)
        return dict(DEFAULT_DTYPES)

    def dtypes(
        self, *, device: Any = None, kind: str | tuple[str, ...] | None = None
    ) -> dict[str, np.dtype[Any]]:
        """All 13 dtypes of the standard, or those of ``kind`` (a name or a tuple of names)."""
        _check(device)
        return {name: np.dtype(name) for name in dtype_names(kind)}


def _check(device: Any) -> None:
    if device is not None:
        native_device(device)  # raises, naming the devices, when there is no such GPU
