"""What the array classes ruda's packages own (ruda_wgpu's, ruda_remote's) share, written once."""

from __future__ import annotations

import math
from typing import Any, Generic, TypeVar

import numpy as np

DeviceT = TypeVar("DeviceT")


class ArrayAttributes(Generic[DeviceT]):
    """The standard's ``dtype``, ``device``, ``shape``, ``ndim`` and ``size`` of an array class
    that keeps its dtype in ``_dtype``, its device in ``_device`` and its shape in ``_shape``,
    every dimension known."""

    __slots__ = ()
    _dtype: np.dtype[Any]
    _device: DeviceT
    _shape: tuple[int, ...]

    @property
    def dtype(self) -> np.dtype[Any]:
        """The element dtype (a NumPy dtype object, compared with the namespace's ``float32`` etc.)."""
        return self._dtype

    @property
    def device(self) -> DeviceT:
        """The device holding the data (the namespace's own device object)."""
        return self._device

    @property
    def shape(self) -> tuple[int, ...]:
        """The length of each axis."""
        return self._shape

    @property
    def ndim(self) -> int:
        """The number of axes."""
        return len(self._shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        return math.prod(self._shape)
