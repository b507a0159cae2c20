"""WGSL kernels generated from small templates, and their launchers.

One generic elementwise kernel per (operation, dtypes, rank, layout): each
operand is either contiguous over the iteration (``c``: index ``base + i``),
strided (``s``: offset plus strides, broadcasting is a zero stride), or a
Python scalar carried in the parameters (``k``). The launcher collapses
dimensions that are contiguous for every operand, so most calls run at rank 1,
and splits work that would bind more than the device's binding limit into
windows of the buffers.
"""

from __future__ import annotations

import functools
import math
import struct
import threading
from collections.abc import Callable, Container, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np

from ruda_wgpu import _dtypes, _wgsl
from ruda_wgpu._engine import (
    STORAGE_ITEMSIZE,
    WORKGROUP,
    GpuDevice,
    Step,
    Storage,
    remember,
    storage_itemsize,
)

if TYPE_CHECKING:
    from ruda_wgpu._array import Array


class _Capturing(threading.local):
    """The capture of kernel launches by a ``ruda_wgpu.fuse`` trace running on this thread
    (a :class:`ruda_wgpu._replay.Capture`), or None: the launch functions below hand their
    calls to it while a trace runs."""

    log: Any = None


CAPTURE = _Capturing()

ZERO = {
    "f32": "0.0f", "f64": "0.0lf", "i32": "0i", "u32": "0u", "i64": "0li", "u64": "0lu",
    "vec2<f32>": "vec2<f32>(0.0f, 0.0f)", "vec2<f64>": "vec2<f64>(0.0lf, 0.0lf)",
}  # fmt: skip
ONE = {
    "f32": "1.0f", "f64": "1.0lf", "i32": "1i", "u32": "1u", "i64": "1li", "u64": "1lu",
    "vec2<f32>": "vec2<f32>(1.0f, 0.0f)", "vec2<f64>": "vec2<f64>(1.0lf, 0.0lf)",
}  # fmt: skip
#: the suffixes of the library's helpers: float ones per float type, complex ones per pair type
FLOAT_SUFFIX = {"f32": "f", "f64": "d"}
COMPLEX_SUFFIX = {"vec2<f32>": "c64", "vec2<f64>": "c128"}


def lib(name: str, t: str) -> str:
    """The library helper ``name`` for WGSL type ``t``: ``isnan_f`` for f32, ``isnan_d`` for f64,
    ``isnan_c64`` and ``isnan_c128`` for the complex pairs."""
    return f"{name}_{COMPLEX_SUFFIX.get(t) or FLOAT_SUFFIX.get(t, 'f')}"


def product(x: str, y: str, t: str) -> str:
    """WGSL for ``x * y`` in WGSL type ``t`` (a complex product for the pairs)."""
    return f"{lib('mul', t)}({x}, {y})" if t.startswith("vec2") else f"{x} * {y}"


def wgsl_type(dtype: np.dtype[Any]) -> str:
    """The WGSL type an element of ``dtype`` is stored and computed in."""
    return _dtypes.STORAGE[_dtypes.NAME[dtype]]


def real_literal(value: float, dtype: np.dtype[Any]) -> str:
    """``value`` as a WGSL literal of the real type of the complex ``dtype``, exactly rounded."""
    if dtype == _dtypes.complex64:
        return f"{float(np.float32(value))!r}f"
    return f"{float(value)!r}lf"


def wrap(expr: str, dtype: np.dtype[Any]) -> str:
    """Bring a 32-bit result back into a narrow dtype: integers wrap, float16 rounds, as NumPy's do."""
    name = _dtypes.NAME[dtype]
    if name == "int8":
        return f"(({expr}) << 24u) >> 24u"
    if name == "int16":
        return f"(({expr}) << 16u) >> 16u"
    if name == "uint8":
        return f"(({expr}) & 0xffu)"
    if name == "uint16":
        return f"(({expr}) & 0xffffu)"
    if name == "float16":
        return f"round_f16({expr})"  # stored widened: round to the nearest float16
    return expr


def convert(expr: str, src: np.dtype[Any], dst: np.dtype[Any]) -> str:
    """Convert a computed value of ``src`` to ``dst`` (astype semantics)."""
    ts, td = wgsl_type(src), wgsl_type(dst)
    if dst == _dtypes.bool_:
        if src == _dtypes.bool_:
            return expr
        # NaN is true; no float '!=' (see not_equal)
        zero = f"({expr}) == {ZERO[ts]}"
        return f"select(1u, 0u, {f'all({zero})' if src.kind == 'c' else zero})"
    if dst.kind == "c":
        part = _dtypes.REAL_OF[dst]
        if src.kind != "c":
            return f"{td}({convert(expr, src, part)}, {ZERO[wgsl_type(part)]})"
        if ts == td:
            return expr
        return f"{td}({expr})" if td == "vec2<f64>" else f"c128_to_c64({expr})"
    if src.kind == "c":
        raise TypeError(f"cannot convert {src.name} to {dst.name}: take real(), imag() or abs() explicitly")
    if ts == td:
        return wrap(expr, dst) if src.itemsize > dst.itemsize or src.kind != dst.kind else expr
    if ts == "f64":
        if td == "f32":  # rounded by the library: drivers may round f64 -> f32 as they like
            return f"round_f16(to_f32_odd_d({expr}))" if dst == _dtypes.float16 else f"to_f32_d({expr})"
        return wrap(f"f64_to_{td}({expr})", dst)
    if td == "f64":
        return f"f64({expr})"  # exact from f32 and 32-bit integers
    if ts == "f32":
        # WGSL leaves out-of-range float -> int conversions to the driver: the library saturates,
        # and negative values wrap into unsigned types as NumPy's C casts do.
        return wrap(f"f32_to_{td}({expr})", dst)
    # 32 -> 64-bit conversions are spelled out: naga sign-extends u32 -> i64, and lavapipe
    # miscompiles comparisons of a sign-extended i32 with a constant (i64(x) < 64li is false).
    if ts == "i32" and td in ("i64", "u64"):
        return f"{td}(u64(bitcast<u32>({expr})) - select(0lu, 4294967296lu, ({expr}) < 0i))"
    if (ts, td) == ("u32", "i64"):
        return f"i64(u64({expr}))"
    return wrap(f"{td}({expr})", dst)


class Operand(NamedTuple):
    """An array operand of a kernel: storage, element offset, strides (elements), dtype.

    Equal operands (the same view of the same buffer) are bound once by a fused kernel.
    """

    storage: Storage
    offset: int
    strides: tuple[int, ...]
    dtype: np.dtype[Any]


class Scalar:
    """A Python scalar operand, carried in the kernel parameters (never shared between operands:
    0.0 == -0.0, but their bits differ)."""

    __slots__ = ("dtype", "value")

    def __init__(self, value: Any, dtype: np.dtype[Any]) -> None:
        self.value, self.dtype = value, dtype

    def key(self) -> tuple[Any, ...]:
        """What tells this scalar's words from another's without making them: its dtype, the
        value's type and value, and its signs (0.0 == -0.0, but their bits differ; a complex
        value has two)."""
        value = self.value
        if type(value) is complex:
            return self.dtype, complex, value, math.copysign(1, value.real), math.copysign(1, value.imag)
        return self.dtype, type(value), value, math.copysign(1, value)

    def words(self) -> list[int]:
        """The value as the :data:`SLOT` parameter words of its stored type."""
        return list(_scalar_words(*self.key()))


@functools.lru_cache(maxsize=4096)  # keyed as Scalar.key: type and sign keep 1, 1.0, 0.0, -0.0 apart
def _scalar_words(dtype: np.dtype[Any], kind: type, value: Any, *signs: float) -> tuple[int, ...]:
    host = np.asarray(value)
    if dtype == _dtypes.float16:  # NumPy rounds a Python float to float16 first
        with np.errstate(over="ignore"):
            host = host.astype(dtype)
    arr = host.astype(_dtypes.STORAGE_NP[_dtypes.NAME[dtype]]).reshape(1)
    w = arr.view(np.uint32).tolist()
    return tuple(w + [0] * (SLOT - len(w)))


class OutputRead(NamedTuple):
    """An operand that is the output's own element, read before it is written (``x += y``
    computed in place: WebGPU does not let one dispatch bind a buffer twice when it writes it)."""

    dtype: np.dtype[Any]


#: parameter words per scalar operand (a complex128 is four)
SLOT = 4
#: elementwise launch plans a device keeps before it starts over
PLAN_CACHE = 4096
#: prepared dispatches a launch plan keeps (see ElementwisePlan.launch) before it starts over
PREPARED_LAUNCHES = 64


def _scalar_load(b: int, t: str) -> str:
    if t.startswith("vec2"):
        step = 1 if t == "vec2<f32>" else 2
        return f"{t}({_scalar_load(b, t[5:8])}, {_scalar_load(b + step, t[5:8])})"
    if t == "f32":
        return f"bitcast<f32>(P[{b}])"
    if t == "i32":
        return f"bitcast<i32>(P[{b}])"
    if t == "u32":
        return f"P[{b}]"
    # naga sign-extends u32 -> i64, so both words go through u64
    words = f"(u64(P[{b + 1}]) << 32u) | u64(P[{b}])"
    return f"bitcast<f64>({words})" if t == "f64" else f"{t}({words})"


