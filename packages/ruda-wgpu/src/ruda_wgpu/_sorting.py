"""sort and argsort: a stable LSD radix sort on the GPU (``wgsl/radix_*``).

Every dtype is first mapped to unsigned keys whose order is the wanted order
(``make_key``): floats by their bit patterns with negative values flipped, NaN
last in both directions; signed integers with the sign bit flipped; descending
order is the complement of the key, so that a stable ascending sort of the keys
keeps equal values in their original order, as the standard's ``stable=True``
asks. Keys are sorted 8 bits a pass: four passes for 32-bit keys, one for int8.
The first pass makes the keys as it reads the values and the last writes the values
back (or only argsort's indices), so no pass of its own converts either way.

The rows of the sorted axis are sorted together: a tile of keys never spans two
rows, and the digit histograms are laid out row by row, so one scan places every
key within its own row. Rows of at most :data:`SHORT_SORT` keys are sorted a thread
a row instead, by insertion of the same keys (``wgsl/sort_rows.wgsl``), and rows that
one workgroup's memory holds a workgroup a row, by a bitonic network of the same keys
(``wgsl/sort_tile.wgsl``): one dispatch where the radix sort takes twelve. (A CPU adapter
sorts a few short rows so too: see :data:`CPU_FEW_ROWS`.)
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import numpy as np

from ruda_wgpu import _dtypes
from ruda_wgpu._array import Array, contiguous, copy_of, empty, to_numpy
from ruda_wgpu._buffers import STORAGE_ITEMSIZE, Storage
from ruda_wgpu._creation import zeros
from ruda_wgpu._engine import GpuDevice
from ruda_wgpu._indexing import take
from ruda_wgpu._info import default_dtypes_of
from ruda_wgpu._kernels import bind, convert, lanes_in_order, recorded, run, wgsl_type
from ruda_wgpu._manipulation import _axis, concat, permute_dims, reshape
from ruda_wgpu._ops import apply, astype, where
from ruda_wgpu._parts import fits, halves, outer_axis, window_elements
from ruda_wgpu._reduce_kernels import THREAD_WORKGROUP
from ruda_wgpu._scan import scan_rows
from ruda_wgpu._searching import flat_nonzero, masked_rows

#: bits of a pass's digit: 8, so 32-bit keys take four passes; each is ranked in workgroup
#: memory by two 4-bit splits (radix_scatter.wgsl). Each pass counts its digits with its own
#: kernel: counting the next pass's digits in the scatter instead, with global atomics, was
#: slower on the H200 (1e7 float32 sort 1.95 ms against 1.61-1.81, same process and run).
DIGIT_BITS = 8

_U32 = _dtypes.uint32


def _pad(words: int) -> int:
    """Length of a workgroup array of ``words`` padded by one word in 32 (``pad()`` in WGSL)."""
    return words + words // 32


def radix_shape(words: int, payload: bool, workgroup_bytes: int) -> tuple[int, int]:
    """Threads of a radix-sort workgroup (a divisor of 256, the digits of a pass) and keys each
    holds: the first of :data:`RADIX_SHAPES` whose workgroup memory fits, else 128 threads with
    as many keys as fit."""

    def need(threads: int, ipt: int) -> int:
        tile = threads * ipt
        counters, scan, digits = _pad(16 * threads), 2 * threads, 256
        return 4 * (counters + scan + digits + _pad(tile * words) + (_pad(tile) if payload else 1))

    shapes = RADIX_SHAPES[payload]
    for threads, ipt in shapes:
        if need(threads, ipt) <= workgroup_bytes:
            return threads, ipt
    threads, ipt = shapes[-1]
    while ipt > 1 and need(threads, ipt) > workgroup_bytes:
        ipt //= 2
    return threads, ipt


#: radix-sort workgroup shapes (threads, keys a thread), best first, for keys alone and for keys
#: with payloads (argsort). Measured on an H100's clock, 1e7 and 1e6 float32: sort 1.18 and 0.156
#: ms at 256 x 16 (48 KiB of workgroup memory holds it), 1.20 and 0.162 at 128 x 16, 1.11 and
#: 0.192 at 128 x 24, 1.80 and 0.230 at 128 x 32; argsort 1.45 and 0.222 at 256 x 12, 1.79 and
#: 0.236 at 256 x 8, 2.12 and 0.293 at 128 x 16 (lavapipe's 32 KiB takes 128 x 16 for both;
#: argsort at 256 x 4 took it twice as long).
RADIX_SHAPES = {False: [(256, 16), (128, 16)], True: [(256, 12), (256, 8), (128, 16)]}


class KeyCode(NamedTuple):
    """How one dtype becomes radix keys: words per key, significant bits, WGSL both ways."""

    words: int
    bits: int
    key: str
    value: str


def key_code(dtype: np.dtype[Any], descending: bool, invertible: bool) -> KeyCode:
    """The key of ``dtype``. ``invertible`` keys (for sort) keep -0 before +0 so the values come
    back from the keys; the others (for argsort) make -0 equal to +0, as NumPy's sort does."""
    name = _dtypes.NAME[dtype]
    if name == "float64":
        fn = "sort_key_d" if invertible else "order_key_d"
        nan_key = "vec2<u32>(0u, 0xfff80000u)" if invertible else "vec2<u32>(0xffffffffu, 0xffffffffu)"
        if not descending:
            key, value = f"{fn}(v)", "from_sort_key_d(k)"
        else:
            key = f"select(~{fn}(v), {nan_key}, isnan_d(v))"
            value = "select(from_sort_key_d(~k), nan_d(), k.x == 0u && k.y == 0xfff80000u)"
        return KeyCode(2, 64, f"return {key};", f"return {value};")
    if dtype.kind == "f":
        fn = "sort_key_f" if invertible else "order_key_f"
        nan_key = "0xffc00000u" if invertible else "0xffffffffu"
        if not descending:
            key, value = f"{fn}(v)", "from_sort_key_f(k.x)"
        else:  # complement every key but NaN's, which stays last
            key = f"select(~{fn}(v), {nan_key}, isnan_f(v))"
            value = "select(from_sort_key_f(~k.x), nan_f(), k.x == 0xffc00000u)"
        return KeyCode(1, 32, f"return vec2<u32>({key}, 0u);", f"return {value};")
    if name in ("int64", "uint64"):
        flip = "0x80000000u" if name == "int64" else "0u"
        t = wgsl_type(dtype)
        inv = "~" if descending else ""
        key = (
            f"let u = bitcast<u64>(v); "
            f"return vec2<u32>({inv}u32(u & 0xfffffffflu), {inv}(u32(u >> 32u) ^ {flip}));"
        )
        value = (
            f"let lo = {inv}k.x; let hi = {inv}k.y ^ {flip}; return bitcast<{t}>((u64(hi) << 32u) | u64(lo));"
        )
        return KeyCode(2, 64, key, value)
    bits = {"bool": 1, "int8": 8, "uint8": 8, "int16": 16, "uint16": 16}.get(name, 32)
    mask = f"0x{(1 << bits) - 1:x}u"
    if dtype.kind == "i":
        bias = f"0x{1 << (bits - 1):x}u"  # the sign bit flipped: two's complement in unsigned order
        key = f"(bitcast<u32>(v) ^ {bias}) & {mask}"
        value = f"bitcast<i32>(select(k.x, k.x | ~{mask}, (k.x & {bias}) == 0u) ^ {bias})"
        if descending:
            key = f"~({key}) & {mask}"
            value = value.replace("k.x", f"(~k.x & {mask})")
        return KeyCode(1, bits, f"return vec2<u32>({key}, 0u);", f"return {value};")
    key, value = ("(~v) & " + mask, f"~k.x & {mask}") if descending else ("v", "k.x")
    return KeyCode(1, bits, f"return vec2<u32>({key}, 0u);", f"return {value};")


