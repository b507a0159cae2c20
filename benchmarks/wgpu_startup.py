"""How long does a fresh process take to run a 50-operation script, with and without compiled
kernels in the cache from an earlier process?

The script (``SCRIPT`` below) uses 50 different kernels: 30 unary and 15 binary elementwise
functions, sort, argsort, cumulative_sum, max and matmul, each read back at once. It runs in
fresh processes with ``RUDA_CACHE_DIR`` pointing at a temporary folder: once to fill the
adapter verdicts (not timed), then *cold* (the compiled-kernel cache emptied before each run)
and *warm* (the cache as the previous run left it). Times are wall-clock, from before
``import ruda_wgpu`` to the last result, the fastest of ``--runs`` each.

    python3 benchmarks/wgpu_startup.py            # 3 runs each
    python3 benchmarks/wgpu_startup.py --runs 5
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _gpu_bench import save
from ruda_wgpu._shader_cache import DRIVER_CACHES

SCRIPT = """
import time
start = time.perf_counter()
import numpy as np
import ruda_wgpu as xp
x = xp.asarray(np.linspace(0.1, 0.9, 1000, dtype=np.float32))
y = xp.asarray(np.linspace(1.0, 2.0, 1000, dtype=np.float32))
unary = ["exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos",
         "atan", "sinh", "cosh", "tanh", "asinh", "atanh", "abs", "negative", "square", "sign", "floor",
         "ceil", "round", "trunc", "reciprocal", "isnan", "isfinite", "signbit"]
binary = ["add", "subtract", "multiply", "divide", "pow", "atan2", "hypot", "maximum", "minimum",
          "logaddexp", "copysign", "remainder", "floor_divide", "less", "greater"]
for name in unary:
    np.asarray(getattr(xp, name)(x))
for name in binary:
    np.asarray(getattr(xp, name)(x, y))
np.asarray(xp.sort(x))
np.asarray(xp.argsort(y))
np.asarray(xp.cumulative_sum(x))
np.asarray(xp.max(x))
np.asarray(xp.reshape(x, (10, 100)) @ xp.reshape(y, (100, 10)))
print(time.perf_counter() - start)
"""


def run_script(env: dict[str, str]) -> float:
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="runs of each kind; the fastest counts")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="ruda-startup-"))
    env = {k: v for k, v in os.environ.items() if k not in DRIVER_CACHES}
    env["RUDA_CACHE_DIR"] = str(folder)
    try:
        run_script(env)  # adapter verdicts, and a first compile
        cold, warm = [], []
        for k in range(args.runs):
            shutil.rmtree(folder / "shaders", ignore_errors=True)
            cold.append(run_script(env))
            print(f"cold run {k + 1}: {cold[-1]:.3f} s", flush=True)
        for k in range(args.runs):
            warm.append(run_script(env))
            print(f"warm run {k + 1}: {warm[-1]:.3f} s", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    import ruda_wgpu as xp

    dev = xp.__array_namespace_info__().default_device()
    row = {"cold_s": min(cold), "warm_s": min(warm), "cold/warm": min(cold) / min(warm)}
    print(
        f"{dev.description}: 50-operation script in a fresh process, cold cache {row['cold_s']:.3f} s, "
        f"warm cache {row['warm_s']:.3f} s: {row['cold/warm']:.1f} times faster warm"
    )
    print(f"results: {save('wgpu_startup', dev.description, False, [row])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
