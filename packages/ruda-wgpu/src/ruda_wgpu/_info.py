"""``__array_namespace_info__`` for ruda_wgpu: what each device really computes."""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from ruda import spec
from ruda.spec import dtype_names

from ruda_wgpu import _dtypes
from ruda_wgpu._engine import GpuDevice, default_device, devices, resolve_device

#: the environment variable that makes float64 and complex128 the default floating dtypes on
#: devices that have them (``float64``), as NumPy's and SciPy's are; ``float32``, the default,
#: keeps float32 and complex64 (PyTorch's defaults)
DEFAULT_FLOAT_ENV = "RUDA_WGPU_DEFAULT_FLOAT"


@functools.cache
def wide_default_float() -> bool:
    """Whether :data:`DEFAULT_FLOAT_ENV` asks for float64 (read once, at first use)."""
    value = os.environ.get(DEFAULT_FLOAT_ENV, "").strip().lower() or "float32"
    if value not in ("float32", "float64"):
        raise ValueError(f"{DEFAULT_FLOAT_ENV}={value!r}: give float32 or float64")
    return value == "float64"


def default_dtypes_of(dev: GpuDevice) -> dict[str, np.dtype[Any]]:
    """float32 and complex64, unless :data:`DEFAULT_FLOAT_ENV` asks for float64 and the device has
    it: float64 is slow on most GPUs (PyTorch decides so too) and needs a feature some lack.
    int64 integers and indices with shader-int64, else int32."""
    integral = _dtypes.int64 if "int64" in dev.dtype_names else _dtypes.int32
    wide = wide_default_float() and "float64" in dev.dtype_names
    return {
        "real floating": _dtypes.float64 if wide else _dtypes.float32,
        "complex floating": _dtypes.complex128 if wide else _dtypes.complex64,
        "integral": integral,
        "indexing": integral,
    }


def default_dtype_of_scalars(dev: GpuDevice, values: Sequence[bool | int | float | complex]) -> np.dtype[Any]:
    """The dtype Python scalars take on ``dev`` when nothing else decides it (``asarray`` of
    them, ``result_type`` of them alone): bool for bools alone, else the default complex, real
    floating (also for none at all) or integral dtype, by the widest kind among them."""
    defaults = default_dtypes_of(dev)
    if any(isinstance(v, complex) for v in values):
        return defaults["complex floating"]
    if not values or any(isinstance(v, float) for v in values):
        return defaults["real floating"]
    if all(isinstance(v, bool) for v in values):
        return _dtypes.bool_
    return defaults["integral"]


class __array_namespace_info__:  # noqa: N801  (the spec's name)
    """Capabilities, devices and dtypes of ruda_wgpu, per device.

    Examples
    --------
    >>> info = ruda_wgpu.__array_namespace_info__()
    >>> info.default_dtypes()["real floating"]
    dtype('float32')
    >>> "complex64" in info.dtypes()
    True
    """

    def capabilities(self) -> dict[str, Any]:
        """Boolean-mask indexing and data-dependent shapes (``nonzero``, ``unique_*``) are computed
        on the GPU (their sizes are read back); up to 32 dimensions."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 32}

    def default_device(self) -> GpuDevice:
        """``wgpu:0``, the best adapter found."""
        return default_device()

    def devices(self) -> tuple[GpuDevice, ...]:
        """Every adapter wgpu finds, best first (a tuple, as the 2025.12 revision says)."""
        return devices()

    def default_dtypes(self, *, device: Any = None) -> dict[str, np.dtype[Any]]:
        """Default dtypes of ``device`` (see :func:`default_dtypes_of`)."""
        return default_dtypes_of(resolve_device(device))

    def dtypes(
        self, *, device: Any = None, kind: str | tuple[str, ...] | None = None
    ) -> dict[str, np.dtype[Any]]:
        """The standard's dtypes ``device`` computes correctly, optionally only those of ``kind``.

        float16 works on every device but is not one of the standard's dtypes, so it is
        not listed here (the standard allows only its own names in this dict).
        """
        dev = resolve_device(device)
        wanted = spec.DTYPES if kind is None else dtype_names(kind)
        return {n: np.dtype(n) for n in spec.DTYPES if n in wanted and n in dev.dtype_names}
