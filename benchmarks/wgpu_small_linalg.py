"""How fast does ruda_wgpu work through stacks of small matrices?

Point clouds, meshes and finite elements come as many 3 x 3 (or 8 x 8) matrices at once:
``matmul`` of 20000 3 x 3 products (and matrix-vector products), ``solve``, ``inv``, ``det``,
``cholesky``, ``qr``, ``eigh``, ``svd`` and ``eig`` of 20000 3 x 3 float32 matrices, and
``matmul``, ``eigh`` and ``svd`` of 2000 8 x 8 ones; and one matrix with a stack: 64 8 x 256
matrices times one 256 x 256 (``stack @ one``, as a layer's weights on a batch), one 256 x 256
times 64 256 x 8 (``one @ stack``), and ``solve`` of one 64 x 64 matrix for 1000 right-hand
sides (``solve one``); on ruda_wgpu, NumPy and, where CuPy and an NVIDIA GPU are present, CuPy,
in this process and on the same data. GPU sides wait for their work
inside the timed call. Results go to ``benchmarks/results/wgpu_small_linalg-<device>.json``.

    python3 benchmarks/wgpu_small_linalg.py
    python3 benchmarks/wgpu_small_linalg.py --markdown   # the README's table, from the results files
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ruda_wgpu as xp
from _gpu_bench import cupy_cells, cupy_or_none, markdown_table, same_operation, save, time_rows
from _timing import RESULTS, benchmark_parser

#: (operation, matrices, n): the stacks timed
CASES = [
    ("matmul", 20000, 3),
    ("matmul vector", 20000, 3),
    ("solve", 20000, 3),
    ("inv", 20000, 3),
    ("det", 20000, 3),
    ("cholesky", 20000, 3),
    ("qr", 20000, 3),
    ("eigh", 20000, 3),
    ("svd", 20000, 3),
    ("eig", 20000, 3),
    ("matmul", 2000, 8),
    ("eigh", 2000, 8),
    ("svd", 2000, 8),
    ("matmul stack @ one", 64, 256),
    ("matmul one @ stack", 64, 256),
    ("solve one", 1000, 64),
]
#: the rows of the stack's matrices in the products of one matrix with a stack
STACK_ROWS = 8


def _data(op: str, count: int, n: int) -> tuple[np.ndarray, ...]:
    """The operands of ``op`` on ``count`` float32 ``n`` x ``n`` matrices (well conditioned)."""
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((count, n, n)) + 2 * np.eye(n)).astype(np.float32)
    if op in ("cholesky", "eigh"):
        return ((a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(np.float32),)
    if op in ("matmul", "matmul vector", "solve"):
        columns = 1 if op != "matmul" else n
        return a, rng.standard_normal((count, n, columns)).astype(np.float32)
    if op == "matmul stack @ one":
        return np.ascontiguousarray(a[:, :STACK_ROWS]), a[0]
    if op == "matmul one @ stack":
        return a[0], np.ascontiguousarray(a[:, :, :STACK_ROWS])
    if op == "solve one":
        return a[0], rng.standard_normal((count, n, 1)).astype(np.float32)
    return (a,)


def _shapes(op: str, count: int, n: int) -> str:
    """What case (op, count, n) computes on, for the table."""
    if op == "matmul stack @ one":
        return f"{count} x {STACK_ROWS}x{n} @ {n}x{n}"
    if op == "matmul one @ stack":
        return f"{n}x{n} @ {count} x {n}x{STACK_ROWS}"
    if op == "solve one":
        return f"{n}x{n}, {count} x {n}x1"
    return f"{count} x {n}x{n}"


def _function(lib: Any, op: str) -> Callable[..., object]:
    """``op`` in the namespace ``lib`` (ours, NumPy or CuPy)."""
    if op.startswith("matmul"):
        return lib.matmul  # type: ignore[no-any-return]
    return getattr(lib.linalg, op.split()[0])  # type: ignore[no-any-return]


def main() -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=3, help="timed batches per contender (best kept)")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(sorted(RESULTS.glob("wgpu_small_linalg-*.json"))))
        return 0
    dev = xp.__array_namespace_info__().default_device()
    cp = cupy_or_none()
    cases = [
        (
            {"op": op, "matrices": count, "n": n},
            lambda op=op, count=count, n=n: same_operation(
                lambda lib, op=op: _function(lib, op),
                xp,
                _data(op, count, n),
                # CuPy has no general eigensolver, and its solve takes no one matrix for a stack
                None if op in ("eig", "solve one") else cp,
            ),
        )
        for op, count, n in CASES
    ]
    rows = time_rows(f"{dev.name} ({dev.description})", cases, args.repeats)
    print(f"device: {dev.name} = {dev.description}" + ("  (CuPy: " + ("yes)" if cp else "not here)")))
    print(markdown_rows(dev.description, rows))
    out = save("wgpu_small_linalg", dev.description, cp is not None, rows)
    print(f"results: {out}")
    return 0


_HEADER = [
    "| device | op | matrices | ruda_wgpu ms | NumPy ms | ours/NumPy | CuPy ms | ours/CuPy "
    "| ours/CuPy pipelined |",
    "|---|---|---|---|---|---|---|---|---|",
]


def markdown_rows(device: str, rows: list[dict[str, Any]]) -> str:
    """The rows of one device as markdown table lines (without the header)."""
    return "\n".join(
        f"| {device.split(' (')[0]} | {r['op']} | {_shapes(r['op'], r['matrices'], r['n'])} "
        f"| {r['ruda_wgpu ms']:.3f} | {r['numpy ms']:.3f} | {r['ours/numpy']:.1f} | {cupy_cells(r)} |"
        for r in rows
    )


def markdown(paths: list[Path]) -> str:
    """One table of every results file."""
    return markdown_table(paths, _HEADER, markdown_rows)


if __name__ == "__main__":
    raise SystemExit(main())
