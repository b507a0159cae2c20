"""The array object of ruda_wgpu: a view (shape, strides, offset) of a pooled GPU buffer.

Views: slicing, transposes, ``reshape`` of contiguous data, ``expand_dims``,
``squeeze``, ``flip`` and ``broadcast_to`` share the buffer and only change
shape, strides (in elements, possibly zero or negative) and offset. Kernels read
strided views directly; only reads back to the host and reductions make a
contiguous copy first.

Host conversion: ``__dlpack__`` exports a host copy (``__dlpack_device__`` says
CPU), and ``__array__`` is provided and copies to the host too. That is a
deliberate choice: SciPy and other libraries call ``np.asarray`` on inputs of
functions that have no Array API path, and a copy that is visible in the type
of the result (a NumPy array comes back) is more useful than an error. Nothing
inside ruda_wgpu ever calls it: an operation the GPU cannot do raises instead
of quietly computing on the host. NumPy's elementwise ufuncs called on an array
run on the GPU (``np.abs(x)``, ``np.float32(2) * x``; see ``_operators``).
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

import numpy as np
from ruda import spec
from ruda._array import ArrayAttributes, HostCopyExport, MadeByNamespace

from ruda_wgpu import _dtypes
from ruda_wgpu._buffers import Storage, storage_itemsize
from ruda_wgpu._engine import CAPTURE, GpuDevice, default_device, resolve_device
from ruda_wgpu._kernels import Operand, Scalar, c_strides, convert, launch_elementwise
from ruda_wgpu._operators import Operators

if TYPE_CHECKING:
    from ruda_wgpu._fusion import Node


class Array(MadeByNamespace, Operators, ArrayAttributes[GpuDevice], HostCopyExport):
    """An n-dimensional array on a WebGPU device (see the module docstring for its layout);
    ``str(x.device)`` is ``"wgpu:0"``."""

    __slots__ = (
        "__weakref__", "_device", "_dtype", "_leaf", "_leaf_id", "_node", "_offset", "_shape", "_store",
        "_strides",
    )  # fmt: skip
    _held_in = "GPU memory that WebGPU does not share"  # (exports are host copies: module docstring)
    _made_with = "ruda_wgpu.asarray(), zeros(), arange(), ..."
    _store: Storage | None
    _node: Node | None
    #: this array as a kernel operand, made when an operation first reads it (see _operand)
    _leaf: Operand | None
    #: the structure id of that operand, once a pending operation has read it (0 before: see
    #: ``_fusion.leaf_id``)
    _leaf_id: int
    _shape: tuple[int, ...]
    _strides: tuple[int, ...]
    _offset: int
    _dtype: np.dtype[Any]
    _device: GpuDevice

    @classmethod
    def _new(
        cls,
        storage: Storage | None,
        shape: tuple[int, ...],
        dtype: np.dtype[Any],
        device: GpuDevice,
        strides: tuple[int, ...] | None = None,
        offset: int = 0,
    ) -> Array:
        """An array over ``storage`` (None only for :func:`pending_array`, which sets its node)."""
        self = object.__new__(cls)
        self._store = storage
        self._node = None
        self._leaf = None
        self._leaf_id = 0
        self._shape = tuple(shape)
        self._strides = c_strides(shape) if strides is None else tuple(strides)
        self._offset = offset
        self._dtype = dtype
        self._device = device
        return self

    @property
    def _storage(self) -> Storage:
        """The buffer holding the data; a pending operation runs (is recorded) first."""
        store = self._store
        if store is None:
            assert self._node is not None
            store = self._store = self._node.run()
            self._node = None
        return store

    # -- attributes --------------------------------------------------------------------------
    @property
    def T(self) -> Array:  # noqa: N802  (the spec's name)
        """Reversed axes; the spec defines it for 2-D arrays only."""
        if self.ndim != 2:
            raise ValueError(f"x.T needs a 2-D array, got {self.ndim}-D; use permute_dims or x.mT")
        return self._view(self._shape[::-1], self._strides[::-1], self._offset)

    @property
    def mT(self) -> Array:  # noqa: N802  (the spec's name)
        """Transpose of the last two axes (a view)."""
        if self.ndim < 2:
            raise ValueError(f"x.mT needs at least 2 dimensions, got {self.ndim}")
        shp, st = list(self._shape), list(self._strides)
        shp[-1], shp[-2], st[-1], st[-2] = shp[-2], shp[-1], st[-2], st[-1]
        return self._view(tuple(shp), tuple(st), self._offset)

    def to_device(self, device: Any, /, *, stream: Any = None) -> Array:
        """Copy to another ruda_wgpu device (through the host); the same device returns ``self``."""
        if stream is not None:
            raise ValueError("ruda_wgpu has no streams: pass stream=None")
        target = resolve_device(device)
        if target is self._device:
            return self
        return from_numpy(to_numpy(self), self._dtype, target)

    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
        spec.check_api_version(api_version, "ruda_wgpu")
        import ruda_wgpu

        return ruda_wgpu

    # -- internals -----------------------------------------------------------------------------
    def _view(self, shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> Array:
        return Array._new(self._storage, shape, self._dtype, self._device, strides, offset)

    def _operand(self) -> Operand:
        """This array as a kernel operand (its data computed first), made once: a loop reads the
        same arrays again and again."""
        leaf = self._leaf
        if leaf is None:
            leaf = self._leaf = Operand(self._storage, self._offset, self._strides, self._dtype)
        return leaf

    def _is_contiguous(self) -> bool:
        full = c_strides(self._shape)
        if self._strides == full:  # most arrays: checked before the element-by-element test
            return True
        return all(s == c or n == 1 for n, s, c in zip(self._shape, self._strides, full, strict=True))

    def __repr__(self) -> str:
        body = np.array2string(to_numpy(self), separator=", ", prefix="Array(")
        # (as NumPy: an empty array's [] alone hides its shape)
        shape = f", shape={self._shape}" if self.size == 0 and self.ndim > 1 else ""
        return f"Array({body}{shape}, dtype={self._dtype.name}, device='{self._device}')"

    # -- conversions (HostCopyExport's, over this host copy) -----------------------------------
    def _host_copy(self) -> np.ndarray[Any, Any]:
        return to_numpy(self)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickle as a host copy and the device's name, uploaded again on unpickling, so that
        process and cluster executors (Cubed, Dask) can move arrays between processes."""
        return (_unpickle, (to_numpy(self), self._dtype.name, self._device.name))

    # -- indexing ------------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Array:
        from ruda_wgpu._indexing import getitem  # _indexing builds on this module

        return getitem(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        from ruda_wgpu._indexing import setitem  # _indexing builds on this module

        setitem(self, key, value)


def _unpickle(host: np.ndarray[Any, Any], dtype: str, device: str) -> Array:
    """A pickled array back on the device of that name, or on this machine's default device
    when it has none of that name (another machine, fewer adapters)."""
    try:
        target = resolve_device(device)
    except ValueError:
        target = default_device()
    return from_numpy(host, np.dtype(dtype), target)


def from_numpy(host: np.ndarray[Any, Any], dtype: np.dtype[Any], device: GpuDevice) -> Array:
    """Upload a host array as ``dtype`` (converted to the stored word type) to ``device``."""
    device.check_dtype(dtype)
    host = np.asarray(host)
    if host.dtype.kind == "f" and dtype.kind in "iu":  # (NaN and beyond the range: as astype)
        host = _dtypes.floats_to_integers(host, dtype)
    words = np.asarray(
        host.astype(dtype, copy=False).astype(_dtypes.STORAGE_NP[dtype.name], copy=False), order="C"
    )
    storage = Storage(device, max(words.nbytes, 4))
    if CAPTURE.log is not None:
        CAPTURE.log.unrepeatable()  # (a replay would not upload it)
    device.write(storage.buffer, 0, words.reshape(-1).view(np.uint8).data)
    if words.nbytes <= HOST_CACHE_BYTES:
        storage.host = words.reshape(-1).copy()  # what the buffer now holds: reads need no transfer
    return Array._new(storage, words.shape, dtype, device)


def empty(shape: tuple[int, ...], dtype: np.dtype[Any], device: GpuDevice) -> Array:
    """A contiguous array with unspecified contents from the pool."""
    device.check_dtype(dtype)
    nbytes = math.prod(shape) * storage_itemsize(dtype)
    return Array._new(Storage(device, max(nbytes, 4)), shape, dtype, device)


def contiguous(x: Array) -> Array:
    """``x`` itself when row-major contiguous, else a contiguous copy."""
    if x._is_contiguous():
        return x
    out = empty(x.shape, x.dtype, x.device)
    launch_elementwise(x.device, "copy", "x0", "", out._operand(), [x._operand()], x.shape)
    return out


#: small buffers are read back whole and kept on the host until written again, so reading many
#: single elements (``float(x[i])`` in a loop) costs one transfer, not one per element
HOST_CACHE_BYTES = 1 << 20


def pending_array(
    node: Node,
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
    device: GpuDevice,
    strides: tuple[int, ...] | None,
) -> Array:
    """An array whose data is the result of ``node``, a pending elementwise operation of
    ``shape`` and ``dtype`` (see _fusion); ``strides``, when given, are the shape's contiguous
    strides (an operand's, known)."""
    # every elementwise operation makes one: a plain function setting the slots directly (a
    # class method reading the node's properties cost the 8-operation chain 0.9 of its 14 us)
    x = object.__new__(Array)
    x._store, x._node, x._leaf, x._leaf_id = None, node, None, 0
    x._shape, x._dtype, x._device, x._offset = shape, dtype, device, 0
    x._strides = c_strides(shape) if strides is None else strides
    return x


def to_numpy(x: Array) -> np.ndarray[Any, Any]:
    """Read an array back to the host as a NumPy array of its dtype."""
    st = x._storage
    x.device.host_reads += 1
    if CAPTURE.log is not None:
        CAPTURE.log.unrepeatable()  # (a replay would not read)
    if st.host is None and st.nbytes <= HOST_CACHE_BYTES and x.size:
        st.host = np.frombuffer(
            x.device.read(st.buffer, 0, st.nbytes), dtype=_dtypes.STORAGE_NP[x.dtype.name]
        )
    if st.host is not None:
        if x.device.checks:  # errors kernels may have flagged come back with any read
            x.device.raise_checks()
        isz = st.host.itemsize
        view = np.lib.stride_tricks.as_strided(
            st.host[x._offset :], shape=x.shape, strides=[s * isz for s in x._strides], writeable=False
        )
        return view.astype(x.dtype)
    x = contiguous(x)
    isz = storage_itemsize(x.dtype)
    raw = x.device.read(x._storage.buffer, x._offset * isz, x.size * isz)
    words = np.frombuffer(raw, dtype=_dtypes.STORAGE_NP[x.dtype.name]).reshape(x.shape)
    return words.astype(x.dtype, copy=False)  # (the read's memory is the array's own, writable)


def check_writable(x: Array) -> None:
    """Raise for a write into ``x`` when it is a broadcast view (a stride 0 along an axis longer
    than one): its elements share memory, and threads writing them race, as NumPy's views of
    ``broadcast_to`` are read-only."""
    if any(s == 0 and n > 1 for s, n in zip(x._strides, x._shape, strict=True)):
        raise ValueError(
            f"cannot write into a broadcast view of shape {x._shape}: its elements share memory "
            "(copy it first, with asarray(x, copy=True))"
        )


def assign(target: Array, value: Any) -> None:
    """Write ``value`` (an array broadcastable to ``target`` or a Python scalar) into the view ``target``."""
    check_writable(target)
    if isinstance(value, Array):
        if value.device is not target.device:
            raise ValueError(
                f"cannot assign an array on {value.device} into one on {target.device}: "
                "move it first with to_device()"
            )
        if value._storage is target._storage:
            value = copy_of(value)
        from ruda_wgpu._manipulation import broadcast_to

        src: Operand | Scalar = broadcast_to(value, target.shape)._operand()
        body = convert("x0", value.dtype, target.dtype)
    elif isinstance(value, bool | int | float | complex):
        _dtypes.check_scalar_kind(value, target.dtype)
        check_scalar_range(value, target.dtype)
        src, body = Scalar(value, target.dtype), "x0"
    else:
        raise TypeError(
            f"cannot assign a {type(value).__name__} into a ruda_wgpu array: use an array or a Python scalar"
        )
    launch_elementwise(target.device, ("assign", body), body, "", target._operand(), [src], target.shape)


def copy_of(x: Array) -> Array:
    """A new contiguous copy of ``x``."""
    out = empty(x.shape, x.dtype, x.device)
    launch_elementwise(x.device, "copy", "x0", "", out._operand(), [x._operand()], x.shape)
    return out


def check_scalar_range(value: Any, dtype: np.dtype[Any]) -> None:
    """Raise OverflowError when a Python int does not fit ``dtype``."""
    if not int_fits(value, dtype):
        raise OverflowError(f"Python int {value} is out of bounds for {dtype.name}")


def int_fits(value: Any, dtype: np.dtype[Any]) -> bool:
    """Whether ``value`` is anything but a Python int beyond the range of the integer ``dtype``."""
    if not isinstance(value, int) or isinstance(value, bool) or dtype.kind not in "iu":
        return True
    low, high = int_range(dtype)
    return low <= value <= high


@functools.cache
def int_range(dtype: np.dtype[Any]) -> tuple[int, int]:
    """The smallest and largest value of the integer ``dtype`` (``np.iinfo`` made anew costs a
    scalar operation a microsecond or two)."""
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)