def elementwise_source(
    out: np.dtype[Any],
    ins: Sequence[np.dtype[Any]],
    rank: int,
    layout: str,
    body: str,
    prelude: str,
    lets: str = "",
    lanes: int = 1,
) -> str:
    """WGSL for ``o[...] = body(x0, x1, ...)`` over an iteration space of ``rank`` dims; ``lets``
    are statements run before (a fused kernel's intermediate values).

    ``layout`` has one letter per operand (output first): ``z``, ``c``, ``s``, ``k`` or ``o``
    (see :class:`ElementwisePlan`).
    Parameters (u32 words): n, first global index, shape[rank], then per operand
    base offset (or scalar value) in :data:`SLOT` words and strides[rank].
    ``lanes`` = :data:`LANES`: each thread does that many neighbouring elements through vector
    loads and stores (see :func:`four_lanes`).
    """
    words = SLOT + rank
    vector = (lambda t: f"vec{lanes}<{t}>") if lanes > 1 else (lambda t: t)
    lines = [
        "@group(0) @binding(0) var<storage, read> P: array<u32>;",
        f"@group(0) @binding(1) var<storage, read_write> o: array<{vector(wgsl_type(out))}>;",
    ]
    binding = 2
    for k, dt in enumerate(ins):
        if layout[k + 1] not in "ko":
            lines.append(
                f"@group(0) @binding({binding}) var<storage, read> a{k}: array<{vector(wgsl_type(dt))}>;"
            )
            binding += 1
    lines.append(prelude)
    lines.append(
        f"@compute @workgroup_size({WORKGROUP})\n"
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
        "        @builtin(local_invocation_index) lid: u32) {\n"
        f"  let i = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;"
    )
    if lanes > 1:
        lines.append(_lanes_main(out, ins, rank, layout, body, lets, lanes))
        return "\n".join(lines)
    lines.append("  if (i >= P[0]) { return; }\n  let gi = P[1] + i;")
    if "s" in layout:
        lines.append("  var r = gi;")
        for d in range(rank - 1, -1, -1):
            lines.append(f"  let c{d} = r % P[{2 + d}]; r = r / P[{2 + d}];")

    def index(k: int) -> str:
        base = 2 + rank + k * words
        if layout[k] == "z":
            return "i"
        if layout[k] == "c":
            return f"(P[{base}] + i)"
        terms = [f"bitcast<i32>(P[{base}])"]
        terms += [f"i32(c{d}) * bitcast<i32>(P[{base + SLOT + d}])" for d in range(rank)]
        return f"u32({' + '.join(terms)})"

    lines.append(f"  let oi = {index(0)};")
    for k, dt in enumerate(ins):
        t = wgsl_type(dt)
        if layout[k + 1] == "k":
            lines.append(_scalar_let(k, dt, rank))
        elif layout[k + 1] == "o":
            lines.append(f"  let x{k}: {t} = o[oi];")
        else:
            lines.append(f"  let x{k}: {t} = a{k}[{index(k + 1)}];")
    if lets:
        lines.append(lets)
    lines.append(f"  o[oi] = {wrap(body, out)};\n}}")
    return "\n".join(lines)


def _scalar_let(k: int, dt: np.dtype[Any], rank: int) -> str:
    """The ``let`` of :func:`elementwise_source`'s operand ``x{k}``, a scalar: its words follow
    the output's and the operands' before it in the parameters."""
    return f"  let x{k}: {wgsl_type(dt)} = {_scalar_load(2 + rank + (k + 1) * (SLOT + rank), wgsl_type(dt))};"


#: elements a thread of an elementwise kernel does where :func:`four_lanes` allows
LANES = 4
#: WGSL types an element is stored in that :func:`four_lanes` reads as vectors
_LANE_TYPES = frozenset({"f32", "i32", "u32"})


def four_lanes(layout: str, dtypes: Sequence[np.dtype[Any]], n: int) -> bool:
    """Whether an elementwise kernel may do :data:`LANES` neighbouring elements a thread: every
    array operand, the output too, contiguous from an aligned binding offset (layout ``z``; the
    others scalars), stored in 32-bit words, and ``n`` a multiple of :data:`LANES`.

    One vector load per operand and one store replace four scalar ones. On an H200 (NVIDIA's
    Vulkan driver) a hand-written addition of 1e7 float32 took 35.7 us that way against 46.6 (3.4
    against 2.6 TB/s), and ours went from 1.03 to 0.91 times the one-lane hand-written kernel;
    on lavapipe an addition of 1e6 float32 took half the time. Each lane computes the same
    scalar expression as a one-lane kernel computes its element, so the bits are the same.
    Threads looping over the vectors (at most 1056 workgroups, enough for the H200's 132
    multiprocessors), though a hand-written kernel of the benchmark chain gained 10% that way,
    lost on an H200 in rounds of 40 calls on 1e7 float32: the fused chain took 52.6-53.0 us a
    call against 49.9-50.1, an addition 39.8-42.7 against 37.4-40.1."""
    return (
        n % LANES == 0
        and all(letter in "zk" for letter in layout)
        and layout[0] == "z"
        and all(
            wgsl_type(dt) in _LANE_TYPES for dt, letter in zip(dtypes, layout, strict=True) if letter == "z"
        )
    )


def _lanes_main(
    out: np.dtype[Any], ins: Sequence[np.dtype[Any]], rank: int, layout: str, body: str, lets: str, lanes: int
) -> str:
    """The body of :func:`elementwise_source`'s ``main`` for ``lanes`` > 1 (``i``, the thread's
    number, declared): load a vector of each array operand, compute each lane as a one-lane
    kernel computes its element (``gi``, the lane's global index), store the vector."""
    lines = [f"  if (i >= P[0] / {lanes}u) {{ return; }}"]
    for k, dt in enumerate(ins):
        if layout[k + 1] == "k":
            lines.append(_scalar_let(k, dt, rank))
        else:
            lines.append(f"  let l{k} = a{k}[i];")
    lines.append(f"  var r: vec{lanes}<{wgsl_type(out)}>;")
    lines.append(f"  for (var c = 0u; c < {lanes}u; c = c + 1u) {{")
    lines.append(f"  let gi = P[1] + i * {lanes}u + c;")
    for k, dt in enumerate(ins):
        if layout[k + 1] != "k":
            lines.append(f"  let x{k}: {wgsl_type(dt)} = l{k}[c];")
    if lets:
        lines.append(lets)
    lines.append(f"  r[c] = {wrap(body, out)};\n  }}\n  o[i] = r;\n}}")
    return "\n".join(lines)


def _collapse(
    shape: tuple[int, ...], strides: list[tuple[int, ...] | None]
) -> tuple[tuple[int, ...], list[Any]]:
    """Drop size-1 dims and merge neighbours that are contiguous in every strided operand."""
    keep = [d for d, n in enumerate(shape) if n != 1]
    shp = [shape[d] for d in keep]
    sts = [None if s is None else [s[d] for d in keep] for s in strides]
    d = len(shp) - 2
    while d >= 0:
        if all(s is None or s[d] == s[d + 1] * shp[d + 1] for s in sts):
            shp[d] *= shp[d + 1]
            del shp[d + 1]
            for s in sts:
                if s is not None:
                    s[d] = s[d + 1]
                    del s[d + 1]
        d -= 1
    return tuple(shp), [None if s is None else tuple(s) for s in sts]


def c_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides in elements."""
    return _c_strides(shape if type(shape) is tuple else tuple(shape))


@functools.lru_cache(maxsize=1024)  # every new array and launch asks, mostly for a few shapes
def _c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    acc = 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


def _span(offset: int, shape: Sequence[int], strides: Sequence[int]) -> tuple[int, int]:
    """Lowest and one-past-highest element a strided view touches."""
    lo = offset + sum(s * (n - 1) for n, s in zip(shape, strides, strict=True) if s < 0)
    hi = offset + sum(s * (n - 1) for n, s in zip(shape, strides, strict=True) if s > 0) + 1
    return lo, hi


class BindingLimitError(NotImplementedError):
    """A kernel would bind a span of a buffer larger than the device's storage binding (see
    :func:`window`): callers that can do their work in parts catch it."""


def window(
    dev: GpuDevice, storage: Storage, lo: int, hi: int, isz: int, what: str
) -> tuple[tuple[Any, int, int], int]:
    """Bind elements [lo, hi) of ``storage``: ``((buffer, byte offset, size), elements before lo)``.

    Bindings start at the device's offset alignment, so the kernel adds the
    returned element count to its indices. Raises :class:`BindingLimitError` when the span exceeds
    the device's storage binding limit.
    """
    if hi <= lo:  # nothing is read: bind the buffer's first element (an empty view's offset may
        lo = hi = 0  # lie past the end of its buffer)
    byte_lo = lo * isz // dev.offset_align * dev.offset_align
    size = max(hi * isz - byte_lo, isz)  # a binding holds at least one element
    if size > dev.max_binding:
        raise BindingLimitError(
            f"{what}: a span of {size} bytes exceeds {dev.name}'s storage binding limit of "
            f"{dev.max_binding} bytes; split the work into smaller arrays"
        )
    size = min(-(-size // 4) * 4, storage.buffer.size - byte_lo)
    return (storage.buffer, byte_lo, size), lo - byte_lo // isz


def bind_view(
    dev: GpuDevice, x: Array, what: str, reach: tuple[tuple[int, ...], tuple[int, ...]] | None = None
) -> tuple[tuple[Any, int, int], int]:
    """Bind every element a view can reach (through ``reach``, (shape, strides) from its offset,
    when given); returns the binding and the view's offset in it."""
    shape, strides = reach or (x.shape, x._strides)
    lo, hi = _span(x._offset, shape, strides) if math.prod(shape) else (x._offset, x._offset + 1)
    binding, skip = window(dev, x._storage, lo, hi, storage_itemsize(x.dtype), what)
    return binding, x._offset - (lo - skip)


def bind(
    dev: GpuDevice, storage: Storage, start: int, count: int, dtype: np.dtype[Any], what: str
) -> tuple[tuple[Any, int, int], int]:
    """Bind ``count`` elements of ``dtype`` from element ``start`` of ``storage``.

    Returns the binding and the index of element ``start`` within it (see :func:`window`).
    """
    return window(dev, storage, start, start + max(count, 1), storage_itemsize(dtype), what)


def run(
    dev: GpuDevice,
    name: str,
    subs: Mapping[str, object],
    buffers: Sequence[tuple[Any, int, int]],
    params: Sequence[int],
    groups: int | tuple[int, ...],
) -> None:
    """Record one dispatch of the kernel ``wgsl/<name>.wgsl`` specialised by ``subs``.

    Parameters are u32 words; negative integers (strides) are passed as their two's complement.
    """
    dev.dispatch(kernel_pipeline(dev, name, subs), list(buffers), _param_words(params), groups)


def kernel_step(
    dev: GpuDevice,
    name: str,
    subs: Mapping[str, object],
    buffers: Sequence[tuple[Any, int, int]],
    params: Sequence[int],
    groups: int | tuple[int, ...],
) -> Step:
    """The dispatch :func:`run` records, prepared (see ``GpuDevice.step``) instead."""
    return dev.step(kernel_pipeline(dev, name, subs), list(buffers), _param_words(params), groups)


