"""Indexing: basic keys make views; integer arrays and boolean masks gather and scatter on the GPU.

Keys follow NumPy's rules, which the standard's are a subset of:

- integers, slices, ``...`` and ``None`` only: a view (shape, strides, offset), no copy;
- with integer arrays: the arrays (and any integers beside them) broadcast together,
  and their dimensions replace the indexed ones where the arrays stand side by side,
  else they come first;
- a boolean array stands for the integer arrays of its ``nonzero()``; a 0-D boolean
  adds a dimension of length 1 (``True``) or 0 (``False``).

Every such key becomes one ``wgsl/gather.wgsl`` (get) or ``wgsl/scatter.wgsl`` (set)
dispatch over a view. Out-of-range indices raise IndexError, as NumPy's do. A gather
does not wait for its check: a kernel flags a bad index (a gather with one index array,
``x[i]``, ``take``, ``take_along_axis``, as it reads them; with several, a check of each
before they are combined) and the next read back to the host, or ``synchronize()``, raises
it, naming the operation (see ``GpuDevice.defer_check``), so that gathers in a loop keep the
GPU busy instead of waiting for it once each. A scatter checks before it writes, and waits:
a refused write writes nothing. ``x[mask]`` is one copy after the
mask's scan, and ``x[mask] = value`` with a value that needs no positions (a
scalar, or one broadcast along the masked rows) is one elementwise kernel that
reads nothing back.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from ruda import spec
from ruda._array import python_scalar

from ruda_wgpu import _dtypes
from ruda_wgpu._array import Array, check_scalar_range, copy_of, empty
from ruda_wgpu._buffers import Storage, storage_itemsize
from ruda_wgpu._creation import arange, asarray
from ruda_wgpu._encoding import Step
from ruda_wgpu._engine import CAPTURE, WORKGROUP, GpuDevice
from ruda_wgpu._info import default_dtypes_of
from ruda_wgpu._kernels import (
    Operand,
    OutputRead,
    Scalar,
    _span,
    bind_view,
    c_strides,
    convert,
    kernel_step,
    launch_elementwise,
    pack_words,
    prepared,
    run,
    widest_axis,
    window,
)
from ruda_wgpu._manipulation import _axis, broadcast_shapes, broadcast_to, concat, expand_dims, reshape
from ruda_wgpu._ops import apply, astype, clip, where
from ruda_wgpu._parts import along, fits, too_large, window_elements, windows
from ruda_wgpu._searching import flat_nonzero, masked_rows, nonzero, searchsorted
from ruda_wgpu._statistical import any as any_
from ruda_wgpu._statistical import cumulative_sum


@dataclass
class Gather:
    """Where the elements of an advanced index live: for each index c of ``shape``,
    ``at(c) = view.offset + sum(c * xs) + fix(index[c . is]) * step`` (see gather.wgsl)."""

    view: Array
    shape: tuple[int, ...]
    xs: tuple[int, ...]
    index: Array
    ixs: tuple[int, ...]
    n: int
    step: int
    #: what to name when an index is out of bounds, or None when every index is known to be in
    #: bounds (made from a mask, or checked already)
    check: str | None = None


def _reaches(
    g: Gather,
) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]]]:
    """What the elements of ``g`` reach, as (shape, strides) from the offsets of its view and of
    its index: the view along the gathered axis too (its whole extent where ``g.n`` is 0: the
    index then holds element offsets into it), the index through the gather's shape."""
    view = ((*g.shape, g.n), (*g.xs, g.step)) if g.n else (g.view.shape, g.view._strides)
    return view, (g.shape, g.ixs)


def _gather_params(g: Gather, what: str) -> tuple[list[tuple[Any, int, int]], list[int], dict[str, object]]:
    dev = g.view.device
    view_reach, index_reach = _reaches(g)
    bind_x, x_base = bind_view(dev, g.view, what, view_reach)
    bind_i, i_base = bind_view(dev, g.index, what, index_reach)
    rank = len(g.shape)
    params = [math.prod(g.shape), x_base, i_base, g.n, g.step]
    subs: dict[str, object] = {
        "T": _dtypes.STORAGE[g.view.dtype.name],
        "IT": _dtypes.STORAGE[g.index.dtype.name],
        "RANK": rank,
        "WG": WORKGROUP,
    }
    return [bind_x, bind_i], params, subs


