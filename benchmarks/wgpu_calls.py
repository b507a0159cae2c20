"""What does one call of a common operation cost the host, on arrays small enough that the GPU
is not what bounds it?

Elementwise operations, the 8-operation chain, reductions, ``var`` and ``std``, centring by a
mean, a matrix times a vector, a dot product and a vector norm, on float32 arrays of 4096
elements, 1000 x 16 or 256 x 256. Each contender makes rounds of 20 calls, dropping each
result as the next comes (a loop's pattern: the pool hands its buffers back), and waits for the
device after each round, untimed: the time a call costs the calling thread, the best round of
40, the contenders' rounds in turns so that a slow spell of the host hits them alike. A
ruda_wgpu call is timed with its pending kernels recorded into the batch (``run_pending``, as
reading the result or a reduction of it would), so a lazy result costs its launch too. CuPy,
where it and an NVIDIA GPU are present, queues its kernels the same way (its own per-call
cost); NumPy computes. ``dispatches`` is ruda_wgpu's kernels a call (fused chains count once).
Results go to ``benchmarks/results/wgpu_calls-<device>.json``.

    python3 benchmarks/wgpu_calls.py
    python3 benchmarks/wgpu_calls.py --markdown   # the README's table, from the results files
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from rich.progress import Progress

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ruda_wgpu as xp
from _chain import chain
from _gpu_bench import cupy_or_none, markdown_table, save
from _timing import RESULTS, benchmark_parser

#: calls a round, and rounds (the best counts)
CALLS, ROUNDS = 20, 40

#: (operation, shape of its data, the call on namespace ns and data d)
CASES: list[tuple[str, str, Callable[[Any, dict[str, Any]], Any]]] = [
    ("x + y", "4096", lambda ns, d: d["x"] + d["y"]),
    ("exp(x)", "4096", lambda ns, d: ns.exp(d["x"])),
    ("8-operation chain", "4096", lambda ns, d: chain(ns, d["x"], d["y"])),
    ("sum(x)", "4096", lambda ns, d: ns.sum(d["x"])),
    ("mean(x)", "4096", lambda ns, d: ns.mean(d["x"])),
    ("var(x)", "4096", lambda ns, d: ns.var(d["x"])),
    ("sum(m, axis=0)", "1000x16", lambda ns, d: ns.sum(d["m"], axis=0)),
    ("max(m, axis=1)", "1000x16", lambda ns, d: ns.max(d["m"], axis=1)),
    ("std(m, axis=0)", "1000x16", lambda ns, d: ns.std(d["m"], axis=0)),
    ("m - mean(m, axis=0)", "1000x16", lambda ns, d: d["m"] - ns.mean(d["m"], axis=0, keepdims=True)),
    ("a @ v", "256x256", lambda ns, d: d["a"] @ d["v"]),
    ("v @ v", "256", lambda ns, d: d["v"] @ d["v"]),
    ("vector_norm(x)", "4096", lambda ns, d: ns.linalg.vector_norm(d["x"])),
]


def _data(ns: Any, rng: np.random.Generator) -> dict[str, Any]:
    """The arrays every case reads, made by ``ns.asarray`` from one set of host arrays."""
    host = {
        "x": rng.standard_normal(4096),
        "y": rng.standard_normal(4096),
        "m": rng.standard_normal((1000, 16)),
        "a": rng.standard_normal((256, 256)) / 16,
        "v": rng.standard_normal(256),
    }
    return {name: ns.asarray(values.astype(np.float32)) for name, values in host.items()}


def _namespaces() -> dict[str, tuple[Any, Callable[[], object]]]:
    """The contenders' array-API namespaces, each with the call that waits for its device."""
    import array_api_compat.numpy as anp

    out: dict[str, tuple[Any, Callable[[], object]]] = {
        "ruda_wgpu": (xp, xp.synchronize),
        "numpy": (anp, lambda: None),
    }
    if cupy_or_none() is not None:
        import array_api_compat.cupy as acp
        import cupy

        out["cupy"] = (acp, cupy.cuda.Device().synchronize)
    return out


