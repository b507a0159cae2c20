"""The remote array: a handle to an array in the server's session, with its shape and dtype.

Operators and methods send ops without waiting. Reading values waits: ``bool()``,
``int()``, ``float()``, ``complex()``, ``operator.index()`` and DLPack export (which
hands over a host copy, so ``numpy.from_dlpack(x)`` and ``ruda.to_numpy(x)`` work).
"""

from __future__ import annotations

import operator
import struct
from typing import Any

import msgpack
import numpy as np
from ruda import spec
from ruda._array import ArrayAttributes, HostCopyExport, MadeByNamespace
from ruda._operators import ArrayOperators, unsupported
from ruda._ufuncs import NumpyUfuncs

from ruda_remote import _dispatch, _meta, wire
from ruda_remote._client import RemoteDevice
from ruda_remote.errors import RemoteConnectionError

_OPERAND_TYPES = (bool, int, float, complex, np.generic)


class Array(MadeByNamespace, NumpyUfuncs, ArrayOperators, ArrayAttributes[RemoteDevice], HostCopyExport):
    """An array that lives on a ruda remote server. Its operators (:mod:`ruda._operators`) are
    sent by their dunder names; NumPy's ufuncs (``np.isfinite(x)``) run on the server too
    (:class:`ruda._ufuncs.NumpyUfuncs`)."""

    __slots__ = ("__weakref__", "_device", "_dtype", "_ext", "_handle", "_made_at", "_origin", "_shape")
    # np.asarray(x) and DLPack give a host copy, an explicit transfer over the network as JAX's
    # arrays give one, so that SciPy's compiled paths work (see HostCopyExport)
    _held_in = "another machine's memory"
    _made_with = "ruda_remote.asarray(), zeros(), arange(), ..."

    _device: RemoteDevice
    _handle: int | None  # None until a deferred ``source[index]`` is first needed on the server
    _shape: tuple[int, ...]
    _dtype: np.dtype[Any]
    #: (source array, basic index) when this array is ``source[index]``: its values can be read
    #: from a cached copy of the source
    _origin: tuple[Array, Any] | None
    #: the device's count of changes when a deferred ``source[index]`` was sent (see _read)
    _made_at: int
    #: the handle as the wire's extension value, made when first sent
    _ext: msgpack.ExtType | None

    @classmethod
    def _new(
        cls, device: RemoteDevice, handle: int | None, shape: tuple[int, ...], dtype: np.dtype[Any]
    ) -> Array:
        self = object.__new__(cls)
        self._device, self._handle, self._shape, self._dtype = device, handle, shape, dtype
        self._origin = None
        self._ext = None
        self._made_at = 0
        return self

    def __del__(self) -> None:
        device = getattr(self, "_device", None)
        if device is not None and getattr(self, "_handle", None) is not None:
            device.release(self._handle)

    def _wire(self) -> msgpack.ExtType:
        """This array's handle as the wire's extension value (made once: arrays are reused)."""
        ext = self._ext
        if ext is None:
            ext = self._ext = msgpack.ExtType(wire.EXT_HANDLE, struct.pack(">q", self._ensure()))
        return ext

    def _ensure(self) -> int:
        """This array's handle; a deferred ``source[index]`` is sent to the server now."""
        if self._handle is None:
            assert self._origin is not None
            source, key = self._origin
            with self._device._lock:
                if self._handle is None:
                    handle = self._device.new_handle()
                    self._made_at = self._device.changes
                    self._device.submit(
                        wire.OP_CODES["__getitem__"],
                        [handle],
                        [wire.Handle(source._ensure()), key],
                        {},
                        expect=[(self._shape, self._dtype.name)],
                    )
                    self._handle = handle
        return self._handle

    # -- attributes --------------------------------------------------------------------------------
    @property
    def mT(self) -> Array:  # noqa: N802  (the spec's name)
        return _dispatch.call("mT", (self,), {})

    @property
    def T(self) -> Array:  # noqa: N802  (the spec's name)
        if self.ndim != 2:
            raise ValueError(f"x.T needs a 2-d array, got {self.ndim} dimensions; use mT or permute_dims")
        return _dispatch.call("T", (self,), {})

    def __repr__(self) -> str:
        return f"ruda_remote.Array(shape={self._shape}, dtype={self._dtype.name}, device='{self._device}')"

    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
        import ruda_remote

        spec.check_api_version(api_version, "ruda_remote")
        return ruda_remote

    def to_device(self, device: Any, /, *, stream: Any = None) -> Array:
        """This array on another remote device (a copy through the client), or itself."""
        if device is self._device:
            return self
        if not isinstance(device, RemoteDevice):
            raise ValueError(
                f"ruda_remote arrays move only between RemoteDevices, not to {device!r}; "
                "to bring one to another backend use ruda.to_device(x, 'cpu')"
            )
        return _dispatch.upload(self._read(), device)

    # -- reads (these wait) ------------------------------------------------------------------------
    def _read(self) -> np.ndarray:
        # ``source[index]`` reads the source's copy while the server's array of it is not made
        # yet (it would be made from the source as it is) or no array has changed since it was:
        # a backend's element may be a copy (NumPy's ``x[0, 0]``), so after ``y += 1`` on it, or
        # a write into the source, only the server's own array of it is right
        if self._origin is not None and (self._handle is None or self._made_at == self._device.changes):
            source, key = self._origin
            host = self._device.cached_read(source._ensure(), source.size * source.dtype.itemsize)
            if host is not None:
                return np.asarray(host[key])
        values = self._device.read(self._ensure())
        if values.shape != self._shape or values.dtype != self._dtype:
            raise RemoteConnectionError(
                f"the server {self._device.url} sent {values.dtype}{list(values.shape)} for an array "
                f"of {self._dtype}{list(self._shape)}"
            )
        return values

    def _read_copy(self) -> np.ndarray:
        """The values as a host array that nothing else holds: a read that came in pieces is one
        already (writable, its own buffer), anything else is copied (cached or read-only)."""
        host = self._read()
        return host if host.flags.writeable else np.array(host)

    def _host_copy(self) -> np.ndarray:
        return self._read_copy()  # writable, owned by the exporter

    # -- indexing ----------------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Array:
        key = _scalar_indices(self._uploaded_indices(key))
        if not _meta.is_basic_key(key):
            return _dispatch.call("__getitem__", (self, key), {})
        # A view: checked here, sent only when used on the server; reading its values needs
        # only a (cached) read of this array.
        metas = _meta.infer("__getitem__", (self, key), {}, _dispatch.is_array)
        assert metas is not None  # a basic key's result is always inferred
        ((shape, dtype),) = metas
        result = Array._new(self._device, None, shape, np.dtype(dtype))
        result._origin = (self, key)
        return result

    def __setitem__(self, key: Any, value: Any) -> None:
        if not isinstance(value, (Array, *_OPERAND_TYPES)):
            raise TypeError(
                f"cannot assign a {type(value).__name__} into a remote array: assign a scalar or "
                "an array on the same device"
            )
        key = self._uploaded_indices(key)
        _meta.check_setitem(self, key, value, _dispatch.is_array)
        _dispatch.call_in_place("__setitem__", self, (key, value))

    def _uploaded_indices(self, key: Any) -> Any:
        """``key`` with its NumPy integer and boolean arrays sent to this array's device, as
        CuPy and PyTorch take host index arrays (scikit-learn indexes by NumPy's: cross-validation
        splits). The index must reach the server to select anything; the data never leaves it."""
        parts = key if isinstance(key, tuple) else (key,)
        if not any(type(p) is np.ndarray for p in parts):
            return key
        from ruda_remote._functions import asarray

        uploaded = []
        for p in parts:
            if type(p) is np.ndarray:
                if p.dtype.kind not in "biu":
                    raise IndexError(f"index arrays must be of integer or boolean type, not {p.dtype}")
                p = asarray(p, device=self._device)
            uploaded.append(p)
        return tuple(uploaded) if isinstance(key, tuple) else uploaded[0]

    # -- operators ---------------------------------------------------------------------------------
    def _binary_operator(self, function: str, dunder: str, other: Any, reflected: bool) -> Any:
        if not isinstance(other, (Array, *_OPERAND_TYPES)):
            return unsupported(self, function, other)
        return _dispatch.call(dunder, (self, other), {})

    def _inplace_operator(self, function: str, dunder: str, other: Any) -> Any:
        if not isinstance(other, (Array, *_OPERAND_TYPES)):
            return unsupported(self, function, other)
        _meta.infer_in_place(dunder, self, other, _dispatch.is_array)
        _dispatch.call_in_place(dunder, self, (other,))
        return self

    def _unary_operator(self, function: str, dunder: str) -> Any:
        return _dispatch.call(dunder, (self,), {})


