"""Reductions: the reduced axes are moved last and made contiguous, then a workgroup tree reduces
each row (in several parts, then once more over the parts, when rows are long)."""

from __future__ import annotations

import builtins
import functools
import itertools
import math
import numbers
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ruda_wgpu import _dtypes
from ruda_wgpu._array import Array, assign, contiguous, copy_of, empty
from ruda_wgpu._buffers import STORAGE_ITEMSIZE, Storage, storage_itemsize
from ruda_wgpu._creation import full
from ruda_wgpu._engine import GpuDevice, remember
from ruda_wgpu._fusion import reduction_input
from ruda_wgpu._info import default_dtypes_of
from ruda_wgpu._kernels import (
    ONE,
    PLAN_CACHE,
    ZERO,
    Operand,
    Recorded,
    c_strides,
    convert,
    launch_key,
    lib,
    product,
    recorded,
    wgsl_type,
)
from ruda_wgpu._manipulation import _axes, _axis, concat, permute_dims, reshape
from ruda_wgpu._ops import apply, astype
from ruda_wgpu._parts import fits, halves, outer_axis, too_large, window_elements, windows
from ruda_wgpu._reduce_kernels import SHORT_ROWS, Fused, launch_reduce, strided_span, threads_fit
from ruda_wgpu._scan import scan_rows

_MAX = {
    "i32": "2147483647i",
    "u32": "0xffffffffu",
    "i64": "9223372036854775807li",
    "u64": "0xfffffffffffffffflu",
    "f32": "inf_f()",
    "f64": "inf_d()",
}
_MIN = {
    "i32": "(-2147483647i - 1i)",
    "u32": "0u",
    "i64": "(-9223372036854775807li - 1li)",
    "u64": "0lu",
    "f32": "(-inf_f())",
    "f64": "(-inf_d())",
}


