"""ruda_wgpu: the Python Array API (2025.12) on any GPU through WebGPU.

Arrays live in GPU buffers; every operation is a WGSL compute kernel recorded
into a batch and submitted when data is read, and chains of elementwise operations wait until
their result is needed, then run as one fused kernel (``RUDA_WGPU_FUSION=0`` turns that off).
Devices are ``wgpu:0``, ``wgpu:1``, ... (one per piece of hardware, best first);
``__array_namespace_info__().dtypes(device=...)`` lists what each computes. The ``linalg``
and ``fft`` extensions are computed on the GPU too; the package README lists the known limits.

>>> import ruda_wgpu as xp
>>> x = xp.linspace(0, 1, 5)
>>> float(xp.sum(xp.exp(x)))  # doctest: +ELLIPSIS
8.6...
"""

# ruff: noqa: E402  (the imports after the driver's start)
from __future__ import annotations

import heapq as _heapq  # (loaded first: see below)

from ruda_wgpu import _devices

# first: the Vulkan driver starts in a thread while the rest of ruda_wgpu and wgpu-py are
# imported (NVIDIA's takes 80-100 ms, which the import of wgpu-py alone did not hide). The
# thread loads the driver with dlopen, holding the C library's loader lock meanwhile, and an
# extension module loaded then waits for it: heapq's (for _buffers) waited 15-25 ms on
# lavapipe, so it comes first, and the rest of the import loads none.
_devices.start_driver()

import contextlib as _contextlib
import math as _math
import sys as _sys
from collections.abc import Iterator as _Iterator

import numpy as _np
from ruda import _nan
from ruda import spec as _spec

from ruda_wgpu._array import Array
from ruda_wgpu._creation import *  # noqa: F403
from ruda_wgpu._creation import empty_ as empty
from ruda_wgpu._dtypes import can_cast, finfo, iinfo, isdtype, result_type
from ruda_wgpu._elementwise import *  # noqa: F403
from ruda_wgpu._engine import GpuDevice as Device
from ruda_wgpu._engine import devices as _gpu_devices
from ruda_wgpu._gpu_time import GpuTimer
from ruda_wgpu._indexing import repeat, take, take_along_axis
from ruda_wgpu._info import __array_namespace_info__
from ruda_wgpu._linalg import matmul, tensordot, vecdot
from ruda_wgpu._manipulation import (
    broadcast_arrays,
    broadcast_shapes,
    broadcast_to,
    concat,
    expand_dims,
    flip,
    matrix_transpose,
    moveaxis,
    permute_dims,
    reshape,
    roll,
    squeeze,
    stack,
    tile,
    unstack,
)
from ruda_wgpu._ops import astype, clip, where
from ruda_wgpu._replay import fuse
from ruda_wgpu._searching import argmax, argmin, nonzero, searchsorted
from ruda_wgpu._set import isin, unique_all, unique_counts, unique_inverse, unique_values
from ruda_wgpu._sorting import argsort, sort
from ruda_wgpu._statistical import (
    all,
    any,
    cumulative_prod,
    cumulative_sum,
    max,
    mean,
    min,
    prod,
    std,
    sum,
    var,
)
from ruda_wgpu._utility import count_nonzero, diff

from . import fft, linalg

__array_api_version__ = _spec.API_VERSION

# NumPy's scalar types, as NumPy's own namespace names them; arrays carry the matching dtype objects
bool = _np.bool_
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
float16, float32, float64 = _np.float16, _np.float32, _np.float64
complex64, complex128 = _np.complex64, _np.complex128

e, pi, inf, nan = _math.e, _math.pi, _math.inf, _math.nan
newaxis = None


def synchronize(device: Device | str | None = None) -> None:
    """Submit the recorded work of ``device`` (all devices when None) and wait for it to finish."""
    from ruda_wgpu._engine import resolve_device

    for dev in _gpu_devices() if device is None else (resolve_device(device),):
        dev.synchronize()


@_contextlib.contextmanager
def gpu_time(device: Device | str | None = None) -> _Iterator[GpuTimer]:
    """Measure the GPU's own time for the work of a block, leaving out the host's (recording,
    launching, submitting, waiting): ``with xp.gpu_time() as t: ...``, then ``t.seconds`` (the
    summed time of the compute passes that ran the block's work) and ``t.passes``.

    Waits for the device on entry, so that earlier work is not counted, and on exit. Needs the
    adapter's ``timestamp-query`` feature (RuntimeError without it); blocks do not nest.
    """
    from ruda_wgpu._engine import resolve_device

    dev = resolve_device(device)
    timer = GpuTimer(dev)
    dev.synchronize()
    dev.attach_timer(timer)
    try:
        yield timer
        dev.run_pending()
    finally:
        dev.attach_timer(None)
    timer.collect(dev)


def memory_stats(device: Device | str | None = None) -> dict[str, int]:
    """Allocated and in-use bytes of a device's buffer pool, with counts of pipelines (and of those
    compiled ahead, see ``ruda_wgpu._preload``), dispatches, submits and waits (those that ended
    spinning, those that blocked)."""
    from ruda_wgpu._engine import resolve_device

    return resolve_device(device).memory_stats()


def empty_cache(device: Device | str | None = None) -> None:
    """Give the pooled free buffers of ``device`` back to the driver."""
    from ruda_wgpu import _fusion
    from ruda_wgpu._engine import resolve_device

    dev = resolve_device(device)
    if dev._device is not None:
        dev.flush()
        dev.synchronize()
        dev._groups.clear()  # bind groups may name the buffers about to be destroyed
        dev.plans.clear()  # and so may the launches they prepared
        dev.prepared_alone.clear()
        dev.prepared_fused.clear()
        dev.recorded.clear()
        _fusion.forget_structures()
        dev.pool.empty()
        dev.staging.empty()


def clear_shader_cache() -> int:
    """Delete the compiled kernels kept between processes (see ``ruda_wgpu._shader_cache``);
    returns the bytes freed. Processes started afterwards compile their kernels afresh."""
    from ruda_wgpu import _shader_cache

    return _shader_cache.clear()


# beyond the standard: what array engines (Cubed, Dask) call on a namespace
nanmax, nanmean, nanmin, nanprod, nansum = _nan.NanReductions(_sys.modules[__name__], Array).bound()

__all__ = _spec.namespace_names(
    *_nan.NAMES,
    "Array",
    "Device",
    "float16",
    "synchronize",
    "fuse",
    "memory_stats",
    "gpu_time",
    "empty_cache",
    "clear_shader_cache",
)
