"""``Router((ns1, ns2, ...))``: one Array API namespace over two to four backends.

Every function of the standard is a dispatcher: it finds the backend that
holds its array inputs (or the one named by ``device=``, or the first),
translates router arrays, dtypes and devices to that backend's own, calls the
backend's function, and wraps what comes back. Two inputs held by different
backends raise :class:`DeviceMismatchError`; data moves only through
:meth:`Router.to_device`, and through the opt-in ``fallback=`` device (see
:mod:`ruda_router._fallback`).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import numpy as np
import ruda
from array_api_compat import is_array_api_obj
from array_api_compat import to_device as _to_device_within
from ruda import spec
from ruda.spec import finfo_object, iinfo_object

from ruda_router import duo, quad, trio
from ruda_router._array import Array
from ruda_router._devices import MultiDeviceBase
from ruda_router._dtypes import DTYPES, DType, isdtype
from ruda_router._fallback import Fallback
from ruda_router._info import RouterInfo
from ruda_router._transfer import migrate

_ENUMS: dict[int, type[MultiDeviceBase]] = {2: duo.MultiDevice, 3: trio.MultiDevice, 4: quad.MultiDevice}
# Arguments passed to a backend untouched.
_PLAIN = frozenset({bool, int, float, complex, str, type(None), slice, type(Ellipsis)})
_LIKE = ("empty_like", "ones_like", "zeros_like", "full_like")
# Functions whose first argument may be an object of another library (that is their job).
_IMPORTERS = ("asarray", "from_dlpack")
#: functions whose device= names where the result goes: onto another backend, an explicit move
_MOVERS = ("asarray", "astype", "from_dlpack")


class DeviceMismatchError(ValueError):
    """Arrays held by two different backends (or devices) met in one call."""


class Router:
    """An Array API namespace (2025.12) over 2 to 4 backend namespaces.

    ``Router((ruda.host, ruda.torch))``: each backend is a namespace value or a
    registered backend name (``"torch"``), resolved with ``ruda.namespace``.
    Devices are ``duo.MultiDevice.B1(device_of_backend_1)``, ``.B2(...)``
    (``trio``/``quad`` for three and four backends; also ``xp.MultiDevice``).
    Arrays are made on the first backend's default device unless ``device=``
    names another; operations run where their inputs are; ``xp.to_device``
    (or ``x.to_device``) moves data between backends, and nothing else does.
    ``name`` is what ``repr`` and error messages call the router.

    ``fallback`` (off by default) is a device of this router that runs what the
    holding backend cannot: a function it lacks or that raises
    ``NotImplementedError``, or a dtype its device's ``dtypes()`` does not list.
    Inputs move there and results move back, and each such operation is logged
    once at WARNING on the ``ruda_router`` logger. Without it those errors
    propagate unchanged.
    """

    __array_api_version__ = spec.API_VERSION

    def __init__(
        self,
        backends: Sequence[ModuleType | str | Any],
        /,
        *,
        name: str | None = None,
        fallback: MultiDeviceBase | None = None,
    ) -> None:
        if isinstance(backends, (str, bytes)) or not isinstance(backends, Sequence):
            raise TypeError("Router takes a tuple of 2 to 4 backends, e.g. Router((ruda.host, ruda.torch))")
        if not 2 <= len(backends) <= 4:
            raise ValueError(f"a Router combines 2 to 4 backends (duo, trio, quad), got {len(backends)}")
        self._namespaces: tuple[Any, ...] = tuple(_resolve(b, i) for i, b in enumerate(backends))
        self._labels = tuple(getattr(ns, "__name__", type(ns).__name__) for ns in self._namespaces)
        self.MultiDevice = _ENUMS[len(self._namespaces)]
        # what repr and error messages call this router
        self.__name__ = name or f"Router(({', '.join(self._labels)}))"
        self._to_inner: tuple[dict[DType, Any], ...] = tuple(
            {dt: getattr(ns, name) for name, dt in DTYPES.items() if hasattr(ns, name)}
            for ns in self._namespaces
        )
        self._from_inner: tuple[dict[Any, DType], ...] = tuple({} for _ in self._namespaces)
        self._array_types: tuple[set[type], ...] = tuple(set() for _ in self._namespaces)
        self._impls: dict[str, tuple[Callable[..., Any] | None, ...]] = {}
        self._fallback: Fallback | None = None
        for name, dtype in DTYPES.items():
            setattr(self, name, dtype)
        self.e, self.inf, self.nan, self.pi, self.newaxis = math.e, math.inf, math.nan, math.pi, None
        self._install(self, "", spec.FUNCTIONS, self._namespaces)
        for extension, names in (("linalg", spec.LINALG), ("fft", spec.FFT)):
            if all(hasattr(ns, extension) for ns in self._namespaces):
                sub = Extension(f"{self.__name__}.{extension}")
                inner = tuple(getattr(ns, extension) for ns in self._namespaces)
                self._install(sub, f"{extension}.", names, inner)
                setattr(self, extension, sub)
        if fallback is not None:
            self._fallback = Fallback(self, fallback)

    def __repr__(self) -> str:
        return self.__name__

    # -- building the namespace ------------------------------------------------------------------
    def _install(self, target: Any, prefix: str, names: Sequence[str], namespaces: Sequence[Any]) -> None:
        """Put one dispatcher per function name on ``target`` (when some backend has it)."""
        special = {
            "finfo": self.finfo,
            "iinfo": self.iinfo,
            "isdtype": isdtype,
            "result_type": self.result_type,
            "can_cast": self.can_cast,
        }
        for name in names:
            impls = tuple(getattr(ns, name, None) for ns in namespaces)
            if all(impl is None for impl in impls):
                continue
            qualname = prefix + name
            self._impls[qualname] = impls
            if not prefix and name in special:
                setattr(target, name, special[name])  # results carry the router's dtypes
                continue
            function = self._dispatcher(qualname, impls, foreign_ok=name in _IMPORTERS)
            if not prefix and name in _LIKE:
                function = self._like(name, function)
            if not prefix and name in _MOVERS:
                function = self._mover(name, function)
            signature = _signature(impls)
            if signature is not None:  # the backend's own: what it accepts is what the router passes on
                function.__signature__ = signature  # type: ignore[attr-defined]
            setattr(target, name, function)

    def _dispatcher(
        self, name: str, impls: tuple[Callable[..., Any] | None, ...], foreign_ok: bool = False
    ) -> Callable[..., Any]:
        place, inner, wrap = self._place, self._inner, self._wrap

        def call(index: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            impl = impls[index]
            if impl is None:
                raise self._missing(name, index)
            # the common arguments (router arrays, scalars) inline: this is the per-call cost
            own_args = tuple(
                [
                    a._inner
                    if type(a) is Array
                    else a
                    if type(a) in _PLAIN
                    else inner(a, index, name, foreign_ok)
                    for a in args
                ]
            )
            if kwargs:
                kwargs = {k: inner(v, index, name, foreign_ok) for k, v in kwargs.items()}
            result = wrap(impl(*own_args, **kwargs), index)
            if foreign_ok and type(result) is Array:
                self._check_imported(name, result)
            return result

        if foreign_ok:
            place = self._place_import

        def function(*args: Any, **kwargs: Any) -> Any:
            index = place(name, args, kwargs)
            fallback = self._fallback
            if fallback is None:
                return call(index, args, kwargs)
            holding = self._holding(index, args, kwargs)
            reason = fallback.reason(name, impls[index] is not None, holding, args, kwargs)
            if reason is None:
                try:
                    return call(index, args, kwargs)
                except NotImplementedError as err:
                    if holding == fallback.device:
                        raise
                    reason = f"it raised NotImplementedError: {err}"
            elsewhere = functools.partial(call, fallback.device.index)
            return fallback.run(name, holding, reason, elsewhere, _takes_device(function), args, kwargs)

        function.__name__ = name.rpartition(".")[2]
        function.__qualname__ = f"Router.{name}"
        function.__doc__ = f"The Array API's ``{name}``, run by the backend that holds the inputs."
        return function

    def _like(self, name: str, same_backend: Callable[..., Any]) -> Callable[..., Any]:
        """``zeros_like(x, device=...)`` onto another backend creates there from ``x``'s shape
        and dtype: no data of ``x`` is needed, so nothing moves."""
        base = name.removesuffix("_like")

        def like(x: Array, /, *args: Any, **kwargs: Any) -> Any:
            device = kwargs.get("device")
            if (
                device is not None
                and type(x) is Array
                and x._router is self
                and self._device_index(device, name) != x._index
            ):
                kwargs["dtype"] = kwargs.get("dtype") or x.dtype
                return getattr(self, base)(x.shape, *args, **kwargs)
            return same_backend(x, *args, **kwargs)

        like.__name__ = name
        like.__qualname__ = f"Router.{name}"
        like.__doc__ = same_backend.__doc__
        return like

    def _mover(self, name: str, same_backend: Callable[..., Any]) -> Callable[..., Any]:
        """``asarray``, ``astype`` and ``from_dlpack`` with ``device=`` another backend's device are
        explicit moves, as the standard has them: a router array goes there the way ``to_device``
        takes it (a copy unless DLPack shares the memory; always a copy with ``copy=True``, which
        is ``astype``'s default), then the backend's own function runs there. Where the target
        lacks the array's dtype and another is asked for, the array is cast where it is first
        (float64 to float32 for an OpenGL adapter). ``copy=False`` refuses, since a move between
        backends is a copy (``asarray``: ValueError, as the standard asks; ``from_dlpack``:
        BufferError). Arrays of one backend and other objects go to the backend's function as
        they are."""
        refusal = BufferError if name == "from_dlpack" else ValueError

        def move(x: Any, /, *args: Any, **kwargs: Any) -> Any:
            device = kwargs.get("device")
            if (
                device is not None
                and type(x) is Array
                and x._router is self
                and self._device_index(device, name) != x._index
            ):
                if kwargs.get("copy") is False:
                    raise refusal(
                        f"{name}(copy=False) cannot bring an array of {x.device!r} to {device!r}: "
                        "that is a copy between backends"
                    )
                index = device.index
                copy = kwargs.get("copy", name == "astype") is True
                dtype = (
                    (args[0] if args else kwargs.get("dtype")) if name == "astype" else kwargs.get("dtype")
                )
                if dtype is not None and dtype != x.dtype and x.dtype not in self._dtypes_of(device):
                    inner = self._dtype_in(dtype, x._index)
                    x, copy = self._apply("astype", x._index, x._inner, inner), False  # (new: may be shared)
                x = self._wrap(migrate(x._inner, self._namespaces[index], device.device, copy=copy), index)
                if name == "from_dlpack":
                    return x
                # the move made a copy: no second one (astype's copy=False still converts)
                kwargs["copy"] = False if name == "astype" else None
            return same_backend(x, *args, **kwargs)

        move.__name__ = name
        move.__qualname__ = f"Router.{name}"
        move.__doc__ = same_backend.__doc__
        return move

    # -- placing a call ----------------------------------------------------------------------------
    def _place(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
        """The backend position that runs ``name``: where the array inputs are (all on one),
        else the position of ``device=``, else the first backend."""
        holder: Array | None = None
        for a in args:
            t = type(a)
            if t is Array:
                if a._router is self and holder is None:
                    holder = a
                elif a._router is not self or holder._index != a._index:  # type: ignore[union-attr]
                    self._join(name, holder, a)  # raises, naming both devices
            elif t is tuple or t is list:
                for b in a:
                    if type(b) is Array:
                        holder = self._join(name, holder, b)
        if kwargs:
            for v in kwargs.values():
                if type(v) is Array:
                    holder = self._join(name, holder, v)
            device = kwargs.get("device")
            if device is not None:
                index = self._device_index(device, name)
                if holder is not None and index != holder._index:
                    raise DeviceMismatchError(
                        f"{name}: device={device!r} ({self._labels[index]}) but the input is on "
                        f"{holder.device!r} ({self._labels[holder._index]}); a router never moves data "
                        f"implicitly: move it first with x.to_device({device!r})"
                    )
                return index
        return 0 if holder is None else holder._index

    def _place_import(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
        """Where ``asarray`` and ``from_dlpack`` run: as :meth:`_place` says, except that an array
        of one of the router's backends, given without ``device=``, stays with that backend, as
        the standard has ``asarray`` infer the device from an array (not a copy through the
        first backend: ``xp.asarray(wgpu_array)`` on a host+wgpu router is the wgpu array)."""
        index = self._place(name, args, kwargs)
        if not args or kwargs.get("device") is not None or type(args[0]) is Array:
            return index
        owner = self._owner(args[0])
        return index if owner is None else owner

    def _owner(self, obj: Any) -> int | None:
        """The position of the backend whose own arrays include ``obj``, on one of its devices
        (the first such; None when no backend's arrays are of ``obj``'s type)."""
        kind = type(obj)
        if kind in _PLAIN or kind is list or kind is tuple or not self._is_array_like(obj):
            return None
        first = None
        for index, namespace in enumerate(self._namespaces):
            if kind not in self._native_types(index):
                continue
            with contextlib.suppress(Exception):  # a device the namespace cannot compare: not its own
                if obj.device in namespace.__array_namespace_info__().devices():
                    return index
            first = index if first is None else first
        return first

    def _native_types(self, index: int) -> set[type]:
        """The array types backend ``index`` makes (found once, by making an empty array)."""
        types = self._array_types[index]
        if not types:
            types.add(type(self._namespaces[index].empty(0)))
        return types

    def _holding(self, index: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> MultiDeviceBase:
        """The device of a call placed on backend ``index``: its first array input's, else
        ``device=``, else that backend's default device."""
        for value in (*args, *kwargs.values()):
            for item in value if type(value) is tuple or type(value) is list else (value,):
                if type(item) is Array:
                    return item.device
        device = kwargs.get("device")
        if device is not None:
            return device  # type: ignore[no-any-return]
        default = self._namespaces[index].__array_namespace_info__().default_device()
        return self.MultiDevice.variants[index](default)

    def _join(self, name: str, holder: Array | None, a: Array) -> Array:
        if a._router is not self:
            raise TypeError(
                f"{name}: an array of {a._router!r} was passed to {self!r}; arrays belong to the "
                "router that made them: export it with from_dlpack, or build one router for both"
            )
        if holder is None:
            return a
        if holder._index == a._index:
            return holder
        raise DeviceMismatchError(
            f"{name}: inputs on two devices, {holder.device!r} ({self._labels[holder._index]}) and "
            f"{a.device!r} ({self._labels[a._index]}); a router never moves data implicitly: "
            f"move one first, e.g. x.to_device({holder.device!r})"
        )

    def _dtypes_of(self, device: MultiDeviceBase) -> tuple[DType, ...]:
        """The router dtypes ``device`` supports."""
        return tuple(self.__array_namespace_info__().dtypes(device=device).values())

    def _device_index(self, device: Any, name: str) -> int:
        if type(device) in self.MultiDevice.variants:
            return device.index  # type: ignore[no-any-return]
        example = self.MultiDevice.variants[0](self.__array_namespace_info__()._inner[0].default_device())
        raise TypeError(
            f"{name}: device must be a device of this router (a {self.MultiDevice.__module__}.MultiDevice "
            f"variant, e.g. {example!r}), not {device!r}"
        )

    def _inner(self, obj: Any, index: int, name: str, foreign_ok: bool = False) -> Any:
        """``obj`` with router arrays, dtypes and devices replaced by the backend's own."""
        t = type(obj)
        if t in _PLAIN:
            return obj
        if t is Array:
            if obj._router is not self or obj._index != index:  # nested deeper than _place looks
                self._join(name, None, obj)
                raise DeviceMismatchError(
                    f"{name}: an input on {obj.device!r} ({self._labels[obj._index]}) among inputs of "
                    f"backend {index + 1} ({self._labels[index]}); a router never moves data implicitly: "
                    "move it first with x.to_device(...)"
                )
            return obj._inner
        if t is DType:
            return self._dtype_in(obj, index)
        if t is tuple or t is list:
            return t([self._inner(o, index, name, foreign_ok) for o in obj])
        if isinstance(obj, MultiDeviceBase):
            return obj.device
        if isinstance(obj, (int, float, complex)):
            return obj
        if isinstance(obj, np.generic) and obj.dtype.kind in "biufc":
            # an operand: the Python scalar the standard's rules are for; data to import
            # (asarray, from_dlpack) keeps its dtype, as NumPy's asarray keeps it
            return obj if foreign_ok else obj.item()
        if not foreign_ok and self._is_array_like(obj):
            raise TypeError(self._foreign_message(name, obj))
        return obj

    def _wrap(self, result: Any, index: int) -> Any:
        t = type(result)
        if t in self._array_types[index]:
            return Array._new(result, index, self)
        if t in _PLAIN:
            return result
        if t is tuple or t is list:
            return t([self._wrap(r, index) for r in result])
        if isinstance(result, tuple):  # named results (eigh, svd, unique_all, ...), field names kept
            items = [self._wrap(r, index) for r in result]
            # a namedtuple has _make; a C struct sequence (torch.return_types) takes one sequence
            return t._make(items) if hasattr(t, "_make") else t(items)
        if isinstance(result, np.generic):  # NumPy returns scalars where the standard says 0-d array
            return Array._new(np.asarray(result), index, self)
        if is_array_api_obj(result):
            self._array_types[index].add(t)
            return Array._new(result, index, self)
        return result

    def _apply(self, name: str, index: int, *args: Any) -> Array:
        """Run backend ``index``'s ``name`` on its own objects and wrap the result (operators)."""
        if self._fallback is not None:  # the namespace's function decides whether to fall back
            fallible: Array = getattr(self, name)(*[self._wrap(a, index) for a in args])
            return fallible
        impl = self._impls[name][index]
        if impl is None:
            raise self._missing(name, index)
        result: Array = self._wrap(impl(*args), index)
        return result

    def _operand(self, value: Any, holder: Array, name: str) -> Any:
        """The backend's own form of an operator's other operand, checked against ``holder``."""
        if type(value) is Array:
            self._join(name, holder, value)
            return value._inner
        return self._inner(value, holder._index, name)

    def _index_key(self, key: Any, holder: Array, function: str = "__getitem__") -> Any:
        """An indexing key with router arrays (masks, integer arrays) on ``holder``'s backend;
        ``function`` is what an error names (``__setitem__`` for an assignment)."""
        if type(key) is Array:
            return self._operand(key, holder, function)
        if type(key) is tuple:
            return tuple(self._operand(k, holder, function) if type(k) is Array else k for k in key)
        return key

    # -- dtypes ----------------------------------------------------------------------------------
    def _dtype_in(self, dtype: DType, index: int) -> Any:
        try:
            return self._to_inner[index][dtype]
        except KeyError:
            raise TypeError(
                f"{dtype.name} is not a dtype of backend {index + 1} ({self._labels[index]}) of this router"
            ) from None

    def _dtype_out(self, inner: Any, index: int) -> DType:
        table = self._from_inner[index]
        try:
            return table[inner]
        except (KeyError, TypeError):
            pass
        for dtype, own in self._to_inner[index].items():
            if own == inner:
                with contextlib.suppress(TypeError):  # unhashable dtypes are found by equality each time
                    table[inner] = dtype
                return dtype
        raise TypeError(
            f"backend {index + 1} ({self._labels[index]}) produced dtype {inner!r}, which is not "
            "one of the Array API's dtypes"
        )

    def _check_imported(self, name: str, x: Array) -> None:
        """Raise TypeError when ``name`` (asarray, from_dlpack) made ``x`` of no standard dtype
        (NumPy takes strings and objects): here, rather than at the first use of its dtype."""
        try:
            self._dtype_out(x._inner.dtype, x._index)
        except TypeError:
            raise TypeError(
                f"Unsupported dtype {x._inner.dtype} for {name}(): backend {x._index + 1} "
                f"({self._labels[x._index]}) made it of the data, and it is not one of the Array API's dtypes"
            ) from None

    def _dtype_home(self, dtypes: Sequence[DType]) -> int:
        """The first backend that has every one of ``dtypes`` (for calls without arrays)."""
        for index, table in enumerate(self._to_inner):
            if all(d in table for d in dtypes):
                return index
        return 0  # none has them all: backend 1 raises the error that names the dtype

    # -- data-type functions: results carry the router's dtypes ----------------------------------
    def finfo(self, type: DType | Array, /) -> finfo_object:
        """Limits of a floating dtype (or of an array's dtype), from the backend that has it."""
        index, inner = self._info_args("finfo", type)
        got = self._impls["finfo"][index](inner)  # type: ignore[misc]
        return finfo_object.of(got, self._dtype_out(got.dtype, index))

    def iinfo(self, type: DType | Array, /) -> iinfo_object:
        """Limits of an integer dtype (or of an array's dtype), from the backend that has it."""
        index, inner = self._info_args("iinfo", type)
        got = self._impls["iinfo"][index](inner)  # type: ignore[misc]
        return iinfo_object.of(got, self._dtype_out(got.dtype, index))

    def _info_args(self, name: str, value: Any) -> tuple[int, Any]:
        if type(value) is Array:
            self._join(name, None, value)
            return value._index, value._inner
        if type(value) is not DType:
            raise TypeError(f"{name} takes a router dtype (e.g. xp.float32) or a router array, not {value!r}")
        index = self._dtype_home([value])
        return index, self._dtype_in(value, index)

    def result_type(self, *arrays_and_dtypes: Any) -> DType:
        """The promoted dtype, computed by the backend that holds the arrays (else one that has
        every dtype given)."""
        index = self._home("result_type", arrays_and_dtypes)
        got = self._impls["result_type"][index](*self._inner(arrays_and_dtypes, index, "result_type"))  # type: ignore[misc]
        return self._dtype_out(got, index)

    def can_cast(self, from_: DType | Array, to: DType, /) -> bool:
        """Whether ``from_`` casts to ``to`` under the standard's rules, by the holding backend."""
        index = self._home("can_cast", (from_, to))
        return bool(self._impls["can_cast"][index](*self._inner((from_, to), index, "can_cast")))  # type: ignore[misc]

    def _home(self, name: str, args: tuple[Any, ...]) -> int:
        if any(type(a) is Array for a in args):
            return self._place(name, args, {})
        return self._dtype_home([a for a in args if type(a) is DType])

    # -- devices and migration ---------------------------------------------------------------------
    def to_device(self, x: Array, device: MultiDeviceBase, /, *, stream: Any = None) -> Array:
        """``x`` on ``device``. Within one backend, that backend's own move; to another
        backend's variant, an explicit migration: DLPack first (zero-copy where the memory is
        shared, so the result may alias ``x``), else the bytes travel as ``ruda.TensorData``."""
        if type(x) is not Array:
            raise TypeError(f"to_device takes an array of this router, not {type(x).__name__}")
        self._join("to_device", None, x)
        index = self._device_index(device, "to_device")
        if index == x._index:
            moved = _to_device_within(x._inner, device.device, stream=stream)
        elif stream is not None:
            raise ValueError("stream applies within one backend; a migration between backends takes none")
        else:
            moved = migrate(x._inner, self._namespaces[index], device.device)
        result: Array = self._wrap(moved, index)
        return result

    def __array_namespace_info__(self) -> RouterInfo:
        return RouterInfo(self)

    # -- errors ------------------------------------------------------------------------------------
    @staticmethod
    def _is_array_like(obj: Any) -> bool:
        return is_array_api_obj(obj) or hasattr(obj, "__dlpack__") or hasattr(obj, "__array__")

    def _foreign_message(self, name: str, obj: Any) -> str:
        kind = f"{type(obj).__module__}.{type(obj).__qualname__}"
        return (
            f"{name}: got a {kind}; {self!r} computes on its own arrays only: bring the data in "
            "explicitly with xp.asarray(obj, device=...) or xp.from_dlpack(obj, device=...)"
        )

    def _missing(self, name: str, index: int) -> NotImplementedError:
        have = [str(i + 1) for i, impl in enumerate(self._impls[name]) if impl is not None]
        return NotImplementedError(
            f"{name} is not provided by backend {index + 1} ({self._labels[index]}) of {self!r}; backends "
            f"{', '.join(have)} have it: move the inputs there with x.to_device(...)"
        )


class Extension:
    """A router's ``linalg`` or ``fft``: the same dispatch as the main namespace."""

    def __init__(self, name: str) -> None:
        self.__name__ = name

    def __repr__(self) -> str:
        return self.__name__


def _signature(impls: tuple[Callable[..., Any] | None, ...]) -> inspect.Signature | None:
    for impl in impls:
        if impl is not None:
            try:
                return inspect.signature(impl)
            except (TypeError, ValueError):  # a builtin or ufunc without one: try the next
                continue
    return None


def _takes_device(function: Callable[..., Any]) -> bool:
    """Whether a dispatcher's signature (its backend's) has a ``device`` parameter."""
    signature = getattr(function, "__signature__", None)
    return signature is not None and "device" in signature.parameters


def _resolve(backend: Any, position: int) -> Any:
    if isinstance(backend, str):
        return ruda.namespace(backend)
    if isinstance(backend, Router):
        raise TypeError(f"backend {position + 1} is a Router: give the backends themselves")
    if not (hasattr(backend, "asarray") and hasattr(backend, "__array_namespace_info__")):
        raise TypeError(
            f"backend {position + 1} is {backend!r}, not an Array API namespace: give a namespace "
            "(e.g. ruda.host) or a registered backend name (e.g. 'torch')"
        )
    return backend