def _check(x: Any, fn: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{fn}() takes a ruda_wgpu array, not {type(x).__name__}")
    return x


Grouped = list[tuple[int, int, int]]


def _reduce(x: Array, axis: Any, keepdims: bool, acc: np.dtype[Any], kind: str, fn: str) -> Array:
    """Reduce ``x`` over ``axis`` with ``kind`` in sum/prod/min/max/all/any; result dtype ``acc``.
    An array of a signature reduced in place before, or a pending chain of a structure reduced
    as it was read before, goes straight to the launch (see :class:`ReductionPlan`)."""
    with x._device._lock:  # (the chain read stays the graph launched: see _kept)
        chain, key, plan = _kept(x, axis, keepdims, acc, kind)
        if plan is not None:
            return plan.run(x, chain, acc, kind)
        shape = x._shape
        axes = _axes(axis, len(shape), fn)
        if not axes:
            return astype(x, acc) if x._dtype != acc else copy_of(x)
        check_count(x, fn)
        code = _reduction_code(kind, x._dtype, acc)
        storage, out_shape = _launch(x, axes, keepdims, acc, kind, code, key, chain)
    return _reduced(storage, out_shape, acc, x._device)


#: the most elements one reduction reads: its kernels count elements in 32-bit words
MOST_REDUCED = 0xFFFFFFFF


def check_count(x: Array, fn: str) -> None:
    """Raise NotImplementedError, naming ``fn``, when a reduction of ``x`` would read more
    elements than its kernels can count (a broadcast view can have that many without memory)."""
    if x.size > MOST_REDUCED:
        raise NotImplementedError(
            f"{fn}(): cannot reduce an array of {x.size} elements {x.shape} at once: the reduction "
            f"kernels count at most {MOST_REDUCED}; reduce slices of it and combine the results"
        )


def _kept(
    x: Array, axis: Any, keepdims: bool, acc: np.dtype[Any], kind: str
) -> tuple[Fused | None, tuple[Any, ...] | None, ReductionPlan | None]:
    """The chain a reduction of ``x`` reads (None: ``x`` itself), the signature of its plan
    (see :func:`reduction_plan_key`), and the plan kept under it, if any.

    The caller holds the device's lock until it has launched the reduction of the chain: another
    thread's ``synchronize()`` would otherwise run the graph under it meanwhile (and empty its
    nodes' operands), or a write into a buffer the chain reads would run the graph as a pending
    reader and then land before the reduction read the buffer."""
    check_keepdims(keepdims)  # (before it is part of a key: a list is not hashable)
    chain = reduction_input(x, strided=True) if x._node is not None else None
    key = reduction_plan_key(x, chain, axis, keepdims, acc, kind)
    return chain, key, None if key is None else x._device.plans.get(key)


def _reduced(storage: Storage, out_shape: tuple[int, ...], acc: np.dtype[Any], dev: GpuDevice) -> Array:
    """The result of a reduction into ``acc`` values held by ``storage``."""
    if acc == _dtypes.float16:  # accumulated in f32 (as NumPy does for float16), rounded once here
        return astype(Array._new(storage, out_shape, _dtypes.float32, dev), acc)
    out = Array._new(storage, out_shape, acc, dev)
    if _dtypes.NAME[acc] in ("int8", "int16", "uint8", "uint16"):
        out = astype(astype(out, _dtypes.int32 if acc.kind == "i" else _dtypes.uint32), acc)
    return out


class ReductionPlan(NamedTuple):
    """How :func:`_launch` reduces an array of one signature (dtype, shape, strides, axes,
    keepdims, kind and dtype of the result): the result's shape, the (m, k, inner) view and the
    operand's strides along it, the kernel's code. A plan that reads the array in place is kept,
    and the next array of that signature skips the axes' checks, the geometry and the folding of
    its strides. So is a plan that reads a pending chain as it reduces it, for the next chain of
    that structure (operations, dtypes, and the strides of its array operands: see
    :func:`reduction_plan_key`), whose own operands it then reads: on the lavapipe machine's host with a
    GPU's code paths (best of 150 rounds of 20 calls, three rounds of turns against the code
    before), ``sum(x * y)`` of 1000 x 16 float32 recorded in 19.8-21.0 us against 23.7-24.7,
    ``sum(x + y, axis=0)`` in 22.5-23.1 against 28.7-31.2. Its launches on buffers met before
    record the dispatches they logged (see ``_kernels.Recorded``): a product of a 256 x 256
    float32 matrix and a vector, whose reduction this is, recorded in 13.2-14.5 us against
    18.2-23.5, a dot product of 256 elements in 8.5-9.2 against 10.6-12.3 (same host, three
    rounds in turns)."""

    out_shape: tuple[int, ...]
    m: int
    k: int
    inner: int
    strides: Grouped | None
    code: tuple[str, str, str]
    #: its launches, recorded again from their dispatches on buffers met before
    recorded: Recorded

    def run(self, x: Array, chain: Fused | None, acc: np.dtype[Any], kind: str) -> Array:
        """The reduction of ``x`` (read as the pending ``chain``, where it is one), of this plan's
        signature."""
        return _reduced(self.reduce(x, chain, acc, kind), self.out_shape, acc, x._device)

    def reduce(self, x: Array, chain: Fused | None, acc: np.dtype[Any], kind: str) -> Storage:
        """The storage of :meth:`run`'s result."""
        return self.launch(x._device, x._operand() if chain is None else chain, acc, kind)

    def result(
        self, dev: GpuDevice, src: Operand | Fused, acc: np.dtype[Any], kind: str, shape: tuple[int, ...]
    ) -> Array:
        """The reduction of ``src`` as an array of ``shape`` (the result's, or one of as many
        elements)."""
        return _reduced(self.launch(dev, src, acc, kind), shape, acc, dev)

    def launch(self, dev: GpuDevice, src: Operand | Fused, acc: np.dtype[Any], kind: str) -> Storage:
        """The storage of the reduction of ``src`` (the array, or the chain read as it is
        reduced) on ``dev``."""
        combine, identity, load = self.code
        m, k, inner = self.m, self.k, self.inner
        leaves = (src,) if isinstance(src, Operand) else src.leaves
        (out,) = self.recorded.run(
            dev,
            [launch_key(leaf) for leaf in leaves],
            [leaf.storage.buffer for leaf in leaves if isinstance(leaf, Operand)],
            lambda: [
                launch_reduce(dev, kind, src, m, k, acc, combine, identity, load, "", inner, self.strides)
            ],
        )
        return out


def reduction_plan_key(
    x: Array, chain: Fused | None, axis: Any, keepdims: bool, acc: np.dtype[Any], kind: str
) -> tuple[Any, ...] | None:
    """The signature of a :class:`ReductionPlan` (with the device's kind: tests switch a CPU
    adapter to a GPU's code paths); for a pending ``x``, its ``chain``'s structure and the
    dtypes and strides of its leaves (their buffers and offsets are the launch's). None for an
    array computed since it was recorded, a pending one that is not read as a chain (fusion
    off), or an axis that is not None, an int or a tuple of ints."""
    if (x._node is not None and chain is None) or not _plain_axis(axis):
        return None
    key = ("reduce plan", kind, acc, x._dtype, x._shape, x._strides, axis, keepdims, x._device.cpu)
    if chain is None:
        return key
    leaves = tuple((a.dtype, a.strides) if type(a) is Operand else a.dtype for a in chain.leaves)
    return (*key, chain.key, leaves)


def _plain_axis(axis: Any) -> bool:
    """Whether ``axis`` is None, an int or a tuple of ints (a plan's key holds it as given)."""
    return (
        axis is None
        or type(axis) is int
        or (type(axis) is tuple and builtins.all(type(a) is int for a in axis))
    )


def _launch(
    x: Array,
    axes: tuple[int, ...],
    keepdims: bool,
    acc: np.dtype[Any],
    kind: str,
    code: tuple[str, str, str],
    plan_key: tuple[Any, ...] | None,
    chain: Fused | None,
) -> tuple[Storage, tuple[int, ...]]:
    """Reduce ``x`` over the non-empty ``axes`` by ``code`` (combine, identity, load; see
    :func:`_reduction_code`) into ``acc`` values: their storage and the result's shape. A
    pending ``x`` is read as its ``chain`` (see :func:`_kept`) where the strides allow. With a
    ``plan_key``, a reduction that reads ``x`` in place, or its chain, keeps its plan under it."""
    out_shape, order, rows, k, view = _geometry(x._shape, axes, keepdims)
    # Reduced axes next to each other are read in place, as (m, k, inner) (a leading axis: inner
    # > 1); others, or those that cannot be, are moved last first, by a copy: rows of k.
    found = _in_place(x, axes, view, chain) if view is not None else None
    src: Operand | Fused
    strides: Grouped | None
    if found is None or view is None:
        src, strides, m, inner = contiguous(permute_dims(x, order))._operand(), None, rows, 1
    else:
        (src, strides), (m, _, inner) = found, view
    plan = ReductionPlan(out_shape, m, k, inner, strides, code, Recorded())
    # kept when it reads x where it lies, or its chain as it is reduced (not the chain's result,
    # computed here because its operands' strides do not fold into the view)
    if plan_key is not None and src is (x._leaf if chain is None else chain):
        remember(x._device.plans, PLAN_CACHE, plan_key, plan)
    storage = plan.launch(x._device, src, acc, kind)
    return storage, out_shape


def _in_place(
    x: Array, axes: tuple[int, ...], view: tuple[int, int, int], chain: Fused | None
) -> tuple[Operand | Fused, Grouped | None] | None:
    """What a reduction over the adjacent ``axes`` reads ``x`` by, in place, as the (m, k, inner)
    ``view``: its pending elementwise ``chain`` computed as it is read, or ``x`` itself; with each
    array leaf's strides along m, k and inner (None: contiguous). A leaf whose strides do not
    fold into the view (or a strided one too long for one binding) makes ``x`` computed, and
    made contiguous; None when a reduction over a leading axis could still not bind it whole."""
    dev = x._device
    node = x._node
    pending = node is not None and node.storage is None
    gpu_rows = view[2] == 1 and view[1] > SHORT_ROWS and not dev.cpu
    if gpu_rows and not pending and x._is_contiguous():
        return x._operand(), None  # (the commonest reduction: a loop of sums pays for no more)
    limit = dev.max_binding - dev.offset_align
    first, last = builtins.min(axes), builtins.max(axes)
    groups = ((0, first), (first, last + 1), (last + 1, x.ndim))
    flat = (view[1] * view[2], view[2], 1)
    if gpu_rows:
        # long rows a workgroup each on a GPU (see launch_reduce): a chain's leaves, or x,
        # where the rows are contiguous a stride apart or hold one element a row (the mean
        # that x - mean(x) subtracts); else x is computed, contiguous
        if pending:
            fused = chain
            rows = None if fused is None else _folded_leaves(fused, x._shape, groups, view, limit, True)
            if fused is None or rows is None:
                return contiguous(x)._operand(), None
            return fused, (None if builtins.all(f == flat for f in rows) else rows)
        own = fold_strides(x._shape, x._strides, groups, flat)
        fits = own is not None and strided_span(view, own) * STORAGE_ITEMSIZE[x._dtype] <= limit
        if own is not None and own[1] in (0, 1) and fits:
            return x._operand(), [own]
        return contiguous(x)._operand(), None
    # Strided leaves are taken here, where the reduction runs a result a thread: so it would with
    # fusion off, and fused and unfused results keep the same bits.
    fused = chain
    folded = None if fused is None else _folded_leaves(fused, x._shape, groups, view, limit, False)
    if fused is not None and folded is not None:
        return fused, folded
    # x itself (computed here if pending): where it lies, else copied contiguous; the bindings'
    # limit is checked before anything is copied
    own = fold_strides(x._shape, x._strides, groups, flat)
    isz = STORAGE_ITEMSIZE[x._dtype]
    if own is not None and own != flat:
        if strided_span(view, own) * isz <= limit:
            return x._operand(), [own]
        if view[2] > 1:
            return None
    elif view[2] > 1 and not threads_fit(dev, x.size, [isz]):
        return None
    return (x._operand() if own == flat else contiguous(x)._operand()), None


def _folded_leaves(
    fused: Fused, shape: tuple[int, ...], groups: Any, view: tuple[int, int, int], limit: int, rows: bool
) -> Grouped | None:
    """The strides along the (m, k, inner) ``view`` of each array leaf of ``fused`` (see
    :func:`_in_place`), or None where one does not fold into it, or does not fit one binding of
    ``limit`` bytes. With ``rows`` (a GPU's row kernel) a leaf must also be read along k by a
    stride of 0 or 1, and contiguous leaves need not fit (that kernel takes them in windows)."""
    flat = (view[1] * view[2], view[2], 1)
    folded: Grouped = []
    for leaf in fused.leaves:
        if type(leaf) is not Operand:
            continue
        f = fold_strides(shape, leaf.strides, groups, flat)
        if f is None or (rows and f[1] not in (0, 1)):
            return None
        if not (rows and f == flat) and strided_span(view, f) * STORAGE_ITEMSIZE[leaf.dtype] > limit:
            return None
        folded.append(f)
    return folded


@functools.lru_cache(maxsize=4096)  # every reduction in place asks, mostly for a few layouts
def fold_strides(
    shape: tuple[int, ...], strides: tuple[int, ...], groups: Any, flat: tuple[int, int, int]
) -> tuple[int, int, int] | None:
    """The strides of a view of ``shape`` along its three ``groups`` of axes, each group read as
    one axis; None when a group's axes do not fold into one (or run backwards). A group of one
    element takes its ``flat`` (contiguous) stride."""
    folded = []
    for (lo, hi), contiguous_stride in zip(groups, flat, strict=True):
        axes = [(n, s) for n, s in zip(shape[lo:hi], strides[lo:hi], strict=True) if n != 1]
        if not axes:
            folded.append(contiguous_stride)
            continue
        if builtins.any(s < 0 for _, s in axes):
            return None
        for (_, outer), (n, inner) in itertools.pairwise(axes):
            if outer != inner * n:
                return None
        folded.append(axes[-1][1])
    return folded[0], folded[1], folded[2]


def check_keepdims(keepdims: Any) -> None:
    """Raise a TypeError for a ``keepdims`` that is not a bool (an int passes, as in NumPy):
    'yes' and None had been taken by their truth."""
    if not isinstance(keepdims, bool | int | np.bool_):
        raise TypeError(f"keepdims must be a bool, not {type(keepdims).__name__} {keepdims!r}")


@functools.lru_cache(maxsize=1024)
def _geometry(
    shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool
) -> tuple[tuple[int, ...], tuple[int, ...], int, int, tuple[int, int, int] | None]:
    """How a reduction of ``shape`` over ``axes`` runs: the result's shape, the axes' order with
    the reduced ones last, the rows and their length k once the reduced axes are moved last,
    and, when the reduced axes are next to each other, the array read in place as (m, k, inner):
    m the elements of the axes before them, inner those after them (1 when they are last). A
    loop reduces the same shapes again and again: each is worked out once."""
    ndim = len(shape)
    keep = [d for d in range(ndim) if d not in axes]
    out_shape = (
        tuple(1 if d in axes else shape[d] for d in range(ndim))
        if keepdims
        else tuple(shape[d] for d in keep)
    )
    order = (*keep, *axes)
    rows, k = math.prod([shape[d] for d in keep]), math.prod([shape[d] for d in axes])
    first, last = builtins.min(axes), builtins.max(axes)
    if last - first + 1 != len(axes):  # not next to each other
        return out_shape, order, rows, k, None
    return out_shape, order, rows, k, (math.prod(shape[:first]), k, math.prod(shape[last + 1 :]))


@functools.cache
def _reduction_code(kind: str, dtype: np.dtype[Any], acc: np.dtype[Any]) -> tuple[str, str, str]:
    """WGSL of reduction ``kind`` of ``dtype`` values accumulated as ``acc``: the combining
    expression of ``x`` and ``y``, the identity, and the conversion of a value ``v`` to ``acc``."""
    t = wgsl_type(acc)
    nan = lib("isnan", t)
    combine = {
        "sum": "x + y",
        "prod": product("x", "y", t),
        "all": "min(x, y)",
        "any": "max(x, y)",
        "min": f"select(select(min(x, y), y, {nan}(y)), x, {nan}(x))" if t[0] == "f" else "min(x, y)",
        "max": f"select(select(max(x, y), y, {nan}(y)), x, {nan}(x))" if t[0] == "f" else "max(x, y)",
    }[kind]
    identities = {"sum": ZERO, "prod": ONE, "min": _MAX, "max": _MIN, "all": {t: "1u"}, "any": {t: "0u"}}
    return combine, identities[kind][t], convert("v", dtype, acc)


@functools.cache
def _scaled_squares_code(dtype: np.dtype[Any]) -> tuple[str, str, str]:
    """:func:`_reduction_code` of :func:`scaled_squares`: the pairs (scale, ssq) of the real
    ``dtype`` values, accumulated in the complex dtype of their precision; a value v is (v, 1),
    a zero (0, 0)."""
    t, tr = wgsl_type(_dtypes.COMPLEX_OF[dtype]), wgsl_type(dtype)
    load = f"{t}(v, select({ONE[tr]}, {ZERO[tr]}, v == {ZERO[tr]}))"
    return f"{lib('scaled_sum', tr)}(x, y)", ZERO[t], load


def scaled_squares(mag: Array, axes: tuple[int, ...], keepdims: bool) -> tuple[Array, Array]:
    """(scale, ssq) over ``axes`` of the magnitudes ``mag`` (float32 or float64, none negative):
    their squares sum to scale^2 * ssq, with ssq at least 1 unless all are zero, in one pass
    over ``mag`` (a pending chain computed as it is read), as LAPACK's nrm2 scales. Both are
    views of one result: scale * sqrt(ssq) is the 2-norm, without the overflow of large
    squares or the underflow of small ones."""
    acc = _dtypes.COMPLEX_OF[mag.dtype]
    with mag._device._lock:  # (see _kept)
        chain, key, plan = _kept(mag, axes, keepdims, acc, "norm2")
        if plan is not None:
            storage, out_shape = plan.reduce(mag, chain, acc, "norm2"), plan.out_shape
        else:
            check_count(mag, "vector_norm")
            code = _scaled_squares_code(mag._dtype)
            storage, out_shape = _launch(mag, axes, keepdims, acc, "norm2", code, key, chain)
    return scaled_pairs(storage, out_shape, mag._dtype, mag._device)


def scaled_pairs(
    storage: Storage, out_shape: tuple[int, ...], dtype: np.dtype[Any], dev: GpuDevice
) -> tuple[Array, Array]:
    """The (scale, ssq) views of the pairs :func:`scaled_squares` reduces into ``storage``."""
    strides = c_strides((*out_shape, 2))[:-1]  # (as pairs[..., 0] and pairs[..., 1])
    scale = Array._new(storage, out_shape, dtype, dev, strides, 0)
    return scale, Array._new(storage, out_shape, dtype, dev, strides, 1)


def _sum_dtype(x: Array, dtype: Any) -> np.dtype[Any]:
    if dtype is not None:
        dt = _dtypes.check_dtype(dtype)
        x.device.check_dtype(dt)
        return dt
    if x.dtype.kind in "fc":  # the common case first: floats keep their dtype
        return x.dtype
    if x.dtype.kind in "ib":
        integral = default_dtypes_of(x.device)["integral"]
        return integral if x.dtype.itemsize <= integral.itemsize else x.dtype
    # unsigned: the widest unsigned dtype the device has
    wide = _dtypes.uint64 if "uint64" in x.device.dtype_names else _dtypes.uint32
    return wide if x.dtype.itemsize <= wide.itemsize else x.dtype


def _numeric(x: Array, fn: str, kinds: str = "iufc") -> None:
    if x.dtype.kind not in kinds:
        what = "real-valued numeric" if kinds == "iuf" else "numeric"
        raise TypeError(f"{fn}() needs a {what} array, not {x.dtype.name}")


def sum(x: Array, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Array:
    """Sum over ``axis``; integers accumulate in the device's default integer dtype."""
    x = _check(x, "sum")
    _numeric(x, "sum")
    return _reduce(x, axis, keepdims, _sum_dtype(x, dtype), "sum", "sum")


def prod(x: Array, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Array:
    """Product over ``axis``; integers accumulate in the device's default integer dtype."""
    x = _check(x, "prod")
    _numeric(x, "prod")
    return _reduce(x, axis, keepdims, _sum_dtype(x, dtype), "prod", "prod")


def _minmax(x: Array, axis: Any, keepdims: bool, kind: str) -> Array:
    x = _check(x, kind)
    _numeric(x, kind, "iuf")  # complex numbers have no order
    axes = _axes(axis, x.ndim, kind)
    if builtins.any(x.shape[a] == 0 for a in axes) or (x.size == 0 and axis is None):
        raise ValueError(f"{kind}() of an empty set of elements has no identity: reduce a non-empty axis")
    return _reduce(x, axis, keepdims, x.dtype, kind, kind)


def min(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:
    """Smallest element over ``axis`` (NaN propagates)."""
    return _minmax(x, axis, keepdims, "min")


def max(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:
    """Largest element over ``axis`` (NaN propagates)."""
    return _minmax(x, axis, keepdims, "max")


def all(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:
    """Whether every element over ``axis`` is true (non-zero)."""
    return _reduce(_check(x, "all"), axis, keepdims, _dtypes.bool_, "all", "all")


def any(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:
    """Whether some element over ``axis`` is true (non-zero)."""
    return _reduce(_check(x, "any"), axis, keepdims, _dtypes.bool_, "any", "any")


def _count(x: Array, axis: Any, fn: str) -> int:
    """The number of elements ``fn`` reduces over ``axis``."""
    return math.prod(x.shape[a] for a in _axes(axis, x.ndim, fn))


def _floating(x: Array, fn: str, kinds: str = "f") -> None:
    if x.dtype.kind not in kinds:
        raise TypeError(f"{fn}() needs a floating-point array, not {x.dtype.name}: use astype() first")


def mean(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:
    """Arithmetic mean over ``axis`` (NaN for an empty set)."""
    x = _check(x, "mean")
    _floating(x, "mean", "fc")
    n = float(_count(x, axis, "mean"))
    if x._dtype == _dtypes.float16:  # the sum kept in float32 (as NumPy's), or it may overflow
        total = sum(x, axis=axis, keepdims=keepdims, dtype=_dtypes.float32)
        return astype(apply("divide", total, n), _dtypes.float16)
    plan = array_plan("mean", x, axis, keepdims)
    if plan is None:
        return apply("divide", sum(x, axis=axis, keepdims=keepdims), n)

    def launch() -> list[Storage]:
        total = sum(x, axis=axis, keepdims=keepdims)
        return [total._storage, apply("divide", total, n)._storage]  # (in the order made)

    return Array._new(plan.made(x, launch)[-1], plan.out_shape, x._dtype, x._device)


def var(x: Array, /, *, axis: Any = None, correction: int | float = 0.0, keepdims: bool = False) -> Array:
    """Variance over ``axis``: mean squared deviation, divided by ``N - correction``."""
    return _variance(x, axis, correction, keepdims, "var")


def std(x: Array, /, *, axis: Any = None, correction: int | float = 0.0, keepdims: bool = False) -> Array:
    """Standard deviation over ``axis`` (square root of :func:`var`)."""
    return _variance(x, axis, correction, keepdims, "std")


def _variance(x: Array, axis: Any, correction: int | float, keepdims: bool, fn: str) -> Array:
    """:func:`var` (``fn="var"``) or :func:`std` (``"std"``). Where ``N - correction`` is 0 or
    less the result is NaN, as the standard says (NumPy gives inf)."""
    x = _check(x, fn)
    _floating(x, fn)
    if isinstance(correction, bool) or not isinstance(correction, numbers.Real):
        raise TypeError(f"{fn}(): correction must be a real number, not {type(correction).__name__}")
    if x._dtype == _dtypes.float16:
        # in float32, rounded once, as mean: past 65504 elements N had been an infinite divisor
        return astype(_variance(astype(x, _dtypes.float32), axis, correction, keepdims, fn), _dtypes.float16)
    n = _count(x, axis, fn)
    plan = array_plan("var", x, axis, keepdims)
    if plan is None:
        ss = _deviations(x, axis, keepdims, n)[0]
    else:
        made = plan.made(x, lambda: _deviation_buffers(x, axis, keepdims, n))
        ss = Array._new(made[-1], plan.out_shape, x._dtype, x._device)
    variance = apply("divide", ss, float(n - correction) if n - correction > 0 else math.nan)
    return apply("sqrt", variance) if fn == "std" else variance


def _deviations(x: Array, axis: Any, keepdims: bool, n: int) -> tuple[Array, Array, Array]:
    """The sum over ``axis`` of the squared deviations of ``x`` from its mean (``n`` elements a
    result), with the sum of ``x`` and the mean (both keeping the reduced axes): a reduction,
    then one of the pending chain ``(x - mean) ** 2``, which computes the pending mean again at
    each element (see ``_fusion._spread``; with fusion off the mean is computed first)."""
    total = sum(x, axis=axis, keepdims=True)
    mu = apply("divide", total, float(n))
    d = apply("subtract", x, mu)
    return sum(apply("multiply", d, d), axis=axis, keepdims=keepdims), total, mu


def _deviation_buffers(x: Array, axis: Any, keepdims: bool, n: int) -> list[Storage]:
    """The buffers :func:`_deviations` makes, in the order it makes them (a replay of its
    :class:`ArrayPlan` takes them from the pool in that order): the sum's, the mean's where it
    was computed on its own (fusion off), the result's."""
    squares, total, mu = _deviations(x, axis, keepdims, n)
    result = squares._storage
    computed = mu._store  # (None while pending: the chain computed it as it went)
    return [total._storage, result] if computed is None else [total._storage, computed, result]


class ArrayPlan(NamedTuple):
    """An operation of fixed reductions on an array of one signature (dtype, shape, strides,
    axis, keepdims: ``mean``, ``var``, ``std``, ``vector_norm``), whose dispatches are recorded
    again on buffers met before (see ``_kernels.Recorded``): a loop records them, not the
    operation's steps (its chains, their reductions' plans) again. On the lavapipe machine's
    host with a GPU's code paths (best of 40 rounds of 20 calls, rounds in turns against the
    code before), ``var`` of 4096 float32 recorded in 18.7-19.2 us against 54.5-56.3, ``var(x,
    axis=0)`` of 1000 x 16 in 23.4-24.3 against 64.1-66.3, ``std`` of 4096 in 21.7-22.1 against
    57.3-58.8, ``vector_norm`` of 4096 in 22.6-24.0 against 34.0-34.5. A mean's division runs
    inside its plan, so the mean is computed rather than pending: 11.9-12.7 us against
    14.8-15.9, and 12.5-13.0 against 22.2-23.5 with the division launched (the graphs that
    broadcast it read it rather than compute it again, one more small dispatch on the GPU
    against 8 us of the host's). An operation whose reduced axes are apart from each other
    copies them together first, into a buffer the launch drops, so its plan is never recorded
    (``Recorded`` stops logging). Float16 takes none: its reductions round their float32 sums in
    a kernel of their own."""

    out_shape: tuple[int, ...]
    #: its launches, recorded again from their dispatches on buffers met before
    recorded: Recorded

    def made(self, x: Array, launch: Callable[[], list[Storage]]) -> list[Storage]:
        """The buffers ``launch()`` makes from ``x`` (of this plan's signature), the operation's
        result last, or those its logged dispatches write."""
        storage = x._storage
        return self.recorded.run(x._device, [storage.buffer, x._offset], [storage.buffer], launch)


def array_plan(kind: str, x: Array, axis: Any, keepdims: bool) -> ArrayPlan | None:
    """The plan of operation ``kind`` on ``x`` over ``axis`` (made the first time), or None for
    a pending ``x`` (its reductions read its chain), float16 (see :class:`ArrayPlan`), an axis
    that is not None, an int or a tuple of ints (checked already), or one that reduces nothing
    (an empty array or axis)."""
    check_keepdims(keepdims)  # (before it is part of a key: a list is not hashable)
    node = x._node
    if (node is not None and node.storage is None) or x._dtype.itemsize < 4 or not _plain_axis(axis):
        return None
    dev = x._device
    key = (kind, x._dtype, x._shape, x._strides, axis, keepdims, dev.cpu)
    plan: ArrayPlan | None = dev.plans.get(key)
    if plan is None:
        axes = _axes(axis, len(x._shape), kind)
        if not axes or 0 in x._shape:
            return None
        out_shape = _geometry(x._shape, axes, keepdims)[0]
        plan = remember(dev.plans, PLAN_CACHE, key, ArrayPlan(out_shape, Recorded()))
    return plan


#: the first value of a cumulative sum or product with include_initial
_INITIAL = {"sum": 0, "prod": 1}


def _initial(op: str, acc: np.dtype[Any]) -> bool | int:
    """The first value of a cumulative ``op`` with include_initial, of the accumulator's kind
    (a bool for bool sums and products: a Python int does not combine with a bool array)."""
    return bool(_INITIAL[op]) if acc.kind == "b" else _INITIAL[op]


def _cumulative(x: Array, axis: int | None, dtype: Any, include_initial: bool, op: str) -> Array:
    fn = f"cumulative_{op}"
    x = _check(x, fn)
    if x.dtype.kind != "b":  # booleans count as 0/1, like NumPy's
        _numeric(x, fn)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{fn}() needs axis= for arrays of more than one dimension")
        axis = 0
    if x.ndim == 0:
        raise ValueError(f"{fn}() needs an array of at least one dimension")
    axis = _axis(axis, x.ndim, fn)
    acc = _sum_dtype(x, dtype)
    initial = x.size // builtins.max(x.shape[axis], 1) if include_initial else 0  # (result elements)
    if too_large(x) or not fits(x.device, x.size + initial, storage_itemsize(acc)):
        # the parts are scanned one by one and joined at the end: a result larger than any
        # buffer raises now, not after scanning them all (minutes on a CPU adapter)
        nbytes, largest = (x.size + initial) * storage_itemsize(acc), x.device.pool.largest
        if nbytes > largest:
            raise MemoryError(
                f"{fn}(): the result of {nbytes} bytes exceeds the largest buffer {x.device} makes "
                f"({largest} bytes): scan slices of the array one at a time"
            )
        return _cumulative_parts(x, axis, acc, include_initial, op)
    # the scanned axis last and contiguous: rows of n, scanned into rows of n (+1) of the result
    order = (*[d for d in range(x.ndim) if d != axis], axis)
    src = contiguous(permute_dims(x, order))
    n = x.shape[axis]
    width = n + (1 if include_initial else 0)
    out = empty((*src.shape[:-1], width), acc, x.device)
    if include_initial:
        assign(out[..., 0], _initial(op, acc))
    _scan(src, out, op, acc, width)
    return permute_dims(out, tuple(order.index(d) for d in range(x.ndim)))


def _scan(src: Array, out: Array, op: str, acc: np.dtype[Any], width: int) -> None:
    """Scan the rows of the contiguous ``src`` into the last ``src.shape[-1]`` elements of each
    row of ``width`` of the new ``out``: a :class:`Recorded` operation per shape and dtypes, whose
    scan kernels a loop records again from their log (on an H100's host a cumulative sum of 1e4,
    1e6 and 1e7 float32 took 31-46, 45-69 and 47-68 us to record against 61-71, 128-138 and
    112-134; two runs in turns)."""
    dev, n = src.device, src.shape[-1]
    sig = ("scan", op, src.shape, src.dtype, acc, width)
    source, target = (src._storage, src._offset, src.dtype), (out._storage, width - n, width)
    reads = [src._storage.buffer, src._offset, out._storage.buffer]
    # float16 sums round at every step in NumPy: only the sequential order reproduces them
    sequential = acc == _dtypes.float16
    recorded(dev, sig).run(
        dev,
        reads,
        [src._storage.buffer, out._storage.buffer],
        lambda: scan_rows(dev, source, math.prod(src.shape[:-1]), n, acc, op, target, sequential=sequential),
    )


def _cumulative_parts(x: Array, axis: int, acc: np.dtype[Any], include_initial: bool, op: str) -> Array:
    """:func:`_cumulative` of an ``x`` too large (or a result too large) for one storage
    binding: halves along another axis, joined; or, when only the scanned axis is longer than
    1, windows of it scanned one by one, each then combined with the last value of the one
    before (float16 sums then round once more at each window's start than NumPy's)."""
    d = outer_axis(x.shape, axis)
    if d is not None:
        return concat([_cumulative(half, axis, acc, include_initial, op) for half in halves(x, d)], axis=d)
    line = reshape(x, (-1,))
    parts = [full((1,), _initial(op, acc), dtype=acc, device=x.device)] if include_initial else []
    carry = None
    for start, stop in windows(line.size, window_elements(x.device, storage_itemsize(acc))):
        part = _cumulative(line[start:stop], 0, acc, False, op)
        if carry is not None:
            part = apply("add" if op == "sum" else "multiply", part, carry)
        parts.append(part)
        carry = part[-1:]
    out = concat(parts)
    return reshape(out, tuple(out.size if d == axis else 1 for d in range(x.ndim)))


def cumulative_sum(
    x: Array, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
) -> Array:
    """Running sums along ``axis`` (a parallel scan; float16 rounds every step, as NumPy's)."""
    return _cumulative(x, axis, dtype, include_initial, "sum")


def cumulative_prod(
    x: Array, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
) -> Array:
    """Running products along ``axis`` (a parallel scan; float16 rounds every step, as NumPy's)."""
    return _cumulative(x, axis, dtype, include_initial, "prod")