@functools.cache
def _scatter_unrolled(nw: int, payload: bool, wg: int, ipt: int) -> dict[str, str]:
    """The per-key parts of ``radix_scatter.wgsl`` for keys of ``nw`` u32 words, unrolled over
    a thread's ``ipt`` keys (``wg`` threads): key ``q`` lives in ``k{q}_{x}``, its payload in
    ``p{q}``, its 4-bit digit in ``d{q}`` (16: past the tile's end) and the number of the
    thread's earlier keys with that digit in ``r{q}``. Counting by comparisons in registers,
    rather than by incrementing counters in workgroup memory key after key, leaves no chain of
    dependent memory accesses; so does the store, which reads every key before writing any.
    The offsets of the thread's 256 / ``wg`` digits are loaded first and used only after the
    ranking, which hides part of their reads, spread over the whole table: a pass over 1e7
    float32 took an H100 261 us on its clock, 242 so."""

    def word(k: str) -> str:
        return f"{k}_0" if nw == 1 else f"select({k}_0, {k}_1, P[3] == 1u)"

    tally = []  # each thread's count of each digit, into its column of c (zeroed before)
    for q in range(ipt):
        earlier = " + ".join(f"select(0u, 1u, d{p} == d{q})" for p in range(q)) or "0u"
        tally.append(f"  r{q} = {earlier};")
    for q in range(ipt):
        tally.append(f"  if (d{q} < 16u) {{ c[pad(d{q} * {wg}u + lid)] = r{q} + 1u; }}")

    load, split, reload = [], [], []
    for q in range(ipt):
        load += [
            f"  var d{q} = 16u; var r{q} = 0u;" + "".join(f" var k{q}_{x} = 0u;" for x in range(nw)),
            *([f"  var p{q} = 0u;"] if payload else []),
            f"  if (first + {q}u < len) {{",
            f"    let e = base + first + {q}u;",
            "    let key = key_at(e);",
            *[f"    k{q}_{x} = key.{'xy'[x]};" for x in range(nw)],
            *([f"    p{q} = payload_at(e, e - row * n);"] if payload else []),
            f"    d{q} = ({word(f'k{q}')} >> shift) & 15u;",
            "  }",
        ]
        split += [
            f"  if (d{q} < 16u) {{",
            f"    let r = c[pad(d{q} * {wg}u + lid)] + r{q};",
            *[f"    sk[pad(r * {nw}u + {x}u)] = k{q}_{x};" for x in range(nw)],
            *([f"    sp[pad(r)] = p{q};"] if payload else []),
            "  }",
        ]
        reload += [
            f"  d{q} = 16u;",
            f"  if (first + {q}u < len) {{",
            *[f"    k{q}_{x} = sk[pad((first + {q}u) * {nw}u + {x}u)];" for x in range(nw)],
            *([f"    p{q} = sp[pad(first + {q}u)];"] if payload else []),
            f"    d{q} = ({word(f'k{q}')} >> (shift + 4u)) & 15u;",
            "  }",
        ]
    gather, store = [], []
    for j in range(ipt):
        i = f"(lid + {j * wg}u)"
        gather += [
            f"  var pos{j} = 0u; var s{j}_1 = 0u; var sp{j} = 0u;",
            f"  let s{j}_0 = sk[pad({i} * {nw}u)];",
            *([f"  s{j}_1 = sk[pad({i} * 2u + 1u)];"] if nw == 2 else []),
            *([f"  sp{j} = sp[pad({i})];"] if payload else []),
            f"  if ({i} < len) {{ pos{j} = dest[({word(f's{j}')} >> shift) & 255u] + {i}; }}",
        ]
        store.append(f"  if ({i} < len) {{ put(pos{j}, vec2<u32>(s{j}_0, s{j}_1), sp{j}); }}")
    # the thread's 256 / wg digits j: their offsets before and at the tile, and the row's total
    offsets, own, dest = [], ["  var sum = vec2<u32>(0u, 0u);"], []
    for j in range(256 // wg):
        offsets += [
            f"  let at{j} = (row * 256u + lid * {256 // wg}u + {j}u) * tiles;",
            f"  var earlier{j} = 0u;",
            f"  if (tile > 0u) {{ earlier{j} = offsets[at{j} + tile - 1u]; }}",
            f"  let upto{j} = offsets[at{j} + tile];",
            f"  let total{j} = offsets[at{j} + tiles - 1u];",
        ]
        own += [f"  let own{j} = vec2<u32>(upto{j} - earlier{j}, total{j});", f"  sum = sum + own{j};"]
        dest += [
            f"  dest[lid * {256 // wg}u + {j}u] = row * n + run.y + earlier{j} - run.x;",
            f"  run = run + own{j};",
        ]
    parts = {
        "OFFSETS": offsets,
        "LOAD": load + tally,
        "SPLIT": split,
        "RELOAD": reload + tally,
        "OWN": own,
        "DEST": dest,
        "STORE": gather + store,
    }
    return {name: "\n".join(lines) for name, lines in parts.items()}


def exclusive_scan(wg: int, lanes: bool) -> dict[str, str]:
    """``exclusive(v, lid)`` of ``radix_scatter.wgsl`` for ``wg`` threads, and the entry point's
    parameters and first statement it needs. With ``lanes`` (a device whose subgroups are runs
    of consecutive threads: see :func:`~ruda_wgpu._kernels.lanes_in_order`), each subgroup
    scans its lanes and adds the totals of the subgroups before it, after one barrier; without,
    log2(``wg``) steps of two barriers each. On an H100's clock the subgroups took a pass over 1e7
    float32 from 254 to 238 us, a sort from 1.18 to 1.11 ms and an argsort from 1.45 to 1.37."""
    if lanes:
        body = """var<private> lane: u32;
var<private> lanes: u32;
fn exclusive(v: vec2<u32>, lid: u32) -> vec2<u32> {
  let inside = subgroupExclusiveAdd(v);
  if (lane == lanes - 1u) { t[lid / lanes] = inside + v; }
  workgroupBarrier();
  var before = inside;
  for (var g = 0u; g < lid / lanes; g = g + 1u) { before = before + t[g]; }
  return before;
}"""
        params = ",\n        @builtin(subgroup_invocation_id) lane_id: u32, @builtin(subgroup_size) size: u32"
        return {"EXCLUSIVE": body, "LANE_PARAMS": params, "LANE_INIT": "  lane = lane_id; lanes = size;"}
    body = f"""fn exclusive(v: vec2<u32>, lid: u32) -> vec2<u32> {{
  t[lid] = v;
  workgroupBarrier();
  for (var off = 1u; off < {wg}u; off = off << 1u) {{
    var y = vec2<u32>(0u, 0u);
    if (lid >= off) {{ y = t[lid - off]; }}
    workgroupBarrier();
    t[lid] = t[lid] + y;
    workgroupBarrier();
  }}
  return t[lid] - v;
}}"""
    return {"EXCLUSIVE": body, "LANE_PARAMS": "", "LANE_INIT": ""}


@functools.cache
def _count_unrolled(wg: int, ipt: int) -> str:
    """The body of ``radix_count.wgsl``, unrolled over a thread's ``ipt`` keys: each key's load,
    then each one's count. (A loop loaded a key, counted it, then loaded the next: a pass over
    1e6 float32 took an H100 11 us on its clock, 9 so; over 1e7, 42 against 40.)"""
    loads, counts = [], []
    for q in range(ipt):
        loads += [
            f"  let j{q} = tile * {wg * ipt}u + {q * wg}u + lid;",
            f"  var k{q} = 0u;",
            f"  if (j{q} < n) {{ k{q} = key_at(row * n + j{q})[P[3]]; }}",
        ]
        counts.append(f"  if (j{q} < n) {{ atomicAdd(&h[(k{q} >> P[4]) & 255u], 1u); }}")
    return "\n".join(loads + counts)


def _pass_code(code: KeyCode, dtype: np.dtype[Any], first: bool, last: bool, indices: bool) -> dict[str, str]:
    """The parts of a pass's kernels that depend on its place: the first reads the values (of
    ``dtype``), the last writes the sorted values (sort) or only the row indices (argsort)."""
    nw = code.words
    t = wgsl_type(dtype)
    if first:
        kin, key_at, payload_at = t, "return make_key(ki[P[5] + e]);", "return i;"
    else:
        kin, key_at, payload_at = (
            "u32",
            f"return vec2<u32>(ki[e * {nw}u], ki[e * {nw}u + {nw - 1}u]);",
            "return pi[e];",
        )
    if last and not indices:
        kout, put = t, "ko[P[6] + pos] = from_key(k);"
    elif last:
        kout, put = "u32", "po[pos] = p;"
    else:
        kout = "u32"
        put = " ".join(f"ko[pos * {nw}u + {x}u] = k.{'xy'[x]};" for x in range(nw))
        put += " po[pos] = p;" if indices else ""
    return {
        "T": t,
        "KEY": code.key,
        "VALUE": code.value,
        "KIN": kin,
        "KOUT": kout,
        "KEY_AT": key_at,
        "PAYLOAD_AT": payload_at,
        "PUT": put,
    }


#: keys from which the radix sort submits its first pass before recording the others, so that
#: the GPU works meanwhile. A submit costs an H200's host 50-100 us (see ``_engine.BATCH_BYTES``);
#: the first pass of 1e7 keys took the GPU about 0.3 ms, of 1e6 about 0.1 (an estimate from the
#: whole sorts' times), and a smaller one would only pay for the submit (on lavapipe a submit
#: took 0.6 ms of the host's time in a sort of 1000 keys, whose wall time it did not shorten).
#: Only a sort that makes its passes submits so; one recorded again from its log does not
FLUSH_FROM = 1 << 21


def radix_sort(src: Array, code: KeyCode, out: Array | None) -> Storage | None:
    """Sort the rows of the contiguous ``src`` (sorted axis last) by their keys ``code``, writing
    the sorted values into ``out`` (sort), or, when ``out`` is None, returning the sorted row
    indices as u32 (argsort).

    A sort of one shape, dtype and order is a :class:`Recorded` operation: a loop that sorts
    again finds its dozen dispatches logged. Making them (bind groups, parameters) cost an
    H100's host 210-350 us a sort of 1e6 float32, about what the GPU took (0.18 ms); recorded
    again they cost 80-110 (argsort: 280-410 against 110-150; two runs in turns)."""
    dev = src.device
    indices = out is None
    sig = ("radix sort", src.shape[-1], src.size, src.dtype, code, None if out is None else out.dtype)
    reads: list[Any] = [src._storage.buffer, src._offset]
    bound = [src._storage.buffer]
    if out is not None:
        reads += [out._storage.buffer, out._offset]
        bound.append(out._storage.buffer)
    lanes = lanes_in_order(dev)  # (the first time, a dispatch of its own: before the record)
    made = recorded(dev, sig).run(dev, reads, bound, lambda: _radix_passes(src, code, out, lanes))
    return made[-1] if indices else None


def _radix_passes(src: Array, code: KeyCode, out: Array | None, lanes: bool) -> list[Storage]:
    """Record :func:`radix_sort`'s passes (scanning with subgroup operations where ``lanes``: see
    :func:`exclusive_scan`); every buffer they make, in the order made, argsort's indices last.
    (Each is held until all are recorded, so that no pass takes an earlier one's buffer from the
    pool and the buffers a sort binds are the same from one call to the next.)"""
    dev = src.device
    n = src.shape[-1]
    total = src.size
    rows = total // n
    indices = out is None
    wg, ipt = radix_shape(code.words, indices, int(dev.limits["max-compute-workgroup-storage-size"]))
    tile = wg * ipt
    subs: dict[str, object] = {"WG": wg, "IPT": ipt, "TILE": tile, "NW": code.words}
    scatter_subs = {
        **subs,
        "COUNTERS": _pad(16 * wg),
        "SK": _pad(tile * code.words),
        "SP": _pad(tile) if indices else 1,
        **_scatter_unrolled(code.words, indices, wg, ipt),
        **exclusive_scan(wg, lanes),
    }
    count = _count_unrolled(wg, ipt)
    tiles = math.ceil(n / tile)
    ncounts = rows * 256 * tiles
    what = "argsort" if indices else "sort"
    counts = Storage(dev, ncounts * 4)
    offsets = Storage(dev, ncounts * 4)
    made = [counts, offsets]
    bind_counts, _ = bind(dev, counts, 0, ncounts, _U32, what)  # also an output a pass leaves
    bind_offsets, _ = bind(dev, offsets, 0, ncounts, _U32, what)  # and an input it ignores
    keys: Storage | None = None  # the pass's input keys and payloads (the first makes them)
    payload: Storage | None = None
    starts = range(0, code.bits, DIGIT_BITS)
    for start in starts:
        first, last = start == starts[0], start == starts[-1]
        parts = _pass_code(code, src.dtype, first, last, indices)
        word, shift = divmod(start, 32)
        if keys is None:
            bind_in, in_base = bind(dev, src._storage, src._offset, total, src.dtype, what)
        else:
            bind_in, in_base = bind(dev, keys, 0, total * code.words, _U32, what)
        params = [n, rows, tiles, word, shift, in_base, 0]
        count_subs = {**subs, "COUNT": count, **{k: parts[k] for k in ("T", "KEY", "KIN", "KEY_AT")}}
        run(dev, "radix_count", count_subs, [bind_counts, bind_in], params, rows * tiles)
        made += scan_rows(dev, (counts, 0, _U32), rows * 256, tiles, _U32, "sum", (offsets, 0, tiles))
        keys_out = payload_out = None
        if last and out is not None:
            bind_keys_out, params[6] = bind(dev, out._storage, out._offset, total, out.dtype, what)
        elif last:
            bind_keys_out = bind_counts
        else:
            keys_out = Storage(dev, total * code.words * 4)
            made.append(keys_out)
            bind_keys_out = bind(dev, keys_out, 0, total * code.words, _U32, what)[0]
        if indices:
            payload_out = Storage(dev, total * 4)
            made.append(payload_out)
        bind_payload_out = bind(dev, payload_out, 0, total, _U32, what)[0] if payload_out else bind_counts
        bind_payload = bind(dev, payload, 0, total, _U32, what)[0] if payload else bind_offsets
        bindings = [bind_keys_out, bind_payload_out, bind_in, bind_payload, bind_offsets]
        run(dev, "radix_scatter", {**scatter_subs, **parts}, bindings, params, rows * tiles)
        if first and total >= FLUSH_FROM:
            dev.flush()  # the GPU starts while the other passes are recorded
        keys, payload = keys_out, payload_out
    return made


#: the longest rows sorted a thread a row (``wgsl/sort_rows.wgsl``) rather than by the radix sort
SHORT_SORT = 32


def sort_short_rows(src: Array, code: KeyCode, out: Array | None) -> Storage | None:
    """:func:`radix_sort` of rows of at most :data:`SHORT_SORT` elements, a thread a row; the
    indices of an argsort are written in the device's index dtype, not as uint32."""
    dev = src.device
    n = src.shape[-1]
    rows = src.size // n
    what = "argsort" if out is None else "sort"
    bind_in, in_base = bind(dev, src._storage, src._offset, src.size, src.dtype, what)
    subs: dict[str, object] = {
        "T": wgsl_type(src.dtype),
        "KEY": code.key,
        "VALUE": code.value,
        "WG": THREAD_WORKGROUP,
        "N": max(4, 1 << (n - 1).bit_length()),  # a few kernels: 4, 8, 16 and 32 keys
    }
    indices, bind_out, out_base, put = _row_sort_output(src, out, what, "ps[j]", "ks[j]")
    subs |= put
    run(
        dev,
        "sort_rows",
        subs,
        [bind_out, bind_in],
        [n, rows, in_base, out_base],
        -(-rows // THREAD_WORKGROUP),
    )
    return indices


def _row_sort_output(
    src: Array, out: Array | None, what: str, index: str, key: str
) -> tuple[Storage | None, tuple[Any, int, int], int, dict[str, object]]:
    """Where a kernel sorting rows of ``src`` (``sort_rows.wgsl``, ``sort_tile.wgsl``) writes
    the ``j``-th of row ``row``: argsort's (``out`` None) row ``index`` in the device's index
    dtype into new storage, else the value of ``key`` into ``out``. Returns that storage (None
    for a sort), the binding, its base, and the kernel's ``OUT`` and ``PUT``."""
    dev = src.device
    if out is None:
        dtype = default_dtypes_of(dev)["indexing"]
        indices = Storage(dev, src.size * STORAGE_ITEMSIZE[dtype])
        binding, base = bind(dev, indices, 0, src.size, dtype, what)
        return (
            indices,
            binding,
            base,
            {"OUT": wgsl_type(dtype), "PUT": f"o[row * n + j] = {convert(index, _U32, dtype)};"},
        )
    binding, base = bind(dev, out._storage, out._offset, out.size, out.dtype, what)
    return (
        None,
        binding,
        base,
        {"OUT": wgsl_type(src.dtype), "PUT": f"o[P[3] + row * n + j] = from_key({key});"},
    )


#: the longest rows sorted a workgroup a row (``wgsl/sort_tile.wgsl``) where the workgroup's
#: memory holds them. The bitonic network does n log2(n)^2 / 4 compare-exchanges against the
#: radix sort's few passes over n keys: on a GPU they run in workgroup memory, a fraction of the
#: time of the radix sort's passes through device memory (an estimate); on a CPU adapter, where
#: every one costs the cores, the network lost beyond 512 keys on lavapipe (argsort of 50 rows of
#: 1024: 17.0 ms against 15.5; of 512: 7.3 against 15.6, and one row of 512 0.4 against 1.7)
MAX_TILE_SORT = 4096
CPU_MAX_TILE_SORT = 512
#: short rows of more than 4 keys fewer than this a CPU adapter sorts a workgroup a row rather than
#: a thread a row: lavapipe's dispatch of ``sort_rows.wgsl`` costs about 2 ms with rows of 5 to 8
#: keys, 3-7 with 9 to 16 and 8 with 17 to 32, however few the rows (its threads' arrays), so
#: that 1000 rows of 16 took 7.4 ms against 2.4 (argsort) and 1.6 (sort) a workgroup a row, 3000
#: rows 9.6 against 6.4 and 3.8, and 10000 rows 11.5 against 20.6 and 11.9
CPU_FEW_ROWS = 2048
#: threads of a CPU adapter's workgroup sorting a row (a GPU's: THREAD_WORKGROUP); lavapipe runs
#: a workgroup's threads in turn between barriers: 4000 rows of 250 took 143 ms with 8, 163 with
#: 32 and 214 with 256
CPU_TILE_THREADS = 8


def tile_capacity(dev: GpuDevice, words: int, indices: bool) -> int:
    """The longest row of keys of ``words`` u32 words (with their indices, for argsort) that
    :func:`sort_tile_rows` sorts on ``dev``: a power of two whose keys fit the workgroup memory,
    at most :data:`MAX_TILE_SORT` (:data:`CPU_MAX_TILE_SORT` on a CPU adapter); 0 when not even
    :data:`SHORT_SORT` would fit."""
    memory = int(dev.limits["max-compute-workgroup-storage-size"])
    tile = CPU_MAX_TILE_SORT if dev.cpu else MAX_TILE_SORT
    while tile > SHORT_SORT and tile * 4 * (words + indices) + 4 > memory:
        tile //= 2
    return tile if tile > SHORT_SORT else 0


def sort_tile_rows(src: Array, code: KeyCode, out: Array | None) -> Storage | None:
    """:func:`radix_sort` of rows that one workgroup's memory holds, a workgroup a row, by a
    bitonic network (see ``wgsl/sort_tile.wgsl``); the indices of an argsort are written in the
    device's index dtype, as :func:`sort_short_rows` writes them."""
    dev = src.device
    n = src.shape[-1]
    rows = src.size // n
    what = "argsort" if out is None else "sort"
    tile = max(16, 1 << (n - 1).bit_length())  # (a few kernels: 16, 32, ... keys)
    bind_in, in_base = bind(dev, src._storage, src._offset, src.size, src.dtype, what)
    subs: dict[str, object] = {
        "T": wgsl_type(src.dtype),
        "KEY": code.key,
        "VALUE": code.value,
        "KT": "u32" if code.words == 1 else "vec2<u32>",
        "WIDE": "return vec2<u32>(k, 0u);" if code.words == 1 else "return k;",
        "NARROW": "return k.x;" if code.words == 1 else "return k;",
        "PAYLOAD": "true" if out is None else "false",
        "SP": tile if out is None else 1,
        "TILE": tile,
        "WG": min(CPU_TILE_THREADS if dev.cpu else THREAD_WORKGROUP, tile // 2),
    }
    indices, bind_out, out_base, put = _row_sort_output(src, out, what, "sp[j]", "wide(sk[j])")
    subs |= put
    run(dev, "sort_tile", subs, [bind_out, bind_in], [n, rows, in_base, out_base], rows)
    return indices


def _sort_rows(src: Array, code: KeyCode, out: Array | None) -> tuple[Storage | None, np.dtype[Any]]:
    """Sort the rows of ``src`` (see :func:`radix_sort`): short ones a thread a row, those one
    workgroup's memory holds a workgroup a row. Returns argsort's indices (None for a sort) and
    their dtype: the device's index dtype from those, uint32 from the radix sort."""
    dev, n = src.device, src.shape[-1]
    capacity = tile_capacity(dev, code.words, out is None)
    few = dev.cpu and n > 4 and src.size // n < CPU_FEW_ROWS and n <= capacity
    if n <= SHORT_SORT and not few:
        return sort_short_rows(src, code, out), default_dtypes_of(dev)["indexing"]
    if n <= capacity:
        return sort_tile_rows(src, code, out), default_dtypes_of(dev)["indexing"]
    return radix_sort(src, code, out), _U32


def _sortable(x: Array, fn: str, descending: bool, stable: bool) -> None:
    """Raise the error of a ``sort`` or ``argsort`` (``fn``) of what it cannot order: anything
    but a ruda_wgpu array of a real dtype (complex values have no order in the standard), or
    flags that are not booleans."""
    if not isinstance(x, Array):
        raise TypeError(f"{fn}() takes a ruda_wgpu array, not {type(x).__name__}")
    if x.dtype.kind == "c":
        raise TypeError(
            f"{fn}() orders real values, not {x.dtype.name}: sort real(x) or imag(x), or "
            "argsort a real key made from them"
        )
    for name, flag in (("descending", descending), ("stable", stable)):
        if not isinstance(flag, bool | np.bool_):
            raise TypeError(f"{fn}(): {name} must be a bool, not {type(flag).__name__} {flag!r}")


def _rows(x: Array, axis: int, fn: str) -> tuple[Array, tuple[int, ...]]:
    """``x`` with ``axis`` moved last, contiguous, and the permutation back to x's axes."""
    if x.ndim == 0:
        raise ValueError(f"{fn}() needs an array of at least one dimension")
    axis = _axis(axis, x.ndim, fn)
    order = (*[d for d in range(x.ndim) if d != axis], axis)
    back = tuple(order.index(d) for d in range(x.ndim))
    return contiguous(permute_dims(x, order)), back


def sort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """A sorted copy of ``x`` along ``axis`` (stable; NaN last; -0 before +0)."""
    _sortable(x, "sort", descending, stable)
    if x.ndim and _too_large_to_sort(x, at := _axis(axis, x.ndim, "sort")):
        return _sort_parts(x, at, descending, False)
    src, back = _rows(x, axis, "sort")
    out = empty(src.shape, x.dtype, x.device)
    if out.size:
        _sort_rows(src, key_code(x.dtype, descending, invertible=True), out)
    return permute_dims(out, back)


def argsort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """Indices that sort ``x`` along ``axis`` (stable: equal values keep their order; NaN last)."""
    _sortable(x, "argsort", descending, stable)
    if x.ndim and _too_large_to_sort(x, at := _axis(axis, x.ndim, "argsort"), True):
        return _sort_parts(x, at, descending, True)
    src, back = _rows(x, axis, "argsort")
    index = default_dtypes_of(x.device)["indexing"]
    if not src.size:
        return permute_dims(empty(src.shape, index, x.device), back)
    found, written = _sort_rows(src, key_code(x.dtype, descending, invertible=False), None)
    assert found is not None
    positions = Array._new(found, src.shape, written, x.device)
    return permute_dims(positions if written == index else astype(positions, index), back)


# -- arrays too large for one storage binding ---------------------------------------------------

#: groups between pivots a sort too large for one storage binding makes at most (each pivot costs
#: two comparisons of every element, in one fused kernel)
MAX_PIVOTS = 15


def _too_large_to_sort(x: Array, axis: int = -1, indices: bool = False) -> bool:
    """Whether the radix sort cannot take ``x`` along ``axis`` at once: it, its keys (32-bit
    words, also for narrower dtypes), an argsort's (``indices``) positions in the index dtype,
    or its digit counts (256 a tile of each row) exceed one storage binding."""
    dev, words = x.device, key_code(x.dtype, False, True).words
    index = STORAGE_ITEMSIZE[default_dtypes_of(dev)["indexing"]] if indices else 0
    if not fits(dev, x.size, max(STORAGE_ITEMSIZE[x.dtype], 4 * words, index)):
        return True
    n = x.shape[axis]
    if n <= SHORT_SORT or n <= tile_capacity(dev, words, indices):
        return False
    wg, ipt = radix_shape(words, indices, int(dev.limits["max-compute-workgroup-storage-size"]))
    return not fits(dev, x.size // n * 256 * -(-n // (wg * ipt)), 4)


def _sort_parts(x: Array, axis: int, descending: bool, indices: bool) -> Array:
    """sort (argsort, with ``indices``) of an ``x`` too large to sort at once: halves along another
    axis, joined; or, ``x`` a line, :func:`_sort_line`."""
    d = outer_axis(x.shape, axis)
    if d is not None:
        fn = argsort if indices else sort
        return concat([fn(half, axis=axis, descending=descending) for half in halves(x, d)], axis=d)
    line = reshape(x, (-1,))
    if x.dtype == _dtypes.bool_:  # (ordered as 0 and 1, which the pivots' comparisons need)
        line = astype(line, _dtypes.uint8)
    out = _sort_line(line, descending, indices)
    if indices:
        return reshape(astype(out, default_dtypes_of(x.device)["indexing"]), x.shape)
    return reshape(astype(out, x.dtype), x.shape)


def _sort_line(line: Array, descending: bool, indices: bool) -> Array:
    """A 1-D array too large to sort at once, sorted (or its sorting positions, uint32) by a
    sample sort: pivots from a sorted sample cut it into the groups strictly between pivots and
    the groups equal to one, which every element finds with two comparisons a pivot; each group,
    gathered in its order, is sorted alone (or again so, when still too large), and the groups
    are joined in order, NaN last. Equal values share a group, so the sort stays stable; a group
    between pivots lacks the pivots themselves, so each pass shrinks what it sorts again."""
    dev, n = line.device, line.size
    count = min(MAX_PIVOTS, 2 * -(-n // window_elements(dev, 4 * key_code(line.dtype, False, True).words)))
    pivots = _pivots(line, count)
    place = zeros(line.shape, dtype=_dtypes.int32, device=dev)
    for p in pivots:  # 2 j + 1 for the elements equal to pivot j, 2 j for those just below it
        place = apply("add", place, astype(apply("greater", line, p), _dtypes.int32))
        place = apply("add", place, astype(apply("greater_equal", line, p), _dtypes.int32))
    places = list(range(2 * len(pivots) + 1))
    if descending:
        places.reverse()
    if line.dtype.kind == "f":  # NaN compares false with every pivot: place 0, then its own, last
        place = where(apply("isnan", line), len(places), place)
        places.append(len(places))
    place = copy_of(place)  # (computed once, read by every group's mask)
    kinds = ["between", "equal"] * len(pivots) + ["between", "nan"]
    parts = [_sorted_group(line, apply("equal", place, g), descending, indices, kinds[g]) for g in places]
    return concat([part for part in parts if part.size])


def _pivots(line: Array, count: int) -> list[Any]:
    """Up to ``count`` distinct values of ``line`` cutting it into nearly equal groups, from a
    sorted sample of 64 elements a group (NaN left out), as Python scalars in ascending order."""
    sample = line[:: max(1, line.size // (64 * (count + 1)))]
    while sample.size > SHORT_SORT and _too_large_to_sort(sample):  # (a binding capped very low)
        sample = sample[::2]
    if sample.dtype.kind == "f":
        sample = masked_rows(sample, apply("logical_not", apply("isnan", sample)))
    ordered = sort(sample)
    step = max(1, ordered.size // (count + 1))
    picks = to_numpy(ordered[step::step][:count]).tolist()
    return [v for i, v in enumerate(picks) if i == 0 or v != picks[i - 1]]


def _sorted_group(line: Array, mask: Array, descending: bool, indices: bool, kind: str) -> Array:
    """The elements of ``line`` where ``mask`` is set, sorted (or their sorting positions in
    ``line``, uint32): ``kind`` "between" two pivots, "equal" to one, or "nan"."""
    positions = flat_nonzero(mask)
    if not positions.size:
        return positions
    values = take(line, positions)
    if not _too_large_to_sort(values, indices=indices):
        if indices:
            return take(positions, argsort(values, descending=descending))
        return sort(values, descending=descending)
    if kind == "between":
        inner = _sort_line(values, descending, indices)
        return take(positions, inner) if indices else inner
    if indices or kind == "nan" or values.dtype.kind != "f":  # equal keys: in their order
        return positions if indices else values
    # equal values, but a sort puts -0 before +0 (after, descending): split a group of zeros
    negative = apply("signbit", values)
    signs = [negative, apply("logical_not", negative)]
    return concat([masked_rows(values, m) for m in (reversed(signs) if descending else signs)])
