"""Parallel inclusive scans of the rows of a contiguous (rows, n) array (``wgsl/scan_*.wgsl``).

Short rows (:data:`ONE_THREAD_ROW`) are scanned by one thread each; rows up to
:data:`ONE_WORKGROUP_ROW` long by one workgroup each, chunk after chunk, in one
dispatch. Longer rows are cut into tiles of :data:`TILE`
elements: each workgroup scans a tile and records its total; the totals are
scanned the same way (recursively, so any length works) and added back to every
tile but the first of its row. Sorting, compaction, ``unique`` and
``cumulative_sum``/``cumulative_prod`` are built on it.

Tried and left out: reduce-then-scan (each tile's total first, then each tile scanned from the
totals before it: the input read twice, the result written once instead of twice), with tiles
of 4096 staged through workgroup memory and read and written four elements at a time. On
lavapipe a 1e6 float32 ``cumulative_sum`` took 10.0 ms against 17.4 and ``x[mask]`` 19.0
against 26.9; on an H200, alternating old and new in one run, 1e7 took 297-302 us a call
against 286-301, ten queued 156-184 against 122-157, and ``x[mask]`` 616-657 against 443-543.
Its threads' 16 elements were an array indexed by a loop counter, which NVIDIA's compiler
keeps in local memory (see :func:`unrolled`): worth trying again with them written out.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ruda_wgpu._buffers import Storage, storage_itemsize
from ruda_wgpu._engine import GpuDevice
from ruda_wgpu._kernels import (
    LLVMPIPE_LOOPS,
    LOOP_RESERVE,
    ONE,
    ZERO,
    bind,
    convert,
    loop_limited,
    run,
    running_product,
    wgsl_type,
    wrap,
)

WG = 256
#: elements each thread scans in registers
IPT = 4
TILE = WG * IPT
#: rows up to this long are scanned by one thread each
ONE_THREAD_ROW = 32
#: rows up to this long are scanned by one workgroup each, in chunks of ROW_CHUNK, in one dispatch
ROW_IPT = 16
ROW_CHUNK = WG * ROW_IPT
ONE_WORKGROUP_ROW = 4 * ROW_CHUNK
#: where a running value starts: a complex product from a mark of "no value yet" rather than 1
#: (see ``prod_c64`` in wgsl/lib_complex.wgsl), so that no value is multiplied by (1, 0)
IDENTITY = {
    "sum": ZERO,
    "prod": {**ONE, "vec2<f32>": "scan_one_c64()", "vec2<f64>": "scan_one_c128()"},
}


def scan_rows(
    dev: GpuDevice,
    src: tuple[Storage, int, np.dtype[Any]],
    rows: int,
    n: int,
    acc: np.dtype[Any],
    op: str,
    out: tuple[Storage, int, int],
    sequential: bool = False,
) -> list[Storage]:
    """Write the inclusive ``op`` scan (``"sum"`` or ``"prod"``) of each row into ``out``.

    ``src`` is (storage, first element, dtype) of a contiguous (rows, n) input;
    ``out`` is (storage, first element, elements between rows), of dtype ``acc``.
    Integer results wrap to ``acc`` as NumPy's do. ``sequential`` adds the elements of a
    row one after the other, rounding each running value (float16, as NumPy does).
    Returns the buffers it made for long rows' tile totals and carries, in the order made (none
    where one kernel scans the rows), for a :class:`Recorded` caller to count among its own.
    """
    if rows * n == 0:
        return []
    storage, start, dtype = src
    out_storage, out_start, out_stride = out
    tiles = math.ceil(n / TILE)
    t = wgsl_type(acc)
    subs = {
        "ACC": t,
        "SRC": wgsl_type(dtype),
        "WG": WG,
        "IPT": IPT,
        "TILE": TILE,
        "COMBINE": "x + y" if op == "sum" else running_product("x", "y", t),
        "IDENTITY": IDENTITY[op][t],
        "LOAD": convert("v", dtype, acc),
        "STORE": wrap("x", acc),
    }
    what = f"cumulative {op}"
    bind_o, o_base = bind(dev, out_storage, out_start, (rows - 1) * out_stride + n, acc, what)
    if sequential or n <= ONE_THREAD_ROW or n <= ONE_WORKGROUP_ROW:
        bind_a, a_base = bind(dev, storage, start, rows * n, dtype, what)
        params = [n, rows, a_base, o_base, out_stride]
        if sequential or n <= ONE_THREAD_ROW:
            # (llvmpipe ends a thread's loops after LLVMPIPE_LOOPS iterations: a float16 row
            # longer than that is scanned a span a dispatch, each going on from the last's value)
            span = LLVMPIPE_LOOPS - LOOP_RESERVE if loop_limited(dev) else n
            for j0 in range(0, n, span):
                serial = [*params, j0, min(j0 + span, n)]
                run(dev, "scan_serial", subs, [bind_o, bind_a], serial, -(-rows // WG))
        else:
            one = {**subs, "IPT": ROW_IPT, "TILE": ROW_CHUNK, **unrolled(ROW_IPT, t, subs["IDENTITY"])}
            run(dev, "scan_rows", one, [bind_o, bind_a], params, rows)
        return []
    totals = Storage(dev, rows * tiles * storage_itemsize(acc))
    bind_s, _ = bind(dev, totals, 0, rows * tiles, acc, what)
    bind_a, a_base = bind(dev, storage, start, rows * n, dtype, what)
    params = [n, rows, tiles, a_base, o_base, out_stride]
    tiled = {**subs, **unrolled(IPT, t, subs["IDENTITY"])}
    run(dev, "scan_tiles", tiled, [bind_o, bind_s, bind_a], params, rows * tiles)
    if tiles == 1:
        return [totals]
    carries = Storage(dev, rows * tiles * storage_itemsize(acc))
    inner = scan_rows(dev, (totals, 0, acc), rows, tiles, acc, op, (carries, 0, tiles))
    bind_c, _ = bind(dev, carries, 0, rows * tiles, acc, what)
    add = {k: subs[k] for k in ("ACC", "WG", "IPT", "TILE", "COMBINE", "STORE")}
    run(dev, "scan_add", add, [bind_o, bind_c], [n, rows, tiles, o_base, out_stride], rows * tiles)
    return [totals, carries, *inner]


@functools.cache
def unrolled(ipt: int, acc: str, identity: object) -> dict[str, str]:
    """A scan kernel's per-thread steps over its ``ipt`` consecutive elements ``first + k`` of a
    row of ``n`` (``a[a_row + j]`` in, ``o[o_row + j]`` out), running values of WGSL type
    ``acc`` from ``identity``, written out a variable ``vk`` per element: NVIDIA's compiler
    keeps an array indexed by a loop counter in local memory, a round trip through the cache
    for every element."""
    steps = range(ipt)
    return {
        "READ_VALUES": " ".join(
            f"var v{k}: {acc} = {identity}; if (first + {k}u < n) {{ v{k} = load(a[a_row + first + {k}u]); }}"
            for k in steps
        ),
        "SCAN_VALUES": " ".join(
            f"if (first + {k}u < n) {{ acc = combine(acc, v{k}); }} v{k} = acc;" for k in steps
        ),
        "WRITE_VALUES": " ".join(
            f"if (first + {k}u < n) {{ o[o_row + first + {k}u] = store(combine(prefix, v{k})); }}"
            for k in steps
        ),
    }
