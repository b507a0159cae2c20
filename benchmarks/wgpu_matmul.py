"""How fast is ruda_wgpu's matmul?

Times, in this process and on the same data, square float32 matmuls of 1024, 2048 and 4096 (and
float64 and complex64 at 2048 and float16 at 4096; NumPy sits out float16, which it multiplies
without BLAS, for minutes at that size), and three products of other shapes (:data:`SHAPED`: the
Gram matrix ``x.T @ x`` of a tall x, ``x @ w.T``, a dot product), on ruda_wgpu, NumPy and, where
CuPy and an NVIDIA GPU are present, CuPy (cuBLAS; CuPy leaves TF32 off unless CUPY_TF32=1 is set,
and this script refuses to run with it). Every side gets the same views (transposed operands are not
copied first). GPU sides wait for their work inside the timed call. On a CPU adapter (lavapipe) only
1024 and smaller shaped cases run unless ``--full``. Results go to
``benchmarks/results/wgpu_matmul-<device>.json``, with TFLOP/s per contender.

    python3 benchmarks/wgpu_matmul.py
    python3 benchmarks/wgpu_matmul.py --markdown     # the README's table, from the results files
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ruda_wgpu as xp
from _gpu_bench import cupy_or_none, markdown_table, save, time_rows, waiting
from _timing import RESULTS, benchmark_parser

#: the products of other shapes: (name, shapes of the two arrays, the same smaller for a CPU
#: adapter without ``--full``, the product of two arrays x and y of those shapes, its flops)
Shapes = tuple[tuple[int, ...], ...]
SHAPED: list[tuple[str, Shapes, Shapes, Callable[[Any, Any], Any], Callable[[Shapes], int]]] = [
    (
        "x.T @ x",
        ((100000, 64),) * 2,
        ((20000, 64),) * 2,
        lambda x, y: x.T @ x,
        lambda s: 2 * s[0][0] * s[0][1] ** 2,
    ),
    (
        "x @ w.T",
        ((4096, 1024), (1024, 1024)),
        ((512, 512), (512, 512)),
        lambda x, y: x @ y.T,
        lambda s: 2 * s[0][0] * s[0][1] * s[1][0],
    ),
    ("dot", ((10**7,),) * 2, ((10**6,),) * 2, lambda x, y: x @ y, lambda s: 2 * s[0][0]),
]


def _contenders(
    shapes: Shapes, dtype: str, product: Callable[[Any, Any], Any], cp: Any
) -> dict[str, Callable[[], object]]:
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(shape) for shape in shapes)
    if np.dtype(dtype).kind == "c":
        a, b = (x + 1j * rng.standard_normal(x.shape) for x in (a, b))
    a, b = a.astype(dtype), b.astype(dtype)
    xa, xb = xp.asarray(a), xp.asarray(b)
    out: dict[str, Callable[[], object]] = {"ruda_wgpu": waiting(lambda: product(xa, xb), xp.synchronize)}
    if dtype != "float16":
        out["numpy"] = lambda: product(a, b)
    if cp is not None:
        ca, cb = cp.asarray(a), cp.asarray(b)
        out["cupy"] = waiting(lambda: product(ca, cb), cp.cuda.Device().synchronize)
    return out


def _square(x: Any, y: Any) -> Any:
    return x @ y


def main() -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--full", action="store_true", help="every size also on a CPU adapter")
    parser.add_argument("--repeats", type=int, default=3, help="timed batches per contender (best kept)")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(sorted(RESULTS.glob("wgpu_matmul-*.json"))))
        return 0
    if os.environ.get("CUPY_TF32", "0") != "0":
        parser.error("CUPY_TF32 is set: CuPy would multiply float32 at TF32 precision")
    dev = xp.__array_namespace_info__().default_device()
    cpu = dev.cpu
    cases = [(1024, "float32")]
    if args.full or not cpu:
        cases += [(2048, "float32"), (4096, "float32")]
        if "float64" in xp.__array_namespace_info__().dtypes():
            cases.append((2048, "float64"))
        cases += [(2048, "complex64"), (4096, "float16")]  # (CuPy's float16: on tensor cores)
    cp = cupy_or_none()
    timed = [
        ({"dtype": dt, "size": n}, lambda n=n, dt=dt: _contenders(((n, n), (n, n)), dt, _square, cp))
        for n, dt in cases
    ]
    flops = [(8 if dt.startswith("complex") else 2) * n**3 for n, dt in cases]  # (real flops)
    for name, full, small, product, count in SHAPED:
        shapes = full if args.full or not cpu else small
        described = {
            "dtype": "float32",
            "size": name + " " + " and ".join("x".join(map(str, s)) for s in shapes),
        }
        timed.append((described, lambda s=shapes, p=product: _contenders(s, "float32", p, cp)))
        flops.append(count(shapes))
    rows = time_rows(f"{dev.name} ({dev.description})", timed, args.repeats)
    for r, f in zip(rows, flops, strict=True):
        for who in ("ruda_wgpu", "numpy", "cupy"):
            if f"{who} ms" in r:
                r[f"{who} TFLOP/s"] = f / (r[f"{who} ms"] * 1e-3) / 1e12
    print(f"device: {dev.name} = {dev.description}" + ("  (CuPy: " + ("yes)" if cp else "not here)")))
    print(markdown_rows(dev.description, rows))
    out = save("wgpu_matmul", dev.description, cp is not None, rows)
    print(f"results: {out}")
    return 0


_HEADER = [
    "| device | dtype | n, or product | ruda_wgpu ms | TFLOP/s | NumPy ms | ours/NumPy | CuPy ms"
    " | CuPy TFLOP/s | CuPy ms / ours ms |",
    "|---|---|---|---|---|---|---|---|---|---|",
]


def markdown_rows(device: str, rows: list[dict[str, Any]]) -> str:
    """The rows of one device as markdown table lines (without the header)."""
    lines = []
    for r in rows:
        cupy = (
            f"{r['cupy ms']:.3f} | {r['cupy TFLOP/s']:.1f} | {1 / r['ours/cupy']:.2f}"
            if "cupy ms" in r
            else "— | — | —"
        )
        numpy = f"{r['numpy ms']:.3f} | {r['ours/numpy']:.2f}" if "numpy ms" in r else "— | —"
        lines.append(
            f"| {device.split(' (')[0]} | {r['dtype']} | {r['size']} | {r['ruda_wgpu ms']:.3f} "
            f"| {r['ruda_wgpu TFLOP/s']:.2f} | {numpy} | {cupy} |"
        )
    return "\n".join(lines)


def markdown(paths: list[Path]) -> str:
    """One table of every results file."""
    return markdown_table(paths, _HEADER, markdown_rows)


if __name__ == "__main__":
    raise SystemExit(main())
