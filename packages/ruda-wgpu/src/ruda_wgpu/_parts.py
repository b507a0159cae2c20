"""Arrays larger than one storage binding, taken in parts that each fit one.

A kernel reads and writes its arrays through storage bindings, and a device caps a binding's
size below its buffers' (lavapipe: 128 MiB bindings of buffers up to 2 GiB; an H200: 2 GiB of
4 GiB). Elementwise kernels and reductions go through such an array in windows of it
(``_kernels``); an operation whose kernels read an array as a whole (an argmax, a scan, a
gather, a matrix product) is instead split by its module into the same operation on parts,
with the helpers here: halves along an axis that the operation keeps (results joined along it)
or windows along the one it works on (results combined).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from ruda_wgpu._array import Array
from ruda_wgpu._buffers import STORAGE_ITEMSIZE
from ruda_wgpu._engine import GpuDevice


def window_elements(dev: GpuDevice, itemsize: int) -> int:
    """Elements of ``itemsize`` bytes that one storage binding of ``dev`` holds from any
    element (a binding starts at the aligned byte below its first element)."""
    return (dev.max_binding - dev.offset_align) // itemsize


def fits(dev: GpuDevice, count: int, itemsize: int) -> bool:
    """Whether ``count`` elements of ``itemsize`` bytes fit one storage binding of ``dev``."""
    return count <= window_elements(dev, itemsize)


def too_large(*arrays: Array) -> bool:
    """Whether one of ``arrays`` has more elements than one storage binding holds (a check many
    operations make on every call, written for speed)."""
    for a in arrays:
        dev = a._device
        if math.prod(a._shape) * STORAGE_ITEMSIZE[a._dtype] > dev.max_binding - dev.offset_align:
            return True
    return False


def outer_axis(shape: tuple[int, ...], keep: int | None) -> int | None:
    """The first axis of ``shape`` longer than 1 other than ``keep``, or None."""
    return next((d for d, n in enumerate(shape) if n > 1 and d != keep), None)


def along(x: Array, axis: int, start: int, stop: int) -> Array:
    """The view ``x[..., start:stop, ...]`` with the slice on ``axis``."""
    return x[(slice(None),) * axis + (slice(start, stop),)]


def halves(x: Array, axis: int) -> tuple[Array, Array]:
    """``x`` cut in two along ``axis`` (the first half the shorter when its length is odd)."""
    half = x.shape[axis] // 2
    return along(x, axis, 0, half), along(x, axis, half, x.shape[axis])


def windows(n: int, length: int) -> Iterator[tuple[int, int]]:
    """(start, stop) of consecutive windows of ``length`` covering ``range(n)``."""
    for start in range(0, n, length):
        yield start, min(start + length, n)