def gather(g: Gather) -> Array:
    """The elements of ``g`` as a new contiguous array of shape ``g.shape``. With ``g.check``,
    the kernel flags an index out of bounds as it reads it, for the next read back to the host to
    raise (see GpuDevice.defer_check).

    A loop gathers from the same buffers into the same few pooled ones: the dispatch is prepared
    once per layout, operands and output buffer, and then only copied into the batch with the
    word of its check (preparing it took half of the host's time of a take)."""
    dev = g.view.device
    if not _fits_whole(g):
        return _gather_parts(g)
    out = empty(g.shape, g.view.dtype, dev)
    total = out.size
    checked = g.check is not None and g.index.size > 0
    if checked and (total == 0 or g.n == 0):  # no thread would read an index: check them here
        check_in_bounds(g.index, g.n, str(g.check), now=False)
        checked = False
    if not total:
        return out
    x, index = g.view, g.index
    launch = (
        *(x._storage.buffer, x._offset, x._shape, x._strides, x._dtype),
        *(index._storage.buffer, index._offset, index._shape, index._strides, index._dtype),
        *(g.shape, g.xs, g.ixs, g.n, g.step, out._storage.buffer, checked),
    )
    with dev._lock:  # (a flag's word is taken and its kernel recorded as one step)
        step, slot_at = prepared(dev, ("gather",), launch, lambda: _gather_step(g, out, checked))
        blob = step.params
        if checked:
            slot = dev.defer_check(spec.out_of_bounds(str(g.check), g.n))[1]
            blob = blob[:slot_at] + pack_words(slot) + blob[slot_at + 4 :]
        dev._encode_one(step.pipe, step.group, step.bound, blob, step.groups)
        if checked and CAPTURE.log is not None:
            dev.raise_checks()  # (a traced function's replays would not take the flag's word)
    return out


def _reach_fits(x: Array, shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether the elements ``x``'s offset reaches through (``shape``, ``strides``) fit one
    storage binding."""
    lo, hi = _span(0, shape, strides) if math.prod(shape) else (0, 1)
    return fits(x.device, hi - lo, storage_itemsize(x.dtype))


def _fits_whole(g: Gather) -> bool:
    """Whether one storage binding holds each of what a gather of ``g`` binds: its output, and
    what its view and its index reach."""
    dev = g.view._device
    limit = dev.max_binding - dev.offset_align
    if g.view._storage.nbytes <= limit and g.index._storage.nbytes <= limit:  # (most gathers)
        return math.prod(g.shape) * storage_itemsize(g.view._dtype) <= limit
    view_reach, index_reach = _reaches(g)
    return (
        _reach_fits(g.view, *view_reach)
        and _reach_fits(g.index, *index_reach)
        and fits(g.view.device, math.prod(g.shape), storage_itemsize(g.view.dtype))
    )


def _cut_axis(g: Gather, value: Array | None = None) -> int | None:
    """The axis of ``g``'s result to halve: the one along which its output (or a scatter's
    ``value``), its index, or its view outside the gathered axis most exceeds one storage
    binding; None when none does (the view is too wide along the gathered axis alone)."""
    isz, index_isz = storage_itemsize(g.view.dtype), storage_itemsize(g.index.dtype)
    wide = []  # (strides along the result's axes, item size) of each of them that does
    if not fits(g.view.device, math.prod(g.shape), isz):
        wide.append((c_strides(g.shape), isz))
    if not _reach_fits(g.index, g.shape, g.ixs):
        wide.append((g.ixs, index_isz))
    if not _reach_fits(g.view, g.shape, g.xs):
        wide.append((g.xs, isz))
    if value is not None and not _reach_fits(value, value.shape, value._strides):
        wide.append((value._strides, isz))
    if not wide:
        return None
    return widest_axis(g.shape, wide)


def _cut(g: Gather, d: int, start: int, stop: int) -> Gather:
    """The part of ``g`` whose result's index along axis ``d`` is in [start, stop)."""
    shape = (*g.shape[:d], stop - start, *g.shape[d + 1 :])
    index = _shifted(g.index, start * g.ixs[d], shape, g.ixs)
    return Gather(_shifted(g.view, start * g.xs[d]), shape, g.xs, index, g.ixs, g.n, g.step, g.check)


