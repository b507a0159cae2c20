"""Shapes and dtypes of results, worked out on the client so that ops need not wait.

An op whose result shape and dtype the client can infer is sent without waiting; the
server checks its result against the inference, so a backend that disagrees is reported
rather than silently believed. The client infers with the reference semantics of
``ruda.host`` applied to stand-ins that cost nothing: 0-d arrays for elementwise dtypes,
and zero-stride views (``broadcast_to`` of one element) for view operations, so invalid
arguments raise here, at the call, with the same error as on the server.

Any op not covered here asks the server (one round trip) before returning.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
from ruda import spec
from ruda._arguments import refuse
from ruda._array import python_scalar

from ruda_remote import wire
from ruda_remote._reference import host

Meta = tuple[tuple[int, ...], str]

ELEMENTWISE = frozenset(spec.ELEMENTWISE_FUNCTIONS) | {"where"}
_DUNDER_FNS: dict[str, Callable[..., Any]] = {}
for _name in wire.BINARY_DUNDERS + wire.COMPARISON_DUNDERS + wire.UNARY_DUNDERS:
    _base = _name[2:-2]
    _DUNDER_FNS[_name] = getattr(operator, _base + "_" if _base in ("and", "or") else _base)
for _name in wire.BINARY_DUNDERS:
    _fn = _DUNDER_FNS[_name]
    _DUNDER_FNS["__r" + _name[2:]] = (lambda f: lambda a, b: f(b, a))(_fn)
_DUNDER_FNS.pop("__matmul__")
_DUNDER_FNS.pop("__rmatmul__")

#: ops that return views of their (first) input: inferred on zero-stride stand-ins
VIEWS: dict[str, Callable[..., Any]] = {
    "permute_dims": host.permute_dims,
    "expand_dims": host.expand_dims,
    "squeeze": host.squeeze,
    "flip": host.flip,
    "broadcast_to": host.broadcast_to,
    "matrix_transpose": host.matrix_transpose,
    "moveaxis": host.moveaxis,
    "mT": operator.attrgetter("mT"),
    "T": operator.attrgetter("T"),
    "linalg.matrix_transpose": host.matrix_transpose,
}


def _stand_in(x: Any) -> Any:
    """A 0-d NumPy array of the same dtype (for dtype inference)."""
    return np.ones((), dtype=x.dtype)


def _view_stand_in(x: Any) -> np.ndarray:
    """A zero-stride NumPy view with the same shape and dtype, using one element of memory."""
    return np.broadcast_to(np.zeros((), dtype=x.dtype), x.shape)


def _map(value: Any, fn: Callable[[Any], Any], is_array: Callable[[Any], bool]) -> Any:
    if is_array(value):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map(v, fn, is_array) for v in value)
    return value


def infer(
    name: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    is_array: Callable[[Any], bool],
    learned: dict[tuple[Any, ...], str] | None = None,
) -> list[Meta] | None:
    """Result metas of op ``name``, or None when only the server can tell.

    With ``learned`` (a client's: the result dtypes its server gave, by :func:`learned_key`), a
    result dtype that is the backend's to choose (see :func:`backend_dependent`) comes from
    there, or is the server's to tell (None); without it, the reference's answer stands (the
    server sizes a result by it: float64 is the widest such dtype). A TypeError names an
    argument that is no array where the reference met it as an AttributeError (``flip(None)``)."""
    try:
        return _infer(name, args, kwargs, is_array, learned)
    except AttributeError as err:
        refuse(err, name, args, kwargs, "ruda_remote", is_array, "ruda_remote arrays")


def _infer(
    name: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    is_array: Callable[[Any], bool],
    learned: dict[tuple[Any, ...], str] | None,
) -> list[Meta] | None:
    if learned:
        key = learned_key(name, args, kwargs, is_array)
        known = None if key is None else learned.get(key)
        if known is not None:
            if name in ELEMENTWISE_OPS:  # (the shape alone: no reference call)
                return [(_broadcast_shape(args, kwargs, is_array), known)]
            metas = _reference_metas(name, args, kwargs, is_array)
            return None if metas is None else [(shape, known) for shape, _ in metas]
    metas = _reference_metas(name, args, kwargs, is_array)
    if learned is None or metas is None or not backend_dependent(name, args, kwargs, is_array, metas):
        return metas
    return None


def learned_key(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any], is_array: Callable[[Any], bool]
) -> tuple[Any, ...] | None:
    """What the result dtype of op ``name`` depends on, where it may be the backend's choice (see
    :func:`backend_dependent`): an elementwise op's argument types, a reduction's operand
    dtype and kind of shape, a join's or a product's dtypes; None for other ops and arguments
    it does not describe."""
    if name in ELEMENTWISE_OPS:
        return elementwise_key(name, args, kwargs, is_array)
    if name in _CHOSEN_REDUCTIONS and args and is_array(args[0]):
        x = args[0]
        return (name, x.dtype, len(x.shape) == 0, 0 in tuple(x.shape), kwargs.get("dtype"))
    joined = args[0] if name in ("stack", "concat") and args else None
    if isinstance(joined, (list, tuple)) and all(is_array(a) for a in joined):
        return (name, *(a.dtype for a in joined))
    if name in _PRODUCTS and len(args) >= 2 and is_array(args[0]) and is_array(args[1]):
        return (name, args[0].dtype, args[1].dtype)
    return None


#: products of two arrays, whose float result of an integer and a float array is the backend's
_PRODUCTS = frozenset(
    {"matmul", "__matmul__", "__rmatmul__", "linalg.matmul", "tensordot", "linalg.tensordot", "linalg.cross"}
)


#: reductions whose result dtype, of integer or boolean operands, is the backend's: torch sums
#: uint8 into int64 (the standard: uint64), means them in its default float
_CHOSEN_REDUCTIONS = frozenset({"sum", "prod", "mean", "std", "var"})


def backend_dependent(
    name: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    is_array: Callable[[Any], bool],
    metas: list[Meta],
) -> bool:
    """Whether the result dtype the reference gives op ``name`` (in ``metas``) is the backend's
    to choose rather than the standard's: a floating or complex result of an integer or boolean
    array (``sqrt(int32)``, ``int32 / int32``, ``int32 + float32``, ``int32 + 2.5``, a
    ``concat`` of int32 and float32, ``float32 @ int32``), where NumPy gives float64 and torch
    and ruda_wgpu their default floating dtype; a sum, product, mean or variance of integers or
    booleans without ``dtype=``."""
    if name in _CHOSEN_REDUCTIONS:
        return kwargs.get("dtype") is None and np.dtype(args[0].dtype).kind in "iub"
    if np.dtype(metas[0][1]).kind not in "fc":
        return False
    if name in ("stack", "concat"):
        operands: Any = args[0]
    elif name in _PRODUCTS:
        operands = args[:2]
    elif name in ELEMENTWISE_OPS:
        operands = [*(args[1:] if name == "where" else args), *kwargs.values()]  # (where's condition)
    else:
        return False
    return any(is_array(a) and np.dtype(a.dtype).kind in "iub" for a in operands)


def _reference_metas(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any], is_array: Callable[[Any], bool]
) -> list[Meta] | None:
    """Result metas of op ``name`` as the reference (``ruda.host``) gives them, or None."""
    if name in ELEMENTWISE or name in _DUNDER_FNS:
        return [_elementwise(name, args, kwargs, is_array)]
    if name in VIEWS:
        return [_meta(_call_on_views(VIEWS[name], args, kwargs, is_array))]
    if name == "__getitem__":
        return _getitem(args[0], args[1], is_array)
    if name == "reshape":
        return _reshape(args, kwargs, is_array)
    if name in ("zeros", "ones", "empty", "full"):
        return [(tuple(args[0]), np.dtype(kwargs["dtype"]).name)]
    if name.endswith("_like") and is_array(args[0]):
        return [(tuple(args[0].shape), np.dtype(kwargs["dtype"]).name)]
    if name == "eye":
        rows, cols = args
        cols = rows if cols is None else cols
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (rows, cols)):
            raise ValueError(f"eye needs non-negative integer sizes, got {rows!r} and {cols!r}")
        return [((rows, cols), np.dtype(kwargs["dtype"]).name)]
    if name in REDUCTIONS:
        return _reduction(name, args, kwargs, is_array)
    if name in ("matmul", "__matmul__", "linalg.matmul") and len(args) == 2 and not kwargs:
        return _matmul(args[0], args[1], is_array)
    if name == "__rmatmul__" and len(args) == 2:
        return _matmul(args[1], args[0], is_array)
    if name in ("tensordot", "linalg.tensordot") and len(args) == 2 and set(kwargs) <= {"axes"}:
        return _tensordot(args[0], args[1], kwargs.get("axes", 2), is_array)
    if name == "astype":
        return [(tuple(args[0].shape), np.dtype(args[1]).name)] if len(args) == 2 else None
    if name in ("stack", "concat") and len(args) == 1 and set(kwargs) <= {"axis"}:
        return _join(name, args[0], kwargs.get("axis", 0), is_array)
    if name == "linalg.cross" and len(args) == 2 and set(kwargs) <= {"axis"}:
        return _cross(args[0], args[1], kwargs.get("axis", -1), is_array)
    return None


def _meta(x: Any) -> Meta:
    return tuple(int(n) for n in x.shape), x.dtype.name


_DTYPE_CACHE: dict[tuple[Any, ...], str] = {}

#: elementwise functions and operators (their result dtype is cached by argument types)
ELEMENTWISE_OPS = ELEMENTWISE | frozenset(_DUNDER_FNS)


def cached_dtype(key: tuple[Any, ...]) -> str | None:
    """The result dtype of an elementwise op already inferred for the same argument types (none
    for one that is the backend's to choose: see :func:`backend_dependent`)."""
    return _DTYPE_CACHE.get(key)


def elementwise_key(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any], is_array: Callable[[Any], bool]
) -> tuple[Any, ...] | None:
    """What the result dtype of elementwise op ``name`` depends on: its argument types (of a
    Python int, which dtypes it fits); None for arguments it does not describe."""
    try:
        return (
            name,
            *(_signature(python_scalar(a), is_array) for a in args),
            *((k, _signature(v, is_array)) for k, v in kwargs.items()),
        )
    except (_UncachedError, TypeError):
        return None


