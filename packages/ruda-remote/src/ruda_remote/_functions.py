"""Namespace functions that need more than forwarding: data from the host, creation on a
device, dtype queries answered locally, and results with several arrays."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import DTypeLike
from ruda import to_numpy
from ruda._array import asarray_own, python_number
from ruda.spec import RESULT_TYPES

from ruda_remote import _dispatch
from ruda_remote._array import Array
from ruda_remote._client import RemoteDevice
from ruda_remote._reference import host


def forward(name: str) -> Callable[..., Any]:
    """A namespace function that runs op ``name`` on the server."""
    result_type = RESULT_TYPES.get(name)
    n_out = _dispatch.N_OUT.get(name)

    def function(*args: Any, **kwargs: Any) -> Any:
        if n_out is None:
            return _dispatch.call(name, args, kwargs)
        out = _dispatch.call(name, args, kwargs, n_out=n_out)
        return result_type(*out) if result_type is not None else out

    prefix, _, short = name.rpartition(".")
    function.__name__ = function.__qualname__ = short
    function.__doc__ = f"The Array API's ``{name}``, computed on the remote server."
    reference = getattr(getattr(host, prefix) if prefix else host, short, None)
    if reference is not None:  # the specification's signature, as the reference namespace spells it
        function.__signature__ = inspect.signature(reference)  # type: ignore[attr-defined]
    return function


_device = _dispatch.device_or_default


def _default_dtype(device: RemoteDevice, kind: str) -> np.dtype[Any]:
    """The server device's default dtype of ``kind``; the server leaves out a default the wire
    cannot carry (one beyond the standard's dtypes), and then the caller must name a dtype."""
    try:
        name: str = device.info["default_dtypes"][kind]
    except KeyError:
        raise TypeError(
            f"the server's backend has no default {kind} dtype among the Array API's dtypes: "
            "pass dtype=... explicitly"
        ) from None
    return np.dtype(name)


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None) -> Array:
    """An array on the remote device from a remote array, any host or DLPack array, a scalar
    or nested sequences (those are converted on the host, then sent)."""
    if isinstance(obj, Array):
        target = obj.device if device is None else _device(device)
        return asarray_own(obj, None if dtype is None else np.dtype(dtype), target, copy, _astype)
    if isinstance(obj, (list, tuple)):
        stacked = _stack_nested(obj, dtype, device)
        if stacked is not None:
            return stacked
    if copy is False:
        raise ValueError("copy=False is impossible: host data must be copied to the remote server")
    target = _device(device)
    has_dtype = hasattr(obj, "dtype") and not isinstance(obj, (list, tuple))
    if has_dtype or hasattr(obj, "__dlpack__"):
        values = to_numpy(obj) if not isinstance(obj, np.generic) else np.asarray(obj)
        if dtype is not None:
            values = host.astype(values, np.dtype(dtype))
    else:
        values = np.asarray(host.asarray(obj, dtype=dtype))
        if dtype is None:
            values = values.astype(_default_for(values.dtype, target), copy=False)
    return _dispatch.upload(values, target)


def _astype(x: Array, dtype: np.dtype[Any]) -> Array:
    """A copy of ``x`` of ``dtype``, made on the server."""
    return _dispatch.call("astype", (x, dtype), {})


def _stack_nested(obj: list[Any] | tuple[Any, ...], dtype: Any, device: Any) -> Array | None:
    """Nested sequences of remote arrays, assembled on the server (their values never travel).
    None when some leaf is not a remote array."""
    leaves: list[Array] = []

    def shape_of(node: Any) -> tuple[int, ...]:
        if isinstance(node, Array):
            leaves.append(node)
            return ()
        if not isinstance(node, (list, tuple)) or not node:
            raise _NotRemote
        shapes = {shape_of(item) for item in node}
        if len(shapes) != 1:
            raise ValueError("asarray: nested sequences of remote arrays must be rectangular")
        return (len(node), *shapes.pop())

    try:
        outer = shape_of(obj)
    except _NotRemote:
        return None
    if len({a.shape for a in leaves}) != 1:
        raise ValueError(
            f"asarray: the remote arrays have different shapes: {sorted({a.shape for a in leaves})}"
        )
    stacked = _dispatch.call("stack", (leaves,), {"axis": 0})
    result = _dispatch.call("reshape", (stacked, outer + leaves[0].shape), {})
    if device is not None and _device(device) is not result.device:
        result = result.to_device(_device(device))
    if dtype is not None and np.dtype(dtype) != result.dtype:
        result = _dispatch.call("astype", (result, np.dtype(dtype)), {})
    return result


