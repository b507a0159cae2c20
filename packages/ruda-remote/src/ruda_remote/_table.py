"""The server's table of operations: each code of :data:`wire.OPS` bound to a callable of one
backend namespace, once, when the server starts.

Names are looked up here only from the fixed table, never from what a client sends.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import operator
from collections.abc import Callable, Hashable, Sequence
from types import ModuleType
from typing import Any

import numpy as np
import ruda.host as host
from ruda import spec, to_numpy

from ruda_remote import _meta, wire

#: functions whose ``device=`` argument the server fills in with its own device
_NEEDS_DEVICE = frozenset(
    {"arange", "asarray", "empty", "eye", "full", "linspace", "ones", "zeros", "fft.fftfreq", "fft.rfftfreq"}
)

#: operators run as the namespace's functions, whose special cases the spec defines
#: (NumPy's own ``//`` differs from ``floor_divide`` for infinities, for example)
DUNDER_FUNCTIONS: dict[str, str] = {
    "__add__": "add",
    "__sub__": "subtract",
    "__mul__": "multiply",
    "__truediv__": "divide",
    "__floordiv__": "floor_divide",
    "__mod__": "remainder",
    "__pow__": "pow",
    "__matmul__": "matmul",
    "__and__": "bitwise_and",
    "__or__": "bitwise_or",
    "__xor__": "bitwise_xor",
    "__lshift__": "bitwise_left_shift",
    "__rshift__": "bitwise_right_shift",
    "__eq__": "equal",
    "__ne__": "not_equal",
    "__lt__": "less",
    "__le__": "less_equal",
    "__gt__": "greater",
    "__ge__": "greater_equal",
    "__abs__": "abs",
    "__neg__": "negative",
    "__pos__": "positive",
    "__invert__": "bitwise_invert",
}

#: functions that would hand a session uninitialised memory, and what runs instead
_ZEROED = {"empty": "zeros", "empty_like": "zeros_like"}

#: creation functions whose result size the server works out from their arguments before they run
CREATION = frozenset({"arange", "empty", "eye", "full", "linspace", "ones", "zeros"})

_ATTRIBUTES: dict[str, Callable[..., Any]] = {
    "__getitem__": operator.getitem,
    "__setitem__": operator.setitem,
    "mT": operator.attrgetter("mT"),
    "T": operator.attrgetter("T"),
}


def _size(value: Any, what: str) -> int:
    if type(value) is not int or value < 0:
        raise ValueError(f"{what} must be a non-negative integer, got {value!r}")
    return value


def _shape(value: Any) -> tuple[int, ...]:
    sides = value if isinstance(value, (list, tuple)) else (value,)
    return tuple(_size(n, "each side of a shape") for n in sides)


def _fill_kind(value: Any) -> str:
    """The kind of the default dtype ``full`` gives ``value`` (a Python scalar)."""
    kinds = {bool: "bool", int: "integral", float: "real floating", complex: "complex floating"}
    if type(value) not in kinds:
        raise TypeError(f"full: fill_value must be a bool, int, float or complex, got {type(value).__name__}")
    return kinds[type(value)]


def _arange_count(start: Any, stop: Any, step: Any) -> tuple[int, str]:
    """The number of elements of ``arange(start, stop, step)`` and its default dtype's kind."""
    if stop is None:
        start, stop = 0, start
    values = (start, stop, step)
    if not all(type(v) in (int, float) for v in values):
        raise TypeError(f"arange takes int or float start, stop and step, got {values!r}")
    if step == 0:
        raise ValueError("arange: step must not be zero")
    if all(type(v) is int for v in values):
        return len(range(start, stop, step)), "integral"
    count = (stop - start) / step
    if not math.isfinite(count):
        raise ValueError(f"arange({start}, {stop}, {step}) would have an unbounded number of elements")
    return max(0, math.ceil(count)), "real floating"