def _signature(value: Any, is_array: Callable[[Any], bool]) -> Any:
    # A Python int's range matters (it may not fit the array's dtype), as its sign and the bits
    # of v or of -v - 1 (those of -128 fit int8, -129 not): a loop over many ints then asks the
    # server once per range, not once per value. Other scalars' types suffice.
    if is_array(value):
        return value.dtype
    if isinstance(value, bool) or value is None or isinstance(value, (float, complex)):
        return type(value)
    if isinstance(value, int):
        return int_range(value)
    raise _UncachedError


def int_range(value: int) -> tuple[type, bool, int]:
    """What decides which dtypes a Python int fits: its sign and the bits of ``value`` or of
    ``-value - 1`` (those of -128 fit int8, -129 not)."""
    return (int, value < 0, (~value if value < 0 else value).bit_length())


class _UncachedError(Exception):
    pass


def _elementwise(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any], is_array: Callable[[Any], bool]
) -> Meta:
    # NumPy scalars travel as the Python scalars they hold (see _dispatch): infer as the server runs
    args = tuple(python_scalar(a) for a in args)
    shape = _broadcast_shape(args, kwargs, is_array)
    key = elementwise_key(name, args, kwargs, is_array)
    if key is not None:
        dtype = _DTYPE_CACHE.get(key)
        if dtype is not None:
            return shape, dtype
    fn = _DUNDER_FNS.get(name) or getattr(host, name)
    with np.errstate(all="ignore"):
        result = fn(
            *_map(args, _stand_in, is_array), **{k: _map(v, _stand_in, is_array) for k, v in kwargs.items()}
        )
    if result is NotImplemented:
        raise TypeError(f"unsupported operand types for {name}")
    dtype = np.asarray(result).dtype.name
    if key is not None and not backend_dependent(name, args, kwargs, is_array, [(shape, dtype)]):
        if len(_DTYPE_CACHE) > 4096:
            _DTYPE_CACHE.clear()
        _DTYPE_CACHE[key] = dtype
    return shape, dtype