class _NotRemote(Exception):  # noqa: N818  (control flow inside _stack_nested, never escapes)
    pass


def _default_for(dtype: np.dtype[Any], device: RemoteDevice) -> np.dtype[Any]:
    """The device's default dtype of the same kind as a dtype NumPy chose for Python values."""
    kind = {"f": "real floating", "c": "complex floating", "i": "integral"}.get(dtype.kind)
    return _default_dtype(device, kind) if kind else dtype


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Array:
    """A remote array from any DLPack array (its values travel to the server)."""
    return asarray(x, device=device, copy=copy)


def _creation(name: str, shape: Any, dtype: Any, device: Any, kind: str, **kwargs: Any) -> Array:
    target = _device(device)
    dtype = _default_dtype(target, kind) if dtype is None else np.dtype(dtype)
    dims = _dims(shape)
    return _dispatch.call(name, (dims,), {"dtype": dtype, **kwargs}, device=target)


def _dims(shape: Any) -> tuple[int, ...]:
    """A shape as Python ints: NumPy integers (SciPy builds shapes from them) count as integers."""
    items = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    if all(isinstance(n, int | np.integer) and not isinstance(n, bool) and n >= 0 for n in items):
        return tuple(int(n) for n in items)
    raise ValueError(f"invalid shape {shape!r}: expected non-negative integers")