def _param_words(params: Sequence[int]) -> bytes:
    """u32 parameter words, negative integers as their two's complement."""
    return pack_words(*(int(p) & 0xFFFFFFFF for p in params))


_P = TypeVar("_P")


def prepared(dev: GpuDevice, sig: Any, launch: Any, prepare: Callable[[], _P]) -> _P:
    """What ``prepare`` makes for the launch ``launch`` (the buffers and offsets it binds) of the
    operation ``sig`` (what its dispatches' shapes and kernels depend on), made once and kept:
    a loop repeats the same operation on the same few pooled buffers, whose dispatches are then
    only copied into the batch (pooled buffers live until ``empty_cache()``, which drops these)."""
    launches: dict[Any, _P] | None = dev.plans.get(sig)
    if launches is None:
        launches = remember(dev.plans, PLAN_CACHE, sig, {})
    found = launches.get(launch)
    if found is None:
        found = remember(launches, PREPARED_LAUNCHES, launch, prepare())
    return found


def kernel_pipeline(dev: GpuDevice, name: str, subs: Mapping[str, object]) -> Any:
    """The pipeline of the kernel ``wgsl/<name>.wgsl`` specialised by ``subs`` on ``dev``."""
    return dev.pipeline(("wgsl", name, *subs.items()), lambda: _wgsl.kernel(name, **subs))


def pack_words(*words: int) -> bytes:
    """u32 parameter words as the parameter binding reads them."""
    return _packer(len(words))(*words)


def launch_elementwise(
    dev: GpuDevice,
    key: Any,
    body: str,
    prelude: str,
    out: Operand,
    operands: Sequence[Operand | Scalar | OutputRead],
    shape: tuple[int, ...],
    code: Callable[[], tuple[str, str, str]] | None = None,
) -> Step | None:
    """Run ``out[idx] = body(operands[idx])`` for every index of ``shape`` (broadcast strides given).

    ``code``, when given, makes ``(body, prelude, lets)`` instead (see :func:`elementwise_source`);
    it is called only when ``key`` has no compiled kernel yet. Returns the prepared dispatch
    when one dispatch did it (see :meth:`ElementwisePlan.launch`).
    """
    log = CAPTURE.log
    if log is not None and log.takes():
        return log.elementwise(dev, key, body, prelude, out, operands, shape, code)  # type: ignore[no-any-return]
    n = math.prod(shape)
    if n == 0:
        return None
    out.storage.will_write()
    arrays = [out, *operands]
    # What the launch plan depends on, built with as few steps as possible: every operation
    # passes here. Per operand its dtype, then its strides and offset modulo the binding
    # alignment (an array), "k" (a scalar) or "o" (the output's own element).
    align = dev.offset_align
    signature: list[Any] = [key, shape]
    for op in arrays:
        signature.append(op.dtype)
        if type(op) is Operand:
            signature.append(op.strides)
            signature.append(op.offset * STORAGE_ITEMSIZE[op.dtype] % align)
        else:
            signature.append("k" if type(op) is Scalar else "o")
    sig = tuple(signature)
    plan = dev.plans.get(sig)
    if plan is None:
        plan = remember(
            dev.plans, PLAN_CACHE, sig, ElementwisePlan(dev, key, body, prelude, out, operands, shape, code)
        )
    if plan.wide:
        _launch_halves(dev, key, body, prelude, arrays, shape, plan.wide, code)
        return None
    return plan.launch(dev, arrays, n)


def _launch_halves(
    dev: GpuDevice,
    key: Any,
    body: str,
    prelude: str,
    arrays: list[Any],
    shape: tuple[int, ...],
    wide: list[int],
    code: Callable[[], tuple[str, str, str]] | None,
) -> None:
    """:func:`launch_elementwise` of ``arrays`` (output first) over ``shape`` in two halves, cut
    along the axis that most widens the spans of the strided operands ``wide`` (indices into
    ``arrays``), which are too wide for one storage binding; each half halves again while one
    still is. A contiguous operand stays contiguous within each chunk of a launch (see
    :meth:`ElementwisePlan.launch`), a strided one does not: a transposed view's column spans
    its whole buffer."""
    axis = widest_axis(shape, [(arrays[k].strides, 1) for k in wide])
    half = shape[axis] // 2
    for start, stop in ((0, half), (half, shape[axis])):
        part = [
            Operand(op.storage, op.offset + start * op.strides[axis], op.strides, op.dtype)
            if type(op) is Operand
            else op
            for op in arrays
        ]
        sub = (*shape[:axis], stop - start, *shape[axis + 1 :])
        launch_elementwise(dev, key, body, prelude, part[0], part[1:], sub, code)


def widest_axis(shape: tuple[int, ...], views: Sequence[tuple[Sequence[int], int]]) -> int:
    """The axis of ``shape`` along which one of ``views`` ((strides, bytes an element) over that
    shape) spans the most bytes: the one to halve so that their spans shrink the most."""
    widths = [max(abs(strides[d]) * (n - 1) * size for strides, size in views) for d, n in enumerate(shape)]
    return widths.index(max(widths))


def _launch_key(op: Operand | Scalar | OutputRead) -> Any:
    """What of an operand, beyond its plan's signature, a launch's dispatch depends on: an array's
    buffer and offset (pooled buffers live until ``empty_cache()``, which drops the plans), a
    scalar's words."""
    if type(op) is Operand:
        return op.storage.buffer, op.offset
    return tuple(op.words()) if type(op) is Scalar else None