#: the standard's options whose values are strings (fft's norm, qr's mode, searchsorted's side,
#: meshgrid's indexing, matrix_norm's ord): nowhere else does a string reach the backend
_STRING_OPTIONS = frozenset({"norm", "mode", "side", "indexing", "ord"})


#: the positions at which the standard takes a sequence (a shape, axes, repetitions, the arrays
#: to join, asarray's object, an index), and the keywords that take one: the only places a list
#: or tuple reaches the backend. Everywhere else the standard takes an array (or a scalar), and
#: NumPy would read a list there as an array that no size check counted: ``add(ones((10**4, 1)),
#: [1.5] * 10**4)`` had made 800 MB under a 1 MiB limit from an 80 KB header
_SEQUENCE_POSITIONS: dict[str, tuple[int, ...]] = {
    "asarray": (0,),
    "empty": (0,),
    "full": (0,),
    "ones": (0,),
    "zeros": (0,),
    "concat": (0,),
    "stack": (0,),
    "broadcast_to": (1,),
    "expand_dims": (1,),
    "moveaxis": (1, 2),
    "permute_dims": (1,),
    "reshape": (1,),
    "roll": (1,),
    "squeeze": (1,),
    "tile": (1,),
    "__getitem__": (1,),
    "__setitem__": (1,),
}
_SEQUENCE_KEYWORDS = frozenset({"shape", "axis", "axes", "s", "shift"})
#: functions whose sequence is of arrays: a list in it is refused as one in place of an array
_ARRAY_SEQUENCES = frozenset({"concat", "stack"})
_CONTAINERS = (list, tuple, dict)


def check_arguments(name: str, args: list[Any], kwargs: dict[str, Any]) -> None:
    """Refuse, before anything runs, what the standard's signature of ``name`` does not take: a
    keyword it has no parameter for, a ``dtype`` that is not one of the wire's dtypes, a
    string anywhere but the options that are strings, and a list, tuple or map where it takes
    an array or a scalar.

    A backend may take more than the standard (NumPy's ufuncs take ``out=``, ``where=`` and
    ``casting=``, and a ``dtype="O"`` that makes NumPy compute with Python integers, holding
    the GIL for as long as ``3 ** 90_000_000`` takes), and more by position (NumPy's ``take``
    takes ``out`` fourth): a client gets only the standard."""
    most = _positional_limit(name)
    if most is not None and len(args) > most:
        raise TypeError(f"{name}() takes at most {most} positional arguments ({len(args)} given)")
    allowed = spec.KEYWORDS.get(name, ())
    for key, value in kwargs.items():
        if key not in allowed:
            takes = ", ".join(allowed) or "none"
            raise TypeError(f"{name}() got an unexpected keyword argument {key!r} (it takes: {takes})")
        if key == "dtype" and value is not None and not isinstance(value, wire.DType):
            raise TypeError(f"{name}(): dtype must be one of the Array API's dtypes, not {value!r}")
        if key not in _STRING_OPTIONS and _holds_string(value):
            raise TypeError(f"{name}(): {key} takes no string, got {value!r}")
    if _holds_string(args):
        raise TypeError(f"{name}() takes no string as a positional argument")
    check_sequences(name, args, kwargs)
    _check_array_operand(name, args)


def _check_array_operand(name: str, args: Sequence[Any]) -> None:
    """Refuse an operator whose first operand, or an elementwise function none of whose
    operands, is an array: the standard computes them on arrays, and the server works out a
    result's size on the operands as they came, so ``__pow__(127, 3 * 10**7)`` of two Python
    ints had it compute that power in Python, holding the GIL, and stalled every session."""
    if name in wire.ARRAY_OPS:
        if not args or not isinstance(args[0], wire.Handle):
            raise TypeError(f"{name}: the array operand must be an array handle; nothing was run")
    elif name in _meta.ELEMENTWISE_OPS and not any(isinstance(a, wire.Handle) for a in args):
        raise TypeError(
            f"{name}() needs at least one array operand (the standard takes a Python scalar for "
            "one of them at most); nothing was run"
        )


