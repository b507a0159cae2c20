"""The array type of ruda_cuda: ``cupy.ndarray`` with the Array API methods CuPy lacks.

``Array`` subclasses ``cupy.ndarray`` and adds no state, so every CuPy
function, SciPy and scikit-learn take it as a CuPy array at full speed, and
CuPy's own operators keep returning ``Array`` (CuPy's ufuncs and views keep
the subclass of their input). The subclass exists because the standard's
array object needs methods CuPy does not have (``__array_namespace__``,
``to_device``, ``__index__``) and operators whose special cases CuPy gets
wrong (``//`` and ``%`` on floats, ``__setitem__`` with ``-0.0``), which a
namespace of functions alone cannot fix.
"""

from __future__ import annotations

import contextlib
from typing import Any

import cupy
import numpy as np
from ruda import spec
from ruda._array import DLPackExport

# (_fusion imports this module: each reads the other's names when called)
from ruda_cuda import _bounds, _fusion
from ruda_cuda._devices import native_device, on_inputs_device, peer_to_peer

_DLPACK_CPU = 1


def _writing(inplace: Any) -> Any:
    """CuPy's in-place operator ``inplace``, run once no pending result reads the array
    (a pending operand is computed first)."""

    def operator(self: Array, other: Any) -> Any:
        _fusion.before_write(self)
        return on_inputs_device(inplace, self, _fusion.realized(other))

    operator.__name__ = operator.__qualname__ = inplace.__name__
    return operator


#: operands an operator hands to the namespace's function (others go to CuPy's operator)
_OPERANDS = (cupy.ndarray, bool, int, float, complex, np.generic)


def _binary(cupy_operator: Any, function: str, reflected: bool = False) -> Any:
    """CuPy's binary operator; with fusion on (outside ruda_cuda's own functions and the
    libraries that take its arrays as CuPy arrays: :func:`ruda_cuda._fusion.records_for_caller`),
    the namespace's ``function``, whose result may wait to be fused."""

    def operator(self: Array, other: Any) -> Any:
        if isinstance(other, _OPERANDS) and _fusion.records_for_caller():
            from ruda_cuda import _elementwise

            fn = getattr(_elementwise, function)
            return fn(other, self) if reflected else fn(self, other)
        return on_inputs_device(cupy_operator, self, other)

    operator.__name__ = operator.__qualname__ = cupy_operator.__name__
    return operator


def _placed(cupy_operator: Any) -> Any:
    """CuPy's binary operator, run on the operands' GPU (a pending operand computed first)."""

    def operator(self: Array, other: Any) -> Any:
        return on_inputs_device(cupy_operator, self, _fusion.realized(other))

    operator.__name__ = operator.__qualname__ = cupy_operator.__name__
    return operator


def _unary(cupy_operator: Any, function: str) -> Any:
    """CuPy's unary operator, or with fusion on the namespace's ``function`` (see _binary)."""

    def operator(self: Array) -> Any:
        if _fusion.records_for_caller():
            from ruda_cuda import _elementwise

            return getattr(_elementwise, function)(self)
        return on_inputs_device(cupy_operator, self)

    operator.__name__ = operator.__qualname__ = cupy_operator.__name__
    return operator


def _exact(function: str, x1: Any, x2: Any) -> Any:
    """The namespace's ``function(x1, x2)`` (floor_divide or remainder), which CuPy's operator
    computes inexactly; computed at once for the libraries that fusion leaves eager (see
    _binary)."""
    from ruda_cuda import _elementwise

    result = getattr(_elementwise, function)(x1, x2)
    return result if _fusion.records_for_caller(3) else _fusion.realized(result)


