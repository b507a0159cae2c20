"""WGSL kernels generated from small templates, and their launchers.

One generic elementwise kernel per (operation, dtypes, rank, layout): each
operand is either contiguous over the iteration (``c``: index ``base + i``),
strided (``s``: offset plus strides, broadcasting is a zero stride), or a
Python scalar carried in the parameters (``k``). The launcher collapses
dimensions that are contiguous for every operand, so most calls run at rank 1,
and splits work that would bind more than the device's binding limit into
windows of the buffers.

Also the pieces every launcher shares: operands, bindings of buffer windows, parameter words,
prepared dispatches. The reductions' kernels are in :mod:`ruda_wgpu._reduce_kernels`, the matrix
product's in :mod:`ruda_wgpu._matmul_kernels`.
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np

from ruda_wgpu import _dtypes, _wgsl
from ruda_wgpu._buffers import STORAGE_ITEMSIZE, Storage, storage_itemsize
from ruda_wgpu._encoding import Step
from ruda_wgpu._engine import CAPTURE, WORKGROUP, GpuDevice, remember

if TYPE_CHECKING:
    from ruda_wgpu._array import Array


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


def running_product(x: str, y: str, t: str) -> str:
    """WGSL for ``x * y`` in a scan's running product: for the complex pairs, ``prod_c64``, for
    which a factor that is the scan's start (``scan_one_c64``, not 1) leaves the other as it
    is, so that ``cumulative_prod``'s first value is the first element, as NumPy's gives it."""
    return f"{lib('prod', t)}({x}, {y})" if t.startswith("vec2") else f"{x} * {y}"


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
#: operations' logged dispatches a device keeps (see :class:`Recorded`) before it starts over
RECORDED = 1024
#: logs of a ``Recorded`` operation's whole dispatches that bound a buffer it made and dropped
#: (a copy of an operand, say) after which it launches unlogged: its logs can never be kept
RECORD_TRIES = 2


def scalar_load(b: int, t: str) -> str:
    if t.startswith("vec2"):
        step = 1 if t == "vec2<f32>" else 2
        return f"{t}({scalar_load(b, t[5:8])}, {scalar_load(b + step, t[5:8])})"
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
    return f"  let x{k}: {wgsl_type(dt)} = {scalar_load(2 + rank + (k + 1) * (SLOT + rank), wgsl_type(dt))};"


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


def broadcast_strides(
    small: tuple[int, ...], strides: tuple[int, ...], shape: tuple[int, ...]
) -> tuple[int, ...]:
    """``strides`` of a view of shape ``small`` read over ``shape``, which ``small`` broadcasts
    to: 0 along the axes it adds and those it stretches from length one."""
    lead = len(shape) - len(small)
    return (0,) * lead + tuple(
        0 if n == 1 and m != 1 else s for n, m, s in zip(small, shape[lead:], strides, strict=True)
    )


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
    if hi <= lo or lo * isz >= storage.buffer.size:
        # nothing is read: bind the buffer's first element (an empty view's offset may lie past
        # the end of its buffer, and a kernel may count one element even of an empty view)
        lo = hi = 0
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


class Recorded:
    """An operation of fixed kernels, shapes and scalars (a reduction's plan, a ``fuse`` trace)
    whose dispatches are logged once per set of buffers (see ``GpuDevice.logging_steps``) and
    then recorded again from the log: a loop repeats it on the same few pooled buffers, and
    its launch (signatures, plans, scratch buffers, launch keys, each step) was most of what
    it cost the host. The device keeps the logs (``GpuDevice.recorded``, which
    ``empty_cache()`` clears) by this object, the device's scratch version, what the operation
    reads (its operands' buffers and offsets, scalars' words) and the buffers it makes, taken
    from the pool before the lookup in the sizes the first launch made them: the pool hands a
    loop the same ones in the same order. Logged only from the second launch on (an operation
    run once pays nothing); kept only when the dispatches bind nothing but what it reads, what
    it makes and the scratch buffers (one made anew changes the version: the old one went back
    to the pool), and when nothing but dispatches was recorded meanwhile; never used while
    ``fuse`` traces, whose capture must see every launch. An operation whose whole logs bound
    other buffers :data:`RECORD_TRIES` times is launched from then on, unlogged (a log that is
    not whole may be whole next time: an inner operation logs its own once)."""

    __slots__ = ("launches", "made", "unkept")

    def __init__(self) -> None:
        self.launches = 0
        #: whole logs of its dispatches that bound other buffers than it reads and makes
        self.unkept = 0
        #: per buffer the first launch made, its bytes, or the index of the earlier one it is
        #: (an operation may write one buffer twice: ``concat`` in a trace); None before the
        #: first launch (an operation may make none: a scan into a result made before it)
        self.made: list[tuple[int, int | None]] | None = None

    def run(
        self, dev: GpuDevice, reads: list[Any], bound: list[Any], launch: Callable[[], list[Storage]]
    ) -> list[Storage]:
        """The buffers ``launch()`` makes (and records the operation into), or those its logged
        dispatches write: ``reads`` is what the dispatches depend on beyond this operation
        (operands' buffers and offsets, scalars' words), ``bound`` the operands' buffers."""
        if CAPTURE.log is not None or self.unkept >= RECORD_TRIES:
            return launch()
        if self.made is not None:
            made: list[Storage] = []
            for nbytes, earlier in self.made:
                made.append(Storage(dev, nbytes) if earlier is None else made[earlier])
            steps = dev.recorded.get(self._key(dev, reads, made))
            if steps is not None:
                dev.replay(steps)
                return made
            del made  # (back to the pool, for the launch to take them again)
        self.launches += 1
        if self.launches == 1:
            made = launch()
            positions = {id(storage): i for i, storage in reversed(list(enumerate(made)))}
            self.made = [
                (storage.nbytes, None if positions[id(storage)] == i else positions[id(storage)])
                for i, storage in enumerate(made)
            ]
            return made
        with dev.logging_steps() as log:
            made = launch()
        if not log.whole or len(made) != len(self.made or ()):  # (as many buffers as the first made)
            return made
        if log.binds_only([*bound, *(s.buffer for s in made), *dev.scratch_buffers()]):
            remember(dev.recorded, RECORDED, self._key(dev, reads, made), log.steps)
        else:
            self.unkept += 1
        return made

    def _key(self, dev: GpuDevice, reads: list[Any], made: list[Storage]) -> tuple[Any, ...]:
        assert self.made is not None  # (a key is made only after the first launch)
        fresh = [
            storage.buffer for storage, (_, earlier) in zip(made, self.made, strict=True) if earlier is None
        ]
        return (self, dev.scratch_version, *reads, *fresh)


def recorded(dev: GpuDevice, sig: Any) -> Recorded:
    """The :class:`Recorded` operation of signature ``sig`` (what its kernels and shapes depend
    on) on ``dev``, made the first time; kept with the device's plans (``empty_cache()`` drops
    them)."""
    found: Recorded | None = dev.plans.get(sig)
    if found is None:
        found = remember(dev.plans, PLAN_CACHE, sig, Recorded())
    return found


def lanes_in_order(dev: GpuDevice) -> bool:
    """Whether kernels on ``dev`` may scan with subgroup operations: it has the ``subgroup``
    feature, and its subgroups are runs of consecutive threads whose totals a scan can add in
    the threads' order (``wgsl/lanes_in_order.wgsl``, run the first time a kernel asks, which
    waits for the device; ask before recording an operation, not while). lavapipe and NVIDIA's
    driver lay subgroups out so; Vulkan does not promise it."""
    if dev.subgroups_in_order is None:
        ok = "subgroup" in dev.features
        if ok:
            out = Storage(dev, 4 * 256)
            binding = bind(dev, out, 0, 256, _dtypes.uint32, "a subgroup check")[0]
            try:
                run(dev, "lanes_in_order", {}, [binding], [0], 1)
            except Exception:  # a driver that offers subgroups but cannot compile them: without
                ok = False
            else:
                ok = bool(np.frombuffer(dev.read(out.buffer, 0, 4 * 256), np.uint32).all())
        dev.subgroups_in_order = ok
    return dev.subgroups_in_order


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


@functools.lru_cache(maxsize=256)
def _packer(words: int) -> Callable[..., bytes]:
    """Packs ``words`` u32 parameters (a compiled format, made once per count)."""
    return struct.Struct(f"<{words}I").pack


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


def launch_key(op: Operand | Scalar | OutputRead) -> Any:
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
            key = (n, *[launch_key(op) for op in arrays])
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


def view_span(shape: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """Elements from the first to the last one of a view of ``shape`` and non-negative
    ``strides`` (0 for an empty view)."""
    if 0 in shape:
        return 0
    return sum((d - 1) * s for d, s in zip(shape, strides, strict=True)) + 1
