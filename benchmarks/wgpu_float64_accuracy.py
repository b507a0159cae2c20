"""How accurate are ruda_wgpu's float64 functions? Worst error in ulp against NumPy, per function.

Each function runs on ``ruda.testing.sweep_values`` (every binade, subnormals, huge
arguments, values near multiples of pi/2, special values; 40 000 values) on the default
WebGPU device; the worst error over the sweep, in units in the last place of NumPy's result,
goes to ``benchmarks/results/wgpu_float64_accuracy-<device>.json``. ``logaddexp`` is measured
in ulp of its larger argument (its result cancels where the arguments have opposite sizes).

    python3 benchmarks/wgpu_float64_accuracy.py
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import numpy as np

if not os.environ.get("XDG_RUNTIME_DIR"):
    os.environ["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="ruda-wgpu-xdg-")

import ruda_wgpu as xp
from rich.progress import track
from ruda.testing import NUMPY_NAMES, sweep_values, ulp_error

RESULTS = Path(__file__).resolve().parent / "results"
UNARY = ["exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan",
         "sinh", "cosh", "tanh", "asinh", "acosh", "atanh"]  # fmt: skip
BINARY = ["divide", "pow", "atan2", "hypot", "logaddexp"]


def main() -> int:
    dev = xp.__array_namespace_info__().default_device()
    if "float64" not in xp.__array_namespace_info__().dtypes():
        print(f"{dev.name} ({dev.description}) has no float64 (shader-f64 and shader-int64 are needed)")
        return 1
    x = sweep_values(np.float64, 40000, seed=0)
    y = sweep_values(np.float64, 40000, seed=1)[: x.size]
    y[::5] = np.round(y[::5])
    rows = {}
    for name in track(UNARY + BINARY, description=f"{dev.name} ({dev.description})", transient=True):
        args = (x,) if name in UNARY else (np.abs(x) if name == "pow" else x, np.clip(y, -400, 400))
        with np.errstate(all="ignore"):
            want = getattr(np, NUMPY_NAMES.get(name, name))(*args)
        got = np.asarray(getattr(xp, name)(*(xp.asarray(a) for a in args)))
        scale = np.maximum(np.abs(args[0]), np.abs(args[1])) if name == "logaddexp" else None
        err = ulp_error(got, want, scale)
        worst = int(np.argmax(err))
        rows[name] = {"worst_ulp": float(err[worst]), "at": [float(a[worst]) for a in args]}
    print(f"device: {dev.name} = {dev.description}")
    for name, row in rows.items():
        print(f"{name:10} {row['worst_ulp']:5.1f} ulp  (at {', '.join(f'{a:.17g}' for a in row['at'])})")
    slug = re.sub(r"[^a-z0-9]+", "-", dev.description.split(" (")[0].lower()).strip("-")
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"wgpu_float64_accuracy-{slug}.json"
    report = {"device": dev.description, "values": int(x.size), "functions": rows}
    out.write_text(json.dumps(report, indent=1))
    print(f"results: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
