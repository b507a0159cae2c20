"""Creation functions of ruda_cuda.

array-api-compat accepts ``device=`` for CuPy but creates on the current
device; here ``device`` is honoured (the call runs inside that device's
context), and ``*_like`` functions default to the device of their input.
Scalars equal to ``-0.0`` keep their sign (CuPy's ``fill`` loses it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cupy
import numpy as np
from array_api_compat import cupy as _compat
from ruda import spec
from ruda._arguments import check_fill

from ruda_cuda._array import Array, as_array, as_arrays, scalar_array, to_device
from ruda_cuda._devices import native_device
from ruda_cuda._fusion import realizing

_SCALARS = (bool, int, float, complex, np.generic)


def _target(device: Any, like: Any = None) -> cupy.cuda.Device | None:
    if device is not None:
        return native_device(device)
    if isinstance(like, cupy.ndarray):
        return like.device
    return None


def _on_device(function: Callable[..., Any], like: bool = False) -> Callable[..., Any]:
    """``function`` run on its ``device`` argument's GPU, returning :class:`Array` (pending
    arguments computed first)."""
    function = realizing(function)

    def wrapper(*args: Any, device: Any = None, **kwargs: Any) -> Any:
        target = _target(device, args[0] if like and args else None)
        if target is None:
            return as_arrays(function(*args, **kwargs))
        with target:
            return as_arrays(function(*args, **kwargs))

    wrapper.__name__ = wrapper.__qualname__ = function.__name__
    wrapper.__doc__ = function.__doc__
    wrapper.__wrapped__ = function  # type: ignore[attr-defined]  # inspect.signature follows it
    return wrapper


@realizing
def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None) -> Array:
    """Convert ``obj`` (array, nested sequence, scalar, buffer or DLPack object) to an array."""
    target = _target(device)
    with target if target is not None else cupy.cuda.Device():
        if isinstance(obj, _SCALARS) or (isinstance(obj, np.ndarray) and obj.ndim == 0):
            if copy is False:
                raise ValueError(
                    "asarray(copy=False) cannot wrap a host scalar without copying it to "
                    "the GPU; pass copy=None"
                )
            return as_array(scalar_array(obj, dtype))
        if isinstance(obj, cupy.ndarray) and target is not None and obj.device != target:
            obj = to_device(obj, target)
        elif isinstance(obj, (list, tuple)) and _holds_gpu_arrays(obj):
            obj = _to_host(obj)  # CuPy cannot build an array from a sequence of its own arrays
        try:
            return as_array(_compat.asarray(obj, dtype=dtype, copy=copy))
        except ValueError as err:
            # (None, a dict, text, dates: NumPy reads them as dtype object, text or dates, and
            # CuPy names only that dtype; its "Unsupported dtype" stays first, as SciPy's input
            # checks look for it)
            if dtype is not None or not str(err).startswith("Unsupported dtype"):
                raise
            raise TypeError(
                f"{err} for asarray(): ruda_cuda makes arrays of numbers and bool, the standard's dtypes"
            ) from err


def _holds_gpu_arrays(obj: Any) -> bool:
    return any(
        isinstance(item, cupy.ndarray) or (isinstance(item, (list, tuple)) and _holds_gpu_arrays(item))
        for item in obj
    )


def _to_host(obj: Any) -> Any:
    if isinstance(obj, cupy.ndarray):
        return obj.get()
    if isinstance(obj, (list, tuple)):
        return np.asarray([_to_host(item) for item in obj])
    return obj


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """An array of ``shape`` filled with ``fill_value`` (``-0.0`` included)."""
    check_fill(fill_value, "full", cupy.ndarray)  # (CuPy's error comes from filling with text)
    target = _target(device)
    with target if target is not None else cupy.cuda.Device():
        if isinstance(fill_value, (float, complex)) and fill_value == 0:
            value = scalar_array(fill_value, dtype)
            return as_array(cupy.broadcast_to(value, shape).copy())
        return as_array(_compat.full(shape, fill_value, dtype=dtype))


@realizing
def full_like(x: Any, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """An array shaped like ``x`` filled with ``fill_value`` (``-0.0`` included)."""
    check_fill(fill_value, "full_like", cupy.ndarray)
    target = _target(device, x)
    with target if target is not None else cupy.cuda.Device():
        if isinstance(fill_value, (float, complex)) and fill_value == 0:
            value = scalar_array(fill_value, dtype if dtype is not None else x.dtype)
            return as_array(cupy.broadcast_to(value, x.shape).copy())
        return as_array(_compat.full_like(x, fill_value, dtype=dtype))


_arange = _on_device(_compat.arange)


def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None) -> Array:
    """``start``, ``start + step``, ... up to ``stop`` (excluded); a step of zero is a ValueError
    (CuPy's is a ZeroDivisionError), as on the other backends."""
    if step == 0:
        raise ValueError("arange(): step must not be zero")
    return _arange(start, stop, step, dtype=dtype, device=device)  # type: ignore[no-any-return]


@realizing
def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Array:
    """Import any DLPack producer, onto ``device`` when given (CuPy wants DLPack device tuples)."""
    if isinstance(x, cupy.ndarray):
        x = as_array(x)  # for Array.__dlpack__, which supports copy=True on the GPU
    imported = cupy.from_dlpack(x, copy=copy)
    if device is None:
        return as_array(imported)
    # CuPy's from_dlpack does not take a device: import, then move if it landed elsewhere.
    native = native_device(device)
    if copy is False and imported.device != native:
        raise BufferError(f"from_dlpack(copy=False) cannot move data from {imported.device} to {native}")
    return to_device(imported, native)


empty = _on_device(_compat.empty)
eye = _on_device(_compat.eye)
linspace = _on_device(_compat.linspace)
ones = _on_device(_compat.ones)
zeros = _on_device(_compat.zeros)
empty_like = _on_device(_compat.empty_like, like=True)
ones_like = _on_device(_compat.ones_like, like=True)
zeros_like = _on_device(_compat.zeros_like, like=True)


@realizing
def meshgrid(*arrays: Any, indexing: str = "xy") -> tuple[Array, ...]:
    """Coordinate matrices from coordinate vectors, as a tuple."""
    return tuple(as_arrays(_compat.meshgrid(*arrays, indexing=indexing)))


@realizing
def tril(x: Any, /, *, k: int = 0) -> Array:
    """The lower triangle of each matrix in ``x``."""
    return as_array(cupy.tril(x, k=k))


@realizing
def triu(x: Any, /, *, k: int = 0) -> Array:
    """The upper triangle of each matrix in ``x``."""
    return as_array(cupy.triu(x, k=k))


__all__ = list(spec.CREATION_FUNCTIONS)
