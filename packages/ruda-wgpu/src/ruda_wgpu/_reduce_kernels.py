"""The reductions' kernels and their launcher (:func:`launch_reduce`): a thread a result, its
reduced axis cut into parts and reduced again where the results are too few to keep the device
busy, or a workgroup a row for long rows on a GPU (a tree in workgroup memory). Each reads its
array where it lies, as a (rows, reduced, columns) view with each operand's strides, and may
compute a fused elementwise chain as it reads (:class:`Fused`, from ``ruda_wgpu._fusion``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Container, Sequence
from typing import Any, NamedTuple

import numpy as np

from ruda_wgpu._buffers import STORAGE_ITEMSIZE, Storage, storage_itemsize
from ruda_wgpu._encoding import Step
from ruda_wgpu._engine import CAPTURE, WORKGROUP, GpuDevice, remember
from ruda_wgpu._kernels import (
    PLAN_CACHE,
    PREPARED_LAUNCHES,
    SLOT,
    Operand,
    Scalar,
    launch_key,
    pack_words,
    prepared,
    scalar_load,
    wgsl_type,
    window,
)


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
            preamble.append(f"  let x{i}: {t} = {scalar_load(4 + SLOT * i, t)};")

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
        launch = (*[launch_key(leaf) for leaf in leaves], *[out.buffer for out in outs])
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
        launch = (*[launch_key(leaf) for leaf in leaves], *[t.buffer for t in targets])
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


#: the longest row a workgroup reduces alone, in one dispatch. On an H100, sums of 4096 to 32768
#: float32 so took 11-13 us of wall clock a call in rounds of 20 waited for once, against 25-31
#: cut into parts of 2048 whose results are reduced again (CuPy's: 9-16), and a sum read back
#: 92-137 us against 141-170; on the GPU's clock, 50 of them in a batch 0.27-0.43 us each against
#: 6.2-6.4, where each second dispatch waits for its first (three rounds in turns, a process each)
ONE_PASS = WORKGROUP * 128
#: elements a workgroup reduces of a longer row, cut into parts whose results are reduced again
PART = WORKGROUP * 8


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
        g = 1 if cur_k <= ONE_PASS else min(-(-cur_k // PART), 1024)
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
