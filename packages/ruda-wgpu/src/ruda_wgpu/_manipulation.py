"""Manipulation functions: views where the layout allows, one copy kernel where it does not."""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Sequence
from typing import Any

from ruda_wgpu import _dtypes
from ruda_wgpu._array import Array, assign, copy_of, empty
from ruda_wgpu._encoding import Step
from ruda_wgpu._engine import CAPTURE, WORKGROUP
from ruda_wgpu._kernels import (
    bind_view,
    broadcast_strides,
    c_strides,
    convert,
    kernel_step,
    prepared,
)
from ruda_wgpu._parts import too_large


def _check(x: Any, fn: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{fn}() takes a ruda_wgpu array, not {type(x).__name__}")
    return x


def _integer(value: Any, fn: str, what: str) -> int:
    """``value`` (``what``, an argument of ``fn``) as an int: a Python or NumPy integer, or an
    object with ``__index__``; a TypeError naming them for anything else, bools included
    (``operator.index`` takes True for 1)."""
    if type(value) is not bool:
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise TypeError(f"{fn}(): {what} must be an integer, not {type(value).__name__} {value!r}")


def _axis(axis: int, ndim: int, fn: str) -> int:
    """``axis`` of ``ndim`` dimensions made non-negative; TypeError or IndexError naming ``fn``."""
    axis = _integer(axis, fn, "an axis")
    if not -ndim <= axis < ndim:
        raise IndexError(f"{fn}(): axis {axis} is out of range for {ndim} dimensions")
    return axis % ndim


def _lengths(value: Any, fn: str) -> tuple[int, ...]:
    """A shape or repetitions argument of ``fn`` (one int, or a sequence of them) as a tuple of
    ints; a TypeError for bools, which ``operator.index`` would take as 0 and 1."""
    items = tuple(value) if isinstance(value, Sequence) else (value,)
    if any(isinstance(n, bool) for n in items):
        raise TypeError(f"{fn + '(): ' if fn else ''}a shape holds integers, not bools: {value!r}")
    return tuple(operator.index(n) for n in items)


def _ints(value: Any) -> tuple[Any, ...]:
    """One integer (a Python or NumPy one) or a sequence of them, as a tuple."""
    return tuple(value) if isinstance(value, tuple | list) else (value,)


def _axes(axis: int | Sequence[int] | None, ndim: int, fn: str) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    items = _ints(axis)
    out = tuple(_axis(a, ndim, fn) for a in items)
    if len(set(out)) != len(out):
        raise ValueError(f"{fn}(): repeated axis in {axis!r}")
    return out


def _same_device(arrays: Sequence[Array], fn: str) -> None:
    dev = arrays[0].device
    for a in arrays[1:]:
        if a.device is not dev:
            raise ValueError(
                f"{fn}() got arrays on two devices, {dev} and {a.device}: move one with to_device()"
            )


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of several shapes; ValueError naming them when they do not broadcast."""
    checked = tuple(_lengths(s, "broadcast_shapes") for s in shapes)
    if any(n < 0 for s in checked for n in s):
        raise ValueError(f"broadcast_shapes(): negative lengths in {shapes}")
    return broadcast_for("", *checked)


@functools.lru_cache(maxsize=4096)  # every broadcasting operation asks, mostly for a few shapes
def broadcast_for(what: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """:func:`broadcast_shapes` for function ``what``, whose name starts the error message."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(ndim):
        sizes = {s[len(s) - ndim + d] for s in shapes if len(s) - ndim + d >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            named = f"{what}(): shapes" if what else "shapes"
            raise ValueError(f"{named} {', '.join(map(str, shapes))} cannot be broadcast together")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcast_to(x: Array, /, shape: tuple[int, ...]) -> Array:
    """A view of ``x`` broadcast to ``shape`` (zero strides along broadcast axes)."""
    x = _check(x, "broadcast_to")
    shape = _lengths(shape, "broadcast_to")
    if shape == x.shape:
        return x
    if len(shape) < x.ndim or any(n < 0 for n in shape) or broadcast_for("", x.shape, shape) != shape:
        raise ValueError(f"cannot broadcast an array of shape {x.shape} to {shape}")
    return x._view(shape, broadcast_strides(x.shape, x._strides, shape), x._offset)


def broadcast_arrays(*arrays: Array) -> tuple[Array, ...]:
    """Views of every array broadcast to their common shape."""
    shape = broadcast_for("broadcast_arrays", *(_check(a, "broadcast_arrays").shape for a in arrays))
    return tuple(broadcast_to(a, shape) for a in arrays)


def reshape(x: Array, /, shape: tuple[int, ...], *, copy: bool | None = None) -> Array:
    """``x`` with a new shape: a view where one reaches its elements (always for a contiguous
    ``x``), else a copy (``copy=False`` then raises)."""
    x = _check(x, "reshape")
    shape = _lengths(shape, "reshape")
    if shape.count(-1) > 1 or any(n < -1 for n in shape):
        raise ValueError(f"reshape(): invalid shape {shape}")
    if -1 in shape:
        known = math.prod(n for n in shape if n != -1)
        if known == 0 or x.size % known:
            raise ValueError(f"cannot reshape an array of size {x.size} into shape {shape}")
        shape = tuple(x.size // known if n == -1 else n for n in shape)
    if math.prod(shape) != x.size:
        raise ValueError(f"cannot reshape an array of size {x.size} into shape {shape}")
    if copy:
        return copy_of(x)._view(shape, c_strides(shape), 0)
    if x._is_contiguous():
        return x._view(shape, c_strides(shape), x._offset)
    strides = _view_strides(x.shape, x._strides, shape)
    if strides is not None:  # a view, as the standard asks where one can be made
        return x._view(shape, strides, x._offset)
    if copy is False:
        raise ValueError(
            f"reshape(copy=False): {x.shape} with strides {x._strides} has no view of shape {shape}"
        )
    return copy_of(x)._view(shape, c_strides(shape), 0)


def _view_strides(
    old: tuple[int, ...], strides: tuple[int, ...], new: tuple[int, ...]
) -> tuple[int, ...] | None:
    """The strides of a view of shape ``new`` onto the elements, in row-major order, of a view of
    shape ``old`` and ``strides``; None where no strides reach them all (NumPy's
    ``_attempt_nocopy_reshape``). Runs of old axes that are one stride apart are cut into the
    new axes of the same total length."""
    if 0 in old:
        return c_strides(new)
    axes = [(d, s) for d, s in zip(old, strides, strict=True) if d != 1]
    out = [0] * len(new)
    i = j = 0  # the next old and new axes
    while i < len(axes) and j < len(new):
        # the fewest old axes i..i2 and new ones j..j2 of the same total length
        i2, j2, size_old, size_new = i + 1, j + 1, axes[i][0], new[j]
        while size_old != size_new:
            if size_new < size_old:
                size_new, j2 = size_new * new[j2], j2 + 1
            else:
                size_old, i2 = size_old * axes[i2][0], i2 + 1
        if any(axes[k][1] != axes[k + 1][1] * axes[k + 1][0] for k in range(i, i2 - 1)):
            return None  # (those old axes are not one stride apart)
        out[j2 - 1] = axes[i2 - 1][1]
        for k in range(j2 - 1, j, -1):
            out[k - 1] = out[k] * new[k]
        i, j = i2, j2
    last = out[j - 1] if j else 1
    for k in range(j, len(new)):  # (trailing axes of length 1)
        out[k] = last
    return tuple(out)


def permute_dims(x: Array, /, axes: tuple[int, ...]) -> Array:
    """A view with the axes reordered."""
    x = _check(x, "permute_dims")
    axes = tuple(_axis(a, x.ndim, "permute_dims") for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"permute_dims(): {axes} is not a permutation of {x.ndim} axes")
    return x._view(tuple(x.shape[a] for a in axes), tuple(x._strides[a] for a in axes), x._offset)


def matrix_transpose(x: Array, /) -> Array:
    """Transpose of the last two axes (a view)."""
    return _check(x, "matrix_transpose").mT


def expand_dims(x: Array, /, axis: int | tuple[int, ...] = 0) -> Array:
    """A view with new axes of size 1 at ``axis`` (positions in the result)."""
    x = _check(x, "expand_dims")
    if axis is None:  # (all axes, to _axes: here there are none yet)
        raise TypeError("expand_dims(): axis must be an integer or a tuple of them, not None")
    ndim = x.ndim + len(_ints(axis))
    axes = _axes(axis, ndim, "expand_dims")
    shape, strides = list(x.shape), list(x._strides)
    for a in sorted(axes):
        shape.insert(a, 1)
        strides.insert(a, 0)
    return x._view(tuple(shape), tuple(strides), x._offset)


def squeeze(x: Array, /, axis: int | tuple[int, ...]) -> Array:
    """A view without the given axes, which must have size 1."""
    x = _check(x, "squeeze")
    axes = _axes(axis, x.ndim, "squeeze")
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze(): axis {a} has size {x.shape[a]}, not 1")
    keep = [d for d in range(x.ndim) if d not in axes]
    return x._view(tuple(x.shape[d] for d in keep), tuple(x._strides[d] for d in keep), x._offset)


def flip(x: Array, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    """A view with the order of elements reversed along ``axis`` (all axes by default)."""
    x = _check(x, "flip")
    strides, offset = list(x._strides), x._offset
    for a in _axes(axis, x.ndim, "flip"):
        if x.shape[a] > 1:
            offset += (x.shape[a] - 1) * strides[a]
        strides[a] = -strides[a]
    return x._view(x.shape, tuple(strides), offset)


def moveaxis(x: Array, source: int | tuple[int, ...], destination: int | tuple[int, ...], /) -> Array:
    """A view with axes moved from ``source`` to ``destination``."""
    x = _check(x, "moveaxis")
    src, dst = _axes(source, x.ndim, "moveaxis"), _axes(destination, x.ndim, "moveaxis")
    if len(src) != len(dst):
        raise ValueError("moveaxis(): source and destination need the same number of axes")
    order = [d for d in range(x.ndim) if d not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return permute_dims(x, tuple(order))


def concat(arrays: Sequence[Array], /, *, axis: int | None = 0) -> Array:
    """Join arrays along an existing axis (flattened when ``axis`` is None)."""
    arrays = [_check(a, "concat") for a in arrays]
    if not arrays:
        raise ValueError("concat() needs at least one array")
    _same_device(arrays, "concat")
    dt = _dtypes.result_type(*arrays)
    if axis is None:
        arrays = [reshape(a, (-1,)) for a in arrays]
        axis = 0
    ndim = arrays[0].ndim
    if ndim == 0 or any(a.ndim != ndim for a in arrays):
        raise ValueError(f"concat() needs arrays of one rank >= 1, got shapes {[a.shape for a in arrays]}")
    axis = _axis(axis, ndim, "concat")
    rest = {a.shape[:axis] + a.shape[axis + 1 :] for a in arrays}
    if len(rest) > 1:
        raise ValueError(f"concat(): shapes {[a.shape for a in arrays]} differ outside axis {axis}")
    shape = list(arrays[0].shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    out = empty(tuple(shape), dt, arrays[0].device)
    # (a fuse trace replays what launch_elementwise records: there, a copy per part)
    if out.size and len(arrays) > 1 and CAPTURE.log is None and not too_large(out, *arrays):
        for first in range(0, len(arrays), CONCAT_PARTS):
            _concat_parts(out, arrays, first, axis)
        return out
    start = 0
    for a in arrays:  # (each part of out has a's shape)
        assign(out._view(a.shape, out._strides, start * out._strides[axis]), a)
        start += a.shape[axis]
    return out


#: parts one dispatch of ``wgsl/concat.wgsl`` joins: with the result, the 8 storage bindings a
#: kernel may have on any device
CONCAT_PARTS = 7


def _concat_parts(out: Array, arrays: list[Array], first: int, axis: int) -> None:
    """Copy ``arrays[first : first + CONCAT_PARTS]`` into their place along ``axis`` of ``out``
    in one dispatch (``wgsl/concat.wgsl``); each of them, and ``out``, fits one binding.

    A loop joins arrays of the same layouts from the same few pooled buffers: the dispatch is
    prepared once per layout and buffers, and then only copied into the batch."""
    dev = out.device
    before = sum(a.shape[axis] for a in arrays[:first])
    parts = [a for a in arrays[first : first + CONCAT_PARTS] if a.size]
    if not parts:
        return
    length = sum(a.shape[axis] for a in parts)
    shape = (*out.shape[:axis], length, *out.shape[axis + 1 :])
    target = out._view(shape, out._strides, before * out._strides[axis])
    target._storage.will_write()
    layouts = [(a.shape, a._strides, a.dtype) for a in parts]
    sig = ("concat", axis, out.dtype, target.shape, target._strides, *layouts)
    launch = (target._storage.buffer, target._offset, *[(a._storage.buffer, a._offset) for a in parts])
    dev.replay([prepared(dev, sig, launch, lambda: _concat_step(target, parts, axis))])


def _concat_step(target: Array, parts: list[Array], axis: int) -> Step:
    """The dispatch of ``wgsl/concat.wgsl`` copying ``parts`` into ``target`` along ``axis``."""
    dev = target.device
    bind_o, o_base = bind_view(dev, target, "concat")
    starts, bindings, reads, words = [], [bind_o], [], []
    start = 0
    for k, a in enumerate(parts):
        binding, base = bind_view(dev, a, "concat")
        bindings.append(binding)
        starts.append(start)
        start += a.shape[axis]
        words += [base, *a._strides]
        value = convert(f"a{k}[u32(src)]", a.dtype, target.dtype)
        reads.append(f"    case {k}u: {{ o[u32(at)] = {value}; }}")
    params = [target.size, o_base, *starts, *target.shape, *target._strides, *words]
    subs = {
        "K": len(parts),
        "RANK": target.ndim,
        "AXIS": axis,
        "T": _dtypes.STORAGE[target.dtype.name],
        "WG": WORKGROUP,
        "WORDS": len(params),
        "BINDINGS": "\n".join(
            f"@group(0) @binding({k + 2}) var<storage, read> a{k}: array<{_dtypes.STORAGE[a.dtype.name]}>;"
            for k, a in enumerate(parts)
        ),
        "READS": "\n".join(reads),
    }
    return kernel_step(dev, "concat", subs, bindings, params, -(-target.size // WORKGROUP))


def stack(arrays: Sequence[Array], /, *, axis: int = 0) -> Array:
    """Join arrays of one shape along a new axis."""
    arrays = [_check(a, "stack") for a in arrays]
    if not arrays:
        raise ValueError("stack() needs at least one array")
    if len({a.shape for a in arrays}) > 1:
        raise ValueError(f"stack() needs arrays of one shape, got {[a.shape for a in arrays]}")
    axis = _axis(axis, arrays[0].ndim + 1, "stack")
    return concat([expand_dims(a, axis=axis) for a in arrays], axis=axis)


def unstack(x: Array, /, *, axis: int = 0) -> tuple[Array, ...]:
    """Views of ``x`` split along ``axis``."""
    x = _check(x, "unstack")
    if x.ndim == 0:
        raise ValueError("unstack() needs an array of at least one dimension")
    axis = _axis(axis, x.ndim, "unstack")
    return tuple(x[(slice(None),) * axis + (i,)] for i in range(x.shape[axis]))


def roll(x: Array, /, shift: int | tuple[int, ...], *, axis: int | tuple[int, ...] | None = None) -> Array:
    """Elements shifted cyclically along ``axis`` (of the flattened array when None)."""
    x = _check(x, "roll")
    if axis is None:
        if len(_ints(shift)) != 1:
            raise ValueError("roll() with axis=None takes one integer shift")
        shift = _ints(shift)[0]
        return reshape(roll(reshape(x, (-1,)), shift, axis=0), x.shape)
    axes = _ints(axis)
    shifts = _ints(shift) * len(axes) if len(_ints(shift)) == 1 else _ints(shift)
    if len(shifts) != len(axes):
        raise ValueError("roll(): shift and axis need the same length")
    totals: dict[int, int] = {}
    for s, a in zip(shifts, axes, strict=True):
        a = _axis(a, x.ndim, "roll")
        totals[a] = totals.get(a, 0) + operator.index(s)
    out = copy_of(x)
    for a, s in totals.items():
        n = x.shape[a]
        if n == 0 or s % n == 0:
            continue
        s %= n
        src = out
        out = empty(x.shape, x.dtype, x.device)
        pre = (slice(None),) * a
        assign(out[(*pre, slice(s, None))], src[(*pre, slice(None, n - s))])
        assign(out[(*pre, slice(None, s))], src[(*pre, slice(n - s, None))])
    return out


def tile(x: Array, repetitions: tuple[int, ...], /) -> Array:
    """``x`` repeated ``repetitions`` times along each axis (a broadcast view, then one copy)."""
    x = _check(x, "tile")
    reps = _lengths(repetitions, "tile")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile(): repetitions must be non-negative, got {reps}")
    ndim = max(x.ndim, len(reps))
    reps = (1,) * (ndim - len(reps)) + reps
    x = reshape(x, (1,) * (ndim - x.ndim) + x.shape)
    inter = tuple(v for d in range(ndim) for v in (1, x.shape[d]))
    wide = tuple(v for d in range(ndim) for v in (reps[d], x.shape[d]))
    spread = broadcast_to(reshape(x, inter), wide)
    return reshape(copy_of(spread), tuple(r * n for r, n in zip(reps, x.shape, strict=True)))
