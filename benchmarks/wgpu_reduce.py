"""How fast are ruda_wgpu's reductions over one axis of a 2-D or 3-D array?

Sums, standard deviations and argmax of float32 arrays over their last axis (rows of 3 to
1000 elements) and over a leading or middle axis (columns), timed in this process against
NumPy and, where CuPy and an NVIDIA GPU are present, against CuPy on the same data. Short
rows reduce one a thread, and axes before the last are read in place (no copy moving them
last); ``std`` reduces a pending elementwise chain as it reads it. GPU sides wait for their work to
finish inside the timed call. Results go to ``benchmarks/results/wgpu_reduce-<device>.json``.

    python3 benchmarks/wgpu_reduce.py
    python3 benchmarks/wgpu_reduce.py --repeats 9
    python3 benchmarks/wgpu_reduce.py --markdown     # the README's table, from the results files
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ruda_wgpu as xp
from _gpu_bench import cupy_cells, cupy_or_none, markdown_table, save, time_rows, waiting
from _timing import RESULTS, benchmark_parser

#: (shape, axis) of each case: short rows, long rows, a leading axis, a middle one
CASES = [
    ((1_000_000, 16), 1),
    ((1_000_000, 16), 0),
    ((100_000, 3), 1),
    ((100_000, 3), 0),
    ((4000, 1000), 1),
    ((4000, 1000), 0),
    ((64, 256, 64), 1),
]


def _contenders(op: str, shape: tuple[int, ...], axis: int, cp: Any) -> dict[str, Callable[[], object]]:
    """``op`` over ``axis`` on ruda_wgpu, NumPy and (when present) CuPy, each waiting for its result."""
    host = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    x = xp.asarray(host)
    out: dict[str, Callable[[], object]] = {
        "ruda_wgpu": waiting(lambda: getattr(xp, op)(x, axis=axis), xp.synchronize),
        "numpy": lambda: getattr(np, op)(host, axis=axis),
    }
    if cp is not None:
        c = cp.asarray(host)
        out["cupy"] = waiting(lambda: getattr(cp, op)(c, axis=axis), cp.cuda.Device().synchronize)
    return out


def main() -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=5, help="timed batches per contender (best kept)")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(sorted(RESULTS.glob("wgpu_reduce-*.json"))))
        return 0
    dev = xp.__array_namespace_info__().default_device()
    cp = cupy_or_none()
    cases = [
        (
            {"op": op, "shape": "x".join(map(str, shape)), "axis": axis},
            lambda op=op, shape=shape, axis=axis: _contenders(op, shape, axis, cp),
        )
        for op in ("sum", "std", "argmax")
        for shape, axis in CASES
    ]
    rows = time_rows(f"{dev.name} ({dev.description})", cases, args.repeats)
    print(f"device: {dev.name} = {dev.description}" + ("  (CuPy: " + ("yes)" if cp else "not here)")))
    for r in rows:
        line = f"{r['op']:6} {r['shape']:>12} axis {r['axis']}: ours {r['ruda_wgpu ms']:.3f} ms"
        line += f", NumPy {r['numpy ms']:.3f} ms"
        if cp:
            line += f", CuPy {r['cupy ms']:.3f} ms (ours/CuPy {r['ours/cupy']:.2f})"
        print(line)
    print(f"results: {save('wgpu_reduce', dev.description, cp is not None, rows)}")
    return 0


def markdown(paths: list[Path]) -> str:
    """One table of every results file: a row per device, operation, shape and axis."""
    header = [
        "| device | op | shape | axis | ruda_wgpu ms | NumPy ms | ours/NumPy | CuPy ms | ours/CuPy "
        "| ours/CuPy pipelined |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]

    def rows(device: str, found: list[dict[str, Any]]) -> str:
        return "\n".join(
            f"| {device.split(' (')[0]} | {r['op']} | {r['shape']} | {r['axis']} | {r['ruda_wgpu ms']:.3f} "
            f"| {r['numpy ms']:.3f} | {r['ours/numpy']:.2f} | {cupy_cells(r)} |"
            for r in found
        )

    return markdown_table(paths, header, rows)


if __name__ == "__main__":
    raise SystemExit(main())
