"""Creation functions: array-api-compat's, plus the namespace's default device and torch's gaps.

Every function takes ``device`` as a ``torch.device``, ``"cuda:0"``,
``"torch:cuda:0"`` or a ``ruda.Device``; without one, arrays go to the default
device (``RUDA_TORCH_DEVICE``, else torch's default).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from array_api_compat.torch import _aliases as _compat
from ruda import spec
from ruda._arguments import check_fill
from torch.utils.dlpack import from_dlpack as _torch_from_dlpack  # torch.from_dlpack, as exported

from ruda_torch._devices import resolve
from ruda_torch._plugin import PLUGIN

Tensor = torch.Tensor


def asarray(
    obj: Any, /, *, dtype: torch.dtype | None = None, device: Any = None, copy: bool | None = None
) -> Tensor:
    """Convert ``obj`` (tensor, nested sequence, scalar, buffer, DLPack object) to a tensor."""
    if isinstance(obj, Tensor):
        # array-api-compat's functions are untyped (mypy skips it): each result is named as a Tensor
        same: Tensor = _compat.asarray(
            obj, dtype=dtype, device=resolve(device) if device is not None else None, copy=copy
        )
        return same
    if copy is False and not _exposes_memory(obj):
        raise ValueError(
            f"asarray(copy=False) needs an object that shares its memory, and a "
            f"{type(obj).__name__} does not: pass copy=None or copy=True"
        )
    if isinstance(obj, np.ndarray) and _negative_strides(obj):
        if copy is False:
            raise ValueError("asarray(copy=False): torch cannot view an array with negative strides")
        obj = np.ascontiguousarray(obj)  # (torch refuses negative strides; this copy is the one asked for)
    if _read_only(obj):
        if copy is False:
            raise ValueError(f"asarray(copy=False): {_READ_ONLY}")
        obj, copy = obj.copy(), None  # (copied here: torch warns of a read-only array it copies)
    try:
        return torch.asarray(obj, dtype=dtype, device=resolve(device), copy=copy)
    except RuntimeError as err:
        if "Could not infer dtype" in str(err):  # (None, a dict, an object of no array protocol)
            raise spec.no_array_from(type(obj).__name__) from err
        raise


#: why a read-only array is copied, or refused where no copy is allowed
_READ_ONLY = (
    "the NumPy array is read-only (a broadcast view, a read-only memmap, a buffer of bytes), and "
    "a tensor over its memory would let torch write into it; pass copy=None or copy=True"
)


def _read_only(obj: Any) -> bool:
    """Whether ``obj`` is a NumPy array its owner marked read-only. torch has no read-only
    tensors: one over such memory had let a write change the array (or crash the process, for
    a read-only memmap)."""
    return isinstance(obj, np.ndarray) and not obj.flags.writeable


def _exposes_memory(obj: Any) -> bool:
    if hasattr(obj, "__dlpack__"):
        return True
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def arange(
    start: float,
    /,
    stop: float | None = None,
    step: float = 1,
    *,
    dtype: torch.dtype | None = None,
    device: Any = None,
) -> Tensor:
    """Evenly spaced values in ``[start, stop)``; the length is ``ceil((stop - start) / step)``."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be zero")
    if dtype is not None and not isinstance(dtype, torch.dtype):
        # (the result is made in a wide dtype and moved with .to(dtype), which reads a string as a
        # device: dtype="cuda" had moved it to the GPU)
        raise TypeError(f"arange() takes a torch dtype (e.g. xp.float32), not {dtype!r}")
    if dtype is None:
        integral = all(isinstance(v, int) and not isinstance(v, bool) for v in (start, stop, step))
        dtype = torch.int64 if integral else torch.get_default_dtype()
    device = resolve(device)
    # torch computes the length in float64 and overflows or rounds differently from the
    # spec's ceil((stop - start) / step): build from an integer count instead.
    count = max(math.ceil((stop - start) / step), 0)
    if count == 0:
        return torch.empty(0, dtype=dtype, device=device)
    exact_ints = all(isinstance(v, int) for v in (start, step))
    work = torch.int64 if exact_ints else torch.float64
    return torch.arange(count, dtype=work, device=device).mul_(step).add_(start).to(dtype)


def empty(shape: int | tuple[int, ...], *, dtype: torch.dtype | None = None, device: Any = None) -> Tensor:
    """An uninitialised array."""
    return torch.empty(shape, dtype=dtype, device=resolve(device))


def zeros(shape: int | tuple[int, ...], *, dtype: torch.dtype | None = None, device: Any = None) -> Tensor:
    """An array of zeros."""
    return torch.zeros(shape, dtype=dtype, device=resolve(device))


def ones(shape: int | tuple[int, ...], *, dtype: torch.dtype | None = None, device: Any = None) -> Tensor:
    """An array of ones."""
    return torch.ones(shape, dtype=dtype, device=resolve(device))


def full(
    shape: int | tuple[int, ...], fill_value: complex, *, dtype: torch.dtype | None = None, device: Any = None
) -> Tensor:
    """An array filled with ``fill_value``; the dtype follows the value's Python type by default."""
    check_fill(fill_value, "full", Tensor)  # (torch's own message differs between its releases)
    if isinstance(shape, int):
        shape = (shape,)
    if dtype is None and isinstance(fill_value, bool):
        dtype = torch.bool
    return torch.full(shape, fill_value, dtype=dtype, device=resolve(device))


