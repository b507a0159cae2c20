"""What the array classes ruda's packages own (ruda_wgpu's, ruda_remote's, ruda_router's) share,
written once: attributes, host-copy export and scalar conversions, the construction guard."""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar

import numpy as np

DeviceT = TypeVar("DeviceT")


def _package(array: object) -> str:
    """The package of ``array``'s class (``ruda_wgpu``), as errors name it."""
    return type(array).__module__.partition(".")[0]


class MadeByNamespace:
    """Refuses ``Array(...)``: a namespace's functions make its arrays (through the class's own
    constructor, which skips ``__init__``), and the error says which to call (``_made_with``)."""

    __slots__ = ()
    _made_with: ClassVar[str]

    def __init__(self, *args: object, **kwargs: object) -> None:
        name = f"{_package(self)}.{type(self).__name__}"
        raise TypeError(f"{name} is not called directly: make arrays with {self._made_with}")


class ArrayAttributes(Generic[DeviceT]):
    """The standard's ``dtype``, ``device``, ``shape``, ``ndim`` and ``size`` of an array class
    that keeps its dtype in ``_dtype``, its device in ``_device`` and its shape in ``_shape``,
    every dimension known."""

    __slots__ = ()
    _dtype: np.dtype[Any]
    _device: DeviceT
    _shape: tuple[int, ...]

    @property
    def dtype(self) -> np.dtype[Any]:
        """The element dtype (a NumPy dtype object, compared with the namespace's ``float32`` etc.)."""
        return self._dtype

    @property
    def device(self) -> DeviceT:
        """The device holding the data (the namespace's own device object)."""
        return self._device

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