class Array(DLPackExport, cupy.ndarray):  # type: ignore[misc]  # CuPy has no type information: its ndarray is Any
    """A CuPy array that is also a complete Array API array object."""

    __slots__ = ()

    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
        """The ``ruda_cuda`` namespace (one module serves every listed version)."""
        spec.check_api_version(api_version, "ruda_cuda")
        import ruda_cuda

        return ruda_cuda

    def to_device(self, device: Any, /, *, stream: Any = None) -> Array:
        """This array on ``device`` (itself when it is there already)."""
        return to_device(self, native_device(device), stream)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray[Any, Any]:
        """A host copy (``np.asarray(x)``), as ruda_wgpu's arrays give: asking NumPy for the
        array is the explicit way to the host. CuPy refuses it; array engines such as Cubed
        convert each chunk this way to store it. ``copy=False`` raises: GPU memory has no host
        view."""
        if copy is False:
            raise ValueError(
                "a ruda_cuda array cannot be viewed as NumPy without a copy: use copy=None or True"
            )
        host: np.ndarray[Any, Any] = self.get()
        return host if dtype is None else host.astype(dtype, copy=False)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickle as CuPy does, as a host copy loaded onto the loading process's current device
        (the GPU an executor's worker was given), so that process and cluster executors (Cubed,
        Dask) can move arrays; unpickled, it is a ruda_cuda array again."""
        return (_unpickle, (self.get(),))

    def __index__(self) -> int:
        if self.ndim != 0 or self.dtype.kind not in "iu":
            raise TypeError(
                f"only a 0-d integer array can be used as an index, not a {self.ndim}-d {self.dtype} array"
            )
        return int(self.get())

    def __getitem__(self, key: Any) -> Array:
        if _basic(key):  # a view: nothing runs on a GPU
            return as_array(super().__getitem__(key))
        # (an index array out of bounds raises, where CuPy wraps it around: see _bounds)
        return as_array(on_inputs_device(cupy.ndarray.__getitem__, self, _bounds.check_key(self.shape, key)))

    def __setitem__(self, key: Any, value: Any) -> None:
        _fusion.before_write(self)
        key = _fusion.realized(key) if _basic(key) else _bounds.check_key(self.shape, key)
        on_inputs_device(_setitem, self, key, _fusion.realized(value))

    @property
    def mT(self) -> Array:  # noqa: N802  (the standard's name)
        """The matrix transpose (the last two axes swapped)."""
        return as_array(super().mT)

    def _export_dlpack(
        self, stream: Any, max_version: tuple[int, int] | None, dl_device: Any, copy: bool | None
    ) -> Any:
        """Export through DLPack; ``copy=True`` on the array's own device copies first
        (CuPy supports ``copy=True`` only towards the CPU)."""
        own = dl_device is None or tuple(dl_device) == tuple(self.__dlpack_device__())
        if copy is True and own:
            return cupy.ndarray.copy(self).__dlpack__(stream=stream, max_version=max_version)
        if copy is False and dl_device is not None and not own:
            raise BufferError(
                f"exporting a {self.device} array to DLPack device {tuple(dl_device)} "
                "needs a copy, and copy=False forbids it; pass copy=None or True"
            )
        return cupy.ndarray.__dlpack__(
            self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy
        )

    # Arithmetic, bitwise and comparison operators are CuPy's, unless fusion is on (then a chain
    # written with operators is fused too). Floor division and remainder: CuPy computes
    # x - floor(x / y) * y, which loses precision and the spec's signed zeros; the namespace's
    # functions are exact.
    __add__ = _binary(cupy.ndarray.__add__, "add")
    __radd__ = _binary(cupy.ndarray.__radd__, "add", reflected=True)
    __sub__ = _binary(cupy.ndarray.__sub__, "subtract")
    __rsub__ = _binary(cupy.ndarray.__rsub__, "subtract", reflected=True)
    __mul__ = _binary(cupy.ndarray.__mul__, "multiply")
    __rmul__ = _binary(cupy.ndarray.__rmul__, "multiply", reflected=True)
    __truediv__ = _binary(cupy.ndarray.__truediv__, "divide")
    __rtruediv__ = _binary(cupy.ndarray.__rtruediv__, "divide", reflected=True)
    __rpow__ = _binary(cupy.ndarray.__rpow__, "pow", reflected=True)
    __and__ = _binary(cupy.ndarray.__and__, "bitwise_and")
    __rand__ = _binary(cupy.ndarray.__rand__, "bitwise_and", reflected=True)
    __or__ = _binary(cupy.ndarray.__or__, "bitwise_or")
    __ror__ = _binary(cupy.ndarray.__ror__, "bitwise_or", reflected=True)
    __xor__ = _binary(cupy.ndarray.__xor__, "bitwise_xor")
    __rxor__ = _binary(cupy.ndarray.__rxor__, "bitwise_xor", reflected=True)
    __lshift__ = _binary(cupy.ndarray.__lshift__, "bitwise_left_shift")
    __rlshift__ = _binary(cupy.ndarray.__rlshift__, "bitwise_left_shift", reflected=True)
    __rshift__ = _binary(cupy.ndarray.__rshift__, "bitwise_right_shift")
    __rrshift__ = _binary(cupy.ndarray.__rrshift__, "bitwise_right_shift", reflected=True)
    __eq__ = _binary(cupy.ndarray.__eq__, "equal")
    __ne__ = _binary(cupy.ndarray.__ne__, "not_equal")
    __lt__ = _binary(cupy.ndarray.__lt__, "less")
    __le__ = _binary(cupy.ndarray.__le__, "less_equal")
    __gt__ = _binary(cupy.ndarray.__gt__, "greater")
    __ge__ = _binary(cupy.ndarray.__ge__, "greater_equal")
    __neg__ = _unary(cupy.ndarray.__neg__, "negative")
    __pos__ = _unary(cupy.ndarray.__pos__, "positive")
    __abs__ = _unary(cupy.ndarray.__abs__, "abs")
    __invert__ = _unary(cupy.ndarray.__invert__, "bitwise_invert")
    __matmul__ = _placed(cupy.ndarray.__matmul__)
    __rmatmul__ = _placed(cupy.ndarray.__rmatmul__)
    __hash__ = None  # type: ignore[assignment]  # as CuPy's: arrays compare elementwise

    def __pow__(self, other: Any) -> Any:
        if isinstance(other, _OPERANDS) and _fusion.records_for_caller():
            return _fusion.power(self, other)
        return on_inputs_device(cupy.ndarray.__pow__, self, other)

    def __floordiv__(self, other: Any) -> Any:
        return _exact("floor_divide", self, other)

    def __rfloordiv__(self, other: Any) -> Any:
        return _exact("floor_divide", other, self)

    def __ifloordiv__(self, other: Any) -> Array:
        return self._assign(_exact("floor_divide", self, other))

    def __mod__(self, other: Any) -> Any:
        return _exact("remainder", self, other)

    def __rmod__(self, other: Any) -> Any:
        return _exact("remainder", other, self)

    def __imod__(self, other: Any) -> Array:
        return self._assign(_exact("remainder", self, other))

    # In-place operators are CuPy's, after pending results that read this array are computed.
    __iadd__ = _writing(cupy.ndarray.__iadd__)
    __isub__ = _writing(cupy.ndarray.__isub__)
    __imul__ = _writing(cupy.ndarray.__imul__)
    __itruediv__ = _writing(cupy.ndarray.__itruediv__)
    __ipow__ = _writing(cupy.ndarray.__ipow__)
    __iand__ = _writing(cupy.ndarray.__iand__)
    __ior__ = _writing(cupy.ndarray.__ior__)
    __ixor__ = _writing(cupy.ndarray.__ixor__)
    __ilshift__ = _writing(cupy.ndarray.__ilshift__)
    __irshift__ = _writing(cupy.ndarray.__irshift__)

    def _assign(self, result: Any) -> Array:
        result = _fusion.realized(result)
        _fusion.before_write(self)
        if result.dtype != self.dtype:
            raise TypeError(
                f"in-place operation would change the dtype of a {self.dtype} array to "
                f"{result.dtype}; use the out-of-place operator"
            )
        on_inputs_device(cupy.ndarray.__setitem__, self, Ellipsis, result)
        return self


def _setitem(x: Array, key: Any, value: Any) -> None:
    if isinstance(value, (float, complex)):
        # CuPy fills with memset when value == 0, which turns -0.0 into +0.0.
        value = scalar_array(value, x.dtype)
    cupy.ndarray.__setitem__(x, key, value)


_BASIC_KEYS = (int, slice, type(None), type(Ellipsis))


def _basic(key: Any) -> bool:
    """Whether ``key`` is basic indexing (integers, slices, None, ...), which makes a view."""
    if type(key) is tuple:
        return all(isinstance(k, _BASIC_KEYS) and type(k) is not bool for k in key)
    return isinstance(key, _BASIC_KEYS) and type(key) is not bool


def _unpickle(host: np.ndarray[Any, Any]) -> Array:
    """A pickled array, on the current device (a 0-d one keeps the sign of ``-0.0``)."""
    return as_array(scalar_array(host, host.dtype) if host.ndim == 0 else cupy.asarray(host))


def as_array(x: Any) -> Array:
    """The CuPy array ``x`` (what a CuPy function returned) viewed as :class:`Array`.

    The one place where an untyped CuPy result becomes an ``Array`` to mypy; results that
    may hold several arrays go through :func:`as_arrays`."""
    array: Array = as_arrays(x)
    return array


def as_arrays(x: Any) -> Any:
    """``x`` with every CuPy array in it (also in tuples and lists) viewed as :class:`Array`."""
    if type(x) is Array:
        return x
    if isinstance(x, cupy.ndarray):
        return x.view(type=Array)
    if isinstance(x, tuple):
        items = [as_arrays(item) for item in x]
        return type(x)(*items) if hasattr(x, "_fields") else tuple(items)
    if isinstance(x, list):
        return [as_arrays(item) for item in x]
    return x


def scalar_array(value: Any, dtype: Any) -> cupy.ndarray:
    """A 0-d array holding ``value`` exactly, signed zeros included.

    CuPy builds 0-d arrays with ``fill``, which uses memset for a value equal
    to zero and so loses the sign of ``-0.0``; a 1-element copy keeps it.
    """
    host = np.asarray(value, dtype=dtype)
    if host.dtype.kind in "fc" and _has_negative_zero(host):
        return cupy.asarray(host.reshape(1)).reshape(())
    return cupy.asarray(host)


def _has_negative_zero(host: np.ndarray) -> bool:
    parts = (host.real, host.imag) if host.dtype.kind == "c" else (host,)
    return any(bool(np.any((p == 0) & np.signbit(p))) for p in parts)


def to_device(x: cupy.ndarray, device: cupy.cuda.Device, stream: Any = None) -> Array:
    """``x`` on ``device``; a copy only when it lives on another GPU.

    Between GPUs the copy is one ``cudaMemcpyPeerAsync``, peer-to-peer where the two GPUs can
    reach each other (:func:`~ruda_cuda._devices.peer_to_peer`; ``ruda info`` lists which),
    else staged by the driver through host memory. It runs on ``stream`` (default: the target
    device's current stream) after the work queued on the source device's current stream, and
    that stream waits for the copy before reusing ``x``'s memory; nothing waits on the host."""
    source_id, target_id = int(x.device.id), int(device.id)
    if source_id == target_id:
        return as_array(x)
    with x.device:
        if not x.flags.c_contiguous:
            x = cupy.ndarray.copy(x)  # one block to copy
        source_stream = cupy.cuda.get_current_stream()
        produced = source_stream.record()
    with device, _stream(stream) if stream is not None else contextlib.nullcontext():
        target_stream = cupy.cuda.get_current_stream()
        out = cupy.empty(x.shape, x.dtype)  # from the target stream's memory pool
        if x.nbytes:
            target_stream.wait_event(produced)
            peer_to_peer(source_id, target_id)
            cupy.cuda.runtime.memcpyPeerAsync(
                out.data.ptr, target_id, x.data.ptr, source_id, x.nbytes, target_stream.ptr
            )
            source_stream.wait_event(target_stream.record())
    return as_array(out)


def _stream(stream: Any) -> cupy.cuda.Stream:
    """``stream`` (a CuPy stream, any object in the CUDA stream protocol such as a torch
    stream, or a raw handle) as a CuPy stream of the current device."""
    if isinstance(stream, cupy.cuda.Stream):
        return stream
    if isinstance(stream, int):
        stream = _StreamHandle(stream)
    if hasattr(stream, "__cuda_stream__"):
        return cupy.cuda.Stream.from_external(stream)
    raise TypeError(
        "stream must be a cupy.cuda.Stream, an object with __cuda_stream__ or a CUDA stream "
        f"handle (int), not {type(stream).__name__}"
    )


class _StreamHandle:
    """A raw CUDA stream handle in the CUDA stream protocol (what CuPy takes foreign streams in)."""

    def __init__(self, handle: int) -> None:
        self.handle = handle

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.handle)