def _launched(call: Callable[[], Any]) -> Callable[[], Any]:
    """``call``, then its pending kernels recorded into the device's batch (not submitted)."""
    dev = xp.__array_namespace_info__().default_device()

    def launched() -> Any:
        result = call()
        dev.run_pending()
        return result

    return launched


def _round(call: Callable[[], Any], wait: Callable[[], object]) -> float:
    """Seconds a call of ``call`` took in a round of :data:`CALLS` (each result dropped as the
    next comes), then a wait for the device, untimed."""
    start = time.perf_counter()
    for _ in range(CALLS):
        result = call()
    seconds = (time.perf_counter() - start) / CALLS
    del result
    wait()
    return seconds


def measure() -> list[dict[str, Any]]:
    """A row per case: microseconds a call per contender, ruda_wgpu's dispatches a call, and
    the ratios to NumPy and CuPy."""
    namespaces = _namespaces()
    data = {name: _data(ns, np.random.default_rng(0)) for name, (ns, _) in namespaces.items()}
    rows = []
    with Progress(transient=True) as progress:
        task = progress.add_task("calls", total=len(CASES))
        for operation, shape, case in CASES:
            progress.update(task, description=operation)
            calls = {name: functools.partial(case, ns, data[name]) for name, (ns, _) in namespaces.items()}
            calls["ruda_wgpu"] = _launched(calls["ruda_wgpu"])
            for name, call in calls.items():  # plans, compiled kernels, logged dispatches
                for _ in range(3):
                    _round(call, namespaces[name][1])
            before = xp.memory_stats()["dispatches"]
            _round(calls["ruda_wgpu"], xp.synchronize)
            dispatches = (xp.memory_stats()["dispatches"] - before) / CALLS
            best = dict.fromkeys(calls, float("inf"))
            for _ in range(ROUNDS):
                for name, call in calls.items():
                    best[name] = min(best[name], _round(call, namespaces[name][1]))
            row: dict[str, Any] = {"operation": operation, "shape": shape, "dispatches": dispatches}
            row.update({f"{name} us": seconds * 1e6 for name, seconds in best.items()})
            row["ours/numpy"] = best["ruda_wgpu"] / best["numpy"]
            if "cupy" in best:
                row["ours/cupy"] = best["ruda_wgpu"] / best["cupy"]
            rows.append(row)
            progress.advance(task)
    return rows


def main() -> int:
    parser = benchmark_parser(__doc__)
    args = parser.parse_args()
    if args.markdown:
        print(markdown(sorted(RESULTS.glob("wgpu_calls-*.json"))))
        return 0
    dev = xp.__array_namespace_info__().default_device()
    rows = measure()
    for r in rows:
        line = f"{r['operation']:>20} {r['shape']:>8}: ours {r['ruda_wgpu us']:.1f} us"
        line += f" ({r['dispatches']:g} kernels), NumPy {r['numpy us']:.1f} us"
        if "cupy us" in r:
            line += f", CuPy {r['cupy us']:.1f} us (ours/CuPy {r['ours/cupy']:.2f})"
        print(line)
    print(f"results: {save('wgpu_calls', dev.description, 'cupy us' in rows[0], rows)}")
    return 0


def markdown(paths: list[Path]) -> str:
    """One table of every results file: a row per device and operation."""
    header = [
        "| device | operation | shape | ruda_wgpu us | kernels | NumPy us | ours/NumPy | CuPy us "
        "| ours/CuPy |",
        "|---|---|---|---|---|---|---|---|---|",
    ]

    def rows(device: str, found: list[dict[str, Any]]) -> str:
        def cupy(r: dict[str, Any]) -> str:
            return f"{r['cupy us']:.1f} | {r['ours/cupy']:.2f}" if "cupy us" in r else "— | —"

        return "\n".join(
            f"| {device.split(' (')[0]} | `{r['operation']}` | {r['shape']} | {r['ruda_wgpu us']:.1f} "
            f"| {r['dispatches']:g} | {r['numpy us']:.1f} | {r['ours/numpy']:.2f} | {cupy(r)} |"
            for r in found
        )

    return markdown_table(paths, header, rows)


if __name__ == "__main__":
    raise SystemExit(main())
