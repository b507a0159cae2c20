"""argmax, argmin, nonzero, searchsorted, and the stream compaction behind masks and unique."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from ruda._array import python_scalar

from ruda_wgpu import _dtypes
from ruda_wgpu._array import Array, contiguous, empty
from ruda_wgpu._buffers import Storage, storage_itemsize
from ruda_wgpu._creation import asarray
from ruda_wgpu._encoding import Step
from ruda_wgpu._engine import WORKGROUP, GpuDevice
from ruda_wgpu._info import default_dtypes_of
from ruda_wgpu._kernels import bind, convert, kernel_step, lib, prepared, run, wgsl_type
from ruda_wgpu._manipulation import _axis, concat, permute_dims, reshape
from ruda_wgpu._ops import apply, astype
from ruda_wgpu._parts import fits, halves, outer_axis, too_large, window_elements, windows
from ruda_wgpu._reduce_kernels import (
    PART,
    SHORT_ROWS,
    THREAD_WORKGROUP,
    strided_span,
    thread_parts,
    thread_passes,
)
from ruda_wgpu._scan import scan_rows
from ruda_wgpu._statistical import check_keepdims, fold_strides

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
    check_keepdims(keepdims)
    if x.dtype.kind not in "iuf":
        raise TypeError(f"{fn}() needs a real-valued array, not {x.dtype.name}")
    if axis is None:
        view = (1, x.size, 1)
        out_shape: tuple[int, ...] = (1,) * x.ndim if keepdims else ()
        groups = ((0, 0), (0, x.ndim), (x.ndim, x.ndim))
        axis_last = tuple(range(x.ndim))
    else:
        axis = _axis(axis, x.ndim, fn)
        view = (math.prod(x.shape[:axis]), x.shape[axis], math.prod(x.shape[axis + 1 :]))
        rest = tuple(n for d, n in enumerate(x.shape) if d != axis)
        out_shape = (*x.shape[:axis], 1, *x.shape[axis + 1 :]) if keepdims else rest
        groups = ((0, axis), (axis, axis + 1), (axis + 1, x.ndim))
        axis_last = (*[d for d in range(x.ndim) if d != axis], axis)
    a, k, b = view
    if k == 0:
        raise ValueError(f"{fn}() of an empty sequence has no answer: reduce a non-empty axis")
    if too_large(x):
        return _arg_reduce_parts(x, axis, keepdims, largest, fn)
    dev, better = x.device, _better(x.dtype, largest)
    index = default_dtypes_of(dev)["indexing"]
    if a * b == 0:
        return empty(out_shape, index, dev)
    if not (_thread_a_row(dev, a * b, k) or (b > 1 and _threads_in_place(dev, a, k, b))):
        # rows of k, a workgroup each; the axis moved last by a copy where it is not last already
        src = contiguous(permute_dims(x, axis_last) if b > 1 else x)
        indices = _arg_reduce_rows(dev, src._storage, src._offset, a * b, k, src.dtype, better, index)
    else:
        flat = (k * b, b, 1)
        strides = fold_strides(x.shape, x._strides, groups, flat)
        limit = dev.max_binding - dev.offset_align
        if strides is None or strided_span(view, strides) * storage_itemsize(x.dtype) > limit:
            x, strides = contiguous(x), flat
        indices = _arg_reduce_threads(dev, x._storage, x._offset, view, strides, x.dtype, better, index)
    return reshape(Array._new(indices, (a * b,), index, dev), out_shape)


def _arg_reduce_parts(x: Array, axis: int | None, keepdims: bool, largest: bool, fn: str) -> Array:
    """:func:`_arg_reduce` of an ``x`` too large for one storage binding: halves along another
    axis, joined; or, when only the reduced axis is longer than 1, the best of each window of
    it, then the best of those (the first window's among equals, so still the first index)."""
    if axis is None:
        best = _arg_reduce_parts(reshape(x, (-1,)), 0, False, largest, fn)
        return reshape(best, (1,) * x.ndim if keepdims else ())
    d = outer_axis(x.shape, axis)
    if d is not None:
        parts = [_arg_reduce(half, axis, keepdims, largest, fn) for half in halves(x, d)]
        return concat(parts, axis=d if keepdims or d < axis else d - 1)
    from ruda_wgpu._indexing import take  # (which imports this module)

    line = reshape(x, (-1,))
    picks, values = [], []
    for start, stop in windows(line.size, window_elements(x.device, storage_itemsize(x.dtype))):
        part = line[start:stop]
        pick = _arg_reduce(part, 0, True, largest, fn)
        values.append(take(part, pick))
        picks.append(apply("add", pick, start))
    best = take(concat(picks), _arg_reduce(concat(values), 0, True, largest, fn))
    return reshape(best, (1,) * x.ndim if keepdims else (1,) * (x.ndim - 1))


#: rows an argmax takes before it runs a thread a row (fewer take a workgroup a row, whose
#: threads split each row; on a CPU adapter short rows go a thread a row however few they are)
THREAD_ROWS = 256
#: on a GPU, the longest rows that go a thread a row. On the H200, over the last axis: (1e6, 16)
#: 2.33 ms a workgroup a row, 0.076 a thread a row; (1e5, 128) 0.31 → 0.11; (1e4, 256) 0.106 →
#: 0.127, a loss: a thread reading 256 elements alone no longer pays for the idle threads
GPU_THREAD_ROW = 128


def _thread_a_row(dev: GpuDevice, m: int, k: int) -> bool:
    """Does the argmax of ``m`` rows of ``k`` run a thread a row on ``dev``? (An axis before the
    last is then read in place; so it is, on more occasions, by :func:`_threads_in_place`.)"""
    if dev.cpu:  # a workgroup's barriers cost the most on a CPU adapter
        return m >= THREAD_ROWS or k <= SHORT_ROWS
    return m >= THREAD_ROWS and k <= GPU_THREAD_ROW


#: on a GPU, the fewest threads the first pass over an axis before the last runs for it to be
#: read in place; fewer take the axis last by a copy, then rows. On the H200, argmax over axis 0
#: in place, against copy and rows, us: (1e6, 16) 276 / 344, (4000, 1000) 187 / 220, axis 1 of
#: (300, 3, 5000) 164 / 199; with fewer threads each reads more elements one after another, and
#: waits on each: (64, 256, 64) over axis 1 (8192 threads) 198 / 146, (1e5, 3) (2346) 237 / 141
GPU_THREADS_IN_PLACE = 1 << 14


def _threads_in_place(dev: GpuDevice, a: int, k: int, b: int) -> bool:
    """Does the argmax over the middle axis of an (a, k, b) view run in place on ``dev``, though
    its rows are too few or too long to go a thread a row? (On a CPU adapter always: there a
    copy and a workgroup a row cost the most.)"""
    return dev.cpu or a * b * thread_parts(a * b, k) >= GPU_THREADS_IN_PLACE


def _arg_reduce_threads(
    dev: GpuDevice,
    storage: Storage,
    offset: int,
    view: tuple[int, int, int],
    strides: tuple[int, int, int],
    dtype: np.dtype[Any],
    better: str,
    out: np.dtype[Any],
) -> Storage:
    """The index (as ``out``) of the best element along the middle axis of the (A, K, B) view at
    element ``offset`` of ``storage`` with ``strides``, a thread per result and per part of K:
    rows cut into parts when A * B threads are too few, then the (A, G, B) parts' pairs reduced
    over G the same way, until one part is left (as the reductions' :func:`reduce_threads_source`).
    The passes' dispatches are prepared once per view and buffers (see :func:`_passes`)."""
    a, k, b = view
    parts = thread_passes(a * b, k)

    def prepare(targets: list[tuple[Storage, Storage]]) -> list[Step]:
        steps = []
        cur, base, index, size, at = storage, offset, None, k, strides
        for g, (values, positions) in zip(parts, targets, strict=True):
            written = out if g == 1 else _U32  # the last pass writes the result's index dtype
            span = strided_span((a, size, b), at)
            bind_a, a_base = bind(dev, cur, base, span, dtype, "argmax")
            bind_i = bind(dev, index, 0, span, _U32, "argmax")[0] if index is not None else bind_a
            subs: dict[str, object] = {
                **_index_code(written),
                "T": wgsl_type(dtype),
                "WG": THREAD_WORKGROUP,
                "BETTER": better,
                "SPLIT": _SPLIT[b == 1, g == 1],
                "INDEX": "k" if index is None else "ai[at]",
                "AT": "start + k" if at[1] == 1 else "start + k * P[6]",
            }
            buffers = [*_pair_bindings(dev, values, positions, a * g * b, dtype, written), bind_a, bind_i]
            groups = -(-(a * g * b) // THREAD_WORKGROUP)
            params = [a, size, b, g, a_base, *at]
            steps.append(kernel_step(dev, "argreduce_threads", subs, buffers, params, groups))
            cur, base, index, size, at = values, 0, positions, g, (g * b, b, 1)
        return steps

    sig = ("argmax threads", view, strides, dtype, better, out)
    return _passes(dev, sig, storage, offset, [a * g * b for g in parts], dtype, out, prepare)


#: argreduce_threads.wgsl's row, part and b of thread t, by (B == 1, g == 1)
_SPLIT = {
    (True, True): "let row = t; let part = 0u; let b = 0u;",
    (True, False): "let row = t / g; let part = t % g; let b = 0u;",
    (False, True): "let row = t / nb; let part = 0u; let b = t % nb;",
    (False, False): "let row = t / (nb * g); let part = (t / nb) % g; let b = t % nb;",
}


def _arg_reduce_rows(
    dev: GpuDevice,
    storage: Storage,
    offset: int,
    m: int,
    k: int,
    dtype: np.dtype[Any],
    better: str,
    out: np.dtype[Any],
) -> Storage:
    """The index (as ``out``) of the best element of each of ``m`` contiguous rows of ``k`` at
    element ``offset`` of ``storage``, a workgroup a row: parts of long rows, then the parts.
    The passes' dispatches are prepared once per shape and buffers (see :func:`_passes`)."""
    parts = [_row_parts(k)]
    while parts[-1] > 1:
        parts.append(_row_parts(parts[-1]))

    def prepare(targets: list[tuple[Storage, Storage]]) -> list[Step]:
        steps = []
        cur, base, size, index = storage, offset, k, None
        for g, (values, positions) in zip(parts, targets, strict=True):
            written = out if g == 1 else _U32  # the last pass writes the result's index dtype
            subs = {"T": wgsl_type(dtype), "WG": WORKGROUP, "BETTER": better, **_index_code(written)}
            bind_a, a_base = bind(dev, cur, base, m * size, dtype, "argmax")
            bind_i = bind(dev, index, 0, m * size, _U32, "argmax")[0] if index is not None else bind_a
            buffers = [*_pair_bindings(dev, values, positions, m * g, dtype, written), bind_a, bind_i]
            total = m * g
            for w0 in range(0, total, dev.max_groups * dev.max_groups):
                params = [m, size, g, a_base, w0, index is None]
                groups = min(total - w0, dev.max_groups * dev.max_groups)
                steps.append(kernel_step(dev, "argreduce", subs, buffers, params, groups))
            cur, base, size, index = values, 0, g, positions
        return steps

    sig = ("argmax rows", m, k, dtype, better, out)
    return _passes(dev, sig, storage, offset, [m * g for g in parts], dtype, out, prepare)


#: the longest row a workgroup takes the argmax of alone, in one pass; longer rows are cut into
#: parts of the reductions' PART elements, whose pairs a second pass combines. On an H100's clock,
#: in batches of 50 (two rounds in turns, a process each): rows of 4096 and 8192 float32 took 5.6
#: and 7.2 us in one pass against 8.3 in two, 16384 and 32768 took 10.5 and 16.8 against 8.5 and
#: 8.8 (a workgroup's threads then read 64 and 128 elements, four loads after four loads)
ARG_ONE_PASS = WORKGROUP * 32


def _row_parts(k: int) -> int:
    """The parts a workgroup-a-row pass cuts rows of ``k`` into (1: the last pass)."""
    return 1 if k <= ARG_ONE_PASS else min(-(-k // PART), 1024)


def _passes(
    dev: GpuDevice,
    sig: Any,
    storage: Storage,
    offset: int,
    counts: list[int],
    dtype: np.dtype[Any],
    out: np.dtype[Any],
    prepare: Callable[[list[tuple[Storage, Storage]]], list[Step]],
) -> Storage:
    """Record an argmax's passes over the input at element ``offset`` of ``storage``, the pass
    ``n`` writing ``counts[n]`` (value, index) pairs, and return the last pass's indices (as
    ``out``). The passes' dispatches, made by ``prepare`` from each pass's pair of buffers, are
    kept per ``sig`` and buffers: the pairs between passes live in the device's scratch buffers
    and a loop's results come from the pool, so a loop finds its dispatches again (in a loop on
    the lavapipe machine's host, an argmax of a 256 x 64 float32 array over its rows took 14.5
    us a call against 22.1, of 64 x 4096, a workgroup a row, 19.3 against 40.5)."""
    last = len(counts) - 1
    with dev._lock:  # the scratch buffers are the device's until the passes are recorded
        targets = []
        for n, count in enumerate(counts):
            values = dev.scratch(("argmax values", n), count * storage_itemsize(dtype))
            positions = (
                Storage(dev, count * storage_itemsize(out))
                if n == last
                else dev.scratch(("argmax indices", n), count * 4)
            )
            targets.append((values, positions))
        launch = (storage.buffer, offset, *[t.buffer for pair in targets for t in pair])
        dev.replay(prepared(dev, sig, launch, lambda: prepare(targets)))
    return targets[-1][1]


def _pair_bindings(
    dev: GpuDevice,
    values: Storage,
    positions: Storage,
    count: int,
    dtype: np.dtype[Any],
    index: np.dtype[Any],
) -> list[Any]:
    """The bindings of ``count`` (value, index) pairs an argmax pass writes, the indices as
    ``index`` (uint32 between passes, the result's dtype in the last)."""
    return [
        bind(dev, values, 0, count, dtype, "argmax")[0],
        bind(dev, positions, 0, count, index, "argmax")[0],
    ]


def _index_code(index: np.dtype[Any]) -> dict[str, str]:
    """The argmax kernels' output index type and its conversion from a u32 ``i``: the last pass
    writes the result's dtype itself, with no conversion of its own afterwards."""
    return {"OI": wgsl_type(index), "TO_INDEX": convert("i", _U32, index)}


def argmax(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the largest element along ``axis`` (of the flattened array when None); the first
    one among equals, and the first NaN if there is one, as NumPy's."""
    return _arg_reduce(x, axis, keepdims, True, "argmax")


def argmin(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the smallest element along ``axis``; the first among equals, or the first NaN."""
    return _arg_reduce(x, axis, keepdims, False, "argmin")


def _scanned_flags(x: Array) -> tuple[Array, Storage, int]:
    """The 0/1 flags of the non-zero elements of non-empty ``x`` (contiguous), their inclusive
    scan (each set flag's place in the result, plus one), and the count, read back to size the
    result: the one host round trip that an output shape depending on data needs."""
    dev = x.device
    flags = x if x.dtype == _dtypes.bool_ else apply("not_equal", x, False if x.dtype.kind == "b" else 0)
    flags = contiguous(flags)
    n = flags.size
    positions = Storage(dev, n * 4)
    scan_rows(dev, (flags._storage, flags._offset, flags.dtype), 1, n, _U32, "sum", (positions, 0, n))
    count = int(np.frombuffer(dev.read(positions.buffer, (n - 1) * 4, 4), np.uint32)[0])
    return flags, positions, count


def flat_nonzero(x: Array) -> Array:
    """Flat (row-major) positions of the non-zero elements of ``x``, as a uint32 array."""
    dev = x.device
    n = x.size
    if n == 0:
        return empty((0,), _U32, dev)
    if too_large(x) or not fits(dev, n, 4):  # (x, or the scan of its flags: uint32)
        line = reshape(x, (-1,))
        length = window_elements(dev, max(storage_itemsize(x.dtype), 4))
        return concat([apply("add", flat_nonzero(line[a:b]), a) for a, b in windows(n, length)])
    flags, positions, count = _scanned_flags(x)
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


def masked_rows(x: Array, mask: Array) -> Array:
    """``x[mask]`` for a boolean ``mask`` of the shape of x's leading dimensions: the rows (the
    elements, when the mask covers every dimension) where it is true, in row-major order. One
    kernel copies them after the mask's scan, with no index arrays between."""
    dev = x.device
    tail = x.shape[mask.ndim :]
    rows, row = mask.size, math.prod(tail)
    if rows == 0:
        return empty((0, *tail), x.dtype, dev)
    if too_large(x, mask) or not fits(dev, rows, 4):  # (or the scan of its flags: uint32)
        flat, lines = reshape(mask, (-1,)), reshape(x, (rows, *tail))
        length = window_elements(dev, max(storage_itemsize(mask.dtype), 4))
        length = min(length, window_elements(dev, storage_itemsize(x.dtype)) // max(row, 1))
        if length == 0:
            raise NotImplementedError(
                f"a boolean index: one row of {row} elements exceeds {dev.name}'s storage binding limit of "
                f"{dev.max_binding} bytes; index fewer elements at a time"
            )
        return concat([masked_rows(lines[a:b], flat[a:b]) for a, b in windows(rows, length)])
    flags, positions, count = _scanned_flags(mask)
    out = empty((count, *tail), x.dtype, dev)
    total = rows * row
    if count and row:
        x = contiguous(x)
        bind_f, f_base = bind(dev, flags._storage, flags._offset, rows, flags.dtype, "a boolean index")
        bind_x, x_base = bind(dev, x._storage, x._offset, total, x.dtype, "a boolean index")
        bindings = [
            bind(dev, out._storage, 0, count * row, x.dtype, "a boolean index")[0],
            bind(dev, positions, 0, rows, _U32, "a boolean index")[0],
            bind_f,
            bind_x,
        ]
        subs = {"WG": WORKGROUP, "T": _dtypes.STORAGE[x.dtype.name]}
        run(dev, "compact_rows", subs, bindings, [total, row, f_base, x_base], -(-total // WORKGROUP))
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
    from ruda_wgpu._indexing import taken

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
    for x in (x1, x2):
        if x.dtype.kind == "c":
            raise TypeError(f"searchsorted() orders real values, not {x.dtype.name}")
    if sorter is not None:
        sorter = _check(sorter, "searchsorted")
        if sorter.dtype.kind not in "iu":
            raise TypeError(f"searchsorted(): sorter must hold integer indices, not {sorter.dtype.name}")
        if sorter.shape != x1.shape:
            raise ValueError(f"searchsorted(): sorter must have x1's shape {x1.shape}, not {sorter.shape}")
        x1 = taken(x1, sorter, 0, "searchsorted")  # (an index out of range names searchsorted)
    dt = _dtypes.result_type(x1, x2)
    out = _search(astype(x1, dt, copy=False), astype(x2, dt, copy=False), side)
    return astype(out, default_dtypes_of(x1.device)["indexing"])


def _search(a: Array, q: Array, side: str) -> Array:
    """The positions (uint32) of the values ``q`` in the sorted 1-D ``a`` of the same dtype. Where
    one of them is too large for one storage binding: the values in halves, joined; the positions
    in each window of ``a``, added (each counts the elements of its window before the value)."""
    dev = a.device
    if too_large(q) or not fits(dev, q.size, 4):
        return reshape(concat([_search(a, half, side) for half in halves(reshape(q, (-1,)), 0)]), q.shape)
    if too_large(a):
        length = window_elements(dev, storage_itemsize(a.dtype))
        parts = [_search(a[start:stop], q, side) for start, stop in windows(a.size, length)]
        return functools.reduce(lambda u, v: apply("add", u, v), parts)
    a, q = contiguous(a), contiguous(q)
    out = empty(q.shape, _U32, dev)
    if q.size:
        dt = a.dtype
        bind_a, a_base = bind(dev, a._storage, a._offset, a.size, dt, "searchsorted")
        bind_q, q_base = bind(dev, q._storage, q._offset, q.size, dt, "searchsorted")
        bind_o = bind(dev, out._storage, 0, q.size, _U32, "searchsorted")[0]
        subs = {"T": wgsl_type(dt), "LESS": _less(dt), "WG": WORKGROUP}
        params = [a.size, q.size, a_base, q_base, side == "right"]
        run(dev, "search", subs, [bind_o, bind_a, bind_q], params, -(-q.size // WORKGROUP))
    return out