def empty_like(x: Tensor, /, *, dtype: torch.dtype | None = None, device: Any = None) -> Tensor:
    """``empty_like`` with the spec's keywords; same device as ``x`` unless told."""
    return torch.empty_like(x, dtype=dtype, device=resolve(device) if device is not None else None)


def zeros_like(x: Tensor, /, *, dtype: torch.dtype | None = None, device: Any = None) -> Tensor:
    """``zeros_like`` with the spec's keywords; same device as ``x`` unless told."""
    return torch.zeros_like(x, dtype=dtype, device=resolve(device) if device is not None else None)


def ones_like(x: Tensor, /, *, dtype: torch.dtype | None = None, device: Any = None) -> Tensor:
    """``ones_like`` with the spec's keywords; same device as ``x`` unless told."""
    return torch.ones_like(x, dtype=dtype, device=resolve(device) if device is not None else None)


def full_like(
    x: Tensor, /, fill_value: complex, *, dtype: torch.dtype | None = None, device: Any = None
) -> Tensor:
    """An array shaped like ``x`` filled with ``fill_value``; same device as ``x`` unless told."""
    check_fill(fill_value, "full_like", Tensor)
    return torch.full_like(x, fill_value, dtype=dtype, device=resolve(device) if device is not None else None)


def eye(
    n_rows: int,
    n_cols: int | None = None,
    /,
    *,
    k: int = 0,
    dtype: torch.dtype | None = None,
    device: Any = None,
) -> Tensor:
    """Ones on the ``k``-th diagonal, zeros elsewhere (sizes that are no integers raise a
    TypeError naming them: array-api-compat's had said "zeros() takes 1 positional argument")."""
    for size in (n_rows, n_cols):
        if size is not None and (isinstance(size, bool) or not isinstance(size, int | np.integer)):
            raise TypeError(
                f"eye() takes integer numbers of rows and columns, not {type(size).__name__} {size!r}"
            )
    out: Tensor = _compat.eye(n_rows, n_cols, k=k, dtype=dtype, device=resolve(device))
    return out


def linspace(
    start: complex,
    stop: complex,
    /,
    num: int,
    *,
    dtype: torch.dtype | None = None,
    device: Any = None,
    endpoint: bool = True,
) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop``."""
    if isinstance(num, int) and num < 0:  # (torch's is a RuntimeError)
        raise ValueError(f"linspace(): num must be non-negative, not {num}")
    if dtype is None and (isinstance(start, complex) or isinstance(stop, complex)):
        dtype = torch.complex128 if torch.get_default_dtype() == torch.float64 else torch.complex64
    out: Tensor = _compat.linspace(start, stop, num, dtype=dtype, device=resolve(device), endpoint=endpoint)
    return out


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """A tensor over the memory of any DLPack producer: zero-copy when the producer's memory
    is on ``device`` (or no device is asked for), a copy only when ``device`` differs or
    ``copy=True``. A torch tensor is exported in its backend's context (``TorchBackend.exporting``:
    torch exports a CUDA tensor only while its GPU is current)."""
    if isinstance(x, Tensor):
        with PLUGIN.exporting(x):
            return _import(x, device, copy)
    return _import(x, device, copy)


def _negative_strides(x: Any) -> bool:
    """Whether ``x`` is a view with a negative stride (NumPy's and CuPy's ``strides``; a
    tensor's is a method, and torch makes no such views)."""
    strides = getattr(x, "strides", None)
    return isinstance(strides, tuple) and any(s < 0 for s in strides)


def _import(x: Any, device: Any, copy: bool | None) -> Tensor:
    if isinstance(x, np.generic):  # (no __dlpack__ of its own: torch took it for a capsule)
        x = np.asarray(x)
    elif not hasattr(x, "__dlpack__"):  # (torch takes anything else for a capsule, and says so)
        raise spec.no_dlpack(x)
    if _negative_strides(x):
        # torch aborts the process on a DLPack capsule with negative strides (a c10::Error
        # thrown through C), so such a view is refused here, as a producer's refusal would be
        raise BufferError(
            "from_dlpack(): torch cannot hold a view with negative strides; copy it first "
            "(ruda.to_device does)"
        )
    if _read_only(x):
        if copy is False:
            raise BufferError(f"from_dlpack(copy=False): {_READ_ONLY}")
        x, copy = x.copy(), None
    if device is None:
        return _torch_from_dlpack(x) if copy is None else _torch_from_dlpack(x, copy=copy)
    target = resolve(device)
    if copy is None and _dlpack_device(x) == target:
        return _torch_from_dlpack(x)  # the plain protocol call: zero-copy with every producer
    return _torch_from_dlpack(x, device=target, copy=copy)


# DLPack device types (dlpack.h): kDLCPU = 1, kDLCUDA = 2
_DLPACK_TYPES = {1: "cpu", 2: "cuda"}


def _dlpack_device(x: Any) -> torch.device | None:
    """The torch device of a DLPack producer's memory, or None when torch has no such device."""
    try:
        kind, index = x.__dlpack_device__()
    except AttributeError:
        return None
    name = _DLPACK_TYPES.get(int(kind))
    if name is None:
        return None
    return torch.device("cpu") if name == "cpu" else torch.device(name, int(index))


meshgrid = _compat.meshgrid


def tril(x: Tensor, /, *, k: int = 0) -> Tensor:
    """The lower triangle of the last two axes."""
    return torch.tril(x, k)


def triu(x: Tensor, /, *, k: int = 0) -> Tensor:
    """The upper triangle of the last two axes."""
    return torch.triu(x, k)