def _gather_parts(g: Gather) -> Array:
    """:func:`gather` of a ``g`` too wide for one storage binding: halves along the axis of the
    result that :func:`_cut_axis` names, joined; then windows of the gathered axis, each
    gathering the indices that fall in it."""
    g = _one_axis(g)
    d = _cut_axis(g)
    if d is not None:
        half = g.shape[d] // 2
        return concat([gather(_cut(g, d, a, b)) for a, b in ((0, half), (half, g.shape[d]))], axis=d)
    # the view too wide along the gathered axis alone: windows of it
    dev = g.view.device
    index = _shifted(g.index, 0, g.shape, g.ixs)  # (the index of every element of the result)
    if g.check is not None:
        check_in_bounds(index, g.n, g.check, now=False)
    index = _wrapped(index, g.n)
    lo, hi = _span(0, g.shape, g.xs)
    length = max(1, (window_elements(dev, storage_itemsize(g.view.dtype)) - (hi - lo)) // max(abs(g.step), 1))
    result = None
    for start, stop in windows(g.n, length):
        local = copy_of(clip(apply("subtract", index, start), 0, stop - start - 1))
        sub = Gather(
            _shifted(g.view, start * g.step), g.shape, g.xs, local, local._strides, stop - start, g.step
        )
        part = gather(sub)
        inside = apply("logical_and", apply("greater_equal", index, start), apply("less", index, stop))
        result = part if result is None else where(inside, part, result)
    assert result is not None
    return result


def _one_axis(g: Gather) -> Gather:
    """``g`` with a gathered axis of its own: a gather through several index arrays at once
    (``g.n`` 0) holds element offsets into its view, which become indices along an axis of
    step 1 over the view's extent (from its lowest element), so that its parts bind only what
    they reach."""
    if g.n:
        return g
    lo, hi = _span(0, g.view.shape, g.view._strides) if g.view.size else (0, 1)
    index, ixs = g.index, g.ixs
    if lo:  # (a view with negative strides: offsets below its first element)
        index = copy_of(apply("subtract", _shifted(g.index, 0, g.shape, g.ixs), lo))
        ixs = index._strides
    return Gather(_shifted(g.view, lo), g.shape, g.xs, index, ixs, hi - lo, 1, g.check)


def _wrapped(index: Array, n: int) -> Array:
    """Integer ``index`` into an axis of length ``n`` with negative values counted from its end."""
    if index.dtype.kind != "i":
        return index
    return where(apply("less", index, 0), apply("add", index, n), index)


def _shifted(
    x: Array, elements: int, shape: tuple[int, ...] | None = None, strides: tuple[int, ...] | None = None
) -> Array:
    """A view of ``x``'s buffer from ``elements`` past its offset (of ``shape`` and ``strides``,
    else ``x``'s own: a gather binds what it reaches, not its view's extent)."""
    if shape is None or strides is None:
        shape, strides = x.shape, x._strides
    return Array._new(x._storage, shape, x.dtype, x.device, strides, x._offset + elements)


def _gather_step(g: Gather, out: Array, checked: bool) -> tuple[Step, int]:
    """The dispatch of :func:`gather` into ``out``, and the byte of its parameters that holds the
    word of its check (which each launch fills in)."""
    dev = g.view.device
    (bind_x, bind_i), params, subs = _gather_params(g, "indexing")
    total = out.size
    bind_o, _ = window(dev, out._storage, 0, total, storage_itemsize(out.dtype), "indexing")
    bindings = [bind_o, bind_x, bind_i]
    params += [*g.shape, *g.xs, *g.ixs]
    subs["CHECK_BINDING"], subs["CHECK"] = "", ""
    slot_at = 4 * len(params)
    if checked:
        words = dev.check_words()
        bindings.append(_check_binding(dev, words))
        subs["CHECK_BINDING"] = "@group(0) @binding(4) var<storage, read_write> bad: array<u32>;"
        outside = _outside("raw", _dtypes.STORAGE[g.index.dtype.name], "P[3]")
        subs["CHECK"] = f"if ({outside}) {{ bad[P[{len(params)}]] = 1u; return; }}"
        params.append(0)  # (the word of the check: see gather)
    subs["WORDS"] = len(params)
    return kernel_step(dev, "gather", subs, bindings, params, -(-total // WORKGROUP)), slot_at


def _outside(raw: str, index_type: str, length: str) -> str:
    """The WGSL condition for index ``raw`` (of storage type ``index_type``) outside [-n, n),
    n being the u32 expression ``length``, right for every n up to 2^32 - 1: an i32 index is
    compared through its magnitude as a u32 (-(raw + 1) cannot overflow), an i64 one with n
    converted as :func:`convert` spells it (naga sign-extends ``i64(n)`` of a u32: a broadcast
    view of 2^31 + 8 rows refused every index)."""
    if index_type.startswith("u"):
        return f"{raw} >= {index_type}({length})"
    if index_type == "i64":
        n = convert(length, _dtypes.uint32, _dtypes.int64)
        return f"{raw} < -{n} || {raw} >= {n}"
    return f"select(u32({raw}) >= {length}, u32(-({raw} + 1)) >= {length}, {raw} < 0)"


def scatter(g: Gather, value: Array, since: int | None = None) -> None:
    """Write ``value`` (broadcast to ``g.shape``) to the elements of ``g``, or nothing when an
    index is out of bounds: checked by a kernel (when ``g.check`` asks) that flags it for the
    next read back to the host to raise, as a gather's check does, and the scatter's kernel
    writes nothing when that flag, or that of a check deferred since the device had deferred
    ``since`` (those of several index arrays, made by _advanced), is set. So a loop of scatters
    does not wait for the device. A scatter too large for one binding, whose parts are cut by
    the indices' values, and one being traced check first, waiting for the device."""
    dev = g.view.device
    with dev._lock:  # (the checks' words are taken and the kernels recorded as one step)
        since = dev.checks_made if since is None else since
        value = broadcast_to(astype(value, g.view.dtype, copy=False), g.shape)
        if g.check is not None:
            check_in_bounds(g.index, g.n, g.check, now=False)
        total = math.prod(g.shape)
        if value._storage is g.view._storage:
            value = astype(value, value.dtype, copy=True)  # read all before any write
        whole = _fits_whole(g) and _reach_fits(value, value.shape, value._strides)
        if not whole or CAPTURE.log is not None:  # (a replay would not take the words)
            dev.raise_checks()
        if not total:
            return
        if not whole:
            _scatter_parts(replace(g, check=None), value)
            return
        g.view._storage.will_write()
        # the words of the checks deferred since: a read back of the words in between (which
        # raised what they flagged) left only later ones, and a traced scatter none
        guard = (dev.check_slot(since), len(dev.checks))
        (bind_x, bind_i), params, subs = _gather_params(g, "indexing")
        bind_v, v_base = bind_view(dev, value, "indexing")
        params += [v_base, *guard, *g.shape, *g.xs, *g.ixs, *value._strides]
        subs["WORDS"] = len(params)
        bindings = [bind_x, bind_v, bind_i, _check_binding(dev, dev.check_words())]
        run(dev, "scatter", subs, bindings, params, -(-total // WORKGROUP))


def _scatter_parts(g: Gather, value: Array) -> None:
    """:func:`scatter` of a ``g`` (its indices checked) or ``value`` too wide for one storage
    binding: halves along the axis of the result that :func:`_cut_axis` names; then windows of
    the gathered axis, each taking the indices that fall in it and their values (a result that
    keeps axes of the view, ``x[i, :] = v``, through the element offsets of :func:`_as_offsets`)."""
    g = _one_axis(g)
    d = _cut_axis(g, value)
    if d is not None:
        half = g.shape[d] // 2
        for a, b in ((0, half), (half, g.shape[d])):
            scatter(_cut(g, d, a, b), along(value, d, a, b))
        return
    if any(g.xs):  # (x[i, :] = v): through the element offset of every element written
        _scatter_parts(_as_offsets(g), value)
        return
    index = _wrapped(reshape(_shifted(g.index, 0, g.shape, g.ixs), (-1,)), g.n)
    values = reshape(value, (-1,))
    for start, stop in windows(g.n, window_elements(g.view.device, storage_itemsize(g.view.dtype))):
        inside = flat_nonzero(
            apply("logical_and", apply("greater_equal", index, start), apply("less", index, stop))
        )
        if inside.size:
            local = copy_of(apply("subtract", take(index, inside), start))
            part = Gather(
                _shifted(g.view, start * g.step),
                local.shape,
                (0,),
                local,
                local._strides,
                stop - start,
                g.step,
            )
            scatter(part, take(values, inside))


def _as_offsets(g: Gather) -> Gather:
    """``g`` (its indices checked) as a gather through one array of element offsets into its
    view, one for every element of its result (``n`` 0: see :func:`_one_axis`): a scatter whose
    result keeps axes of a view wider than a binding then goes in windows of the view."""
    dev = g.view.device
    dtype = default_dtypes_of(dev)["indexing"]
    index = _wrapped(_shifted(g.index, 0, g.shape, g.ixs), g.n)
    offsets = apply("multiply", astype(index, dtype, copy=False), g.step)
    for d, stride in enumerate(g.xs):
        if stride:
            axis = reshape(arange(g.shape[d], dtype=dtype, device=dev), (-1, *(1,) * (len(g.shape) - d - 1)))
            offsets = apply("add", offsets, apply("multiply", axis, stride))
    offsets = copy_of(broadcast_to(offsets, g.shape))
    return Gather(g.view, g.shape, (0,) * len(g.shape), offsets, offsets._strides, 0, 1)


def check_in_bounds(index: Array, n: int, what: str, now: bool = True) -> None:
    """IndexError when an index is outside [-n, n) (see :func:`check_all_in_bounds`)."""
    check_all_in_bounds([(index, n)], what, now)


def check_all_in_bounds(checks: Sequence[tuple[Array, int]], what: str, now: bool = True) -> None:
    """IndexError when an index of one of the ``(index array, axis length)`` pairs is outside
    [-n, n): a kernel per array flags one in a word of its own, raised now (the words are read
    back) or, unless ``now``, by the next read back to the host (see GpuDevice.defer_check)."""
    checks = [(index, n) for index, n in checks if index.size]
    if not checks:
        return
    if any(too_large(index) for index, _ in checks):  # each in windows
        length = window_elements(checks[0][0].device, 8)
        checks = [
            (line[start:stop], n)
            for index, n in checks
            for line in [reshape(index, (-1,))]
            for start, stop in windows(line.size, length)
        ]
    if any(n == 0 for _, n in checks):
        raise IndexError(f"{what}: index into an axis of length 0")
    dev = checks[0][0].device
    with dev._lock:  # (a flag's word is taken and its kernel recorded as one step)
        for index, n in checks:
            words, slot = dev.defer_check(spec.out_of_bounds(what, n))
            bind_i, i_base = bind_view(dev, index, "indexing")
            index_type = _dtypes.STORAGE[index.dtype.name]
            params = [index.size, i_base, n, slot, *index.shape, *index._strides]
            subs = {
                "IT": index_type,
                "RANK": index.ndim,
                "WG": WORKGROUP,
                "WORDS": len(params),
                "OUTSIDE": _outside("raw", index_type, "P[2]"),
            }
            bindings = [_check_binding(dev, words), bind_i]
            run(dev, "index_check", subs, bindings, params, -(-index.size // WORKGROUP))
        if now or CAPTURE.log is not None:
            dev.raise_checks()


def _check_binding(dev: GpuDevice, words: Storage) -> tuple[Any, int, int]:
    """The binding of the device's check words (see GpuDevice.defer_check)."""
    return window(dev, words, 0, dev.check_slots(), 4, "indexing")[0]


def _index_array(x: Array, indices: Any, fn: str) -> Array:
    indices = python_scalar(indices)
    if not isinstance(indices, Array):
        raise TypeError(f"{fn}() needs a ruda_wgpu array of integer indices, not {type(indices).__name__}")
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{fn}() needs integer indices, not {indices.dtype.name}")
    if indices.device is not x.device:
        raise ValueError(
            f"{fn}() got arrays on two devices, {x.device} and {indices.device}: move one with to_device()"
        )
    return indices


def take(x: Array, indices: Array, /, *, axis: int | None = None) -> Array:
    """Elements of ``x`` at ``indices`` along ``axis`` (negative indices count from the end)."""
    return taken(x, indices, axis, "take")


def taken(x: Array, indices: Array, axis: int | None, fn: str) -> Array:
    """:func:`take` for the function ``fn``, which its errors name (an index out of bounds is
    flagged by the kernel, and raised at the next read)."""
    if not isinstance(x, Array):
        raise TypeError(f"{fn}() takes a ruda_wgpu array, not {type(x).__name__}")
    indices = _index_array(x, indices, fn)
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"{fn}() needs axis= for an array of {x.ndim} dimensions (without it: 1)")
        axis = 0
    axis = _axis(axis, x.ndim, fn)
    k = indices.ndim
    shape = (*x.shape[:axis], *indices.shape, *x.shape[axis + 1 :])
    xs = (*x._strides[:axis], *(0,) * k, *x._strides[axis + 1 :])
    ixs = (*(0,) * axis, *indices._strides, *(0,) * (x.ndim - axis - 1))
    return gather(Gather(x, shape, xs, indices, ixs, x.shape[axis], x._strides[axis], f"{fn}()"))


def take_along_axis(x: Array, indices: Array, /, *, axis: int = -1) -> Array:
    """``x`` picked along ``axis`` at ``indices``; the other axes broadcast."""
    if not isinstance(x, Array):
        raise TypeError(f"take_along_axis() takes a ruda_wgpu array, not {type(x).__name__}")
    indices = _index_array(x, indices, "take_along_axis")
    if x.ndim == 0:
        raise ValueError("take_along_axis() takes an array of at least one dimension, not a 0-d one")
    if indices.ndim != x.ndim:
        raise ValueError(
            f"take_along_axis() needs indices with the dimensions of x ({x.ndim}), not {indices.ndim}"
        )
    axis = _axis(axis, x.ndim, "take_along_axis")
    others = broadcast_shapes(
        x.shape[:axis] + x.shape[axis + 1 :], indices.shape[:axis] + indices.shape[axis + 1 :]
    )
    shape = (*others[:axis], indices.shape[axis], *others[axis:])
    xs = tuple(0 if d == axis or x.shape[d] != shape[d] else x._strides[d] for d in range(x.ndim))
    ixs = tuple(0 if indices.shape[d] != shape[d] else indices._strides[d] for d in range(x.ndim))
    return gather(Gather(x, shape, xs, indices, ixs, x.shape[axis], x._strides[axis], "take_along_axis()"))


def repeat(x: Array, repeats: int | Array, /, *, axis: int | None = None) -> Array:
    """Each element repeated ``repeats`` times along ``axis`` (of the flattened array when None).

    Integer repeats are a broadcast view and one copy. Array repeats make the
    result's length depend on data: a scan of the counts is read back once for
    the length, and a binary search in it finds each output's source element.
    """
    if not isinstance(x, Array):
        raise TypeError(f"repeat() takes a ruda_wgpu array, not {type(x).__name__}")
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = _axis(axis, x.ndim, "repeat")
    n = x.shape[axis]
    repeats = python_scalar(repeats)
    if isinstance(repeats, Array) and repeats.ndim == 0:
        repeats = int(repeats)
    if isinstance(repeats, Array):
        if repeats.dtype.kind not in "iu":
            raise TypeError(f"repeat(): repeats must be integers, not {repeats.dtype.name}")
        if repeats.ndim != 1 or repeats.size not in (1, n):
            raise ValueError(f"repeat(): repeats of shape {repeats.shape} do not match axis size {n}")
        if repeats.size == 1:
            return repeat(x, int(repeats[0]), axis=axis)
        if repeats.dtype.kind == "i" and n and bool(any_(apply("less", repeats, 0))):
            raise ValueError("repeat(): repeats must be non-negative")
        ends = cumulative_sum(repeats, dtype=default_dtypes_of(x.device)["indexing"])
        total = int(ends[-1]) if n else 0
        positions = arange(total, dtype=ends.dtype, device=x.device)
        return take(x, searchsorted(ends, positions, side="right"), axis=axis)
    r = operator.index(repeats)
    if r < 0:
        raise ValueError("repeat(): repeats must be non-negative")
    spread = broadcast_to(expand_dims(x, axis=axis + 1), (*x.shape[: axis + 1], r, *x.shape[axis + 1 :]))
    shape = list(x.shape)
    shape[axis] = n * r
    return reshape(astype(spread, x.dtype, copy=True), tuple(shape))


# -- keys --------------------------------------------------------------------------------------


def _device_index(item: Any, dev: GpuDevice) -> Any:
    """Host index arrays (NumPy arrays, lists) uploaded; device arrays checked; others as they are."""
    if isinstance(item, Array):
        if item.device is not dev:
            raise ValueError(
                f"an index array on {item.device} cannot index an array on {dev}: move it with to_device()"
            )
        if item.dtype.kind not in "biu":
            raise IndexError(f"index arrays must be of integer or boolean type, not {item.dtype.name}")
        if item.ndim == 0 and item.dtype.kind in "iu":
            return int(item)
        return item
    if isinstance(item, np.ndarray | list):
        host = np.asarray(item)
        if host.size == 0 and host.dtype.kind == "f":
            host = host.astype(np.int64)
        if host.dtype.kind not in "biu":
            raise IndexError(f"index arrays must be of integer or boolean type, not {host.dtype}")
        dtype = _dtypes.bool_ if host.dtype.kind == "b" else default_dtypes_of(dev)["indexing"]
        return asarray(host, dtype=dtype, device=dev)
    if isinstance(item, bool | np.bool_):  # a 0-D mask, not the integer 0 or 1
        return asarray(bool(item), device=dev)
    return python_scalar(item)


def _items(x: Array, key: Any) -> tuple[list[Any], bool]:
    """The key's items with its ``...`` (or the missing trailing items) written out as slices,
    and whether a slice, ``None`` or ``...`` stands between two of its integers and arrays: their
    axes then go first in an advanced index's result, as NumPy places them (an ``...`` that
    stands for no axis separates them too)."""
    items = [_device_index(it, x.device) for it in (key if isinstance(key, tuple) else (key,))]
    for it in items:
        if not (it is None or it is Ellipsis or isinstance(it, slice | int | Array)):
            raise IndexError(
                f"invalid index {it!r}: use integers, slices, ..., None, or integer or boolean arrays"
            )
    ellipses = sum(1 for it in items if it is Ellipsis)
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(it.ndim if isinstance(it, Array) and it.dtype.kind == "b" else 1 for it in items)
    used -= sum(1 for it in items if it is None or it is Ellipsis)
    if used > x.ndim:
        raise IndexError(f"too many indices for an array with {x.ndim} dimensions: {used} given")
    picked = [k for k, it in enumerate(items) if isinstance(it, int | Array)]
    separated = bool(picked) and not all(isinstance(it, int | Array) for it in items[picked[0] : picked[-1]])
    if ellipses:
        at = items.index(Ellipsis)
        items[at : at + 1] = [slice(None)] * (x.ndim - used)
    else:
        items += [slice(None)] * (x.ndim - used)
    return items, separated


def _slice_of_axis(it: slice, n: int, stride: int) -> tuple[int, int, int]:
    """(length, element offset of the first element, stride) of the slice ``it`` of an axis of
    length ``n`` and ``stride`` (an empty slice moves nothing: its start may be past the end)."""
    start, stop, step = it.indices(n)
    count = len(range(start, stop, step))
    # (a step that takes one element at most moves nowhere: x[::2**62] reads as x[:1])
    return count, start * stride if count else 0, stride * step if count > 1 else stride


def _plan(x: Array, key: Any) -> Array | Gather:
    """The view of a basic key, or the gather of an advanced one."""
    items, separated = _items(x, key)
    advanced = any(isinstance(it, Array) for it in items)
    shape: list[int] = []
    strides: list[int] = []
    offset = x._offset
    # (dimension of the view, index, whether it is known to be in bounds: made from a mask)
    picks: list[tuple[int, Array | int, bool]] = []
    axis = 0
    for it in items:
        if it is None:
            shape.append(1)
            strides.append(0)
            continue
        if isinstance(it, Array) and it.dtype.kind == "b":
            if it.ndim == 0:  # a new axis of length 1, picked once (True) or not at all (False)
                shape.append(1)
                strides.append(0)
                index = default_dtypes_of(x.device)["indexing"]
                picks.append((len(shape) - 1, arange(int(bool(it)), dtype=index, device=x.device), True))
                continue
            axes = x.shape[axis : axis + it.ndim]
            if any(m not in (n, 0) for m, n in zip(it.shape, axes, strict=True)):
                raise IndexError(f"a boolean index of shape {it.shape} does not match dimensions {axes}")
            if 0 in it.shape:
                it = empty((0,) * it.ndim, _dtypes.bool_, x.device)
            coords = nonzero(it)  # the coordinates of the mask's true elements
            for k, c in enumerate(coords):
                shape.append(x.shape[axis + k])
                strides.append(x._strides[axis + k])
                picks.append((len(shape) - 1, c, True))
            axis += it.ndim
            continue
        n, st = x.shape[axis], x._strides[axis]
        if isinstance(it, slice):
            count, moved, stride = _slice_of_axis(it, n, st)
            offset += moved
            shape.append(count)
            strides.append(stride)
        else:
            i = operator.index(it) if not isinstance(it, Array) else it
            if isinstance(i, int) and not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            if isinstance(i, int) and not advanced:
                offset += (i % n) * st
            else:
                shape.append(n)
                strides.append(st)
                picks.append((len(shape) - 1, i, isinstance(i, int)))
        axis += 1
    view = x._view(tuple(shape), tuple(strides), offset)
    if not picks:
        return view
    return _advanced(view, picks, separated)


def _advanced(view: Array, picks: list[tuple[int, Array | int, bool]], separated: bool) -> Gather:
    """Gather of ``view`` with ``picks`` (dimension, index, known in bounds) of integer arrays and
    integers, which ``separated`` says the key spread apart (see :func:`_items`). One array left
    to check is checked by the gather as it reads it; several are checked here before they are
    combined, by a kernel each (see :func:`check_all_in_bounds`: a gather raises what they flag
    at the next read back to the host, a scatter before it writes)."""
    dev = view.device
    index_dt = default_dtypes_of(dev)["indexing"]
    arrays: list[tuple[int, Array]] = []
    unchecked: list[tuple[int, Array]] = []
    for d, i, in_bounds in picks:  # integers were checked when the key was read
        if isinstance(i, int):
            arrays.append((d, asarray(i, dtype=index_dt, device=dev)))
        else:
            arrays.append((d, i))
            if not in_bounds:
                unchecked.append((d, i))
    batch = broadcast_shapes(*(a.shape for _, a in arrays))  # (raises before any check is deferred)
    if len(arrays) > 1:
        check_all_in_bounds([(i, view.shape[d]) for d, i in unchecked], "an index array", now=False)
    dims = [d for d, _ in arrays]
    rest = [d for d in range(view.ndim) if d not in dims]
    adjacent = not separated and dims == list(range(dims[0], dims[0] + len(dims)))
    before = [d for d in rest if adjacent and d < dims[0]]
    after = [d for d in rest if d not in before]
    if len(arrays) == 1:
        d, index = arrays[0]
        n, step = view.shape[d], view._strides[d]
        index = broadcast_to(index, batch)
    else:  # one array of element offsets: the sum of each index (made non-negative) times its stride
        n, step = 0, 1
        offsets: Array | None = None
        for d, a in arrays:
            a = astype(a, index_dt, copy=False) if a.dtype != index_dt else a
            a = _wrapped(a, view.shape[d])
            term = apply("multiply", a, view._strides[d])
            offsets = term if offsets is None else apply("add", offsets, term)
        assert offsets is not None
        index = broadcast_to(offsets, batch)
    nb = len(batch)
    shape = tuple(view.shape[d] for d in before) + batch + tuple(view.shape[d] for d in after)
    xs = tuple(view._strides[d] for d in before) + (0,) * nb + tuple(view._strides[d] for d in after)
    ixs = (0,) * len(before) + index._strides + (0,) * len(after)
    check = "an index array" if len(arrays) == 1 and unchecked else None
    return Gather(view, shape, xs, index, ixs, n, step, check)


def _basic_view(x: Array, key: Any) -> Array | None:
    """The view of a key of Python ints, slices, ``None`` and one ``...``, the commonest keys,
    or None for any other key, and for one that :func:`_plan` must reject (too many indices, an
    integer out of bounds), which it then does with its message. A slice of a 2-D array took 7
    us on the lavapipe machine's host through :func:`_plan`, which reads every kind of key."""
    items = key if type(key) is tuple else (key,)
    shape: list[int] = []
    strides: list[int] = []
    offset, xshape, xstrides, ndim = x._offset, x._shape, x._strides, len(x._shape)
    axis = 0
    for k, it in enumerate(items):
        kind = type(it)
        if kind is slice or kind is int:
            if axis >= ndim:
                return None
            n, st = xshape[axis], xstrides[axis]
            if kind is int:
                if not -n <= it < n:
                    return None
                offset += (it % n) * st
            else:
                count, moved, stride = _slice_of_axis(it, n, st)
                offset += moved
                shape.append(count)
                strides.append(stride)
            axis += 1
        elif it is None:
            shape.append(1)
            strides.append(0)
        elif it is Ellipsis:
            rest = sum(1 for later in items[k + 1 :] if later is not None)
            if any(later is Ellipsis for later in items[k + 1 :]) or axis + rest > ndim:
                return None
            skip = ndim - axis - rest
            shape += xshape[axis : axis + skip]
            strides += xstrides[axis : axis + skip]
            axis += skip
        else:
            return None
    shape += xshape[axis:]
    strides += xstrides[axis:]
    return x._view(tuple(shape), tuple(strides), offset)


def getitem(x: Array, key: Any) -> Array:
    """``x[key]``: a view for basic keys, a gathered copy for integer-array and boolean keys."""
    view = _basic_view(x, key)
    if view is not None:
        return view
    mask = _lone_mask(x, key)
    if mask is not None:  # the commonest advanced key: one pass over x, no index arrays
        return masked_rows(x, mask)
    plan = _plan(x, key)
    return plan if isinstance(plan, Array) else gather(plan)


def setitem(x: Array, key: Any, value: Any) -> None:
    """``x[key] = value``, broadcasting ``value`` to what the key selects."""
    from ruda_wgpu._array import assign, check_writable

    check_writable(x)
    key = _own_indices(x, key)
    value = python_scalar(value)
    if isinstance(value, Array) and value.device is not x.device:
        raise ValueError(
            f"cannot assign an array on {value.device} into one on {x.device}: move it first with to_device()"
        )
    if isinstance(value, Array):
        # as the standard's promotion rules allow, whatever the key (a float into an integer
        # array would be a truncation that NumPy makes and the standard leaves unspecified)
        if not _dtypes.can_cast(value.dtype, x.dtype):
            raise TypeError(f"cannot assign {value.dtype.name} values into an array of {x.dtype.name}")
    elif isinstance(value, bool | int | float | complex):
        _dtypes.check_scalar_kind(value, x.dtype)
        check_scalar_range(value, x.dtype)
    else:
        raise TypeError(f"cannot assign a {type(value).__name__} into a ruda_wgpu array")
    mask = _lone_mask(x, key)
    if mask is not None and _broadcasts_along_rows(value, x.ndim - mask.ndim):
        _masked_assign(x, mask, value)
        return
    view = _basic_view(x, key)
    since = x.device.checks_made  # (checks _plan makes guard the scatter: see scatter)
    plan = _plan(x, key) if view is None else view
    if isinstance(plan, Array):
        assign(plan, value)
        return
    if not isinstance(value, Array):
        value = asarray(value, dtype=x.dtype, device=x.device)
    try:
        value = broadcast_to(value, plan.shape)
    except ValueError:
        x.device.withdraw_checks(since)  # (the key's index checks: no scatter takes their words)
        raise
    scatter(plan, value, since)


def _own_indices(x: Array, key: Any) -> Any:
    """``key`` with copies of its index arrays that are views of ``x``'s own buffer (``b[b] =
    False``, ``x[x] = 5``): a dispatch cannot bind the buffer it writes for reading too (the
    batch failed validation, and the work recorded with it was lost), and the indices are those
    from before the write."""
    items = key if isinstance(key, tuple) else (key,)
    storage = x._storage
    if not any(isinstance(it, Array) and it._store is storage for it in items):
        return key
    own = tuple(copy_of(it) if isinstance(it, Array) and it._store is storage else it for it in items)
    return own if isinstance(key, tuple) else own[0]


def _lone_mask(x: Array, key: Any) -> Array | None:
    """The mask of a key that is one boolean device array over leading dimensions, else None."""
    items = key if isinstance(key, tuple) else (key,)
    if items and items[-1] is Ellipsis:
        items = items[:-1]
    if len(items) != 1 or not isinstance(items[0], Array) or items[0].dtype != _dtypes.bool_:
        return None
    mask = items[0]
    if mask.ndim == 0 or mask.shape != x.shape[: mask.ndim] or mask.device is not x.device:
        return None
    return mask


def _broadcasts_along_rows(value: Any, trailing: int) -> bool:
    """Whether a value for ``x[mask]`` fits every masked row alike (no positions needed)."""
    scalar = isinstance(value, bool | int | float | complex)
    return scalar or (isinstance(value, Array) and value.ndim <= trailing)


def _masked_assign(x: Array, mask: Array, value: Any) -> None:
    """``x[mask] = value`` as one elementwise kernel: x keeps its element where the mask is false."""
    rows = expand_dims(mask, axis=tuple(range(mask.ndim, x.ndim))) if x.ndim > mask.ndim else mask
    rows = broadcast_to(rows, x.shape)
    if isinstance(value, Array):  # (setitem checked its dtype, and a scalar's kind and range)
        if value._storage is x._storage:
            value = astype(value, value.dtype, copy=True)
        source: Operand | Scalar = broadcast_to(value, x.shape)._operand()
        load = convert("x1", value.dtype, x.dtype)
    else:
        source, load = Scalar(value, x.dtype), "x1"
    body = f"select(x2, {load}, x0 != 0u)"  # x2: x's element before the write
    x._storage.will_write()
    operands = [rows._operand(), source, OutputRead(x.dtype)]
    launch_elementwise(x.device, ("masked assign", body), body, "", x._operand(), operands, x.shape)


__all__ = ["getitem", "repeat", "setitem", "take", "take_along_axis"]
