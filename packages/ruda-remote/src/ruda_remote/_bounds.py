"""Upper bounds on the bytes an op makes, for the ops whose results the client's inference
(:func:`ruda_remote._meta.infer`) does not size and that can make far more than their operands
hold: ``tile``, ``repeat``, ``meshgrid``, ``take``, ``linalg.outer``, an FFT given a length,
``fft.fftfreq``, ``svd`` with full matrices, and so on. The server reserves a bound before the
backend runs such an op whose result the client did not announce (the public client announces
only what it infers), so that ``tile(x, (10**6, 10**6))`` is refused under the session's limit
instead of being made first.

The bounds work on stand-ins: NumPy arrays of an operand's shape and dtype holding one element
(``repeat``'s counts, whose sum is the result's length, are its real values). A bound may be
larger than what the op makes (a boolean mask's selection is bounded by the whole array), never
smaller. Ops left out make at most a fixed multiple of their operands (sorting, ``unique_*``,
``nonzero``, the linalg of square matrices): the limit checks their results once made.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

Bound = Callable[[tuple[Any, ...], dict[str, Any]], int | None]

_FFT_1D = ("fft.fft", "fft.ifft", "fft.rfft", "fft.irfft", "fft.hfft", "fft.ihfft")
_FFT_ND = ("fft.fftn", "fft.ifftn", "fft.rfftn", "fft.irfftn")
#: transforms whose default output length on the (last) axis is 2 (m - 1) for an input of m
_REAL_OUTPUT = ("fft.irfft", "fft.hfft", "fft.irfftn")


def result_bound(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    """Bytes that op ``name`` on stand-in ``args`` and ``kwargs`` makes at most, or None where no
    bound is kept (see the module's docstring) or the arguments are not what the op takes (the
    backend then raises its own error)."""
    bound = _BOUNDS.get(name)
    if bound is None:
        return None
    try:
        return bound(args, kwargs)
    except Exception:  # (arguments the op does not take: the backend raises its own error)
        return None


def _is_array(value: Any) -> bool:
    return isinstance(value, np.ndarray)


def _count(value: Any) -> int:
    """A non-negative integer argument (a length or a count; a negative one is the backend's to
    refuse, and makes nothing)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"expected an integer, got {value!r}")
    return max(int(value), 0)


def _bytes(shape: Sequence[int], itemsize: int) -> int:
    return math.prod(shape) * itemsize


def _envelope(shapes: Sequence[tuple[int, ...]]) -> int:
    """Elements of the largest array the shapes can broadcast to, aligned on the right (whether
    they broadcast is the backend's to check)."""
    rank = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (rank - len(s)) + s for s in shapes]
    return math.prod(max(dims, default=1) for dims in zip(*padded, strict=True))