class DLPackExport:
    """The standard's ``__dlpack__`` signature, written once for the array classes we own: each
    does its export in ``_export_dlpack``, which receives every keyword (None where not given)."""

    __slots__ = ()

    def __dlpack__(
        self,
        /,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[Any, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        """Export through DLPack: a capsule for ``from_dlpack`` of any library (``stream``,
        ``max_version``, ``dl_device`` and ``copy`` as the standard defines them)."""
        return self._export_dlpack(stream, max_version, dl_device, copy)

    def _export_dlpack(
        self, stream: Any, max_version: tuple[int, int] | None, dl_device: Any, copy: bool | None
    ) -> Any:
        raise NotImplementedError(f"{type(self).__name__} defines no DLPack export")


class HostCopyExport(DLPackExport):
    """DLPack, NumPy and Python-scalar export of an array class whose memory Python cannot reach
    in place (GPU memory that WebGPU does not share, values on another machine): every export is
    a host copy, made by the class's ``_host_copy()``, a NumPy array that nothing else holds, so
    that a consumer may write into it. ``_held_in`` says where the data lives, for the errors.

    ``bool()`` takes an array of one element, of any rank; ``int()``, ``float()`` and
    ``complex()`` a 0-D array only, as the standard defines them and NumPy (2.4 on) takes them;
    ``operator.index()`` a 0-D integer array only (as NumPy)."""

    __slots__ = ()
    _held_in: ClassVar[str]
    _dtype: np.dtype[Any]
    _shape: tuple[int, ...]

    def _host_copy(self) -> np.ndarray[Any, Any]:
        """The values as a new host array of the array's dtype and shape."""
        raise NotImplementedError(f"{type(self).__name__} defines no host copy")

    def _what(self) -> str:
        return f"a {_package(self)} array"

    def _export_dlpack(
        self, stream: Any, max_version: tuple[int, int] | None, dl_device: Any, copy: bool | None
    ) -> Any:
        """DLPack export of a host copy (DLPack device ``(1, 0)``). ``copy=False`` and another
        ``dl_device`` raise ``BufferError``; a ``stream`` raises ``ValueError``, as the standard
        accepts only None for a device without streams."""
        if copy is False:
            raise BufferError(
                f"{self._what()} lives in {self._held_in}: DLPack can export only a host copy "
                "(copy=None or True)"
            )
        if dl_device is not None and tuple(dl_device) != (1, 0):
            raise BufferError(
                f"{self._what()} exports through DLPack as a host copy, device (1, 0), not {dl_device}"
            )
        if stream is not None:
            raise ValueError(f"a host copy has no stream to order: pass stream=None, not {stream!r}")
        host = self._host_copy()
        if max_version is None:
            return host.__dlpack__()
        return _marked_copied(host.__dlpack__(max_version=max_version))

    def __dlpack_device__(self) -> tuple[int, int]:
        """``(1, 0)``: the DLPack export is a host (CPU) copy."""
        return (1, 0)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray[Any, Any]:
        """A NumPy copy of the values (``np.asarray(x)``); ``copy=False`` raises ``ValueError``."""
        if copy is False:
            raise ValueError(
                f"{self._what()} lives in {self._held_in}: NumPy can have it only as a copy "
                "(copy=None or True)"
            )
        host = self._host_copy()
        return host if dtype is None else host.astype(dtype, copy=False)

    def _scalar(self, kind: str) -> Any:
        """The element of a 0-D array as a Python scalar, for a conversion to ``kind`` ("int",
        "float", "complex" or "index"). The standard defines these for 0-D arrays only, and NumPy
        (2.4 on) refuses the rest: ``float(x[i:i+1])`` is a TypeError on every backend, not only
        on the host."""
        if self._shape:
            raise TypeError(
                f"only a 0-D array converts to a Python {kind}, not an array of shape {self._shape}"
            )
        return self._host_copy().reshape(()).item()

    def __bool__(self) -> bool:
        """The truth of a one-element array of any rank, as NumPy's; more or fewer elements are
        ambiguous (``ValueError``, as NumPy raises: use ``any`` or ``all``)."""
        size = math.prod(self._shape)
        if size != 1:
            raise ValueError(
                f"the truth value of an array of shape {self._shape} is ambiguous: "
                + ("it is empty (test its size)" if size == 0 else "use any() or all()")
            )
        return bool(self._host_copy().reshape(()).item())

    def __int__(self) -> int:
        value = self._scalar("int")
        if isinstance(value, float) and not math.isfinite(value):
            raise (OverflowError if math.isinf(value) else ValueError)(f"cannot convert {value} to int")
        return int(value)

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    def __format__(self, spec: str) -> str:
        """``f"{x:.3f}"``: a 0-D array formats as its scalar, as NumPy's does (SciPy's integrators
        format their results so); other arrays only with an empty format (their ``str``)."""
        return str(self) if not spec else format(self._host_copy(), spec)

    def __index__(self) -> int:
        if self._dtype.kind not in "iu":
            raise TypeError(f"only integer arrays can be used as an index, not {self._dtype.name}")
        return int(self._scalar("index"))


def python_scalar(value: Any) -> Any:
    """NumPy scalars (``np.float32(2)``) as the Python scalars the standard's rules are written for;
    anything else as it is."""
    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        return value.item()
    return value


def python_number(value: Any, array_type: type[Any]) -> Any:
    """``value`` as the Python number a function takes (``arange``'s bounds): NumPy scalars, and
    0-D integer or real arrays of ``array_type`` read back for their value, as NumPy takes them;
    anything else as it is."""
    if isinstance(value, array_type) and value.ndim == 0 and value.dtype.kind in "iuf":
        return int(value) if value.dtype.kind in "iu" else float(value)
    return python_scalar(value)


class _Movable(Protocol):
    """What :func:`asarray_own` needs of an array: its dtype and device, and ``to_device``."""

    @property
    def dtype(self) -> np.dtype[Any]: ...

    @property
    def device(self) -> Any: ...

    def to_device(self, device: Any, /, *, stream: Any = None) -> Self: ...


MovableT = TypeVar("MovableT", bound=_Movable)


def asarray_own(
    x: MovableT,
    dtype: np.dtype[Any] | None,
    device: Any,
    copy: bool | None,
    astype: Callable[[MovableT, np.dtype[Any]], MovableT],
) -> MovableT:
    """The standard's ``asarray(x, dtype=dtype, device=device, copy=copy)`` where ``x`` is already
    an array of the namespace (``device`` resolved to one of its devices): ``x`` itself where it
    is on ``device`` with ``dtype`` and no copy is asked for; else moved with ``to_device``, and
    converted or copied with the namespace's ``astype``. Moving is a copy already, so a moved
    array is not copied again. ``copy=False`` where a copy is needed raises ``ValueError``."""
    moved = device is not x.device
    if moved:
        if copy is False:
            raise ValueError(
                f"asarray(copy=False) is impossible: moving the array from {x.device} to {device} "
                "needs a copy; pass copy=None"
            )
        x = x.to_device(device)
    if dtype is not None and dtype != x.dtype:
        if copy is False:
            raise ValueError(
                f"asarray(copy=False) is impossible: converting {x.dtype} to {dtype} needs a copy; "
                "pass copy=None"
            )
        return astype(x, dtype)
    return astype(x, x.dtype) if copy and not moved else x


#: in a ``DLManagedTensorVersioned``: its version (two uint32), manager context and deleter
#: (pointers), then its uint64 flags, of which bit 1 is ``DLPACK_FLAG_BITMASK_IS_COPIED``
_DLPACK_FLAGS_OFFSET = 8 + 2 * ctypes.sizeof(ctypes.c_void_p)
_DLPACK_IS_COPIED = 1 << 1


def _marked_copied(capsule: Any) -> Any:
    """``capsule``, a versioned DLPack capsule of a host copy, with its IS_COPIED flag set, as the
    standard asks of an export that copies. NumPy sets it only when it copies itself, and
    ``copy=True`` would copy the copy again; no library sets a flag of a capsule it did not
    make, hence ctypes. An unversioned capsule (DLPack 0.x) has no flags."""
    name = ctypes.pythonapi.PyCapsule_GetName
    name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    if name(capsule) != b"dltensor_versioned":
        return capsule
    flags = dlpack_flags(capsule)
    flags.value |= _DLPACK_IS_COPIED
    return capsule


def dlpack_flags(capsule: Any) -> ctypes.c_uint64:
    """The flags word of a versioned DLPack capsule (``dltensor_versioned``), in place."""
    pointer = ctypes.pythonapi.PyCapsule_GetPointer
    pointer.restype, pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return ctypes.c_uint64.from_address(pointer(capsule, b"dltensor_versioned") + _DLPACK_FLAGS_OFFSET)
