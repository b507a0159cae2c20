"""What the default WebGPU device holds, for tests whose data would otherwise assume 64-bit
types: an adapter without ``shader-int64`` (OpenGL's, for one) indexes with int32 and has no
float64, and ``asarray`` of NumPy's int64 indices raises there rather than narrowing them."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
import ruda_wgpu

_INFO = ruda_wgpu.__array_namespace_info__()
#: the default device's index dtype (int64 where it has shader-int64, else int32)
INDEX = np.dtype(_INFO.default_dtypes()["indexing"])
#: the default device's integer dtype, which sums and products of narrower integers return
INTEGRAL = np.dtype(_INFO.default_dtypes()["integral"])


def indices(host: Any, device: Any = None) -> ruda_wgpu.Array:
    """``host`` (NumPy integers, int64 by default) as an array of the device's index dtype."""
    return ruda_wgpu.asarray(np.asarray(host).astype(INDEX), device=device)


def indexed(want: Any) -> np.ndarray:
    """NumPy's int64 indices ``want`` (argsort, argmax, nonzero, searchsorted, ...) in the
    device's index dtype, which ours return."""
    want = np.asarray(want)
    return want.astype(INDEX) if want.dtype == np.int64 else want


def accumulated(want: np.ndarray) -> np.ndarray:
    """NumPy's result ``want`` in the dtype ours returns: an integer sum or product is int64 or
    uint64 in NumPy, the device's default integer dtype (of that signedness) in ours."""
    if want.dtype == np.int64:
        return want.astype(INTEGRAL)
    return want.astype(f"u{INTEGRAL.itemsize}") if want.dtype == np.uint64 else want


def needs(*dtypes: str, why: str = "") -> pytest.MarkDecorator:
    """Skip where the default device lacks one of ``dtypes``."""
    lacking = [name for name in dtypes if name not in _INFO.dtypes()]
    reason = f"the default WebGPU device lacks {', '.join(lacking)}" + (f": {why}" if why else "")
    return pytest.mark.skipif(bool(lacking), reason=reason)


@functools.cache
def keeps_float32_subnormals() -> bool:
    """Whether the default device's float32 arithmetic keeps subnormals: lavapipe's does,
    NVIDIA's flushes them to zero (as WGSL allows), so that a subnormal input is a zero there."""
    tiny = ruda_wgpu.asarray(np.array([1e-40], np.float32))
    return bool(np.asarray(tiny * 3.0)[0] != 0)  # (times 3: a compiler may drop a product by 1)


def skip_if_float32_subnormals_flush(dtype: Any) -> None:
    """Skip a test of float32 or complex64 subnormal inputs where the device flushes them."""
    if np.dtype(dtype) in (np.float32, np.complex64) and not keeps_float32_subnormals():
        pytest.skip("the default device flushes float32 subnormals to zero (as WGSL allows)")