class ElementwisePlan:
    """What a launch of :func:`launch_elementwise` needs that depends only on its signature
    (kernel, shape, dtypes, strides, alignment): the pipeline, the collapsed shape, and per
    operand its layout letter, item size, the span a strided view reaches from its offset, and
    the parameter words that follow its base (strides, padding). Cached per device."""

    __slots__ = ("chunk", "head", "lanes", "operands", "pack", "pipe", "steps", "wide")

    def __init__(
        self,
        dev: GpuDevice,
        key: Any,
        body: str,
        prelude: str,
        out: Operand,
        operands: Sequence[Operand | Scalar | OutputRead],
        shape: tuple[int, ...],
        code: Callable[[], tuple[str, str, str]] | None,
    ) -> None:
        arrays = [out, *operands]
        shp, sts = _collapse(
            shape,
            [
                None if isinstance(op, Scalar) else out.strides if isinstance(op, OutputRead) else op.strides
                for op in arrays
            ],
        )
        rank = len(shp)
        full = c_strides(shp)
        itemsizes = [storage_itemsize(op.dtype) for op in arrays]
        # c: contiguous; z: contiguous starting at an aligned binding offset, indexed by i alone
        # (drivers vectorise o[i] = a[i] better than o[base + i]); s: strided; k: scalar;
        # o: the output's own element.
        layout = "".join(
            "k"
            if isinstance(op, Scalar)
            else "o"
            if isinstance(op, OutputRead)
            else ("z" if op.offset * isz % dev.offset_align == 0 else "c")
            if st == full
            else "s"
            for op, st, isz in zip(arrays, sts, itemsizes, strict=True)
        )
        dtypes = [op.dtype for op in operands]
        # elements a thread does (see four_lanes)
        self.lanes = lanes = LANES if four_lanes(layout, [out.dtype, *dtypes], math.prod(shp)) else 1
        chunk = (dev.max_binding - dev.offset_align) // max(itemsizes)
        self.chunk = max(chunk // WORKGROUP * WORKGROUP, WORKGROUP)
        self.head = shp
        #: per operand: layout letter, item size, span from the offset (lowest, one past the
        #: highest element of a strided view), and the words after its base or scalar value
        self.operands: list[tuple[str, int, int, int, list[int]]] = []
        #: the strided operands (indices, output 0) whose span one storage binding cannot hold:
        #: the launch then goes in parts (see :func:`_launch_halves`), and this plan only says so
        self.wide: list[int] = []
        for k, (lay, st, isz) in enumerate(zip(layout, sts, itemsizes, strict=True)):
            if lay == "k":
                tail = [0] * rank
            elif lay == "o":  # no words of its own: it reads through the output's index
                tail = [0] * (SLOT + rank)
            else:
                assert st is not None
                tail = [0] * (SLOT - 1) + [s & 0xFFFFFFFF for s in st]
            lo, hi = _span(0, shp, st) if lay == "s" else (0, 0)
            if (hi - lo) * isz + dev.offset_align > dev.max_binding:
                self.wide.append(k)
            self.operands.append((lay, isz, lo, hi, tail))
        if not self.wide:
            self.pipe = dev.pipeline(
                ("ew", key, out.dtype, tuple(dtypes), rank, layout, lanes),
                lambda: elementwise_source(
                    out.dtype, dtypes, rank, layout, *(code() if code else (body, prelude, "")), lanes=lanes
                ),
            )
        words = 2 + rank + len(arrays) * (SLOT + rank)
        # packed straight into whole vec4<u32> words, as the parameter binding reads them
        self.pack = struct.Struct(f"<{words}I{-words % 4 * 4}x").pack
        #: the dispatch of a launch of one chunk, prepared, by its buffers, offsets, scalars and n
        self.steps: dict[tuple[Any, ...], Step] = {}

    def launch(self, dev: GpuDevice, arrays: list[Any], n: int) -> Step | None:
        """Record the dispatches over ``n`` elements of ``arrays`` (output first), one per chunk
        of elements that fits one storage binding; the prepared dispatch when there is one."""
        if n <= self.chunk:
            # A loop launches the same kernel on the same few pooled buffers again and again:
            # its dispatch, prepared once, is only copied into the batch.
            key = (n, *[_launch_key(op) for op in arrays])
            step = self.steps.get(key)
            if step is None:
                step = remember(self.steps, PREPARED_LAUNCHES, key, self._step(dev, arrays, 0, n))
            dev.replay((step,))
            return step
        for start in range(0, n, self.chunk):
            step = self._step(dev, arrays, start, min(self.chunk, n - start))
            dev.replay((step,))
        return None

    def _step(self, dev: GpuDevice, arrays: list[Any], start: int, count: int) -> Step:
        """The dispatch over elements [start, start + count) of ``arrays``, prepared."""
        align = dev.offset_align
        params = [count, start, *self.head]
        buffers = []
        for op, (lay, isz, lo, hi, tail) in zip(arrays, self.operands, strict=True):
            if lay == "k":
                params += op.words()
            elif lay != "o":
                offset = op.offset
                if lay == "s":
                    what = "a strided view"
                    binding, skip = window(dev, op.storage, offset + lo, offset + hi, isz, what)
                    params.append((skip - lo) & 0xFFFFFFFF)  # the offset within the window
                else:
                    # contiguous over this chunk: a window from the aligned byte below its
                    # first element (which the chunk size keeps within the binding limit)
                    first = offset + start
                    byte_lo = first * isz // align * align
                    buf = op.storage.buffer
                    size = min(-(-((first + count) * isz - byte_lo) // 4) * 4, buf.size - byte_lo)
                    binding = (buf, byte_lo, size)
                    params.append((first - byte_lo // isz) & 0xFFFFFFFF)
                buffers.append(binding)
            params += tail
        return dev.step(self.pipe, buffers, self.pack(*params), -(-count // (WORKGROUP * self.lanes)))


# -- reductions ------------------------------------------------------------------------------


class Fused(NamedTuple):
    """Values computed on the fly as a kernel reads them: ``code()`` gives ``(expression,
    prelude, lets)`` over the leaves ``x0, x1, ...``, each of the shape being read (see
    ``ruda_wgpu._fusion``); ``key`` identifies the expression for the pipeline cache."""

    leaves: list[Operand | Scalar]
    dtype: np.dtype[Any]
    key: Any
    code: Callable[[], tuple[str, str, str]]


#: elements a thread of a reduction loads at a time (each into an accumulator of its own)
REDUCE_UNROLL = 4


def reduce_source(
    leaves: Sequence[tuple[bool, np.dtype[Any]]],
    acc: np.dtype[Any],
    combine: str,
    identity: str,
    load: str,
    value: tuple[str, str, str],
    once: Container[int] = (),
) -> str:
    """WGSL reducing rows of (M, K) inputs in G parts: one workgroup per (row, part), a strided
    loop per thread, then a tree in workgroup memory. Output (M, G).

    ``leaves`` are (is an array, dtype) per input ``x0, x1, ...``; ``value`` is ``(expression,
    prelude, lets)`` computing the element ``v`` from them, which ``load`` converts to the
    accumulator's type. An array leaf's rows are contiguous, a stride apart; those in ``once``
    hold one element a row, read before the loop. Parameters: m, k, g, w0 (first workgroup of
    this dispatch), then :data:`SLOT` words per leaf: an array's base (element index of its
    start in the binding, mod 2^32) and row stride, or a scalar's value."""
    ta = wgsl_type(acc)

    def row_start(i: int, w: int) -> tuple[list[str], str]:
        # the row's start, outside the loop: lavapipe reloads a parameter read inside it (a sum
        # of 1e7 float32 took 26.7 ms against 22.0 with this)
        return [f"  let b{i} = P[{w}] + row * P[{w + 1}];"], f"b{i}" if i in once else f"b{i} + j"

    body = _reduction_body(
        leaves,
        acc,
        identity,
        load,
        value,
        row_start,
        lambda u: f"let j = j0 + {u * WORKGROUP}u;",
        "      ",
        once,
    )
    return f"""
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<{ta}>;
{body.bindings}
var<workgroup> t: array<{ta}, {WORKGROUP}>;
{value[1]}
fn combine(x: {ta}, y: {ta}) -> {ta} {{ return {combine}; }}
@compute @workgroup_size({WORKGROUP})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
  let m = P[0]; let k = P[1]; let g = P[2];
  let w = P[3] + wid.y * nwg.x + wid.x;
  let row = w / g; let part = w % g;
  let chunk = (k + g - 1u) / g;
  let lo = min(part * chunk, k); let hi = min(lo + chunk, k);
{body.preamble}
  {body.accumulators}
  if (row < m) {{
    var j0 = lo + lid;
    // {REDUCE_UNROLL} elements a thread at a time, into as many accumulators: their loads are in
    // flight together rather than one after the other
    for (; j0 + {(REDUCE_UNROLL - 1) * WORKGROUP}u < hi; j0 = j0 + {REDUCE_UNROLL * WORKGROUP}u) {{
{body.unrolled}
    }}
    for (; j0 < hi; j0 = j0 + {WORKGROUP}u) {{
      {body.single}
    }}
  }}
  let acc = {body.merged};
  t[lid] = acc;
  workgroupBarrier();
  for (var s = {WORKGROUP // 2}u; s > 0u; s = s >> 1u) {{
    if (lid < s) {{ t[lid] = combine(t[lid], t[lid + s]); }}
    workgroupBarrier();
  }}
  if (lid == 0u && row < m) {{ o[row * g + part] = t[0]; }}
}}
"""


#: on a GPU, rows of at most this many elements reduce one a thread (see
#: :func:`reduce_threads_source`): a workgroup a row left 240 of its 256 threads idle on rows of
#: 16. On a CPU adapter every reduction does (there a workgroup's barriers cost the most: on
#: lavapipe a sum of a (1e6, 16) float32 array over its last axis took 6.4 s a workgroup a row)
SHORT_ROWS = 64
#: threads a thread-per-result reduction aims for, cutting its rows into parts to get them
THREAD_TARGET = 1 << 17
#: the fewest elements a thread reduces in a part of a cut row
THREAD_MIN_CHUNK = 128
THREAD_WORKGROUP = 64


def thread_parts(columns: int, k: int) -> int:
    """The parts a thread-per-result pass cuts each of ``columns`` rows of ``k`` into: enough
    threads for :data:`THREAD_TARGET`, a part at least :data:`THREAD_MIN_CHUNK` elements long
    (so never more parts than elements), and at least one."""
    return max(1, min(-(-k // THREAD_MIN_CHUNK), -(-THREAD_TARGET // max(columns, 1))))


def reduce_threads_source(
    leaves: Sequence[tuple[bool, np.dtype[Any]]],
    acc: np.dtype[Any],
    combine: str,
    identity: str,
    load: str,
    value: tuple[str, str, str],
) -> str:
    """WGSL reducing contiguous (A, K, B) inputs over K, one thread per result and part: thread t
    reduces part ``p = t / B % G`` of column ``(t / B / G, t % B)``, the elements p, p + G, p +
    2G, ... along K, into ``o[t]``, so the output is (A, G, B). Neighbouring threads read
    neighbouring elements: the columns of a row, then the next row (a reduction over a leading
    axis), or the next elements of one row (B = 1); rows of a few elements reduce one a thread.

    ``leaves`` and ``value`` are as in :func:`reduce_source`. Parameters: A, K, B, G, then
    :data:`SLOT` words per leaf: a scalar's value, or an array's base and its strides along A,
    K and B (a broadcast leaf, such as the mean a variance subtracts, has stride 0)."""
    ta = wgsl_type(acc)

    def column_start(i: int, w: int) -> tuple[list[str], str]:
        # w: the leaf's base, then its strides along A, K and B
        start = f"  let b{i} = P[{w}] + a * P[{w + 1}] + col * P[{w + 3}];"
        return [start, f"  let s{i} = P[{w + 2}];"], f"b{i} + e * s{i}"

    body = _reduction_body(
        leaves, acc, identity, load, value, column_start, lambda u: f"let e = j + {u}u * g;", "    "
    )
    return f"""
@group(0) @binding(0) var<storage, read> P: array<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<{ta}>;
{body.bindings}
{value[1]}
fn combine(x: {ta}, y: {ta}) -> {ta} {{ return {combine}; }}
@compute @workgroup_size({THREAD_WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let na = P[0]; let nk = P[1]; let nb = P[2]; let g = P[3];
  let t = gid.y * nwg.x * {THREAD_WORKGROUP}u + gid.x;
  if (t >= na * g * nb) {{ return; }}
  let col = t % nb; let rest = t / nb; let part = rest % g; let a = rest / g;
{body.preamble}
  {body.accumulators}
  var j = part;
  for (; j + {REDUCE_UNROLL - 1}u * g < nk; j = j + {REDUCE_UNROLL}u * g) {{
{body.unrolled}
  }}
  for (; j < nk; j = j + g) {{
    {body.single}
  }}
  o[t] = {body.merged};
}}
"""


class _ReductionBody(NamedTuple):
    """The pieces of WGSL the two reduction kernels share (see :func:`_reduction_body`)."""

    bindings: str
    #: before the loop: scalar leaves' values and where array leaves start
    preamble: str
    accumulators: str
    #: :data:`REDUCE_UNROLL` elements, each into its own accumulator
    unrolled: str
    #: one element, into the first accumulator
    single: str
    #: the accumulators combined
    merged: str


def _reduction_body(
    leaves: Sequence[tuple[bool, np.dtype[Any]]],
    acc: np.dtype[Any],
    identity: str,
    load: str,
    value: tuple[str, str, str],
    array_leaf: Callable[[int, int], tuple[list[str], str]],
    element: Callable[[int], str],
    indent: str,
    once: Container[int] = (),
) -> _ReductionBody:
    """The bindings, loads and accumulation of a reduction kernel: ``array_leaf(i, w)`` gives an
    array leaf's preamble lines and element index (``w``: its first parameter word), and
    ``element(u)`` the ``let`` naming the element an unrolled step ``u`` reads. The array leaves
    in ``once`` are read before the loop, at their index."""
    expr, _, lets = value
    ta = wgsl_type(acc)
    bindings: list[str] = []
    loads: list[str] = []
    preamble: list[str] = []
    for i, (array, dt) in enumerate(leaves):
        t = wgsl_type(dt)
        if array:
            bindings.append(f"@group(0) @binding({len(bindings) + 2}) var<storage, read> a{i}: array<{t}>;")
            lines, index = array_leaf(i, 4 + SLOT * i)
            preamble += lines
            if i in once:
                preamble.append(f"  let x{i}: {t} = a{i}[{index}];")
            else:
                loads.append(f"let x{i}: {t} = a{i}[{index}];")
        else:
            preamble.append(f"  let x{i}: {t} = {_scalar_load(4 + SLOT * i, t)};")

    def step(u: int) -> str:
        body = f"{' '.join(loads)} {lets} let v = {expr}; acc{u} = combine(acc{u}, {load});"
        return f"{{ {element(u)} {body} }}"

    merged = "acc0"
    for u in range(1, REDUCE_UNROLL):
        merged = f"combine({merged}, acc{u})"
    return _ReductionBody(
        "\n".join(bindings),
        "\n".join(preamble),
        " ".join(f"var acc{u}: {ta} = {identity};" for u in range(REDUCE_UNROLL)),
        "\n".join(f"{indent}{step(u)}" for u in range(REDUCE_UNROLL)),
        step(0),
        merged,
    )


def strided_span(shape: Sequence[int], strides: Sequence[int]) -> int:
    """Elements from a view's first to its last, and one (at least one): what a kernel binds."""
    if 0 in shape:
        return 1
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))


def threads_fit(dev: GpuDevice, size: int, itemsizes: Sequence[int]) -> bool:
    """Whether a thread-per-result reduction can read ``size`` elements of each item size in one
    binding (its kernel indexes the whole input; longer inputs take the row kernel's windows)."""
    return size * max(itemsizes) <= dev.max_binding - dev.offset_align


def launch_reduce(
    dev: GpuDevice,
    key: Any,
    src: Operand | Fused,
    m: int,
    k: int,
    acc: np.dtype[Any],
    combine: str,
    identity: str,
    load: str,
    prelude: str = "",
    inner: int = 1,
    strides: Sequence[tuple[int, int, int]] | None = None,
) -> Storage:
    """Reduce the contiguous (m, k) operand ``src`` along k; returns a storage of m ``acc`` values.
    With ``inner`` B > 1 the operand is (m, k, B), reduced along k into (m, B) values; with
    ``strides``, each array leaf's strides along m, k and B (default: contiguous).

    ``src`` may also be :class:`Fused` values (leaves of the operand's shape and scalars),
    computed as they are read. Long rows are cut into G parts reduced by separate workgroups,
    then the (m, G) partial results are reduced again; contiguous inputs beyond one storage
    binding are dispatched in windows of whole workgroups, and so are inputs whose rows are
    contiguous a stride apart, or hold one element a row, where each fits one binding whole
    (see :func:`_row_strides`). Short rows, any ``inner`` > 1, and other strides reduce one
    result a thread instead (see :func:`reduce_threads_source`).
    """
    log = CAPTURE.log
    if log is not None and log.takes():
        return log.reduction(dev, key, src, m, k, acc, combine, identity, load, prelude, inner, strides)  # type: ignore[no-any-return]
    leaves: Sequence[Operand | Scalar]
    layout: tuple[tuple[bool, np.dtype[Any]], ...]
    if isinstance(src, Operand):  # the common case, spared the making of Fused values
        leaves, layout, src_key = (src,), ((True, src.dtype),), None
    else:
        leaves, src_key = src.leaves, src.key
        layout = tuple((type(leaf) is Operand, leaf.dtype) for leaf in leaves)
    flat = (k * inner, inner, 1)
    # () when every array leaf is contiguous, the commonest case (see _row_strides)
    rows = () if strides is None else _row_strides(strides, flat) if inner == 1 else None
    if (
        inner > 1
        or rows is None
        or (
            (k <= SHORT_ROWS or dev.cpu)
            and threads_fit(dev, m * k, [storage_itemsize(dt) for array, dt in layout if array] or [4])
        )
    ):
        if strides is None:
            strides = [flat] * sum(array for array, _ in layout)
        kernel = (key, acc, combine, identity, load, prelude)
        return _reduce_threads(dev, src, leaves, layout, src_key, (m, k, inner), strides, kernel)
    once = _read_once(leaves, rows)
    sig = ("reduce", src_key, layout, once, tuple(rows), m, k, key, acc, combine, identity, load, prelude)
    plan = dev.plans.get(sig)
    if plan is None:
        kernel = (key, acc, combine, identity, load, prelude)
        values = _read(src) if isinstance(src, Operand) else src
        plan = remember(
            dev.plans, PLAN_CACHE, sig, ReducePlan(_reduce_passes(dev, values, layout, m, k, kernel, once))
        )
    isz = STORAGE_ITEMSIZE[acc]
    *partial, last = plan.parts
    with dev._lock:  # the partial results' buffers are the device's until the passes are recorded
        outs = [dev.scratch(("reduce", i), max(m * g, 1) * isz) for i, g in enumerate(partial)]
        outs.append(Storage(dev, max(m * last, 1) * isz))
        # A loop reduces the same buffers into the same few pooled ones again and again: its
        # dispatches, prepared once, are only copied into the batch.
        launch = (*[_launch_key(leaf) for leaf in leaves], *[out.buffer for out in outs])
        steps = plan.steps.get(launch)
        if steps is None:
            steps = remember(
                plan.steps, PREPARED_LAUNCHES, launch, plan.prepare(dev, leaves, rows, outs, m, acc)
            )
        dev.replay(steps)
    return outs[-1]


def _row_strides(
    strides: Sequence[tuple[int, int, int]], flat: tuple[int, int, int]
) -> list[tuple[int, int] | None] | None:
    """How the row kernel (:func:`reduce_source`) reads each array leaf of the strides ``strides``
    (along m, k and B = 1): None for contiguous rows, (row stride, 1) for rows of contiguous
    elements a stride apart, (row stride, 0) for an element per row (a leaf broadcast along k,
    such as the mean a variance subtracts); None when a leaf is none of these."""
    rows: list[tuple[int, int] | None] = []
    for m_stride, k_stride, _ in strides:
        if (m_stride, k_stride) == flat[:2]:
            rows.append(None)
        elif k_stride in (0, 1) and m_stride >= 0:
            rows.append((m_stride, k_stride))
        else:
            return None
    return rows


_NONE_ONCE: frozenset[int] = frozenset()


def _read_once(leaves: Sequence[Operand | Scalar], rows: Sequence[tuple[int, int] | None]) -> frozenset[int]:
    """The indices among ``leaves`` of the array leaves that ``rows`` (see :func:`_row_strides`)
    reads an element a row."""
    if not rows:
        return _NONE_ONCE
    arrays = [i for i, leaf in enumerate(leaves) if type(leaf) is Operand]
    return frozenset(i for i, row in zip(arrays, rows, strict=True) if row is not None and row[1] == 0)


def _reduce_threads(
    dev: GpuDevice,
    src: Operand | Fused,
    leaves: Sequence[Operand | Scalar],
    layout: tuple[tuple[bool, np.dtype[Any]], ...],
    src_key: Any,
    shape: tuple[int, int, int],
    strides: Sequence[tuple[int, int, int]],
    kernel: tuple[Any, np.dtype[Any], str, str, str, str],
) -> Storage:
    """:func:`launch_reduce` of an (A, K, B) operand by :func:`reduce_threads_source` (``strides``:
    each array leaf's along A, K and B): rows cut into G parts when A * B threads are too few,
    then the (A, G, B) partial results reduced over G the same way, until one part is left.

    A loop reduces the same buffers into the same few pooled ones: the dispatches are prepared
    once per signature, operands and output buffers, and then only copied into the batch (half
    the host's time of a sum over a leading axis went to preparing them again)."""
    key, acc, combine, identity, load, prelude = kernel
    na, nk, nb = shape
    columns = max(na * nb, 1)
    isz = STORAGE_ITEMSIZE[acc]
    parts = thread_passes(columns, nk)

    def prepare(targets: list[Storage]) -> list[Step]:
        """The dispatches, one a pass, each writing its target."""
        k, pass_leaves, pass_strides = nk, leaves, strides
        value = _read(src) if isinstance(src, Operand) else src
        pipe = _reduction_pipeline(
            dev, ("redt", key, src_key, layout, acc, load), reduce_threads_source, layout, value.code, kernel
        )
        own = ((True, acc),)
        steps = []
        for g, target in zip(parts, targets, strict=True):
            params = [na, k, nb, g]
            buffers = [(target.buffer, 0, target.buffer.size)]
            arrays = iter(pass_strides)
            for leaf in pass_leaves:
                if isinstance(leaf, Scalar):
                    params += leaf.words()
                    continue
                leaf_strides = next(arrays)
                lo, isz_leaf = leaf.offset, storage_itemsize(leaf.dtype)
                span = strided_span((na, k, nb), leaf_strides)
                binding, skip = window(dev, leaf.storage, lo, lo + span, isz_leaf, "a reduction")
                params += (skip & 0xFFFFFFFF, *leaf_strides)  # SLOT words
                buffers.append(binding)
            steps.append(dev.step(pipe, buffers, pack_words(*params), -(-(na * g * nb) // THREAD_WORKGROUP)))
            # the next pass reduces the (A, G, B) partial results over G
            k, pass_leaves, pass_strides = g, [Operand(target, 0, (), acc)], [(g * nb, nb, 1)]
            own_kernel = (key, acc, combine, identity, "v", prelude)
            own_key = ("redt", key, None, own, acc, "v")
            pipe = _reduction_pipeline(dev, own_key, reduce_threads_source, own, _own_values, own_kernel)
        return steps

    sig = ("redt", kernel, src_key, layout, shape, tuple(strides))
    with dev._lock:  # the partial results' buffers are the device's until the passes are recorded
        out = Storage(dev, columns * isz)
        targets = [dev.scratch(("reduce threads", n), columns * g * isz) for n, g in enumerate(parts[:-1])]
        targets.append(out)
        launch = (*[_launch_key(leaf) for leaf in leaves], *[t.buffer for t in targets])
        dev.replay(prepared(dev, sig, launch, lambda: prepare(targets)))
    return out


def thread_passes(columns: int, k: int) -> list[int]:
    """The parts G of each pass of :func:`_reduce_threads` over ``columns`` rows of ``k``: each
    pass reduces the previous one's G partial results, until a pass leaves one."""
    parts = [thread_parts(columns, k)]
    while parts[-1] > 1:
        parts.append(thread_parts(columns, parts[-1]))
    return parts


def _reduction_pipeline(
    dev: GpuDevice,
    pipeline_key: tuple[Any, ...],
    write: Callable[..., str],
    layout: tuple[tuple[bool, np.dtype[Any]], ...],
    value: Callable[[], tuple[str, str, str]],
    kernel: tuple[Any, np.dtype[Any], str, str, str, str],
) -> Any:
    """The pipeline of reduction kernel ``write`` (:func:`reduce_source` or
    :func:`reduce_threads_source`) for ``layout`` and ``value``; ``kernel`` is the reduction's
    key, acc, combine, identity, load and prelude."""
    _, acc, combine, identity, load, prelude = kernel

    def source() -> str:
        expr, lets_prelude, lets = value()
        return write(layout, acc, combine, identity, load, (expr, prelude + lets_prelude, lets))

    return dev.pipeline(pipeline_key, source)


class ReducePlan:
    """The passes of a reduction's signature (see :func:`_reduce_passes`) and their dispatches
    prepared per input and output buffers (see :meth:`prepare`)."""

    __slots__ = ("parts", "passes", "steps")

    def __init__(self, passes: list[tuple[Any, int, int, int, int]]) -> None:
        self.passes = passes
        #: the parts G of each pass: its output holds m * G partial results
        self.parts = [g for _, _, g, _, _ in passes]
        self.steps: dict[tuple[Any, ...], list[Step]] = {}

    def prepare(
        self,
        dev: GpuDevice,
        leaves: Sequence[Operand | Scalar],
        rows: Sequence[tuple[int, int] | None],
        outs: list[Storage],
        m: int,
        acc: np.dtype[Any],
    ) -> list[Step]:
        """The dispatches reducing ``leaves`` (each array leaf read as ``rows`` says: see
        :func:`_row_strides`) through the passes into ``outs`` (one a pass). Contiguous leaves
        are bound in windows of the dispatch's rows, the others whole."""
        steps = []
        for (pipe, cur_k, g, chunk, most), out in zip(self.passes, outs, strict=True):
            total = m * g
            w0 = 0
            while w0 < total:
                n_w = min(total - w0, most)
                first_row, first_part = divmod(w0, g)
                last_row, last_part = divmod(w0 + n_w - 1, g)
                rel_lo = first_row * cur_k + min(first_part * chunk, cur_k)
                rel_hi = last_row * cur_k + min((last_part + 1) * chunk, cur_k)
                params = [m, cur_k, g, w0]
                buffers = [(out.buffer, 0, out.buffer.size)]
                arrays = iter(rows)
                for leaf in leaves:
                    if isinstance(leaf, Scalar):
                        params += leaf.words()
                        continue
                    row = next(arrays, None)
                    if row is None:
                        lo, row_stride = leaf.offset + rel_lo, cur_k
                        hi = max(leaf.offset + rel_hi, lo + 1)
                    else:
                        lo, row_stride = leaf.offset, row[0]
                        hi = lo + strided_span((m, cur_k), row)
                    isz = storage_itemsize(leaf.dtype)
                    binding, skip = window(dev, leaf.storage, lo, hi, isz, "a reduction")
                    params += ((leaf.offset - (lo - skip)) & 0xFFFFFFFF, row_stride, 0, 0)  # SLOT words
                    buffers.append(binding)
                steps.append(dev.step(pipe, buffers, pack_words(*params), n_w))
                w0 += n_w
            leaves, rows = [Operand(out, 0, (), acc)], ()  # the next pass reduces the partial results
        return steps


def _reduce_passes(
    dev: GpuDevice,
    src: Fused,
    layout: tuple[tuple[bool, np.dtype[Any]], ...],
    m: int,
    k: int,
    kernel: tuple[Any, np.dtype[Any], str, str, str, str],
    once: frozenset[int] = frozenset(),
) -> list[tuple[Any, int, int, int, int]]:
    """The passes of :func:`launch_reduce` (``kernel`` is its key, acc, combine, identity, load
    and prelude; ``once``, the leaves read once a row): per pass its pipeline, the row length
    it reduces, its parts G, the elements of a part, and the most workgroups a dispatch can take
    (their inputs fit one binding). Made once per signature."""
    key, acc, combine, identity, load, prelude = kernel
    passes = []
    cur_k, cur_load, value, src_key = k, load, src.code, src.key
    while True:
        isz = max(storage_itemsize(dt) for array, dt in layout if array)
        limit = (dev.max_binding - dev.offset_align) // isz
        g = 1 if cur_k <= WORKGROUP * 8 else min(-(-cur_k // (WORKGROUP * 8)), 1024)
        g = max(g, -(-cur_k // max(limit // 2, 1)))
        chunk = max(-(-cur_k // g), 1)
        pass_kernel = (key, acc, combine, identity, cur_load, prelude)
        write = functools.partial(reduce_source, once=once)
        pipe = _reduction_pipeline(
            dev, ("red", key, src_key, layout, once, acc, cur_load), write, layout, value, pass_kernel
        )
        most = min(max(1, limit // chunk), dev.max_groups * dev.max_groups)
        passes.append((pipe, cur_k, g, chunk, most))
        if g == 1:
            return passes
        cur_k, cur_load, value, src_key, layout, once = g, "v", _own_values, None, ((True, acc),), frozenset()


def _read(operand: Operand) -> Fused:
    """An operand's own values, as :class:`Fused` values that compute nothing."""
    return Fused([operand], operand.dtype, None, _own_values)


def _own_values() -> tuple[str, str, str]:
    return "x0", "", ""


@functools.lru_cache(maxsize=256)
def _packer(words: int) -> Callable[..., bytes]:
    """Packs ``words`` u32 parameters (a compiled format, made once per count)."""
    return struct.Struct(f"<{words}I").pack


#: Mesa's llvmpipe (lavapipe, a CPU driver) ends every loop of a shader invocation, silently, once
#: its loops have run 65535 iterations in all (gallivm's LP_MAX_TGSI_LOOP_ITERATIONS): one workgroup
#: factorising a matrix of a few hundred rows, or a thread summing a product over k = 10^6, would
#: return wrong numbers there. Kernels that loop over a length are launched so that a thread stays
#: under it, and what cannot raises instead. Other drivers have no such limit.
LLVMPIPE_LOOPS = 65535
#: iterations a kernel's count may miss (loop exits and the like), kept free in each dispatch: a
#: 300 x 300 QR with spans counted at 64826 iterations was right, at 65300 wrong
LOOP_RESERVE = 1024


def loop_limited(dev: Any) -> bool:
    """Whether ``dev`` stops a thread's loops after :data:`LLVMPIPE_LOOPS` iterations (llvmpipe)."""
    return "llvmpipe" in str(dev.adapter.info["device"]).lower()


# -- matmul ------------------------------------------------------------------------------------

TILE = 16


class Blocking(NamedTuple):
    """A register-blocked matmul (``wgsl/matmul_blocked.wgsl``): ``bm`` x ``bm`` output blocks
    computed by 16 x 16 threads, k in steps of ``bk``. A GPU takes it for products of at least
    ``min_blocks`` output blocks (batches count); a CPU adapter, where the simple kernel's
    barriers cost the most, for products of at least one whole block."""

    bm: int
    bk: int
    min_blocks: int
    #: whether the tiles are vectors of four (see ``_blocked_unrolled``; ``r`` a multiple of 4)
    vec4: bool = False

    @property
    def r(self) -> int:
        """Output rows (and columns) a thread computes."""
        return self.bm // 16

    @property
    def row(self) -> int:
        """Tile elements (scalars, or vectors of four) of a k step, padded by one against bank
        conflicts on the transposed stores."""
        return (self.bm // 4 if self.vec4 else self.bm) + 1

    def params(self) -> dict[str, int]:
        """The template's parameters."""
        return {"BM": self.bm, "R": self.r, "BK": self.bk}

    def workgroup_bytes(self, itemsize: int) -> int:
        """The workgroup memory of its two tiles (``bk`` rows each) of ``itemsize`` elements."""
        return 2 * self.bk * self.row * (4 if self.vec4 else 1) * itemsize


#: the register-blocked matmuls per dtype, larger blocks first; products too small for any take
#: the 16 x 16 tiled kernel (or, on a CPU adapter, a thread an element). float16, stored as f32
#: words, takes float32's: its products are exact in f32, so ``fma`` sums them as the tiled
#: kernel's ``acc + a * b`` does (in another order), and the stores round to float16. So do the
#: integers stored as 32-bit words, int8 to uint32 (their sums wrap alike in any order, narrow
#: ones wrapped as they are stored; vector tiles of four against the 64 x 64 blocks of scalar
#: tiles they took before, in turns on an H100: int32 2048^3 0.93 ms against 1.30, 4096^3 8.4
#: against 12.4, 512^3 0.067 against 0.066). 64-bit integers and complex pairs take 64 x 64
#: blocks of scalar tiles (4 x 4 results a thread), k steps as short as their elements are long
#: (the tiles' workgroup memory stays at float64's). Against the kernels they took before, on an
#: H100 2048^3 took 1.48 ms against 6.34 tiled (int32, then on scalar tiles), 1.53 against 6.01
#: (int8), 4.7 against 7.9 (int64), 3.1 against 7.1 (complex64) and 5.4 against 8.6 (complex128);
#: on lavapipe 256^3 took 14 ms against 27 a thread an element (int32), 9 against 22 (int8,
#: uint16), 11 against 25 (int64), 18 against 29 (complex64) and 32 against 37 (complex128).
#: Measured on the H200, one product at a time (waiting for each): a block of 128 x 128 needs two
#: waves of blocks to beat 64 x 64 ones (float32 1024^3 0.31 ms with 64, 0.42 with 128; 2048^3
#: 1.07 against 1.39 and 4096^3 7.3 against 9.8 ms, 18.8 TFLOP/s, with 128); the 64 x 64 kernel
#: beats the tiled one from about 64 blocks (512^3 0.20 against 0.23 ms; 256^3, 16 blocks, 0.15
#: against 0.14; 64 x 1024 @ 1024 x 64, one block on one multiprocessor, 0.27 against 0.19).
#: float64's 128 x 128 blocks (k steps of 8 to fit workgroup memory) lose to 64 x 64 ones at
#: every size (4096^3 16.6 against 12.8 ms). float32's tiles are vectors of four, a k step then
#: reading a quarter of the instructions from workgroup memory: in an A/B on the H200 (several
#: products queued) 4096^3 took 6.93 ms against 7.93 (19.8 TFLOP/s), 1024^3 0.18 against 0.21;
#: float64's would lose 5-10% (4096^3 14.9 against 13.5 ms). Loading the next k step's tile
#: elements into registers before computing the current step (so that the loads are in flight
#: meanwhile) changed nothing on an H100 in turns with the GPU warm: float32 4096^3 6.33 against
#: 6.33 ms, float64 12.51-12.55 against 12.51-12.54, int32 and complex64 2048^3 within 0.3%;
#: the driver's compiler seems to schedule the loads early already, and it was left out.
_FLOAT32_BLOCKS = (Blocking(128, 16, min_blocks=256, vec4=True), Blocking(64, 16, min_blocks=64, vec4=True))
#: 64 x 64 blocks of scalar tiles by the k step that fits an element's size (8 or 16 bytes)
_SCALAR_BLOCKS = {size: (Blocking(64, 64 // size, min_blocks=64),) for size in (8, 16)}
BLOCKED: dict[str, tuple[Blocking, ...]] = {
    "float32": _FLOAT32_BLOCKS,
    "float16": _FLOAT32_BLOCKS,
    "float64": _SCALAR_BLOCKS[8],
    **{name: _FLOAT32_BLOCKS for name in ("int8", "int16", "int32", "uint8", "uint16", "uint32")},
    **{name: _SCALAR_BLOCKS[8] for name in ("int64", "uint64", "complex64")},
    "complex128": _SCALAR_BLOCKS[16],
}


def matmul_blocking(dev: GpuDevice, dtype: np.dtype[Any], batch: int, m: int, n: int) -> Blocking | None:
    """The register-blocked kernel for a (batch, m, n) product on ``dev``, or None for the tiled one
    (also where no blocked kernel's tiles fit the device's workgroup memory)."""
    room = int(dev.limits["max-compute-workgroup-storage-size"])
    blockings = BLOCKED.get(_dtypes.NAME[dtype], ())
    for blocking in blockings:
        bm = blocking.bm
        if blocking.workgroup_bytes(storage_itemsize(dtype)) > room:
            continue
        # a block wider than the product's rows or columns computes mostly nothing: on a GPU only
        # the smallest blocks take such products (390 products of 64 x 64 by 256 took 128 x 128
        # blocks, and an H100 213 us)
        whole, blocks = min(m, n) >= bm, batch * -(-m // bm) * -(-n // bm)
        if dev.cpu:
            if whole:
                return blocking
        elif (whole or blocking is blockings[-1]) and blocks >= blocking.min_blocks:
            return blocking
    return None


#: from this many elements of each product's result down (a 16 x 16 tile's quarter), a matmul
#: runs a thread per element of the result rather than the tiled kernel's 16 x 16 threads per
#: product: 20000 products of 3 x 3 matrices took lavapipe 500 ms tiled (NumPy 1.9). A CPU
#: adapter runs so every product the blocked kernel does not take: llvmpipe pays for the tiled
#: kernel's barriers, and a CPU's caches do what its workgroup memory is for. On lavapipe a
#: 1000 x 1000 matrix times a vector took 60 ms tiled and 1.7 so, 64000 x 32 @ 32 x 32 302 and
#: 95, 200 products of 40 x 40 94 and 19, int32 300 x 300 x 300 105 and 36 (the blocked
#: kernel's float32 100 x 100 x 100, 1.2 ms, stays ahead of it: 1.7).
SMALL_PRODUCT = TILE * TILE // 4


def _matmul_bindings(t: str) -> str:
    """The bindings of both matmul kernels: parameters, the output, a and b (of WGSL type ``t``)."""
    return (
        "@group(0) @binding(0) var<storage, read> P: array<u32>;\n"
        f"@group(0) @binding(1) var<storage, read_write> o: array<{t}>;\n"
        f"@group(0) @binding(2) var<storage, read> a: array<{t}>;\n"
        f"@group(0) @binding(3) var<storage, read> b: array<{t}>;"
    )


class MatmulLayout(NamedTuple):
    """What the matmul kernels are compiled for about their operands' layout: which of A's and
    B's row and column strides are 1 (an index then multiplies nothing: llvmpipe's products of
    contiguous operands took 10-30% longer with every stride a parameter), and whether the batch
    has an inner part (a division a thread otherwise saves). The strides are parameters
    (see :func:`launch_matmul`): P[6] the inner batch, P[7..10] A's outer, inner, row and column
    strides, P[11..14] B's, and P[15] the k of each outer matrix's last inner product."""

    a_rows: bool
    a_columns: bool
    b_rows: bool
    b_columns: bool
    inner: bool

    @classmethod
    def of(cls, a: Operand, b: Operand, inner: int) -> MatmulLayout:
        """The layout of a product of ``a`` and ``b`` (see :func:`launch_matmul`)."""
        return cls(a.strides[2] == 1, a.strides[3] == 1, b.strides[2] == 1, b.strides[3] == 1, inner > 1)

    def bases(self, batch: str) -> str:
        """WGSL lets of ``abase`` and ``bbase``, where matrix ``batch`` of A and of B starts, of
        the row and column strides (read once, before any loop), and of ``k``, the length of the
        product's k: P[1], or P[15] for the last inner product (a split product's last slice of
        k takes what the others leave: see ``_linalg._split_product``)."""
        strides = "let asr = P[9]; let asc = P[10]; let bsr = P[13]; let bsc = P[14];"
        if not self.inner:
            return (
                f"let abase = P[4] + {batch} * P[7]; let bbase = P[5] + {batch} * P[11];\n"
                f"  {strides} let k = P[1];"
            )
        return (
            f"let outer = {batch} / P[6]; let inner = {batch} % P[6];\n"
            "  let abase = P[4] + outer * P[7] + inner * P[8];\n"
            f"  let bbase = P[5] + outer * P[11] + inner * P[12];\n  {strides}\n"
            "  let k = select(P[1], P[15], inner + 1u == P[6]);"
        )

    def a_at(self, row: str, column: str) -> str:
        """WGSL of the offset of A's element (``row``, ``column``) from its matrix's start."""
        return _offset(row, "asr", self.a_rows, column, "asc", self.a_columns)

    def b_at(self, row: str, column: str) -> str:
        """WGSL of the offset of B's element (``row``, ``column``) from its matrix's start."""
        return _offset(row, "bsr", self.b_rows, column, "bsc", self.b_columns)

    @property
    def a_down(self) -> bool:
        """Whether tiles of A load down its columns: its rows, not its columns, are contiguous."""
        return self.a_rows and not self.a_columns

    @property
    def b_down(self) -> bool:
        """Whether tiles of B load down its columns."""
        return self.b_rows and not self.b_columns


def _offset(
    row: str, row_stride: str, unit_rows: bool, column: str, column_stride: str, unit_columns: bool
) -> str:
    """WGSL of ``row * row_stride + column * column_stride``, leaving out a stride of 1 and an
    index "0u"."""
    terms = [
        index if unit else f"({index}) * {stride}" if " " in index else f"{index} * {stride}"
        for index, stride, unit in ((row, row_stride, unit_rows), (column, column_stride, unit_columns))
        if index != "0u"
    ]
    return " + ".join(terms) or "0u"


def small_matmul_source(dtype: np.dtype[Any], layout: MatmulLayout) -> str:
    """Matmul of batches (B, M, K) @ (B, K, N) with small M x N: a thread an element of the
    result, summing over k in order, as the tiled kernel does."""
    t = wgsl_type(dtype)
    a_k, b_k = layout.a_at("0u", "j"), layout.b_at("j", "0u")
    return f"""
{_matmul_bindings(t)}
@compute @workgroup_size({WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {{
  let m = P[0]; let n = P[2];
  let e = gid.x + gid.y * groups.x * {WORKGROUP}u;
  if (e >= P[3]) {{ return; }}
  let batch = e / (m * n); let r = e % (m * n);
  {layout.bases("batch")}
  let arow = abase + {layout.a_at("r / n", "0u")}; let bcolumn = bbase + {layout.b_at("0u", "r % n")};
  var acc: {t} = {ZERO[t]};
  for (var j = 0u; j < k; j = j + 1u) {{
    acc = acc + {product(f"a[arow + {a_k}]", f"b[bcolumn + {b_k}]", t)};
  }}
  o[e] = {wrap("acc", dtype)};
}}
"""


def matmul_source(dtype: np.dtype[Any], layout: MatmulLayout) -> str:
    """Tiled matmul of batches (B, M, K) @ (B, K, N): 16x16 tiles in workgroup memory.

    A thread loads one element of each tile, neighbouring threads neighbouring elements in
    memory: along k for A and along n for B, or down the columns of an operand whose rows are
    its contiguous axis (a transposed view: see :class:`MatmulLayout`)."""
    t = wgsl_type(dtype)
    # which of a thread's ids gives the tile element's row and which its column
    ai, aj = ("lid.x", "lid.y") if layout.a_down else ("lid.y", "lid.x")
    bi, bj = ("lid.x", "lid.y") if layout.b_down else ("lid.y", "lid.x")
    return f"""
{_matmul_bindings(t)}
// (rows padded by one against bank conflicts where threads store down a column)
var<workgroup> ta: array<array<{t}, {TILE + 1}>, {TILE}>;
var<workgroup> tb: array<array<{t}, {TILE + 1}>, {TILE}>;
@compute @workgroup_size({TILE}, {TILE})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{
  let m = P[0]; let n = P[2]; let b0 = P[3];
  let batch = b0 + wid.z;
  let row = wid.y * {TILE}u + lid.y; let col = wid.x * {TILE}u + lid.x;
  {layout.bases("batch")}
  let ar = wid.y * {TILE}u + {ai}; let bc = wid.x * {TILE}u + {bj};
  var acc: {t} = {ZERO[t]};
  for (var k0 = 0u; k0 < k; k0 = k0 + {TILE}u) {{
    let ak = k0 + {aj}; let bk = k0 + {bi};
    ta[{ai}][{aj}] = select({ZERO[t]}, a[abase + {layout.a_at("ar", "ak")}], ar < m && ak < k);
    tb[{bi}][{bj}] = select({ZERO[t]}, b[bbase + {layout.b_at("bk", "bc")}], bk < k && bc < n);
    workgroupBarrier();
    for (var j = 0u; j < {TILE}u; j = j + 1u) {{ acc = acc + {product("ta[lid.y][j]", "tb[j][lid.x]", t)}; }}
    workgroupBarrier();
  }}
  if (row < m && col < n) {{ o[batch * m * n + row * n + col] = {wrap("acc", dtype)}; }}
}}
"""


def _blocked_unrolled(blocking: Blocking, dtype: np.dtype[Any]) -> dict[str, str]:
    """The per-thread parts of ``matmul_blocked.wgsl`` for ``dtype``, unrolled: r x r accumulators
    ``c_i_j``, the registers of one k step (``a_i``, ``b_j``, or vectors ``a_q``, ``b_q`` of four of
    them) and their products, and the guarded stores (rounding float16); and the tiles' layout in
    workgroup memory."""
    r, row, t = blocking.r, blocking.row, wgsl_type(dtype)
    pairs = [(i, j) for i in range(r) for j in range(r)]
    init = "\n".join(f"  var c_{i}_{j}: {t} = {ZERO[t]};" for i, j in pairs)
    if blocking.vec4:
        # a vector a thread and k step per four of its rows (columns), the vectors of the 16
        # threads of a row (column) of threads side by side: vector 16 q + ty holds rows
        # ty + 16 (4 q + p), p = 0..3
        at_a = f"ta[c * {row}u + (r >> 6u) * 16u + (r & 15u)][(r >> 4u) & 3u]"
        at_b = f"tb[br * {row}u + (bc >> 6u) * 16u + (bc & 15u)][(bc >> 4u) & 3u]"
        step = [f"      let a_{q} = ta[ka + {16 * q}u];" for q in range(r // 4)]
        step += [f"      let b_{q} = tb[kb + {16 * q}u];" for q in range(r // 4)]
        lanes = [(i, j, f"a_{i // 4}.{'xyzw'[i % 4]}", f"b_{j // 4}.{'xyzw'[j % 4]}") for i, j in pairs]
        if t in FLOAT_SUFFIX:
            step += [f"      c_{i}_{j} = fma({x}, {y}, c_{i}_{j});" for i, j, x, y in lanes]
        else:  # 32-bit integers, wrapping
            step += [f"      c_{i}_{j} = c_{i}_{j} + {product(x, y, t)};" for i, j, x, y in lanes]
        tile = f"vec4<{t}>"
    else:
        at_a, at_b = f"ta[c * {row}u + r]", f"tb[br * {row}u + bc]"
        step = [f"      let a_{i} = ta[ka + {16 * i}u];" for i in range(r)]
        step += [f"      let b_{j} = tb[kb + {16 * j}u];" for j in range(r)]
        if t in FLOAT_SUFFIX:
            step += [f"      c_{i}_{j} = fma(a_{i}, b_{j}, c_{i}_{j});" for i, j in pairs]
        else:  # integers (wrapping) and complex pairs
            step += [f"      c_{i}_{j} = c_{i}_{j} + {product(f'a_{i}', f'b_{j}', t)};" for i, j in pairs]
        tile = t
    store = []
    for i in range(r):
        store.append(f"  let r_{i} = row0 + lid.y + {16 * i}u;")
        for j in range(r):
            col = f"col0 + lid.x + {16 * j}u"
            value = wrap(f"c_{i}_{j}", dtype)
            store.append(f"  if (r_{i} < m && {col} < n) {{ o[obase + r_{i} * n + {col}] = {value}; }}")
    return {
        "INIT": init,
        "STEP": "\n".join(step),
        "STORE": "\n".join(store),
        "TILE": tile,
        "ROW": str(row),
        "AT_A": at_a,
        "AT_B": at_b,
    }


def matmul_kernel(dev: GpuDevice, dtype: np.dtype[Any], batch: int, m: int, n: int) -> Blocking | str:
    """The kernel of a (batch, m, n) product on ``dev``: "small" (a thread an element of the
    result), "tiled" (16 x 16 tiles) or a register-blocked one."""
    blocking = matmul_blocking(dev, dtype, batch, m, n)
    if m * n <= SMALL_PRODUCT or (blocking is None and dev.cpu):
        return "small"
    return "tiled" if blocking is None else blocking


def matmul_workgroups(dev: GpuDevice, dtype: np.dtype[Any], batch: int, m: int, n: int) -> int:
    """The workgroups of a (batch, m, n) product on ``dev`` (see :func:`matmul_kernel`)."""
    kernel = matmul_kernel(dev, dtype, batch, m, n)
    if kernel == "small":
        return -(-batch * m * n // WORKGROUP)
    block = kernel.bm if isinstance(kernel, Blocking) else TILE
    return batch * -(-m // block) * -(-n // block)


def launch_matmul(
    dev: GpuDevice,
    a: Operand,
    b: Operand,
    out: Storage,
    batch: int,
    m: int,
    k: int,
    n: int,
    inner: int = 1,
    last_k: int | None = None,
) -> None:
    """``out = a @ b`` for batched operands of one dtype, into a new contiguous ``out``.

    ``a`` and ``b`` are (batch, m, k) and (batch, k, n) views whose batch is ``batch // inner``
    outer by ``inner`` inner matrices (product ``z`` takes outer matrix ``z // inner`` and inner
    one ``z % inner``; ``out`` is in that order): their strides are those of the outer and the
    inner matrices, the rows and the columns. None is negative, and the rows or the columns are
    contiguous, or the kernels' loads do not coalesce (see ``_linalg.matmul``). The last inner
    product of each outer matrix takes ``last_k`` (at least ``k``; ``k`` when None) of k: a split
    product's last slice of k, with what the others leave (see ``_linalg._split_product``).

    A loop multiplies the same buffers into the same few pooled ones: the dispatches are prepared
    once per shape, operands and output buffer, and then only copied into the batch (preparing
    them took two thirds of the host's time of a small product)."""
    log = CAPTURE.log
    if log is not None and log.takes():
        return log.matmul(dev, a, b, out, batch, m, k, n, inner, last_k)  # type: ignore[no-any-return]
    if batch * m * n == 0:
        return
    last = k if last_k is None else last_k
    sig = ("matmul", a.dtype, batch, m, k, n, inner, last, a.strides, b.strides)
    launch = (a.storage.buffer, a.offset, b.storage.buffer, b.offset, out.buffer)
    with dev._lock:  # (the steps' bind groups are the device's until they are recorded)
        dev.replay(
            prepared(dev, sig, launch, lambda: _matmul_steps(dev, a, b, out, batch, m, k, n, inner, last))
        )


def view_span(shape: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """Elements from the first to the last one of a view of ``shape`` and non-negative
    ``strides`` (0 for an empty view)."""
    if 0 in shape:
        return 0
    return sum((d - 1) * s for d, s in zip(shape, strides, strict=True)) + 1


def _matmul_steps(
    dev: GpuDevice,
    a: Operand,
    b: Operand,
    out: Storage,
    batch: int,
    m: int,
    k: int,
    n: int,
    inner: int,
    last_k: int,
) -> list[Step]:
    """The dispatches of :func:`launch_matmul`: one per chunk of the batch."""
    isz = storage_itemsize(a.dtype)
    outer = batch // inner
    # (the last inner product reads furthest: its k is the longest)
    span_a = view_span((outer, inner, m, last_k), a.strides)
    span_b = view_span((outer, inner, last_k, n), b.strides)
    bind_a, base_a = window(dev, a.storage, a.offset, a.offset + span_a, isz, "matmul")
    bind_b, base_b = window(dev, b.storage, b.offset, b.offset + span_b, isz, "matmul")
    bind_o, _ = window(dev, out, 0, batch * m * n, isz, "matmul")
    strides = (inner, *a.strides, *b.strides, last_k)
    layout = MatmulLayout.of(a, b, inner)
    kernel = matmul_kernel(dev, a.dtype, batch, m, n)
    if kernel == "small":  # a thread an element of the result
        pipe = dev.pipeline(
            ("matmul small", a.dtype.name, layout), lambda: small_matmul_source(a.dtype, layout)
        )
        params = pack_words(m, k, n, batch * m * n, base_a, base_b, *strides)
        return [dev.step(pipe, [bind_o, bind_a, bind_b], params, -(-batch * m * n // WORKGROUP))]
    if not isinstance(kernel, Blocking):  # tiled
        pipe = dev.pipeline(("matmul", a.dtype.name, layout), lambda: matmul_source(a.dtype, layout))
        block = TILE
    else:
        blocking, t = kernel, wgsl_type(a.dtype)
        pipe = dev.pipeline(
            ("wgsl", "matmul_blocked", a.dtype.name, *blocking.params().items(), blocking.vec4, layout),
            # the unrolled source is generated only when the pipeline is first compiled
            lambda: _wgsl.kernel(
                "matmul_blocked",
                T=t,
                ZERO=ZERO[t],
                **blocking.params(),
                **_blocked_unrolled(blocking, a.dtype),
                **_blocked_loads(blocking, layout),
            ),
        )
        block = blocking.bm
    gx, gy = -(-n // block), -(-m // block)
    return [
        dev.step(
            pipe, [bind_o, bind_a, bind_b], pack_words(m, k, n, b0, base_a, base_b, *strides), (gx, gy, nb)
        )
        for b0, nb in dev.batch_chunks(batch)
    ]


def _blocked_loads(blocking: Blocking, layout: MatmulLayout) -> dict[str, str]:
    """The parts of ``matmul_blocked.wgsl`` that depend on the operands' layout: where their
    matrices start, which element of A's tile (row ``r``, k ``c``) and of B's (k ``br``, column
    ``bc``) load ``e`` loads (consecutive ones along k and along n, or down the columns of an
    operand whose rows are contiguous), and the offsets of those elements."""
    bm, bk = blocking.bm, blocking.bk
    return {
        "BASES": layout.bases("batch"),
        "A_ELEMENT": f"let r = e % {bm}u; let c = e / {bm}u;"
        if layout.a_down
        else f"let r = e / {bk}u; let c = e % {bk}u;",
        "B_ELEMENT": f"let br = e % {bk}u; let bc = e / {bk}u;"
        if layout.b_down
        else f"let br = e / {bm}u; let bc = e % {bm}u;",
        "A_OFFSET": layout.a_at("gr", "gc"),
        "B_OFFSET": layout.b_at("gk", "gn"),
    }