def _broadcast(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """All the array operands broadcast, of their widest dtype (solve, take_along_axis)."""
    arrays = [a for a in (*args, *kwargs.values()) if _is_array(a)]
    if not arrays:
        raise TypeError("no array operand")
    return int(_envelope([a.shape for a in arrays]) * max(a.dtype.itemsize for a in arrays))


def _tile(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    x, reps = args
    reps = tuple(_count(r) for r in reps)
    rank = max(x.ndim, len(reps))
    shape = (1,) * (rank - x.ndim) + x.shape
    reps = (1,) * (rank - len(reps)) + reps
    return _bytes([n * r for n, r in zip(shape, reps, strict=True)], x.dtype.itemsize)


def _repeat(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    x, repeats = args
    axis = kwargs.get("axis")
    length = x.size if axis is None else x.shape[axis]
    if _is_array(repeats):
        # the counts' real values (see Session._inferred_bytes), summed as floats: no overflow
        total = math.ceil(np.sum(np.maximum(repeats, 0), dtype=np.float64))
        elements = total if repeats.size > 1 else total * length
    else:
        elements = _count(repeats) * length
    rest = 1 if axis is None else x.size // max(length, 1)
    return int(elements * rest * x.dtype.itemsize)


def _meshgrid(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    if not args or not all(_is_array(a) for a in args):
        raise TypeError("meshgrid takes arrays")
    return int(math.prod(a.size for a in args) * sum(a.dtype.itemsize for a in args))


def _vecdot(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """The two operands broadcast, less the axis they are multiplied along."""
    a, b = args
    axis = kwargs.get("axis", -1)
    shapes = [tuple(n for i, n in enumerate(x.shape) if i != axis % x.ndim) for x in (a, b)]
    return int(_envelope(shapes) * np.result_type(a.dtype, b.dtype).itemsize)


def _take(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    x, indices = args
    axis = kwargs.get("axis", 0 if x.ndim == 1 else None)
    if axis is None:
        raise TypeError("take of an array of several axes needs axis")
    rest = math.prod(n for i, n in enumerate(x.shape) if i != axis % x.ndim)
    return int(indices.size * rest * x.dtype.itemsize)


def _outer(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    a, b = args
    return int(a.size * b.size * np.result_type(a.dtype, b.dtype).itemsize)


def _fftfreq(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    dtype = kwargs.get("dtype")
    return _count(args[0]) * max(8, 0 if dtype is None else np.dtype(dtype).itemsize)


def _svd(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    x = args[0]
    *batch, m, n = x.shape
    full = kwargs.get("full_matrices", True)
    k = min(m, n)
    elements = (m * m + n * n + k) if full else (m * k + k * n + k)
    return int(math.prod(batch) * elements * x.dtype.itemsize)


def _qr(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    x = args[0]
    *batch, m, n = x.shape
    complete = kwargs.get("mode", "reduced") == "complete"
    k = min(m, n)
    elements = (m * m + m * n) if complete else (m * k + k * n)
    return int(math.prod(batch) * elements * x.dtype.itemsize)


def _getitem(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """``x[key]`` with array indices: the broadcast index arrays' elements times those of the
    axes that no array or integer indexes (a boolean mask stands for at most its size)."""
    x, key = args
    parts = key if isinstance(key, tuple) else (key,)
    # (a list or tuple in a key indexes as the array it makes, as in NumPy)
    parts = tuple(np.asarray(p) if isinstance(p, list | tuple) else p for p in parts)
    consumed = sum(
        (p.ndim if p.dtype == np.bool_ else 1) if _is_array(p) else 1
        for p in parts
        if p is not None and p is not Ellipsis and not isinstance(p, bool)
    )
    dims = iter(x.shape)
    index_shapes, kept = [], 1
    for p in parts:
        if p is None or isinstance(p, bool):  # (a new axis of length 1)
            continue
        if p is Ellipsis:
            for _ in range(x.ndim - consumed):
                kept *= next(dims)
        elif _is_array(p) and p.dtype == np.bool_:
            index_shapes.append((math.prod(next(dims) for _ in range(p.ndim)),))
        elif _is_array(p):
            next(dims)
            index_shapes.append(p.shape)
        else:  # an integer drops its axis; a slice keeps at most the whole axis
            n = next(dims)
            kept *= 1 if isinstance(p, int) else n
    for n in dims:
        kept *= n
    return int(_envelope(index_shapes) * kept * x.dtype.itemsize)


def _fft_itemsize(x: Any) -> int:
    """The itemsize of a transform's result: the complex dtype of the input's precision (a real
    output, irfft's and hfft's, is half of it)."""
    return int(x.dtype.itemsize * (1 if x.dtype.kind == "c" else 2))


def _fft_1d(name: str) -> Bound:
    """The bound of the one-dimensional transform ``name``: the input with ``n`` elements on
    ``axis`` (by default m, or 2 (m - 1) for a real output)."""

    def bound(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
        x = args[0]
        axis = kwargs.get("axis", -1) % x.ndim
        n, m = kwargs.get("n"), x.shape[axis]
        shape = list(x.shape)
        shape[axis] = _count(n) if n is not None else 2 * m if name in _REAL_OUTPUT else m
        return _bytes(shape, _fft_itemsize(x))

    return bound


def _fft_nd(name: str) -> Bound:
    """The bound of the n-dimensional transform ``name``: the input with the lengths ``s`` on
    ``axes`` (by default the last ``len(s)``; a length of -1 or none as in :func:`_fft_1d`)."""

    def bound(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
        x = args[0]
        s, axes = kwargs.get("s"), kwargs.get("axes")
        if axes is None:
            axes = range(x.ndim - (x.ndim if s is None else len(s)), x.ndim)
        lengths = [-1] * len(axes) if s is None else [v if v == -1 else _count(v) for v in s]
        shape = list(x.shape)
        for axis, length in zip(axes, lengths, strict=True):
            m = x.shape[axis]
            shape[axis] = length if length != -1 else 2 * m if name in _REAL_OUTPUT else m
        return _bytes(shape, _fft_itemsize(x))

    return bound


_BOUNDS: dict[str, Bound] = {
    "tile": _tile,
    "repeat": _repeat,
    "meshgrid": _meshgrid,
    "take": _take,
    "take_along_axis": _broadcast,
    "linalg.outer": _outer,
    "vecdot": _vecdot,
    "linalg.vecdot": _vecdot,
    "linalg.solve": _broadcast,
    "fft.fftfreq": _fftfreq,
    "fft.rfftfreq": _fftfreq,
    "linalg.svd": _svd,
    "linalg.qr": _qr,
    "__getitem__": _getitem,
    **{name: _fft_1d(name) for name in _FFT_1D},
    **{name: _fft_nd(name) for name in _FFT_ND},
}
