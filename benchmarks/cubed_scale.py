"""What does a GPU backend buy under Cubed, and how does Cubed on ruda.host scale with workers?

Cubed (through ``ruda.scale``) runs two workloads chunk by chunk, with every intermediate stored
in Zarr: a chunked matmul, 4096 x k times k x 4096 (float32, random inputs), summed over its
rows; and a large reduction, ``sum(sin(x) * x, axis=0)`` over a tall float32 array. Each runs on
ruda_cuda and ruda_wgpu and on NumPy (Cubed's own default backend) with the same executor, and
the ratio is backend seconds / NumPy seconds (below 1: the backend is faster). Then the reduction
runs on ruda.host with the processes executor at 1, 2, 4 and 8 workers (speed-up over 1 worker).

Cubed reads its backend when it is imported, so each measurement runs in a child interpreter of
this script; the children run one after another, the NumPy reference just before the backends
it is compared with, and each keeps the best of ``--repeats`` computations after one warm-up on
a small case. Every backend's result is checked against NumPy's (same seeds). Backends that
cannot run here are skipped with the reason. Results go to
``benchmarks/results/cubed_scale-<machine>.json`` with a plot beside.

    python3 benchmarks/cubed_scale.py              # full sizes (a GPU machine; minutes)
    python3 benchmarks/cubed_scale.py --quick      # small sizes: about a minute on a laptop CPU
    python3 benchmarks/cubed_scale.py --markdown   # the README's tables, from the results files
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _timing import RESULTS, benchmark_parser, write_results

#: sizes per mode: matmul (m = n, k values, chunk) and reduction (rows, columns, rows per chunk)
SIZES: dict[str, dict[str, Any]] = {
    "full": {"m": 4096, "k": [4096, 16384], "chunk": 2048, "rows": 65536, "cols": 4096, "row_chunk": 4096},
    "quick": {"m": 512, "k": [512, 2048], "chunk": 256, "rows": 16384, "cols": 512, "row_chunk": 2048},
}


# -- the child: one backend, one workload, timed -----------------------------------------------------


def _workload(xp: Any, cubed: Any, case: dict[str, Any], scale: float) -> Any:
    """The lazy result of ``case``'s workload; ``scale`` < 1 shrinks it (the warm-up)."""
    random.seed(0)  # Cubed seeds its random chunks from Python's generator: the same data every run
    if case["workload"] == "matmul":
        m, k, c = (max(case["chunk"] // 4, int(case[key] * scale)) for key in ("m", "k", "chunk"))
        a = cubed.random.random((m, k), dtype=xp.float32, chunks=(c, c))
        b = cubed.random.random((k, m), dtype=xp.float32, chunks=(c, c))
        return xp.sum(a @ b, axis=0)
    rows, cols, rc = (max(8, int(case[key] * scale)) for key in ("rows", "cols", "row_chunk"))
    x = cubed.random.random((rows, cols), dtype=xp.float32, chunks=(rc, cols))
    return xp.sum(xp.sin(x) * x, axis=0)


def child(case: dict[str, Any]) -> None:
    """Measure ``case`` in this (fresh) interpreter and print one ``RESULT`` line of JSON."""
    import numpy as np
    import ruda

    backend: Any = np if case["backend"] == "numpy" else case["backend"]
    xp = ruda.scale(
        backend, executor=case["executor"], allowed_mem=case["allowed_mem"], max_workers=case["workers"]
    )
    import cubed

    np.asarray(_workload(xp, cubed, case, 1 / 8).compute())  # warm-up: imports, kernels, pools
    times, result = [], None
    for _ in range(case["repeats"]):
        lazy = _workload(xp, cubed, case, 1.0)
        start = time.perf_counter()
        result = np.asarray(lazy.compute())  # the result back on the host: the whole computation
        times.append(time.perf_counter() - start)
    assert result is not None
    out = {"seconds": min(times), "times": times, "checksum": float(np.sum(result, dtype=np.float64))}
    print("RESULT " + json.dumps(out), flush=True)


def run_child(case: dict[str, Any], timeout: float) -> dict[str, Any]:
    """``case`` measured in a child interpreter: its result, or ``{"error": ...}``."""
    env = {k: v for k, v in os.environ.items() if k != "CUBED_BACKEND_ARRAY_API_MODULE"}
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--child", json.dumps(case)],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout:.0f} s"}
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            result: dict[str, Any] = json.loads(line.removeprefix("RESULT "))
            return result
    last = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": last[:300]}


# -- the parent: which backends, the cases, the files ------------------------------------------------


def gpu_backends() -> tuple[list[str], str]:
    """The GPU backends that run here (others skipped with a message), and the machine's name."""
    import ruda

    rows = {b.name: b for b in ruda.backends()}
    found, gpu = [], ""
    for name in ("cuda", "wgpu"):
        row = rows.get(name)
        if row is None or not row.available:
            print(f"{name}: skipped ({row.reason if row else 'not installed'})")
            continue
        found.append(name)
        if name == "cuda" and not gpu:
            gpu = str(row.details.get("cuda:0", "")) or "CUDA GPU"
        if name == "wgpu" and not gpu:
            gpu = str(ruda.namespace("wgpu").__array_namespace_info__().default_device().description)
    cores = os.cpu_count() or 1
    return found, f"{gpu or platform.processor() or 'CPU'}, {cores} cores".strip(", ")


def measure(args: argparse.Namespace) -> tuple[dict[str, Any], Path]:
    """Every case measured, the results file written after each (a run cut short keeps them)."""
    from rich.progress import Progress

    size = SIZES["quick" if args.quick else "full"]
    backends, machine = gpu_backends()
    slug = re.sub(r"[^a-z0-9]+", "-", machine.lower()).strip("-") + ("-quick" if args.quick else "")
    name = f"cubed_scale-{slug}"
    out = RESULTS / f"{name}.json"
    comparison: list[dict[str, Any]] = []
    scaling: list[dict[str, Any]] = []
    data = {"machine": machine, "quick": args.quick, "comparison": comparison, "scaling": scaling}
    if args.part != "all" and out.exists():  # keep the other part's figures from an earlier run
        kept = json.loads(out.read_text())
        other = "scaling" if args.part == "backends" else "comparison"
        data[other] = kept.get(other, [])
    if args.part == "scaling":
        backends = []
    workers = [int(w) for w in args.workers.split(",")]
    base = {"executor": args.executor, "workers": args.gpu_workers, "repeats": args.repeats}
    base["allowed_mem"] = args.allowed_mem
    cases = [{**base, **size, "workload": "matmul", "k": k} for k in size["k"]]
    cases.append({**base, **size, "workload": "reduction"})
    if args.part == "scaling":
        cases = cases[-1:]  # the reduction, whose size the scaling curve takes
    if args.part == "backends":
        workers = []
    total = len(cases) * (1 + len(backends)) * (args.part != "scaling") + len(workers)
    with Progress(transient=True) as progress:
        task = progress.add_task("Cubed", total=total)
        for case in cases if args.part != "scaling" else []:
            label = _label(case)
            row: dict[str, Any] = {"workload": label, "executor": f"{args.executor} x{args.gpu_workers}"}
            for backend in ("numpy", *backends):
                progress.update(task, description=f"{label} on {backend}")
                got = run_child({**case, "backend": backend}, args.timeout)
                row[backend] = got
                if "error" in got:
                    print(f"{label} on {backend}: {got['error']}")
                progress.advance(task)
            ref = row["numpy"]
            for backend in backends:
                got = row[backend]
                if "seconds" in got and "seconds" in ref:
                    row[f"{backend}/numpy"] = got["seconds"] / ref["seconds"]
                    close = abs(got["checksum"] - ref["checksum"]) <= 1e-3 * abs(ref["checksum"]) + 1e-3
                    row[f"{backend} matches numpy"] = close
            comparison.append(row)
            write_results(name, data)
        reduction = cases[-1]
        for w in workers:
            progress.update(task, description=f"{_label(reduction)} on host, {w} processes")
            case = {**reduction, "backend": "host", "executor": "processes", "workers": w}
            got = run_child(case, args.timeout)
            if "error" in got:
                print(f"host with {w} processes: {got['error']}")
            scaling.append({"workers": w, **got})
            one = next((r["seconds"] for r in scaling if r["workers"] == workers[0] and "seconds" in r), None)
            for r in scaling:
                if one is not None and "seconds" in r:
                    r["speed-up"] = one / r["seconds"]
            write_results(name, data)
            progress.advance(task)
    return data, out


def _label(case: dict[str, Any]) -> str:
    if case["workload"] == "matmul":
        return f"matmul {case['m']}x{case['m']}x{case['k']} (chunks {case['chunk']})"
    return f"sum(sin(x)*x, axis=0) of {case['rows']}x{case['cols']} (chunks {case['row_chunk']} rows)"


def markdown(data: dict[str, Any]) -> str:
    """The two tables of one results file."""
    lines = [f"**{data['machine']}**{' (--quick)' if data['quick'] else ''}", ""]
    backends = [b for b in ("cuda", "wgpu") if any(b in r for r in data["comparison"])]
    head = " | ".join(f"ruda_{b} s | ruda_{b}/numpy" for b in backends)
    lines.append(f"| workload | executor | numpy s | {head} |")
    lines.append("|" + "---|" * (3 + 2 * len(backends)))
    for r in data["comparison"]:
        cells = [r["workload"], r["executor"], _seconds(r["numpy"])]
        for b in backends:
            ratio = f"{r[f'{b}/numpy']:.2f}" if f"{b}/numpy" in r else "—"
            if r.get(f"{b} matches numpy") is False:
                ratio += " (result differs)"
            cells += [_seconds(r[b]), ratio]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "| ruda.host, processes | seconds | speed-up over 1 |", "|---|---|---|"]
    for r in data["scaling"]:
        speed = f"{r['speed-up']:.2f}" if "speed-up" in r else "—"
        lines.append(f"| {r['workers']} workers | {_seconds(r)} | {speed} |")
    return "\n".join(lines)


