"""Turning a call on remote arrays into an op: find the device, encode the arguments,
infer or ask for the result's shape and dtype, and wrap the result handles as arrays."""

from __future__ import annotations

from typing import Any, overload

import numpy as np
from ruda._operators import is_foreign_array, mixing_error

# (the array module imports this one too: each reads the other's names when called, not at import)
from ruda_remote import _array, _meta, wire
from ruda_remote._client import RemoteDevice, device_from_env
from ruda_remote._table import check_sequences

_default_device: RemoteDevice | None = None

#: ops with a fixed number of results other than one
N_OUT = {
    "unique_all": 4,
    "unique_counts": 2,
    "unique_inverse": 2,
    "linalg.eig": 2,
    "linalg.eigh": 2,
    "linalg.qr": 2,
    "linalg.slogdet": 2,
    "linalg.svd": 3,
}

_SCALARS = (bool, int, float, complex)


def default_device() -> RemoteDevice:
    """The device ops use when none is given: set with :func:`set_default_device`, or from
    the ``RUDA_REMOTE_URL`` environment variable (token in ``RUDA_REMOTE_TOKEN``)."""
    global _default_device
    if _default_device is None or _default_device._closed:
        _default_device = device_from_env()
        if _default_device is None:
            raise RuntimeError(
                "no remote device: set RUDA_REMOTE_URL (e.g. ws://127.0.0.1:3000, a server started with "
                "`ruda serve --backend host --port 3000`), call ruda_remote.set_default_device(...), "
                "or pass device=ruda_remote.RemoteDevice(url)"
            )
    return _default_device


def set_default_device(device: RemoteDevice | None) -> None:
    """Make ``device`` the default for functions called without ``device=`` (None: back to the
    environment variable)."""
    global _default_device
    if device is not None and not isinstance(device, RemoteDevice):
        raise TypeError(f"expected a RemoteDevice, got {type(device).__name__}")
    _default_device = device


def device_or_default(device: Any) -> RemoteDevice:
    """``device`` checked to be a RemoteDevice, or the default device when None."""
    if device is None:
        return default_device()
    if not isinstance(device, RemoteDevice):
        raise ValueError(f"ruda_remote devices are RemoteDevice objects, not {device!r}")
    return device


def is_array(x: Any) -> bool:
    return isinstance(x, _array.Array)


class _Encoder:
    """Encodes the argument values of op ``function`` for the wire and finds the one device they
    share."""

    def __init__(self, function: str, device: RemoteDevice | None = None) -> None:
        self.function, self.device = function, device

    def __call__(self, value: Any) -> Any:
        if isinstance(value, _array.Array):
            if self.device is None:
                self.device = value.device
            elif value.device is not self.device:
                raise ValueError(
                    f"arrays on two devices in one operation: {value.device} and {self.device}; "
                    "move one with x.to_device(device) first"
                )
            return value._wire()
        if value is None or value is Ellipsis or isinstance(value, (str, *_SCALARS)):
            return value
        if isinstance(value, np.dtype):
            return _wire_dtype(value)
        if isinstance(value, type) and issubclass(value, np.generic):
            return _wire_dtype(np.dtype(value))
        if isinstance(value, tuple):
            return tuple(self(v) for v in value)
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, dict):
            return {k: self(v) for k, v in value.items()}
        if isinstance(value, slice):
            return slice(self._index(value.start), self._index(value.stop), self._index(value.step))
        if isinstance(value, np.generic) and value.ndim == 0 and value.dtype.kind in "biufc":
            return value.item()
        if isinstance(value, type) and value in _SCALARS:
            raise TypeError(f"pass a dtype such as xp.float64, not the Python type {value.__name__}")
        if is_foreign_array(value):
            raise mixing_error("ruda_remote", self.function, value)
        raise TypeError(
            f"{self.function}() cannot take a {type(value).__module__}.{type(value).__qualname__}: "
            "remote operations take ruda_remote arrays, scalars, dtypes, slices and sequences of those"
        )

    @staticmethod
    def _index(v: Any) -> Any:
        if v is None or isinstance(v, int):
            return v
        if hasattr(v, "__index__"):
            return v.__index__()
        raise TypeError(f"slice bounds must be integers or None, got {type(v).__name__}")


@overload
def call(
    name: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    device: RemoteDevice | None = None,
    n_out: None = None,
) -> _array.Array: ...
@overload
def call(
    name: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    device: RemoteDevice | None = None,
    n_out: int,
) -> list[_array.Array]: ...
def call(
    name: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    device: RemoteDevice | None = None,
    n_out: int | None = None,
) -> _array.Array | list[_array.Array]:
    """Run op ``name`` remotely; return its array, or the list of its ``n_out`` arrays (an op
    with several results, as :data:`N_OUT` counts them, is called with ``n_out``)."""
    if not kwargs and n_out is None and name in _meta.ELEMENTWISE_OPS:
        fast = _elementwise(name, args, device)
        if fast is not None:
            return fast
    check_sequences(name, args, kwargs)
    encode = _Encoder(name, device)
    wire_args = [encode(a) for a in args]
    wire_kwargs = {k: encode(v) for k, v in kwargs.items()}
    dev = encode.device or default_device()
    metas = _meta.infer(name, args, kwargs, is_array, dev.result_dtypes)
    if metas is not None:
        for _, dtype in metas:
            _check_result_dtype(name, dtype)
    count = n_out if n_out is not None else 1
    out = [dev.new_handle() for _ in range(count)]
    code = wire.OP_CODES[name]
    if metas is None:
        try:
            reply = dev.request(code, out, wire_args, wire_kwargs, flags=wire.FLAG_META)
        except BaseException:
            for handle in out:  # whatever the server made of them, nobody will use them
                dev.release(handle)
            raise
        metas = reply[2]
        # (a dtype the backend chose: asked once a signature)
        _learn(dev, _meta.learned_key(name, args, kwargs, is_array), metas)
    else:
        dev.submit(code, out, wire_args, wire_kwargs, expect=metas)
    arrays = [wrap(dev, h, m) for h, m in zip(out, metas, strict=True)]
    return arrays if n_out is not None else arrays[0]


