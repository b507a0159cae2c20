"""How fast are ruda_wgpu's FFT, linear solve and decompositions?

Times, in this process and on the same data, ``fft`` of 2^20 and 2^24 complex64 points (and of
10^6 points, a mixed-radix length; and of 16 rows of 2^20 at once, where the GPU's time outweighs
the per-call cost of recording and waiting), ``rfft`` of 2^20 float32 points, ``linalg.solve``
of one 1024 x 1024 float32 system and ``cholesky``, ``qr``, ``eigh``, ``svd`` of one 256 x 256
(on a GPU also 1024 x 1024) float32 matrix, on ruda_wgpu, NumPy and, where CuPy and an NVIDIA
GPU are present, CuPy (cuFFT, cuSOLVER). GPU sides wait for their work inside the timed call.
On a CPU adapter (lavapipe) 2^24, the 16 rows and the decompositions are left out unless
``--full``. Results go to ``benchmarks/results/wgpu_fft_solve-<device>.json``.

    python3 benchmarks/wgpu_fft_solve.py
    python3 benchmarks/wgpu_fft_solve.py --markdown     # the README's table, from the results files
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

#: the decompositions timed on one 256 x 256 float32 matrix (on a CPU adapter only with --full)
DECOMPOSITIONS = ("cholesky", "qr", "eigh", "svd")


def _cases(full: bool, gpu: bool) -> list[tuple[str, int, int]]:
    """(op, size, rows): ``rows`` transforms of ``size`` points at once, or a matrix of ``size``
    (the decompositions also of 1024 x 1024 on a GPU)."""
    cases = [("fft", 1 << 20, 1), ("fft", 10**6, 1), ("rfft", 1 << 20, 1)]
    if full:
        cases += [("fft", 1 << 24, 1), ("fft", 1 << 20, 16)]
    cases.append(("solve", 1024, 1))
    sizes = (256, 1024) if gpu else (256,) if full else ()
    return cases + [(op, n, 1) for n in sizes for op in DECOMPOSITIONS]


def _data(op: str, n: int, rows: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    if op == "rfft":
        return (rng.standard_normal(n).astype(np.float32),)
    if op == "fft":
        shape = (rows, n) if rows > 1 else (n,)
        return ((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64),)
    a = (rng.standard_normal((n, n)) + n**0.5 * np.eye(n)).astype(np.float32)  # well conditioned
    if op == "cholesky":
        return ((a @ a.T / n).astype(np.float32),)
    if op == "eigh":
        return (((a + a.T) / 2).astype(np.float32),)
    if op in DECOMPOSITIONS:
        return (a,)
    return a, rng.standard_normal(n).astype(np.float32)


def _functions(lib: Any) -> dict[str, Callable[..., object]]:
    """The benchmark's operations in the namespace ``lib`` (ours, NumPy or CuPy)."""
    functions = {"fft": lib.fft.fft, "rfft": lib.fft.rfft, "solve": lib.linalg.solve}
    return functions | {op: getattr(lib.linalg, op) for op in DECOMPOSITIONS}


def main() -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument(
        "--full",
        action="store_true",
        help="2^24 points, 16 x 2^20 and the decompositions also on a CPU adapter",
    )
    parser.add_argument("--repeats", type=int, default=5, help="timed batches per contender (best kept)")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(sorted(RESULTS.glob("wgpu_fft_solve-*.json"))))
        return 0
    dev = xp.__array_namespace_info__().default_device()
    cpu = dev.cpu
    cp = cupy_or_none()
    cases = [
        (
            {"op": op, "dtype": "complex64" if op == "fft" else "float32", "size": n, "rows": rows},
            lambda op=op, n=n, rows=rows: same_operation(
                lambda lib, op=op: _functions(lib)[op], xp, _data(op, n, rows), cp
            ),
        )
        for op, n, rows in _cases(args.full or not cpu, not cpu)
    ]
    rows = time_rows(f"{dev.name} ({dev.description})", cases, args.repeats)
    print(f"device: {dev.name} = {dev.description}" + ("  (CuPy: " + ("yes)" if cp else "not here)")))
    print(markdown_rows(dev.description, rows))
    out = save("wgpu_fft_solve", dev.description, cp is not None, rows)
    print(f"results: {out}")
    return 0


_HEADER = [
    "| device | op | dtype | size | ruda_wgpu ms | NumPy ms | ours/NumPy "
    "| CuPy ms | ours/CuPy | ours/CuPy pipelined |",
    "|---|---|---|---|---|---|---|---|---|---|",
]


def markdown_rows(device: str, rows: list[dict[str, Any]]) -> str:
    """The rows of one device as markdown table lines (without the header)."""
    lines = []
    for r in rows:
        size = f"2^{r['size'].bit_length() - 1}" if r["size"] & (r["size"] - 1) == 0 else f"{r['size']:.0e}"
        if r["op"] == "solve" or r["op"] in DECOMPOSITIONS:
            size = f"{r['size']}x{r['size']}"
        elif r.get("rows", 1) > 1:
            size = f"{r['rows']} x {size}"
        cupy = cupy_cells(r)
        lines.append(
            f"| {device.split(' (')[0]} | {r['op']} | {r['dtype']} | {size} | {r['ruda_wgpu ms']:.3f} "
            f"| {r['numpy ms']:.3f} | {r['ours/numpy']:.2f} | {cupy} |"
        )
    return "\n".join(lines)


def markdown(paths: list[Path]) -> str:
    """One table of every results file."""
    return markdown_table(paths, _HEADER, markdown_rows)


if __name__ == "__main__":
    raise SystemExit(main())
