"""How fast are ruda_wgpu's sort, argsort, boolean-mask selection, take and cumulative_sum?

Each operation is timed in this process against NumPy and, where CuPy and an NVIDIA GPU are
present, against CuPy on the same data (``cupy.sort``, ``cupy.argsort``, ``x[mask]``,
``cupy.take``, ``cupy.cumsum``). GPU sides wait for their work to finish inside the timed
call. Sizes are 1e6 and 1e7 elements of float32 and int32 (1e6 only on a CPU adapter such as
lavapipe, unless ``--full``); ``sort rows of 16`` sorts the largest size as rows of 16
elements (a thread a row), ``sort rows of 250`` and ``argsort rows of 1000`` as rows that a
workgroup's memory holds (a workgroup a row; on a CPU adapter, rows of 1000 take the radix
sort); ``take`` gathers as many elements at random indices (checked against the axis by its
kernel, which does not wait for the check: an index out of bounds raises at the next read).
Results go to ``benchmarks/results/wgpu_sort-<device>.json`` with a plot beside.

    python3 benchmarks/wgpu_sort.py
    python3 benchmarks/wgpu_sort.py --full --repeats 5
    python3 benchmarks/wgpu_sort.py --markdown     # the README's table, from the results files
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ruda_wgpu as xp
from _gpu_bench import cupy_cells, cupy_or_none, save, time_rows, waiting
from _timing import RESULTS, benchmark_parser


def _data(dtype: str, n: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    if dtype == "float32":
        return rng.standard_normal(n).astype(np.float32)
    return rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int64).astype(np.int32)


#: sorts of the largest size as rows: a thread a row, and a workgroup a row
ROW_SORTS = (("sort", 16), ("sort", 250), ("argsort", 1000))


def _cases(sizes: list[int]) -> list[tuple[str, str, int]]:
    cases = [(op, dtype, n) for op in ("sort", "argsort") for dtype in ("float32", "int32") for n in sizes]
    last = max(sizes)
    return [
        *cases,
        *[(f"{op} rows of {r}", "float32", last) for op, r in ROW_SORTS],
        ("mask", "float32", last),
        *[("take", "float32", n) for n in sizes],
        ("cumulative_sum", "float32", last),
    ]


def _contenders(op: str, host: np.ndarray, cp: Any) -> dict[str, Callable[[], object]]:
    """The same operation on ruda_wgpu, NumPy and (when present) CuPy, each waiting for its result."""
    fn_name, _, row = op.partition(" rows of ")  # a sort of rows of that length, along the last axis
    rows_host = host.reshape(-1, int(row or 1))
    x, rows = xp.asarray(host), xp.asarray(rows_host)
    mask_host = host > 0
    mask = xp.asarray(mask_host)
    at_host = np.random.default_rng(1).integers(0, host.size, host.size)
    at = xp.asarray(at_host)
    ours = {
        "sort": lambda: xp.sort(x),
        "argsort": lambda: xp.argsort(x),
        "sort rows": lambda: xp.sort(rows),
        "argsort rows": lambda: xp.argsort(rows),
        "mask": lambda: x[mask],  # reads the count back: the shape depends on the data
        "take": lambda: xp.take(x, at),  # checked in its kernel: a bad index raises at the next read
        "cumulative_sum": lambda: xp.cumulative_sum(x),
    }[fn_name + " rows" if row else op]
    numpy = {
        "sort": lambda: np.sort(host),  # NumPy's default (fastest, not stable); ours is stable
        "argsort": lambda: np.argsort(host),
        "sort rows": lambda: np.sort(rows_host),
        "argsort rows": lambda: np.argsort(rows_host),
        "mask": lambda: host[mask_host],
        "take": lambda: np.take(host, at_host),
        "cumulative_sum": lambda: np.cumsum(host),
    }[fn_name + " rows" if row else op]

    out: dict[str, Callable[[], object]] = {"ruda_wgpu": waiting(ours, xp.synchronize), "numpy": numpy}
    if cp is not None:
        c, cmask, crows, cat = (
            cp.asarray(host),
            cp.asarray(mask_host),
            cp.asarray(rows_host),
            cp.asarray(at_host),
        )
        fn = {
            "sort": lambda: cp.sort(c),
            "argsort": lambda: cp.argsort(c),
            "sort rows": lambda: cp.sort(crows),
            "argsort rows": lambda: cp.argsort(crows),
            "mask": lambda: c[cmask],
            "take": lambda: cp.take(c, cat),
            "cumulative_sum": lambda: cp.cumsum(c),
        }[fn_name + " rows" if row else op]
        out["cupy"] = waiting(fn, cp.cuda.Device().synchronize)
    return out


def main() -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--full", action="store_true", help="1e7 elements also on a CPU adapter")
    parser.add_argument("--repeats", type=int, default=5, help="timed batches per contender (best kept)")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(sorted(RESULTS.glob("wgpu_sort-*.json"))))
        return 0
    dev = xp.__array_namespace_info__().default_device()
    cpu = dev.cpu
    sizes = [10**6] if cpu and not args.full else [10**6, 10**7]
    cp = cupy_or_none()
    cases = [
        (
            {"op": op, "dtype": dtype, "size": n},
            lambda op=op, dtype=dtype, n=n: _contenders(op, _data(dtype, n), cp),
        )
        for op, dtype, n in _cases(sizes)
    ]
    rows = time_rows(f"{dev.name} ({dev.description})", cases, args.repeats)
    print(f"device: {dev.name} = {dev.description}" + ("  (CuPy: " + ("yes)" if cp else "not here)")))
    header = f"{'op':16} {'dtype':8} {'size':>9} {'ours ms':>9} {'numpy ms':>9} {'ours/numpy':>10}"
    print(header + (f" {'cupy ms':>9} {'ours/cupy':>9} {'pipelined':>9}" if cp else ""))
    for r in rows:
        line = (
            f"{r['op']:16} {r['dtype']:8} {r['size']:>9} {r['ruda_wgpu ms']:>9.3f} {r['numpy ms']:>9.3f}"
            f" {r['ours/numpy']:>10.3f}"
        )
        if cp:
            line += f" {r['cupy ms']:>9.3f} {r['ours/cupy']:>9.2f} {r['ours/cupy pipelined']:>9.2f}"
        print(line)
    out = save("wgpu_sort", dev.description, cp is not None, rows)
    print(f"results: {out}")
    _plot(rows, dev.description, out.with_suffix(".png"))
    return 0


def markdown(paths: list[Path]) -> str:
    """One table of every results file: a row per operation and size, columns per device."""
    lines = [
        "| device | op | dtype | size | ruda_wgpu ms | NumPy ms | ours/NumPy "
        "| CuPy ms | ours/CuPy | ours/CuPy pipelined |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for path in paths:
        data = json.loads(path.read_text())
        device = data["device"].split(" (")[0]
        for r in data["rows"]:
            cupy = cupy_cells(r)
            lines.append(
                f"| {device} | {r['op']} | {r['dtype']} | {r['size']:.0e} | {r['ruda_wgpu ms']:.3f} "
                f"| {r['numpy ms']:.3f} | {r['ours/numpy']:.2f} | {cupy} |"
            )
    return "\n".join(lines)


def _plot(rows: list[dict[str, Any]], device: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['op']}\n{r['dtype']} {r['size']:.0e}" for r in rows]
    keys = [k for k in ("ours/numpy", "ours/cupy") if k in rows[0]]
    fig, ax = plt.subplots(figsize=(max(6, len(rows) * 0.9), 4))
    width = 0.8 / len(keys)
    for i, key in enumerate(keys):
        ax.bar([j + i * width for j in range(len(rows))], [r[key] for r in rows], width, label=key)
    ax.set_xticks([j + width * (len(keys) - 1) / 2 for j in range(len(rows))], labels, fontsize=7)
    ax.set_yscale("log")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_ylabel("time ratio (lower is faster)")
    ax.set_title(f"ruda_wgpu sort, argsort, mask, take, cumulative_sum on {device}", fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")


if __name__ == "__main__":
    raise SystemExit(main())