def _scalar_indices(key: Any) -> Any:
    """``key`` with 0-d integer remote arrays read as Python ints: indexing by them selects what
    indexing by their values does, and the key becomes a view key (see Array.__getitem__)."""
    parts = key if isinstance(key, tuple) else (key,)
    if any(isinstance(p, slice) for p in parts):  # slice bounds: anything with __index__, as ints
        parts = tuple(
            slice(*(_index(b) for b in (p.start, p.stop, p.step))) if isinstance(p, slice) else p
            for p in parts
        )
        key = parts if isinstance(key, tuple) else parts[0]
    if not any(isinstance(p, Array) for p in parts):
        return key
    if not all(not isinstance(p, Array) or (p.ndim == 0 and p.dtype.kind in "iu") for p in parts):
        return key
    if not _meta.is_basic_key(tuple(0 if isinstance(p, Array) else p for p in parts)):
        return key
    converted = tuple(int(p) if isinstance(p, Array) else p for p in parts)
    return converted if isinstance(key, tuple) else converted[0]


def _index(bound: Any) -> Any:
    if bound is None or type(bound) is int:
        return bound
    if not hasattr(bound, "__index__"):
        raise TypeError(f"slice bounds must be integers or None, not {type(bound).__name__}")
    return operator.index(bound)
