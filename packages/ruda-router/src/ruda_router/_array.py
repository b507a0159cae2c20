"""The router's array: a backend's own array plus the backend position that holds it.

Operators run the holding backend's namespace *functions* (``x // y`` is that
backend's ``floor_divide``), so a router array follows the backend's
conforming functions even where the backend's own array operators do not; so do NumPy's
ufuncs (``np.isfinite(x)``: :class:`ruda._ufuncs.NumpyUfuncs`).
In-place operators compute the same function and write the result back into
the held array, so views and aliases see the change. Nothing here moves data:
mixing arrays of two backends raises (see :mod:`ruda_router._router`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from array_api_compat import device as _device_of
from ruda import spec
from ruda._array import DLPackExport, MadeByNamespace, python_scalar
from ruda._operators import ArrayOperators, unsupported
from ruda._ufuncs import NumpyUfuncs

from ruda_router._steps import positive_steps

if TYPE_CHECKING:
    from ruda_router._devices import MultiDeviceBase
    from ruda_router._dtypes import DType
    from ruda_router._router import Router

_SCALARS = (bool, int, float, complex)


class Array(MadeByNamespace, DLPackExport, NumpyUfuncs, ArrayOperators):
    """An array of a :class:`~ruda_router.Router`, held by one of its backends.

    Create arrays through the router (``xp.asarray``, ``xp.zeros(..., device=...)``);
    ``x.device`` says which backend holds it (``duo.MultiDevice.B2(...)``) and
    ``x.to_device(device)`` moves it explicitly.
    """

    __slots__ = ("__weakref__", "_index", "_inner", "_router")
    _made_with = "a Router's functions: xp.asarray(obj, device=...), xp.zeros(...), ..."

    _inner: Any
    _index: int
    _router: Router

    @classmethod
    def _new(cls, inner: Any, index: int, router: Router) -> Array:
        self = object.__new__(cls)
        self._inner = inner
        self._index = index
        self._router = router
        return self

    # -- attributes ----------------------------------------------------------------------------
    @property
    def inner(self) -> Any:
        """The holding backend's own array (no copy): for handing it to code of that library."""
        return self._inner

    @property
    def dtype(self) -> DType:
        return self._router._dtype_out(self._inner.dtype, self._index)

    @property
    def device(self) -> MultiDeviceBase:
        """The router device: the variant of the holding backend around that backend's device."""
        return self._router.MultiDevice.variants[self._index](_device_of(self._inner))

    @property
    def shape(self) -> tuple[int | None, ...]:
        return tuple(self._inner.shape)

    @property
    def ndim(self) -> int:
        return int(self._inner.ndim)

    @property
    def size(self) -> int | None:
        shape = self.shape
        return None if None in shape else math.prod(shape)  # type: ignore[arg-type]

    @property
    def mT(self) -> Array:  # noqa: N802  (the standard's name)
        return self._router._apply("matrix_transpose", self._index, self._inner)

    @property
    def T(self) -> Array:  # noqa: N802  (the standard's name)
        if self.ndim != 2:
            raise ValueError(f"x.T is defined for 2-D arrays only, not {self.ndim}-D: use x.mT instead")
        return self._router._apply("permute_dims", self._index, self._inner, (1, 0))

    def to_device(self, device: MultiDeviceBase, /, *, stream: Any = None) -> Array:
        """This array on ``device``; to another backend's variant it migrates explicitly
        (DLPack first, else through host bytes), see :meth:`Router.to_device`."""
        return self._router.to_device(self, device, stream=stream)

    def __array_namespace__(self, /, *, api_version: str | None = None) -> Router:
        spec.check_api_version(api_version, "this router")
        return self._router

    # -- conversions: the holding backend's own ------------------------------------------------
    def __bool__(self) -> bool:
        return bool(self._inner)

    def __int__(self) -> int:
        return int(self._inner)

    def __float__(self) -> float:
        return float(self._inner)

    def __complex__(self) -> complex:
        return complex(self._inner)

    def __format__(self, spec: str) -> str:
        """``f"{x:.3f}"``: the holding backend's own formatting (a 0-D array as its scalar)."""
        return str(self) if not spec else format(self._inner, spec)

    def __index__(self) -> int:
        return self._inner.__index__()  # type: ignore[no-any-return]

    def _export_dlpack(
        self, stream: Any, max_version: tuple[int, int] | None, dl_device: Any, copy: bool | None
    ) -> Any:
        # Only the keywords given pass on: a consumer retries without ``max_version`` when an
        # older producer refuses it, and that protocol must reach the real producer.
        given = {"stream": stream, "max_version": max_version, "dl_device": dl_device, "copy": copy}
        return self._inner.__dlpack__(**{k: v for k, v in given.items() if v is not None})

    def __dlpack_device__(self) -> tuple[Any, int]:
        return self._inner.__dlpack_device__()  # type: ignore[no-any-return]

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray[Any, Any]:
        """The holding backend's own conversion to NumPy: a view or a copy as it decides (host and
        torch on the CPU share memory, wgpu copies, CuPy refuses an implicit transfer)."""
        if not hasattr(self._inner, "__array__"):
            kind = type(self._inner).__name__
            raise TypeError(f"{kind} arrays of {self._router!r} do not convert to NumPy")
        if copy is None:
            return np.asarray(self._inner, dtype=dtype)
        return np.asarray(self._inner, dtype=dtype, copy=copy)

    def __repr__(self) -> str:
        return f"Array({self._inner!r}, device={self.device!r})"

    # -- indexing --------------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Array:
        router = self._router
        if _selects_nothing(key, self._inner.shape):
            # A boolean mask with a zero-length axis against a non-empty one selects nothing
            # (NumPy, the standard's suite); torch refuses it. The empty result, from a slice:
            ns = router._namespaces[self._index]
            empty = self._inner[(slice(0, 0),) * key.ndim]
            nothing: Array = router._wrap(ns.reshape(empty, (0, *self._inner.shape[key.ndim :])), self._index)
            return nothing
        plan = positive_steps(key, self._inner.shape)
        if plan is None:
            result: Array = router._wrap(self._inner[router._index_key(key, self)], self._index)
            return result
        positive, flips = plan  # negative steps, which torch refuses, as positive ones and flips
        inner = self._inner[router._index_key(positive, self)]
        if flips:
            inner = router._namespaces[self._index].flip(inner, axis=flips)
        flipped: Array = router._wrap(inner, self._index)
        return flipped

    def __setitem__(self, key: Any, value: Any) -> None:
        router = self._router
        value = router._operand(value, self, "__setitem__")
        plan = positive_steps(key, self._inner.shape)
        if plan is None:
            self._inner[router._index_key(key, self, "__setitem__")] = value
            return
        positive, flips = plan
        inner_key = router._index_key(positive, self, "__setitem__")
        ndim = getattr(value, "ndim", 0)
        if flips and ndim:  # the value's axes line up with the target's from the right
            target_ndim = self._inner[inner_key].ndim
            axes = tuple(a - (target_ndim - ndim) for a in flips if a >= target_ndim - ndim)
            if axes:
                value = router._namespaces[self._index].flip(value, axis=axes)
        self._inner[inner_key] = value

    # -- operators: the holding backend's functions ------------------------------------------------
    def _binary_operator(self, function: str, dunder: str, other: Any, reflected: bool) -> Any:
        other = python_scalar(other)  # NumPy scalars as the Python scalars they hold
        if type(other) is Array and other._router is self._router and other._index == self._index:
            operand = other._inner
        elif isinstance(other, _SCALARS):
            operand = other
        elif not self._router._is_array_like(other):
            return unsupported(self, function, other)
        else:
            operand = self._router._operand(other, self, function)
        args = (operand, self._inner) if reflected else (self._inner, operand)
        return self._router._apply(function, self._index, *args)

    def _inplace_operator(self, function: str, dunder: str, other: Any) -> Any:
        result = self._binary_operator(function, dunder, other, False)
        if result is NotImplemented:
            return result
        if result.dtype is not self.dtype and _same_kind(result.dtype.name, self.dtype.name):
            # (complex64 /= float64: cast back, as every backend's own in-place operators do)
            result = self._router._apply("astype", self._index, result._inner, self._inner.dtype)
        if result._inner.dtype != self._inner.dtype or result.shape != self.shape:
            raise TypeError(
                f"in-place {function} would turn this {self.dtype.name} array of shape {self.shape} into "
                f"{result.dtype.name} of shape {result.shape}; an in-place operator keeps the left "
                "operand's dtype and shape: write x = x <op> y instead"
            )
        self._inner[...] = result._inner
        return self

    def _unary_operator(self, function: str, dunder: str) -> Any:
        return self._router._apply(function, self._index, self._inner)


def _same_kind(source: str, target: str) -> bool:
    """Whether dtype ``source`` casts to ``target`` within its kind (NumPy's "same_kind")."""
    return bool(np.can_cast(np.dtype(source), np.dtype(target), "same_kind"))


def _selects_nothing(key: Any, shape: tuple[int, ...]) -> bool:
    """Whether ``key`` is a boolean mask array whose axes each match ``shape`` or are empty, with
    at least one empty where ``shape`` is not."""
    if not isinstance(key, Array) or key.dtype.name != "bool" or key.ndim > len(shape):
        return False
    pairs = list(zip(key.shape, shape, strict=False))
    return all(k in (s, 0) for k, s in pairs) and any(k == 0 and s != 0 for k, s in pairs)
