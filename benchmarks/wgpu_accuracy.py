"""How accurate are ruda_wgpu's float32 and float64 functions? Worst error in ulp, per function.

Each function runs on ``ruda.testing.sweep_values`` (every binade, subnormals, huge
arguments, values near multiples of pi/2, special values; 40 000 values) on the default
WebGPU device. The reference is NumPy's result in float64 (rounded to float32 for float32: the
error then includes that rounding, at most half an ulp). The worst error over the sweep, in
units in the last place of the reference, goes to
``benchmarks/results/wgpu_accuracy-<dtype>-<device>.json``. ``logaddexp`` is measured in ulp of
its larger argument (its result cancels where the arguments have opposite sizes).

    python3 benchmarks/wgpu_accuracy.py                  # float32, and float64 where the device has it
    python3 benchmarks/wgpu_accuracy.py --dtype float64
    python3 benchmarks/wgpu_accuracy.py --markdown      # the README's table, from the results files
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import ruda_wgpu as xp
from _timing import RESULTS, benchmark_parser, device_slug, write_results
from rich.progress import track
from ruda.testing import MATH_BINARY, MATH_UNARY, NUMPY_NAMES, sweep_values, ulp_error

UNARY, BINARY = list(MATH_UNARY), list(MATH_BINARY)


def measure(dtype: str) -> dict[str, dict[str, object]]:
    """The worst error of every function on ``dtype`` over the sweep, and where it is."""
    x = sweep_values(np.dtype(dtype), 40000, seed=0)
    y = sweep_values(np.dtype(dtype), 40000, seed=1)[: x.size]
    y[::5] = np.round(y[::5])
    rows: dict[str, dict[str, object]] = {}
    for name in track(UNARY + BINARY, description=dtype, transient=True):
        args = (x,) if name in UNARY else (np.abs(x) if name == "pow" else x, np.clip(y, -400, 400))
        with np.errstate(all="ignore"):
            want = getattr(np, NUMPY_NAMES.get(name, name))(*(a.astype(np.float64) for a in args))
            want = want.astype(dtype)
        got = np.asarray(getattr(xp, name)(*(xp.asarray(a) for a in args)))
        scale = np.maximum(np.abs(args[0]), np.abs(args[1])) if name == "logaddexp" else None
        err = ulp_error(got, want, scale)
        worst = int(np.argmax(err))
        rows[name] = {"worst_ulp": float(err[worst]), "at": [float(a[worst]) for a in args]}
    return rows


def main() -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--dtype", choices=["float32", "float64"], action="append", help="default: both")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(sorted(RESULTS.glob("wgpu_accuracy-*.json"))))
        return 0
    info = xp.__array_namespace_info__()
    dev = info.default_device()
    dtypes = args.dtype or [d for d in ("float32", "float64") if d in info.dtypes()]
    for dtype in dtypes:
        if dtype not in info.dtypes():
            print(f"{dev.name} ({dev.description}) has no {dtype} (shader-f64 and shader-int64 are needed)")
            return 1
        rows = measure(dtype)
        print(f"device: {dev.name} = {dev.description}, {dtype}")
        for name, row in rows.items():
            at = ", ".join(f"{a:.17g}" for a in row["at"])  # type: ignore[attr-defined]
            print(f"{name:10} {row['worst_ulp']:5.1f} ulp  (at {at})")
        report = {"device": dev.description, "dtype": dtype, "values": 40000, "functions": rows}
        print(f"results: {write_results(f'wgpu_accuracy-{dtype}-{device_slug(dev.description)}', report)}")
    return 0


def markdown(paths: list[Path]) -> str:
    """The README's table: worst ulp per function (rows) and per dtype and device (columns)."""
    runs = sorted((json.loads(p.read_text()) for p in paths), key=lambda r: (r["dtype"], r["device"]))
    heads = [f"{run['dtype']} {run['device'].split(' (')[0]}" for run in runs]
    lines = ["| function | " + " | ".join(heads) + " |", "|---|" + "---|" * len(runs)]
    for name in UNARY + BINARY:
        worst = [run["functions"].get(name, {}).get("worst_ulp") for run in runs]
        cells = ["—" if ulp is None else f"{ulp:.1f}" for ulp in worst]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
