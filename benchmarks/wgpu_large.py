"""What does an array beyond one storage binding cost ruda_wgpu, element for element?

A device caps a storage binding below its buffers (lavapipe: 128 MiB of 2 GiB; an H200: 2 GiB
of 4 GiB), and ruda_wgpu takes a larger array in parts (packages/ruda-wgpu/README.md, Limits).
Each operation runs here on float32 data (complex64 for FFTs) at two sizes: "inside", whose
largest array takes half a binding, and "beyond", one and a half bindings (FFT lengths: the
powers of two below and above a binding). A row gives both times and the ratio of their times
per element (1.0: parts cost nothing; the sort's groups and gathers, for one, are more work),
and where CuPy and an NVIDIA GPU are present CuPy's time at the larger size and ours over it.
Every contender waits for its result inside the timed call. On a CPU adapter the sizes make
slow runs: minutes for the whole. Results go to ``benchmarks/results/wgpu_large-<device>.json``.

    python3 benchmarks/wgpu_large.py
    python3 benchmarks/wgpu_large.py --markdown     # the README's table, from the results files
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import array_api_compat
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ruda_wgpu as xp
from _gpu_bench import cupy_or_none, markdown_table, save
from _timing import RESULTS, benchmark_parser, best_time
from rich.progress import Progress

#: matrix products: (m, K) @ (K, 16), m set by the size
K = 1024
#: FFT rows: signals of this many points
ROW = 1 << 14

Make = Callable[[Any, int], Callable[[], object]]


def _floats(ns: Any, n: int) -> Any:
    """n float32 values in [-1, 1) on ``ns`` (made on the device: no host copies of GiBs)."""
    return ns.sin(ns.arange(n, dtype=ns.float32) * 0.7)


def _signal(ns: Any, n: int) -> Any:
    return ns.astype(_floats(ns, n), ns.complex64)


#: (operation, elements of its largest array per element of ``n``, maker of the timed call on a
#: namespace (ruda_wgpu or CuPy) for size n)
CASES: list[tuple[str, float, Make]] = [
    ("x + flip(x)", 1, lambda ns, n: (lambda x: lambda: x + ns.flip(x))(_floats(ns, n))),
    (
        "transposed copy",
        1,
        lambda ns, n: (lambda x: lambda: ns.matrix_transpose(x) + 0)(ns.reshape(_floats(ns, n), (-1, 4096))),
    ),
    ("argmax", 1, lambda ns, n: (lambda x: lambda: ns.argmax(x))(_floats(ns, n))),
    ("cumulative_sum", 1, lambda ns, n: (lambda x: lambda: ns.cumulative_sum(x))(_floats(ns, n))),
    ("x[x > 0]", 1, lambda ns, n: (lambda x: lambda: x[x > 0])(_floats(ns, n))),
    (
        "take n/8 at random",
        1,
        lambda ns, n: (lambda x, at: lambda: ns.take(x, at))(
            _floats(ns, n), ns.asarray(np.random.default_rng(0).integers(0, n, n // 8))
        ),
    ),
    ("sort", 1, lambda ns, n: (lambda x: lambda: ns.sort(x))(_floats(ns, n))),
    (
        f"matmul (n/{K} x {K}) @ ({K} x 16)",
        1,
        lambda ns, n: (lambda a, b: lambda: a @ b)(
            ns.reshape(_floats(ns, n), (-1, K)), ns.ones((K, 16), dtype=ns.float32)
        ),
    ),
    ("fft of one signal", 2, lambda ns, n: (lambda z: lambda: ns.fft.fft(z))(_signal(ns, n))),
    (
        f"fft of rows of {ROW}",
        2,
        lambda ns, n: (lambda z: lambda: ns.fft.fft(z))(ns.reshape(_signal(ns, n), (-1, ROW))),
    ),
]


def _sizes(words: float, dev: Any) -> tuple[int, int]:
    """(inside, beyond) element counts for arrays of ``words`` float32 words an element: half and
    one and a half of what a binding holds, in whole rows of 4096; FFTs: the largest power of two
    a binding holds, and twice that."""
    per = (dev.max_binding - dev.offset_align) // (4 * words)
    if words == 2:
        inside = 1 << (int(per).bit_length() - 1)
        return inside, 2 * inside
    return int(per // 2) // 4096 * 4096, int(per * 3 // 2) // 4096 * 4096


def _timed(make: Make, ns: Any, n: int, sync: Callable[[], object], repeats: int) -> float:
    call = make(ns, n)

    def waited() -> None:
        result = call()  # (kept until the wait: a pending result nobody holds is never computed)
        sync()
        del result

    return best_time(waited, repeats=repeats, min_seconds=0.01)


def main() -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=3, help="timed batches per contender (best kept)")
    parser.add_argument("--ops", default="", help="comma-separated subset of the operations (default: all)")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(sorted(RESULTS.glob("wgpu_large-*.json"))))
        return 0
    dev = xp.__array_namespace_info__().default_device()
    cp = cupy_or_none()
    # CuPy through array-api-compat: the standard's names (matrix_transpose, cumulative_sum, ...)
    cupy_ns = array_api_compat.array_namespace(cp.empty(0)) if cp is not None else None
    cases = [c for c in CASES if not args.ops or c[0] in args.ops.split(",")]
    rows = []
    with Progress(transient=True) as progress:
        task = progress.add_task(dev.description, total=len(cases))
        for op, words, make in cases:
            progress.update(task, description=op)
            inside, beyond = _sizes(words, dev)
            row: dict[str, Any] = {"op": op, "inside": inside, "beyond": beyond}
            for name, n in (("inside", inside), ("beyond", beyond)):
                row[f"{name} ms"] = _timed(make, xp, n, xp.synchronize, args.repeats) * 1e3
                xp.empty_cache()
            row["per element, beyond / inside"] = (row["beyond ms"] / beyond) / (row["inside ms"] / inside)
            if cp is not None:
                row["cupy ms"] = (
                    _timed(make, cupy_ns, beyond, cp.cuda.Device().synchronize, args.repeats) * 1e3
                )
                row["ours/cupy"] = row["beyond ms"] / row["cupy ms"]
                cp.get_default_memory_pool().free_all_blocks()
            rows.append(row)
            progress.advance(task)
    path = save("wgpu_large", dev.description, cp is not None, rows, binding=dev.max_binding)
    print(markdown([path]))
    return 0


def _count(n: int) -> str:
    return f"{n / 2**20:.0f} Mi" if n >= 2**20 else str(n)


def markdown(paths: list[Path]) -> str:
    """The README's table: a row per device and operation."""
    header = [
        "| device | op | inside: elements, ms | beyond: elements, ms | per element, beyond / inside "
        "| CuPy ms (beyond) | ours/CuPy |",
        "|---|---|---|---|---|---|---|",
    ]

    def rows(device: str, data: list[dict[str, Any]]) -> str:
        name = device.split(" (")[0]
        return "\n".join(
            f"| {name} | {r['op']} | {_count(r['inside'])}, {r['inside ms']:.1f} "
            f"| {_count(r['beyond'])}, {r['beyond ms']:.1f} | {r['per element, beyond / inside']:.2f} "
            + (f"| {r['cupy ms']:.1f} | {r['ours/cupy']:.1f} |" if "cupy ms" in r else "| — | — |")
            for r in data
        )

    return markdown_table(paths, header, rows)


if __name__ == "__main__":
    raise SystemExit(main())