def _elementwise(name: str, args: tuple[Any, ...], device: RemoteDevice | None) -> _array.Array | None:
    """The common case of :func:`call`, without its generality: an elementwise op on arrays of
    one shape and Python scalars whose result dtype is already known. None: take the general path."""
    wire_args: list[Any] = []
    shape = None
    key: list[Any] = [name]
    for a in args:
        kind = type(a)
        if kind is _array.Array:
            if device is None:
                device = a._device
            elif a._device is not device or (shape is not None and a._shape != shape):
                return None
            shape = a._shape
            wire_args.append(a._wire())
            key.append(a._dtype)
        elif kind is float or kind is bool or kind is complex:
            wire_args.append(a)
            key.append(kind)
        elif kind is int:
            wire_args.append(a)
            key.append((int, a))
        else:
            return None
    if device is None or shape is None:
        return None
    dtype = _meta.cached_dtype(tuple(key)) or device.result_dtypes.get(tuple(key))
    if dtype is None:
        return None
    _check_result_dtype(name, dtype)
    handle = device.new_handle()
    device.submit(wire.OP_CODES[name], [handle], wire_args, {}, expect=[(shape, dtype)])
    return _array.Array._new(device, handle, shape, _DTYPES[dtype])


def _learn(dev: RemoteDevice, key: tuple[Any, ...] | None, metas: list[Any]) -> None:
    """Keep the result dtype the server's backend gave an op of signature ``key`` (see
    ``_meta.learned_key``), so that the next call of it is pipelined."""
    if key is not None and len(metas) == 1:
        if len(dev.result_dtypes) >= RESULT_DTYPES:
            dev.result_dtypes.clear()
        dev.result_dtypes[key] = str(metas[0][1])


#: result dtypes of signatures a device keeps (see _learn) before it starts over
RESULT_DTYPES = 4096


def _check_result_dtype(name: str, dtype: str) -> None:
    """Refuse here, with nothing sent, an op whose result would have a dtype the wire does not
    carry: the reference gives ``sqrt`` of uint8 float16, as NumPy does (sent, the op was
    refused on the server with the whole batch, and the client had raised a KeyError)."""
    if dtype not in wire.ITEMSIZE:
        raise TypeError(
            f"{name}() of these operands gives {dtype}, which is not one of the Array API's dtypes, "
            "and a remote array is one of those: convert the operands to float32 or float64 first"
        )


def _wire_dtype(dtype: np.dtype[Any]) -> wire.DType:
    """A dtype as the wire names it; one the wire does not carry raises here, at the call, so
    that nothing of the operation is sent."""
    if dtype.name not in wire.ITEMSIZE:
        raise TypeError(
            f"{dtype.name} is not one of the Array API's dtypes, and a remote array is one of those "
            f"({', '.join(wire.ITEMSIZE)}): use float32 or float64 in its place, or compute with the "
            "backend that has it in this process"
        )
    return wire.DType(dtype.name)


def call_in_place(name: str, target: Any, args: tuple[Any, ...]) -> None:
    """Run an op that changes ``target`` (``__setitem__``, ``__iadd__``, ...); nothing waits."""
    encode = _Encoder(name, target.device)
    wire_args = [encode(target)] + [encode(a) for a in args]
    target.device.submit(wire.OP_CODES[name], [], wire_args, {}, mutates=True)


def upload(host: np.ndarray, device: RemoteDevice) -> _array.Array:
    """A new remote array holding a copy of ``host``'s values."""
    host = np.asarray(host, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
    if host.dtype.name not in wire.ITEMSIZE:
        raise TypeError(
            f"Unsupported dtype {host.dtype}: arrays of dtype {host.dtype} cannot be sent, "
            "the Array API has no such dtype"
        )
    if not host.dtype.isnative:
        host = host.astype(host.dtype.newbyteorder("="))
    data: Any = host.reshape(-1).view(np.uint8).data
    handle = device.new_handle()
    meta = (tuple(host.shape), host.dtype.name)
    code, out, head = wire.OP_CODES["__upload__"], [handle], [host.dtype.name, list(host.shape)]
    if host.nbytes <= device.inline_bytes:
        # Small: a copy joins the queue (the caller may change ``host`` before the queue is sent).
        device.submit(code, out, [*head, bytes(data)], {}, expect=[meta])
    else:
        # Large: sent at once, straight from ``host``'s memory, after the message's header (in
        # pieces when it is larger than a message may be).
        device.submit(code, out, [*head, wire.PAYLOAD], {}, expect=[meta], payload=data)
    return wrap(device, handle, meta)


_DTYPES = {name: np.dtype(name) for name in wire.ITEMSIZE}


def wrap(device: RemoteDevice, handle: int, meta: _meta.Meta) -> _array.Array:
    shape, dtype = meta
    return _array.Array._new(device, handle, tuple(shape), _DTYPES[dtype])