def check_sequences(name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> None:
    """Refuse a list, tuple or map where the standard takes an array (or a scalar): see
    :data:`_SEQUENCE_POSITIONS`. The server checks every op so; the client checks its calls
    too, so that the error comes at the call, with nothing sent."""
    if not any(isinstance(v, _CONTAINERS) for v in (*args, *kwargs.values())):
        return  # (the common case, checked first: this runs for every op)
    base = wire.base_operator(name)
    allowed = _SEQUENCE_POSITIONS.get(base, ())
    given = [(f"argument {i + 1}", v, i in allowed) for i, v in enumerate(args)]
    given += [(f"{k}=", v, k in _SEQUENCE_KEYWORDS) for k, v in kwargs.items()]
    for where, value, sequence in given:
        if sequence and base in _ARRAY_SEQUENCES and isinstance(value, (list, tuple)):
            where, sequence = f"an item of {where}", False  # (the items are the arrays)
            value = next((v for v in value if isinstance(v, _CONTAINERS)), None)
        if isinstance(value, _CONTAINERS) and not sequence:
            raise TypeError(
                f"{name}(): {where} is a {type(value).__name__}, where the standard takes an array "
                "or a scalar; make an array of it first (asarray); nothing was run"
            )


def _positional_limit(name: str) -> int | None:
    """How many arguments op ``name`` takes by position (the array first for an operator and
    the attributes ``mT`` and ``T``; reflected and in-place operators as their base), or None
    for any number."""
    if name in spec.POSITIONAL:
        return spec.POSITIONAL[name]
    if name in ("mT", "T"):
        return 1
    return spec.POSITIONAL[wire.base_operator(name)]  # __radd__, __iadd__: as __add__


def _holds_string(value: Any) -> bool:
    if isinstance(value, str):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_string(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_string(v) for v in value.values())
    return False


def _reflected(fn: Callable[..., Any]) -> Callable[..., Any]:
    return lambda a, b: fn(b, a)


def _in_place(fn: Callable[..., Any], table: OpTable) -> Callable[..., Any]:
    """``target <op>= other`` as the namespace's function of the two, written into the target
    (so that views of it see the change) in the target's dtype: a result of a wider dtype of
    the same kind is cast back (float32 += float64), as NumPy's, torch's and ruda_wgpu's own
    in-place operators do. A target that refuses the write (a read-only view, ``broadcast_to``)
    raises, as the reference does; only an immutable one (a NumPy scalar) gives its handle the
    result instead."""

    def run(target: Any, other: Any) -> Any:
        result = fn(target, other)
        if result.dtype != target.dtype:
            wider, own = table.dtype_name(result.dtype), table.dtype_name(target.dtype)
            if np.can_cast(np.dtype(wider), np.dtype(own), "same_kind"):
                result = table.namespace.astype(result, target.dtype)
        if isinstance(target, np.generic):
            return result
        target[...] = result
        return target

    return run


class OpTable:
    """Callables of one namespace on one device, indexed by operation code."""

    def __init__(self, namespace: ModuleType, device: Any) -> None:
        self.namespace = namespace
        self.device = device
        self._calls: list[Callable[..., Any] | None] = [self._bind(name) for name in wire.OPS]
        self._dtypes: dict[str, Any] = {
            n: getattr(namespace, n) for n in spec.DTYPES if hasattr(namespace, n)
        }
        self._dtype_names: list[tuple[Any, str]] = [(d, n) for n, d in self._dtypes.items()]
        self._name_cache: dict[Any, str] = {}

    def _bind(self, name: str) -> Callable[..., Any] | None:
        if name in wire.PROTOCOL_OPS:
            return None
        if name in _ATTRIBUTES:
            return _ATTRIBUTES[name]
        base = wire.base_operator(name)
        if base in DUNDER_FUNCTIONS:
            fn = getattr(self.namespace, DUNDER_FUNCTIONS[base], None)
            if fn is None:
                return None
            if name in wire.REFLECTED_DUNDERS:
                return _reflected(fn)
            return _in_place(fn, self) if name in wire.INPLACE_DUNDERS else fn
        # empty's memory may hold what another session freed (NumPy's allocator, a GPU pool
        # reuse it): a session gets zeros, so that it never reads another's data
        name = _ZEROED.get(name, name)
        module: Any = self.namespace
        prefix, _, short = name.rpartition(".")
        if prefix:
            module = getattr(self.namespace, prefix, None)
        fn = getattr(module, short, None) if module is not None else None
        if fn is None or name not in _NEEDS_DEVICE:
            return fn
        device = self.device
        return lambda *args, **kwargs: fn(*args, device=device, **kwargs)

    def call(self, code: int, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Run operation ``code``; a backend that lacks it raises NotImplementedError naming it."""
        fn = self._calls[code]
        if fn is None:
            raise NotImplementedError(
                f"operation {wire.OPS[code]} is not provided by the server's backend "
                f"({getattr(self.namespace, '__name__', '?')})"
            )
        return fn(*args, **kwargs)

    def dtype(self, name: str) -> Any:
        """The backend's dtype object for an Array API dtype name."""
        try:
            return self._dtypes[name]
        except KeyError:
            raise TypeError(f"the server's backend has no dtype {name}") from None

    def dtype_name(self, dtype: Any) -> str:
        """The Array API name of one of the backend's dtype objects."""
        try:
            return self._name_cache[dtype]
        except (KeyError, TypeError):
            pass
        name = self._find_dtype_name(dtype)
        with contextlib.suppress(TypeError):  # an unhashable dtype object is looked up each time
            self._name_cache[dtype] = name
        return name

    def _find_dtype_name(self, dtype: Any) -> str:
        for candidate, name in self._dtype_names:
            if candidate is dtype:
                return name
        for candidate, name in self._dtype_names:
            if candidate == dtype:
                return name
        raise TypeError(
            f"the backend returned an array of dtype {dtype}, which is not one of the Array API's dtypes "
            "and so cannot reach a remote client; cast to one of them (float32 for float16) in the "
            "computation, or use the backend in process"
        )

    def meta(self, x: Any) -> tuple[tuple[int, ...], str]:
        """Shape and dtype name of a backend array."""
        shape = x.shape
        if type(shape) is not tuple or not all(type(n) is int for n in shape):
            shape = tuple(int(n) for n in shape)
        return shape, self.dtype_name(x.dtype)

    def result_bytes(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> int | None:
        """The bytes of the array a creation function (:data:`CREATION`) makes from these wire
        arguments, worked out before it runs so that the session can refuse it before it
        allocates; None for any other op. Arguments that give no size raise TypeError or
        ValueError, naming what is wrong (the backend would refuse them too)."""
        if name not in CREATION:
            return None
        try:
            bound = inspect.signature(getattr(host, name)).bind(*args, **kwargs)
        except TypeError as err:
            raise TypeError(f"{name}: {err}") from None
        bound.apply_defaults()
        given = bound.arguments
        if name == "arange":
            count, kind = _arange_count(given["start"], given["stop"], given["step"])
        elif name == "linspace":
            count = _size(given["num"], "num")
            complex_ = any(isinstance(given[k], complex) for k in ("start", "stop"))
            kind = "complex floating" if complex_ else "real floating"
        elif name == "eye":
            rows = _size(given["n_rows"], "n_rows")
            count = rows * (rows if given["n_cols"] is None else _size(given["n_cols"], "n_cols"))
            kind = "real floating"
        else:
            count = math.prod(_shape(given["shape"]))
            kind = _fill_kind(given["fill_value"]) if name == "full" else "real floating"
        dtype = given["dtype"]
        return count * (wire.ITEMSIZE[dtype.name] if isinstance(dtype, wire.DType) else self._itemsize(kind))

    def _itemsize(self, kind: str) -> int:
        """Bytes per element of the device's default dtype of ``kind`` (a kind whose default the
        wire does not carry counts as the widest, so that the estimate errs towards refusing)."""
        info = self.namespace.__array_namespace_info__()
        if kind == "bool":
            return 1
        try:
            return wire.ITEMSIZE[self.dtype_name(info.default_dtypes(device=self.device)[kind])]
        except (KeyError, TypeError):
            return max(wire.ITEMSIZE.values())

    def memory(self, x: Any) -> tuple[Hashable, int]:
        """The memory a backend array keeps alive: a key that is the same for every array sharing
        that memory, and its size in bytes.

        A view keeps its base's whole buffer alive, so ``x[0:1]`` of a large array costs the large
        array's bytes for as long as it lives, whatever its own shape says. The key stays valid
        while an array that shares the memory is alive (the server holds such an array).
        """
        storage = getattr(x, "_storage", None)  # ruda_wgpu: an array and its views share one Storage
        if storage is not None and type(getattr(storage, "nbytes", None)) is int:
            return ("storage", id(storage)), storage.nbytes
        untyped = getattr(x, "untyped_storage", None)  # torch: views share an untyped storage
        if callable(untyped):
            found = untyped()
            return ("torch", found.data_ptr()), int(found.nbytes())
        root = x  # NumPy and CuPy: a view's base is the array (or buffer) that owns the memory
        while getattr(root, "base", None) is not None and hasattr(root.base, "nbytes"):
            root = root.base
        return ("base", id(root)), int(root.nbytes)

    def is_contiguous(self, x: Any) -> bool:
        """Whether a backend array's elements lie in row-major order in its memory (so that
        ``reshape`` makes a view of it); False where the backend does not say."""
        flags = getattr(x, "flags", None)  # NumPy and CuPy
        if flags is not None and hasattr(flags, "c_contiguous"):
            return bool(flags.c_contiguous)
        check = getattr(x, "is_contiguous", None) or getattr(x, "_is_contiguous", None)  # torch, ruda_wgpu
        return bool(check()) if callable(check) else False

    def upload(self, dtype: str, shape: tuple[int, ...], data: bytes | np.ndarray[Any, Any]) -> Any:
        """A new array on the server's device holding the client's bytes: ``bytes`` as a message
        brought them (copied), or a buffer of the session's own that pieces were copied into
        (a backend that computes on host memory keeps it as it is: no second copy)."""
        if isinstance(data, np.ndarray):
            return self.namespace.asarray(data.view(dtype).reshape(shape), device=self.device)
        host = np.frombuffer(data, dtype=dtype).reshape(shape)
        return self.namespace.asarray(host, device=self.device, copy=True)

    def read(self, x: Any) -> tuple[str, tuple[int, ...], memoryview]:
        """Dtype name, shape and C-contiguous bytes of a backend array, for the client."""
        shape, dtype = self.meta(x)
        host = np.ascontiguousarray(to_numpy(x))
        return dtype, shape, host.reshape(-1).view(np.uint8).data

    def is_array(self, x: Any) -> bool:
        return hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (tuple, list))

    def as_array(self, x: Any) -> Any:
        """A backend array for an op's result (a Python scalar becomes a 0-d array)."""
        if isinstance(x, np.generic):
            return np.asarray(x)  # NumPy's scalars are immutable: hold a 0-d array, as the spec has
        if self.is_array(x):
            return x
        if isinstance(x, (bool, int, float, complex)):
            return self.namespace.asarray(x, device=self.device)
        raise TypeError(f"the operation returned a {type(x).__name__}, not an array")
