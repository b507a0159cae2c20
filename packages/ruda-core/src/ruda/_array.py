"""What the array classes ruda's packages own (ruda_wgpu's, ruda_remote's) share, written once."""

from __future__ import annotations

import math


class ShapeAttributes:
    """The standard's ``shape``, ``ndim`` and ``size`` of an array class that keeps its shape in
    ``_shape``, every dimension known."""

    __slots__ = ()
    _shape: tuple[int, ...]

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