def zeros(shape: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """An array of zeros, made on the server."""
    return _creation("zeros", shape, dtype, device, "real floating")


def ones(shape: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """An array of ones, made on the server."""
    return _creation("ones", shape, dtype, device, "real floating")


def empty(shape: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """An uninitialised array, made on the server."""
    return _creation("empty", shape, dtype, device, "real floating")


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """An array filled with ``fill_value``, made on the server. A 0-d array (SciPy passes them)
    gives its value, read from the server, and its dtype unless ``dtype`` is given; a NumPy
    scalar is taken as the Python scalar it holds."""
    if isinstance(fill_value, Array):
        if fill_value.ndim != 0:
            raise ValueError(f"full() takes a scalar fill_value, not a {fill_value.ndim}-d array")
        dtype = fill_value.dtype if dtype is None else dtype
        read = {"b": bool, "i": int, "u": int, "f": float, "c": complex}[fill_value.dtype.kind]
        fill_value = read(fill_value)
    elif isinstance(fill_value, np.generic):
        fill_value = fill_value.item()
    if dtype is None:
        kind = (
            "bool"
            if isinstance(fill_value, bool)
            else "integral"
            if isinstance(fill_value, int)
            else "complex floating"
            if isinstance(fill_value, complex)
            else "real floating"
        )
        if kind == "bool":
            dtype = np.dtype("bool")
        return _creation(
            "full", shape, dtype, device, kind if kind != "bool" else "integral", fill_value=fill_value
        )
    return _creation("full", shape, dtype, device, "real floating", fill_value=fill_value)


def _like(name: str, x: Array, dtype: Any, device: Any, **kwargs: Any) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{name} needs a remote array, got {type(x).__name__}")
    dtype = x.dtype if dtype is None else np.dtype(dtype)
    if device is not None and device is not x.device:
        return _creation(name.removesuffix("_like"), x.shape, dtype, device, "real floating", **kwargs)
    return _dispatch.call(name, (x,), {"dtype": dtype, **kwargs})


def zeros_like(x: Array, /, *, dtype: Any = None, device: Any = None) -> Array:
    """Zeros with the shape of ``x``."""
    return _like("zeros_like", x, dtype, device)


def ones_like(x: Array, /, *, dtype: Any = None, device: Any = None) -> Array:
    """Ones with the shape of ``x``."""
    return _like("ones_like", x, dtype, device)


def empty_like(x: Array, /, *, dtype: Any = None, device: Any = None) -> Array:
    """An uninitialised array with the shape of ``x``."""
    return _like("empty_like", x, dtype, device)


def full_like(x: Array, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """``fill_value`` with the shape of ``x``."""
    return _like("full_like", x, dtype, device, fill_value=fill_value)


def eye(
    n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None, device: Any = None
) -> Array:
    """An identity-like matrix, made on the server."""
    target = _device(device)
    dtype = _default_dtype(target, "real floating") if dtype is None else np.dtype(dtype)
    if isinstance(k, int) and isinstance(n_rows, int) and isinstance(n_cols, int | None):
        # Beyond the matrix every diagonal is empty: keep k within 64 bits for the wire.
        k = max(-n_rows - 1, min(k, (n_rows if n_cols is None else n_cols) + 1))
    return _dispatch.call("eye", (n_rows, n_cols), {"k": k, "dtype": dtype}, device=target)


def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None) -> Array:
    """Evenly spaced values, made on the server. Bounds may be 0-D real arrays, as NumPy takes
    them (SciPy passes a count it computed): each is read, since the result's length is its value."""
    start, stop, step = (_bound(v) for v in (start, stop, step))
    target = _device(device)
    if dtype is None:
        floats = any(isinstance(v, float) for v in (start, stop, step))
        dtype = _default_dtype(target, "real floating" if floats else "integral")
    return _dispatch.call("arange", (start, stop, step), {"dtype": np.dtype(dtype)}, device=target)


def _bound(value: Any) -> Any:
    """An ``arange`` bound as a Python scalar: a 0-D real remote array read, a NumPy scalar's
    value; anything else as it is (the server names what it refuses)."""
    if isinstance(value, Array) and (value.ndim != 0 or value.dtype.kind not in "iuf"):
        raise TypeError(
            f"arange takes int or float bounds (or 0-D real arrays), not a {value.dtype} array "
            f"of shape {value.shape}"
        )
    return python_number(value, Array)


def linspace(
    start: Any, stop: Any, /, num: int, *, dtype: Any = None, device: Any = None, endpoint: bool = True
) -> Array:
    """``num`` evenly spaced values, made on the server."""
    target = _device(device)
    if dtype is None:
        complex_ = isinstance(start, complex) or isinstance(stop, complex)
        dtype = _default_dtype(target, "complex floating" if complex_ else "real floating")
    return _dispatch.call(
        "linspace", (start, stop, num), {"dtype": np.dtype(dtype), "endpoint": endpoint}, device=target
    )


def meshgrid(*arrays: Array, indexing: str = "xy") -> tuple[Array, ...]:
    """Coordinate matrices; one result per input."""
    if not arrays:
        return ()
    return tuple(_dispatch.call("meshgrid", arrays, {"indexing": indexing}, n_out=len(arrays)))


def broadcast_arrays(*arrays: Array) -> tuple[Array, ...]:
    """The inputs broadcast to one shape; one result per input."""
    if not arrays:
        return ()
    return tuple(_dispatch.call("broadcast_arrays", arrays, {}, n_out=len(arrays)))


def unstack(x: Array, /, *, axis: int = 0) -> tuple[Array, ...]:
    """The slices of ``x`` along ``axis``."""
    if not isinstance(x, Array):
        raise TypeError(f"unstack needs a remote array, got {type(x).__name__}")
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"unstack's axis must be an integer, got {axis!r}")
    if x.ndim == 0:
        raise ValueError("unstack is not defined for 0-d arrays")
    if not -x.ndim <= axis < x.ndim:
        raise IndexError(f"axis {axis} is out of bounds for an array of {x.ndim} dimensions")
    if x.shape[axis] == 0:
        return ()
    return tuple(_dispatch.call("unstack", (x,), {"axis": axis}, n_out=x.shape[axis]))


def nonzero(x: Array, /) -> tuple[Array, ...]:
    """Indices of the non-zero elements, one array per dimension (waits: data-dependent)."""
    if not isinstance(x, Array):
        raise TypeError(f"nonzero needs a remote array, got {type(x).__name__}")
    if x.ndim == 0:
        raise ValueError("nonzero is not defined for 0-d arrays")
    return tuple(_dispatch.call("nonzero", (x,), {}, n_out=x.ndim))


# -- dtype queries: answered from dtypes alone, no server needed ----------------------------------


def _dtype_of(x: Any) -> Any:
    return x.dtype if isinstance(x, Array) else x


def result_type(*arrays_and_dtypes: Any) -> np.dtype[Any]:
    """The promoted dtype of arrays, dtypes and Python scalars."""
    promoted: DTypeLike = host.result_type(*(_dtype_of(a) for a in arrays_and_dtypes))
    return np.dtype(promoted)


def can_cast(from_: Any, to: Any, /) -> bool:
    """Whether ``from_`` (a dtype or array) casts to ``to`` under the promotion rules."""
    return bool(host.can_cast(_dtype_of(from_), to))


def finfo(type: Any, /) -> Any:
    """Machine limits of a floating dtype (or of an array's dtype)."""
    return host.finfo(_dtype_of(type))


def iinfo(type: Any, /) -> Any:
    """Machine limits of an integer dtype (or of an array's dtype)."""
    return host.iinfo(_dtype_of(type))


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind`` (a dtype, a kind name, or a tuple of them)."""
    return bool(host.isdtype(dtype, kind))


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape that ``shapes`` broadcast to."""
    return tuple(host.broadcast_shapes(*shapes))