def _broadcast_shape(
    args: tuple[Any, ...], kwargs: dict[str, Any], is_array: Callable[[Any], bool]
) -> tuple[int, ...]:
    """The shape the array arguments of an elementwise op broadcast to."""
    shapes = [tuple(a.shape) for a in (*args, *kwargs.values()) if is_array(a)]
    return shapes[0] if len(shapes) == 1 else tuple(np.broadcast_shapes(*shapes))


def infer_in_place(name: str, target: Any, other: Any, is_array: Callable[[Any], bool]) -> None:
    """Raise here what ``target <op>= other`` would raise: a dtype or shape the target cannot hold."""
    if name == "__imatmul__":
        raise TypeError("in-place matmul (@=) is not supported on remote arrays; write x = x @ y")
    fn = getattr(operator, "i" + name[3:-2])
    shape = np.broadcast_shapes(tuple(target.shape), tuple(other.shape) if is_array(other) else ())
    if shape != tuple(target.shape):
        raise ValueError(
            f"in-place {name}: operand of shape {tuple(other.shape)} does not broadcast "
            f"to the target's shape {tuple(target.shape)}"
        )
    stand_in = np.ones((1,), dtype=target.dtype)
    with np.errstate(all="ignore"):
        fn(stand_in, _stand_in(other) if is_array(other) else other)


