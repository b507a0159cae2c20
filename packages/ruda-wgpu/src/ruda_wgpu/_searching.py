"""argmax, argmin, nonzero, searchsorted, and the stream compaction behind masks and unique."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from ruda._array import python_scalar

from ruda_wgpu import _dtypes
from ruda_wgpu._array import Array, contiguous, empty
from ruda_wgpu._creation import asarray
from ruda_wgpu._elementwise import apply, astype
from ruda_wgpu._engine import WORKGROUP, GpuDevice, Storage, storage_itemsize
from ruda_wgpu._info import default_dtypes_of
from ruda_wgpu._kernels import SHORT_ROWS, THREAD_WORKGROUP, bind, lib, run, wgsl_type
from ruda_wgpu._manipulation import permute_dims, reshape
from ruda_wgpu._scan import scan_rows

_U32 = _dtypes.uint32


def _check(x: Any, fn: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{fn}() takes a ruda_wgpu array, not {type(x).__name__}")
    return x


def _better(dtype: np.dtype[Any], largest: bool) -> str:
    """WGSL: is (v, i) preferred over (w, j)? NaN first, then by value, then the lower index."""
    cmp = ">" if largest else "<"
    by_value = f"v {cmp} w || (v == w && i < j)"
    if dtype.kind != "f":
        return f"return {by_value};"
    nan = lib("isnan", wgsl_type(dtype))
    return f"""
  if ({nan}(v)) {{ return !{nan}(w) || i < j; }}
  if ({nan}(w)) {{ return false; }}
  return {by_value};"""


def _arg_reduce(x: Array, axis: int | None, keepdims: bool, largest: bool, fn: str) -> Array:
    x = _check(x, fn)
    if x.dtype.kind not in "iuf":
        raise TypeError(f"{fn}() needs a real-valued array, not {x.dtype.name}")
    if axis is None:
        rows_first, k = reshape(x, (1, -1)), x.size
        out_shape: tuple[int, ...] = (1,) * x.ndim if keepdims else ()
    else:
        axis = operator.index(axis)
        if not -x.ndim <= axis < x.ndim:
            raise IndexError(f"{fn}(): axis {axis} is out of range for {x.ndim} dimensions")
        axis %= x.ndim
        k = x.shape[axis]
        rest = tuple(n for d, n in enumerate(x.shape) if d != axis)
        rows_first = permute_dims(x, (*[d for d in range(x.ndim) if d != axis], axis))
        out_shape = (*x.shape[:axis], 1, *x.shape[axis + 1 :]) if keepdims else rest
    if k == 0:
        raise ValueError(f"{fn}() of an empty sequence has no answer: reduce a non-empty axis")
    src = contiguous(rows_first)
    m = src.size // k
    dev = x.device
    _, indices = _arg_reduce_rows(dev, src, m, k, _better(x.dtype, largest))
    result = Array._new(indices, (m,), _U32, dev)
    return reshape(astype(result, default_dtypes_of(dev)["indexing"]), out_shape)


#: rows a CPU adapter's argmax takes before it runs a thread a row (fewer take a workgroup a row,
#: whose threads split each row, unless the rows are short)
THREAD_ROWS = 256


def _arg_reduce_rows(dev: GpuDevice, src: Array, m: int, k: int, better: str) -> tuple[Storage, Storage]:
    """The best (value, index) of each of ``m`` rows of ``k``: parts of long rows, then the parts;
    on a CPU adapter, with many or short rows, a thread a row."""
    if dev.cpu and (m >= THREAD_ROWS or k <= SHORT_ROWS):
        values, positions, bindings = _pairs(dev, m, src.dtype)
        bind_a, a_base = bind(dev, src._storage, src._offset, m * k, src.dtype, "argmax")
        subs = {"T": wgsl_type(src.dtype), "WG": THREAD_WORKGROUP, "BETTER": better}
        run(dev, "argreduce_rows", subs, [*bindings, bind_a], [m, k, a_base], -(-m // THREAD_WORKGROUP))
        return values, positions
    subs = {"T": wgsl_type(src.dtype), "WG": WORKGROUP, "BETTER": better}
    cur, cur_base, cur_k, index = src._storage, src._offset, k, None
    while True:
        g = 1 if cur_k <= WORKGROUP * 8 else min(-(-cur_k // (WORKGROUP * 8)), 1024)
        values, positions, bindings = _pairs(dev, m * g, src.dtype)
        bind_a, a_base = bind(dev, cur, cur_base, m * cur_k, src.dtype, "argmax")
        bind_i = bind(dev, index, 0, m * cur_k, _U32, "argmax")[0] if index is not None else bind_a
        total = m * g
        for w0 in range(0, total, dev.max_groups * dev.max_groups):
            params = [m, cur_k, g, a_base, w0, index is None]
            groups = min(total - w0, dev.max_groups * dev.max_groups)
            run(dev, "argreduce", subs, [*bindings, bind_a, bind_i], params, groups)
        if g == 1:
            return values, positions
        cur, cur_base, cur_k, index = values, 0, g, positions


def _pairs(dev: GpuDevice, count: int, dtype: np.dtype[Any]) -> tuple[Storage, Storage, list[Any]]:
    """Storage for ``count`` (value, index) pairs of an argmax pass, and its two bindings."""
    values = Storage(dev, count * storage_itemsize(dtype))
    positions = Storage(dev, count * 4)
    bindings = [
        bind(dev, values, 0, count, dtype, "argmax")[0],
        bind(dev, positions, 0, count, _U32, "argmax")[0],
    ]
    return values, positions, bindings


def argmax(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the largest element along ``axis`` (of the flattened array when None); the first
    one among equals, and the first NaN if there is one, as NumPy's."""
    return _arg_reduce(x, axis, keepdims, True, "argmax")


