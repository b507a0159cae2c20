"""How long does a fresh process take to run a 50-operation script, with and without compiled
kernels in the cache from an earlier process?

The script (``SCRIPT`` below) uses 50 different kernels: 30 unary and 15 binary elementwise
functions, sort, argsort, cumulative_sum, max and matmul, each read back at once. It runs in
fresh processes with ``RUDA_CACHE_DIR`` pointing at a temporary folder: once to fill the
adapter verdicts (not timed), then *cold* (the caches of compiled kernels, the programs' lists
of them and wgpu-native's parsed C header emptied before each run), *warm* (the caches as the
previous run left them, so that the script's kernels compile in threads as the device opens:
``ruda_wgpu._preload``) and *warm, no preload* (the same with ``RUDA_WGPU_PRELOAD=0``, each
kernel compiled from the drivers' caches when first used); the two warm kinds run in turns.
Times are wall-clock, from before ``import ruda_wgpu`` to the last result, the fastest of
``--runs`` each, with where that run's time went: importing NumPy and ruda_wgpu, importing
wgpu (whose native backend parses wgpu-native's C header with pycparser; a warm run reads the
parse from ruda's cache), finding the adapters, opening the device (with the first upload),
the first kernel, the other 49. The Vulkan driver starts in a thread as ruda_wgpu is imported
(``ruda_wgpu._vulkan_warmup``): what its start takes beyond the imports shows in "adapters".
Results go to ``benchmarks/results/wgpu_startup-<device>.json``.

Run it where the packages' bytecode is compiled, as ``pip install`` leaves them: with
``PYTHONDONTWRITEBYTECODE`` set and no ``.pyc`` files, every process compiles NumPy, wgpu and
pycparser from source, which adds the same fixed cost to cold and warm runs alike; the
script warns then.

    python3 benchmarks/wgpu_startup.py            # 3 runs each
    python3 benchmarks/wgpu_startup.py --runs 5
    python3 benchmarks/wgpu_startup.py --markdown # the README's table, from the results files
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _gpu_bench import markdown_table, save
from _timing import RESULTS, benchmark_parser
from ruda_wgpu._preload import PRELOAD_ENV
from ruda_wgpu._shader_cache import DRIVER_CACHES

SCRIPT = """
import json, time
marks = [time.perf_counter()]
import numpy as np
import ruda_wgpu as xp
marks.append(time.perf_counter())
from ruda_wgpu import _devices
_devices.load_wgpu()  # what finding the adapters does first (split out to show it)
marks.append(time.perf_counter())
xp.__array_namespace_info__().default_device()
marks.append(time.perf_counter())
x = xp.asarray(np.linspace(0.1, 0.9, 1000, dtype=np.float32))
y = xp.asarray(np.linspace(1.0, 2.0, 1000, dtype=np.float32))
marks.append(time.perf_counter())
np.asarray(xp.log1p(x))
marks.append(time.perf_counter())
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
marks.append(time.perf_counter())
print(json.dumps([b - a for a, b in zip(marks, marks[1:])]))
"""
#: the parts of a run's time, in the order the script marks them
PHASES = ("import", "wgpu", "adapters", "device", "first kernel", "49 more")
#: the runs: no compiled kernels; compiled, with and without the kernels compiled ahead
STATES = ("cold", "warm", "warm, no preload")


def run_script(env: dict[str, str]) -> dict[str, float]:
    """Seconds of each phase of one fresh process, and its total."""
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
    phases = dict(zip(PHASES, json.loads(out.stdout.split("\n")[-2]), strict=True))
    return {**phases, "total": sum(phases.values())}


def main() -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--runs", type=int, default=3, help="runs of each kind; the fastest counts")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(sorted(RESULTS.glob("wgpu_startup-*.json"))))
        return 0
    uncompiled = _uncompiled_packages() if sys.flags.dont_write_bytecode else []
    if uncompiled:
        print(
            f"warning: PYTHONDONTWRITEBYTECODE is set and {', '.join(uncompiled)} have modules without "
            "bytecode: they compile in every process (python3 -m compileall on them first)",
            flush=True,
        )
    folder = Path(tempfile.mkdtemp(prefix="ruda-startup-"))
    env = {k: v for k, v in os.environ.items() if k not in DRIVER_CACHES}
    env["RUDA_CACHE_DIR"] = str(folder)
    try:
        run_script(env)  # adapter verdicts, and a first compile
        runs: dict[str, list[dict[str, float]]] = {state: [] for state in STATES}
        for k in range(args.runs):
            for cache in ("shaders", "preload", "cffi"):
                shutil.rmtree(folder / cache, ignore_errors=True)
            runs["cold"].append(run_script(env))
            print(f"cold run {k + 1}: {runs['cold'][-1]['total']:.3f} s", flush=True)
        for k in range(args.runs):  # in turns, so that a slow spell of the host hits both
            for state, extra in (("warm", {}), ("warm, no preload", {PRELOAD_ENV: "0"})):
                runs[state].append(run_script({**env, **extra}))
                print(f"{state} run {k + 1}: {runs[state][-1]['total']:.3f} s", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    import ruda_wgpu as xp

    dev = xp.__array_namespace_info__().default_device()
    best = {state: min(runs[state], key=lambda run: run["total"]) for state in STATES}
    row: dict[str, Any] = {
        "cold_s": best["cold"]["total"],
        "warm_s": best["warm"]["total"],
        "cold/warm": best["cold"]["total"] / best["warm"]["total"],
        "cold/warm, no preload": best["cold"]["total"] / best["warm, no preload"]["total"],
    }
    row.update({f"{state} phases_s": best[state] for state in STATES})
    print(
        f"{dev.description}: 50-operation script in a fresh process, cold cache {row['cold_s']:.3f} s, "
        f"warm cache {row['warm_s']:.3f} s: {row['cold/warm']:.1f} times faster warm "
        f"({row['cold/warm, no preload']:.1f} without preloading)"
    )
    print(f"results: {save('wgpu_startup', dev.description, False, [row])}")
    return 0


def _uncompiled_packages() -> list[str]:
    """The packages the script imports that have modules without bytecode, with how many."""
    found = []
    for name in ("numpy", "wgpu", "cffi", "pycparser", "ruda", "ruda_wgpu"):
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        sources = list(Path(spec.origin).parent.rglob("*.py"))
        missing = sum(not Path(importlib.util.cache_from_source(str(p))).exists() for p in sources)
        if missing:
            found.append(f"{name} ({missing} of {len(sources)})")
    return found


def markdown(paths: list[Path]) -> str:
    """The README's table: per device and cache state, the total and its phases, in seconds."""
    header = [
        "| device | cache | total s | " + " | ".join(PHASES) + " | cold / warm |",
        "|---|---|---|" + "---|" * len(PHASES) + "---|",
    ]
    return markdown_table(paths, header, _device_rows)


def _device_rows(device: str, rows: list[dict[str, Any]]) -> str:
    """One device's cold and warm lines of :func:`markdown`."""
    row, lines = rows[0], []
    for state in STATES:
        phases = row[f"{state} phases_s"]
        ratio = f"{row['cold/' + state]:.1f}" if state != "cold" else ""
        cells = " | ".join(f"{phases[p]:.3f}" for p in PHASES)
        lines.append(f"| {device.split(' (')[0]} | {state} | {phases['total']:.2f} | {cells} | {ratio} |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