def _call_on_views(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], is_array: Callable[[Any], bool]
) -> Any:
    return fn(*_map(args, _view_stand_in, is_array), **kwargs)


def is_basic_key(key: Any) -> bool:
    """Whether ``key`` holds only integers, slices, ``...`` and None (a view, never data-dependent)."""
    parts = key if isinstance(key, tuple) else (key,)
    return all(
        p is None
        or p is Ellipsis
        or (isinstance(p, int) and not isinstance(p, bool))
        or (isinstance(p, slice) and all(b is None or type(b) is int for b in (p.start, p.stop, p.step)))
        for p in parts
    )


def _getitem(x: Any, key: Any, is_array: Callable[[Any], bool]) -> list[Meta] | None:
    if not is_basic_key(key):
        return None
    return [_meta(_view_stand_in(x)[key])]


def check_setitem(x: Any, key: Any, value: Any, is_array: Callable[[Any], bool]) -> None:
    """Raise here what ``x[key] = value`` would raise: a scalar that ``x``'s dtype cannot hold
    (``-1`` into uint8, ``1j`` into float64, NaN into int64: the reference's errors), and, for
    keys of ints, slices, ``...`` and None, an array that does not broadcast to the selection.
    Sent, such an assignment would fail on the server at a later wait, and fail ``x`` with it
    (the client has written into it)."""
    if not is_array(value):
        np.zeros((), dtype=x.dtype)[()] = python_scalar(value)
    if not is_basic_key(key):
        return
    target = _view_stand_in(x)[key]
    if is_array(value) and np.broadcast_shapes(tuple(value.shape), target.shape) != target.shape:
        raise ValueError(
            f"cannot assign an array of shape {tuple(value.shape)} to a selection of shape {target.shape}"
        )


REDUCTIONS = frozenset(
    {"sum", "prod", "max", "min", "mean", "std", "var", "all", "any", "argmax", "argmin", "count_nonzero"}
)