def _seconds(result: dict[str, Any]) -> str:
    return f"{result['seconds']:.2f}" if "seconds" in result else f"failed: {result.get('error', '?')[:60]}"


def plot(data: dict[str, Any], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib is not installed: no plot (the figures are in {path.with_suffix('.json')})")
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    names = ["numpy", "cuda", "wgpu"]
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        ys = [r.get(name, {}).get("seconds", 0.0) for r in data["comparison"]]
        xs = [j + (i - 1) * width for j in range(len(ys))]
        left.bar(xs, ys, width, label="numpy" if name == "numpy" else f"ruda_{name}")
    left.set_xticks(range(len(data["comparison"])))
    names = [r["workload"].split(" (")[0] for r in data["comparison"]]
    short = [name.replace("sum(sin(x)*x, axis=0) of", "sum") for name in names]
    left.set_xticklabels([label.replace(" ", "\n", 1) for label in short], fontsize=7)
    left.set_ylabel("seconds (best)")
    executor = data["comparison"][0]["executor"] if data["comparison"] else "no"
    left.set_title(f"Cubed backends, {executor} executor", fontsize=9)
    left.legend(fontsize=8)
    points = [r for r in data["scaling"] if "speed-up" in r]
    if points:
        xs = [r["workers"] for r in points]
        right.plot(xs, [r["speed-up"] for r in points], marker="o", label="ruda.host")
        right.plot(xs, [x / xs[0] for x in xs], linestyle="--", color="grey", label="ideal")
        right.set_xscale("log", base=2)
        right.set_xticks(xs, [str(x) for x in xs])
    right.set_xlabel("worker processes")
    right.set_ylabel("speed-up over 1 worker")
    right.set_title("reduction on ruda.host, processes executor", fontsize=9)
    right.legend(fontsize=8)
    fig.suptitle(data["machine"], fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")


def main() -> int:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes (a CPU machine, a minute)")
    parser.add_argument("--executor", default="threads", help="Cubed executor of the backend comparison")
    parser.add_argument("--gpu-workers", type=int, default=4, help="its workers (threads or processes)")
    parser.add_argument("--workers", default="1,2,4,8", help="worker counts of the scaling curve")
    parser.add_argument("--allowed-mem", default="1GB", help="Cubed's allowed_mem per task")
    parser.add_argument("--repeats", type=int, default=2, help="timed computations per case (best kept)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per child before giving up")
    parser.add_argument(
        "--part", choices=("all", "backends", "scaling"), default="all", help="measure only one half"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return 0
    if args.markdown:
        paths = sorted(RESULTS.glob("cubed_scale-*.json"))
        if not paths:
            sys.exit(f"no {RESULTS}/cubed_scale-*.json: `python3 benchmarks/cubed_scale.py` writes one")
        for path in paths:
            print(markdown(json.loads(path.read_text())) + "\n")
        return 0
    data, out = measure(args)
    print(markdown(data))
    print(f"results: {out}")
    plot(data, out.with_suffix(".png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
