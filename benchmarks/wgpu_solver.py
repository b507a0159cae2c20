"""How fast does ruda_wgpu run an iterative solver, a loop of small operations on new arrays?

Conjugate gradient on an n x n symmetric positive definite float32 matrix, 20 iterations, written
once against the array API (a matrix times a vector, two dot products, step sizes as 0-D arrays,
three vector updates an iteration) and run on ruda_wgpu, NumPy and, where CuPy and an NVIDIA GPU
are present, CuPy, on the same data in this process. Each solve waits for its result. Every
iteration makes new arrays and drops the last ones, so the loop shows what the host pays an
operation, whether the device finds its prepared dispatches again as the pool hands out buffers,
and how many dispatches an iteration takes (``dispatches/iter``, ruda_wgpu's count). The same
solve with its step wrapped in ``xp.fuse`` (``fused``) replays the step's kernels instead of
recording its operations. ``error`` is the largest difference from NumPy's solution, relative to
its largest element.
Results go to ``benchmarks/results/wgpu_solver-<device>.json``.

    python3 benchmarks/wgpu_solver.py
    python3 benchmarks/wgpu_solver.py --markdown   # the README's table, from the results files
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ruda_wgpu as xp
from _gpu_bench import cupy_cells, cupy_or_none, markdown_table, same_operation, save, time_rows, waiting
from _timing import RESULTS, benchmark_parser

#: the matrices' sizes
SIZES = (64, 256, 1024, 4096)
#: iterations of each solve
ITERATIONS = 20


def step(ns: Any, a: Any, x: Any, r: Any, p: Any, rs: Any) -> tuple[Any, Any, Any, Any]:
    """One conjugate-gradient step in the namespace ``ns``: the new x, r, p and r @ r."""
    ap = a @ p
    alpha = rs / (p @ ap)
    x = x + alpha * p
    r = r - alpha * ap
    rs_new = r @ r
    p = r + (rs_new / rs) * p
    return x, r, p, rs_new


def conjugate_gradient(ns: Any, a: Any, b: Any, steps: Any = None) -> Any:
    """``ITERATIONS`` steps of conjugate gradient for ``a @ x = b`` in the namespace ``ns``, each
    by ``steps(a, x, r, p, rs)`` (default :func:`step` itself)."""
    take = steps or (lambda *args: step(ns, *args))
    x, r, p = ns.zeros_like(b), b, b
    rs = r @ r
    for _ in range(ITERATIONS):
        x, r, p, rs = take(a, x, r, p, rs)
    return x


def _solver(ns: Any) -> Any:
    """:func:`conjugate_gradient` in the namespace ``ns``, as a function of the system."""
    return lambda a, b: conjugate_gradient(ns, a, b)


def _contenders(n: int, system: tuple[np.ndarray, np.ndarray], cp: Any) -> dict[str, Any]:
    """The solve on ruda_wgpu (as written, and with its step through ``xp.fuse``), NumPy and,
    where present, CuPy."""
    contenders = same_operation(_solver, xp, system, cp)
    a, b = (xp.asarray(h) for h in system)
    fused = xp.fuse(lambda *args: step(xp, *args))
    contenders["fused"] = waiting(lambda: conjugate_gradient(xp, a, b, fused), xp.synchronize)
    return contenders


def _system(n: int) -> tuple[np.ndarray, np.ndarray]:
    """A well-conditioned symmetric positive definite float32 matrix of ``n`` x ``n`` and a
    right-hand side."""
    rng = np.random.default_rng(0)
    m = rng.standard_normal((n, n))
    a = (m @ m.T / n + np.eye(n)).astype(np.float32)
    return a, rng.standard_normal(n).astype(np.float32)


def _checks(n: int, hosts: tuple[np.ndarray, np.ndarray]) -> dict[str, float]:
    """ruda_wgpu's dispatches an iteration, and its solution's error against NumPy's."""
    ours = [xp.asarray(h) for h in hosts]
    conjugate_gradient(xp, *ours)  # (compiles, and fills the caches)
    xp.synchronize()
    before = xp.memory_stats()["dispatches"]
    got = np.asarray(conjugate_gradient(xp, *ours))
    dispatches = (xp.memory_stats()["dispatches"] - before) / ITERATIONS
    want = conjugate_gradient(np, *hosts)
    return {"dispatches/iter": dispatches, "error": float(np.abs(got - want).max() / np.abs(want).max())}


def main() -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=3, help="timed batches per contender (best kept)")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(sorted(RESULTS.glob("wgpu_solver-*.json"))))
        return 0
    dev = xp.__array_namespace_info__().default_device()
    cp = cupy_or_none()
    systems = {n: _system(n) for n in SIZES}
    cases = [({"n": n, "iterations": ITERATIONS}, lambda n=n: _contenders(n, systems[n], cp)) for n in SIZES]
    rows = time_rows(f"{dev.name} ({dev.description})", cases, args.repeats)
    for row in rows:
        row.update(_checks(row["n"], systems[row["n"]]))
    print(f"device: {dev.name} = {dev.description}" + ("  (CuPy: " + ("yes)" if cp else "not here)")))
    print(markdown_rows(dev.description, rows))
    print(f"results: {save('wgpu_solver', dev.description, cp is not None, rows)}")
    return 0


_HEADER = [
    "| device | n | ruda_wgpu ms | us/iter | through `xp.fuse`, ms | dispatches/iter | NumPy ms "
    "| ours/NumPy | CuPy ms | ours/CuPy | ours/CuPy pipelined | fused/CuPy | error |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
]


def markdown_rows(device: str, rows: list[dict[str, Any]]) -> str:
    """The rows of one device as markdown table lines (without the header); dashes where a
    results file has no fused figure (runs from before it was timed)."""
    return "\n".join(
        f"| {device.split(' (')[0]} | {r['n']} | {r['ruda_wgpu ms']:.3f} "
        f"| {r['ruda_wgpu ms'] * 1e3 / r['iterations']:.0f} | {_fused_ms(r)} | {r['dispatches/iter']:.1f} "
        f"| {r['numpy ms']:.3f} | {r['ours/numpy']:.1f} | {cupy_cells(r)} | {_fused_cupy(r)} "
        f"| {r['error']:.1e} |"
        for r in rows
    )


def _fused_ms(row: dict[str, Any]) -> str:
    return f"{row['fused ms']:.3f}" if "fused ms" in row else "—"


def _fused_cupy(row: dict[str, Any]) -> str:
    return f"{row['fused ms'] / row['cupy ms']:.1f}" if "fused ms" in row and "cupy ms" in row else "—"


def markdown(paths: list[Path]) -> str:
    """One table of every results file."""
    return markdown_table(paths, _HEADER, markdown_rows)


if __name__ == "__main__":
    raise SystemExit(main())