def _reduction(
    name: str, args: tuple[Any, ...], kwargs: dict[str, Any], is_array: Callable[[Any], bool]
) -> list[Meta] | None:
    if len(args) != 1 or not is_array(args[0]) or set(kwargs) - {"axis", "keepdims", "dtype", "correction"}:
        return None
    x = args[0]
    # The reference on a tiny array of the same rank and dtype (every side at most 1): it checks
    # axis and dtype, raises what the server would (a max over an empty axis), and gives the dtype.
    tiny = np.zeros(tuple(min(n, 1) for n in x.shape), dtype=x.dtype)
    with np.errstate(all="ignore"):
        result = np.asarray(
            getattr(host, name)(tiny, **{k: _map(v, np.dtype, _is_dtype) for k, v in kwargs.items()})
        )
    axis, keepdims = kwargs.get("axis"), bool(kwargs.get("keepdims", False))
    if axis is None:
        reduced = set(range(x.ndim))
    else:
        axes = axis if isinstance(axis, tuple) else (axis,)
        reduced = {a % x.ndim for a in axes} if x.ndim else set()
    shape = tuple(1 if i in reduced else n for i, n in enumerate(x.shape) if keepdims or i not in reduced)
    if result.ndim != len(shape):
        return None  # a reading of the arguments this does not model: ask the server
    return [(shape, result.dtype.name)]


def _is_dtype(value: Any) -> bool:
    return isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic))


def _matmul(a: Any, b: Any, is_array: Callable[[Any], bool]) -> list[Meta] | None:
    if not (is_array(a) and is_array(b)):
        return None
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul needs arrays of at least one dimension, not 0-d arrays")
    sa = (1, *a.shape) if a.ndim == 1 else tuple(a.shape)
    sb = (*b.shape, 1) if b.ndim == 1 else tuple(b.shape)
    if sa[-1] != sb[-2]:
        raise ValueError(
            f"matmul: last axis of {tuple(a.shape)} does not match the contracted axis of {tuple(b.shape)}"
        )
    shape = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
    shape += ((sa[-2],) if a.ndim > 1 else ()) + ((sb[-1],) if b.ndim > 1 else ())
    dtype = host.matmul(np.ones((1, 1), a.dtype), np.ones((1, 1), b.dtype)).dtype.name
    return [(shape, dtype)]


def _tensordot(a: Any, b: Any, axes: Any, is_array: Callable[[Any], bool]) -> list[Meta] | None:
    if not (is_array(a) and is_array(b)):
        return None
    if isinstance(axes, int) and not isinstance(axes, bool):
        if not 0 <= axes <= min(a.ndim, b.ndim):
            raise ValueError(
                f"tensordot: axes={axes} is out of range for arrays of {a.ndim} and {b.ndim} dimensions"
            )
        axes_a, axes_b = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    elif (
        isinstance(axes, (tuple, list)) and len(axes) == 2 and all(isinstance(s, (tuple, list)) for s in axes)
    ):
        if len(axes[0]) != len(axes[1]):
            raise ValueError(f"tensordot: axes {axes} pair sequences of different lengths")
        for ax, n in ((axes[0], a.ndim), (axes[1], b.ndim)):
            if not all(isinstance(i, int) and -n <= i < n for i in ax):
                raise ValueError(f"tensordot: axes {ax} are out of range for an array of {n} dimensions")
        axes_a, axes_b = [i % a.ndim for i in axes[0]], [i % b.ndim for i in axes[1]]
    else:
        return None
    for i, j in zip(axes_a, axes_b, strict=True):
        if a.shape[i] != b.shape[j]:
            raise ValueError(
                f"tensordot: axis {i} of {tuple(a.shape)} does not match axis {j} of {tuple(b.shape)}"
            )
    shape = tuple(n for i, n in enumerate(a.shape) if i not in axes_a) + tuple(
        n for j, n in enumerate(b.shape) if j not in axes_b
    )
    return [(shape, np.dtype(host.result_type(a.dtype, b.dtype)).name)]