def argmin(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the smallest element along ``axis``; the first among equals, or the first NaN."""
    return _arg_reduce(x, axis, keepdims, False, "argmin")


def flat_nonzero(x: Array) -> Array:
    """Flat (row-major) positions of the non-zero elements of ``x``, as a uint32 array.

    The count is read back to size the result: the one host round trip that an
    output shape depending on data needs.
    """
    dev = x.device
    flags = x if x.dtype == _dtypes.bool_ else apply("not_equal", x, False if x.dtype.kind == "b" else 0)
    flags = contiguous(flags)
    n = flags.size
    if n == 0:
        return empty((0,), _U32, dev)
    positions = Storage(dev, n * 4)
    scan_rows(dev, (flags._storage, flags._offset, flags.dtype), 1, n, _U32, "sum", (positions, 0, n))
    count = int(np.frombuffer(dev.read(positions.buffer, (n - 1) * 4, 4), np.uint32)[0])
    out = empty((count,), _U32, dev)
    if count:
        bind_f, f_base = bind(dev, flags._storage, flags._offset, n, flags.dtype, "nonzero")
        bindings = [
            bind(dev, out._storage, 0, count, _U32, "nonzero")[0],
            bind(dev, positions, 0, n, _U32, "nonzero")[0],
            bind_f,
        ]
        run(dev, "compact", {"WG": WORKGROUP}, bindings, [n, f_base], -(-n // WORKGROUP))
    return out


def nonzero(x: Array, /) -> tuple[Array, ...]:
    """Indices of the non-zero elements, one array per dimension (row-major order)."""
    x = _check(x, "nonzero")
    if x.ndim == 0:
        raise ValueError("nonzero() needs an array of at least one dimension (the standard has no 0-D form)")
    flat = flat_nonzero(x)
    index = default_dtypes_of(x.device)["indexing"]
    positions = astype(flat, index)
    out = []
    stride = x.size
    for d, n in enumerate(x.shape):
        stride //= n or 1
        coord = apply("floor_divide", positions, stride) if stride > 1 else positions
        out.append(coord if d == 0 else apply("remainder", coord, n))
    return tuple(out)


def _less(dtype: np.dtype[Any]) -> str:
    return f"return {lib('less', wgsl_type(dtype))}(x, y);" if dtype.kind == "f" else "return x < y;"


def searchsorted(
    x1: Array, x2: Array | int | float, /, *, side: str = "left", sorter: Array | None = None
) -> Array:
    """Where each element of ``x2`` would go in the sorted 1-D ``x1`` (a binary search per element)."""
    from ruda_wgpu._indexing import take

    x1 = _check(x1, "searchsorted")
    if x1.ndim != 1:
        raise ValueError(f"searchsorted() needs a one-dimensional x1, not shape {x1.shape}")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted(): side must be 'left' or 'right', not {side!r}")
    x2 = python_scalar(x2)
    if isinstance(x2, bool | int | float):
        _dtypes.check_scalar_kind(x2, x1.dtype)
        x2 = asarray(x2, dtype=x1.dtype, device=x1.device)
    x2 = _check(x2, "searchsorted")
    if x2.device is not x1.device:
        raise ValueError(
            f"searchsorted() got arrays on two devices, {x1.device} and {x2.device}: "
            "move one with to_device()"
        )
    if sorter is not None:
        x1 = take(x1, _check(sorter, "searchsorted"), axis=0)
    dt = _dtypes.result_type(x1, x2)
    a, q = contiguous(astype(x1, dt, copy=False)), contiguous(astype(x2, dt, copy=False))
    dev = x1.device
    out = empty(q.shape, _U32, dev)
    if q.size:
        bind_a, a_base = bind(dev, a._storage, a._offset, a.size, dt, "searchsorted")
        bind_q, q_base = bind(dev, q._storage, q._offset, q.size, dt, "searchsorted")
        bind_o = bind(dev, out._storage, 0, q.size, _U32, "searchsorted")[0]
        subs = {"T": wgsl_type(dt), "LESS": _less(dt), "WG": WORKGROUP}
        params = [a.size, q.size, a_base, q_base, side == "right"]
        run(dev, "search", subs, [bind_o, bind_a, bind_q], params, -(-q.size // WORKGROUP))
    return astype(out, default_dtypes_of(dev)["indexing"])