def _reshape(
    args: tuple[Any, ...], kwargs: dict[str, Any], is_array: Callable[[Any], bool]
) -> list[Meta] | None:
    if len(args) != 2 or set(kwargs) - {"copy"}:
        return None
    x, shape = args
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    known = [n for n in shape if n != -1]
    if any(not isinstance(n, int) or n < -1 for n in shape) or len(shape) - len(known) > 1:
        raise ValueError(f"invalid shape {shape} for reshape: non-negative integers and at most one -1")
    size, rest = math.prod(x.shape), math.prod(known)
    if len(known) < len(shape):
        if rest == 0 or size % rest:
            raise ValueError(f"cannot reshape an array of size {size} into shape {shape}")
        shape = tuple(size // rest if n == -1 else n for n in shape)
    elif rest != size:
        raise ValueError(f"cannot reshape an array of size {size} into shape {shape}")
    return [(shape, np.dtype(x.dtype).name)]


def _tiny(x: Any, keep: int | None = None) -> np.ndarray:
    """A NumPy array of ``x``'s rank and dtype with every side 1 (but side ``keep``, kept), for
    the reference to check axes and dtypes on without allocating ``x``'s size."""
    return np.zeros(tuple(n if i == keep else 1 for i, n in enumerate(x.shape)), dtype=x.dtype)


def _join(name: str, arrays: Any, axis: Any, is_array: Callable[[Any], bool]) -> list[Meta] | None:
    """``stack`` and ``concat`` of arrays whose shapes agree as they must; anything else (shapes
    that disagree, an axis of None for stack) is left to the server, which says what is wrong."""
    if not isinstance(arrays, (list, tuple)) or not arrays or not all(is_array(a) for a in arrays):
        return None
    if not (isinstance(axis, int) and not isinstance(axis, bool)) and not (name == "concat" and axis is None):
        return None
    shapes = [tuple(a.shape) for a in arrays]
    first = shapes[0]
    with np.errstate(all="ignore"):  # checks the axis and gives the dtype, on tiny stand-ins
        dtype = np.asarray(getattr(host, name)([_tiny(a) for a in arrays], axis=axis)).dtype.name
    if name == "stack":
        if axis is None or any(s != first for s in shapes):
            return None
        at = axis % (len(first) + 1)
        return [((*first[:at], len(arrays), *first[at:]), dtype)]
    if axis is None:
        return [((sum(math.prod(s) for s in shapes),), dtype)]
    at = axis % len(first)
    if any(len(s) != len(first) or s[:at] + s[at + 1 :] != first[:at] + first[at + 1 :] for s in shapes):
        return None
    return [((*first[:at], sum(s[at] for s in shapes), *first[at + 1 :]), dtype)]


def _cross(a: Any, b: Any, axis: Any, is_array: Callable[[Any], bool]) -> list[Meta] | None:
    """``linalg.cross``: the arguments' broadcast shape, its dtype and the axis checked by the
    reference on stand-ins that keep only the axis's side. A shape that does not broadcast, or
    an axis outside either array, is left to the server."""
    if not (is_array(a) and is_array(b)) or not isinstance(axis, int) or isinstance(axis, bool):
        return None
    if not (-a.ndim <= axis < a.ndim and -b.ndim <= axis < b.ndim):
        return None
    try:
        shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    except ValueError:
        return None
    ka, kb = axis % a.ndim, axis % b.ndim
    if axis >= 0 and a.ndim != b.ndim:
        return None  # a non-negative axis of arrays of two ranks: the backend's reading decides
    with np.errstate(all="ignore"):
        result = np.asarray(host.linalg.cross(_tiny(a, ka), _tiny(b, kb), axis=axis))
    if result.ndim != len(shape):
        return None
    return [(shape, result.dtype.name)]
