"""What the GPU benchmarks share: CuPy when present, timing a list of cases against NumPy (and
CuPy) with a progress bar, and writing the rows to ``benchmarks/results/<name>-<device>.json``."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _timing import best_time, device_slug, write_results
from rich.progress import Progress

Contenders = dict[str, Callable[[], object]]


def cupy_or_none() -> Any:
    """CuPy when it is installed and sees a GPU, else None."""
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
    except Exception:
        return None
    return cupy


def cuda_event_ms(cupy: Any, work: Callable[[], object], repeats: int) -> float:
    """Median milliseconds of ``work`` on CuPy's current stream, timed with CUDA events (two
    warm-up calls first: compilation, allocation)."""
    for _ in range(2):
        work()
    times = []
    for _ in range(repeats):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        work()
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end))
    return float(statistics.median(times))


#: calls a pipelined measurement queues before it waits once
PIPELINE = 10


class Waiting:
    """A GPU contender: ``fn`` then ``sync``, so that its time is until the work is done (the
    latency a caller who reads the result sees). :meth:`pipelined` runs :data:`PIPELINE` calls,
    keeping their results, then waits once: the cost per call while the GPU has work queued,
    where a fixed cost of submitting and waiting no longer hides the GPU's own speed."""

    def __init__(self, fn: Callable[[], object], sync: Callable[[], object]) -> None:
        self.fn, self.sync = fn, sync

    def __call__(self) -> None:
        self.fn()
        self.sync()

    def pipelined(self) -> None:
        results = [self.fn() for _ in range(PIPELINE)]
        self.sync()
        del results


def waiting(fn: Callable[[], object], sync: Callable[[], object]) -> Waiting:
    """``fn`` followed by ``sync``: a GPU contender timed until its work is done."""
    return Waiting(fn, sync)


def same_operation(
    function_in: Callable[[Any], Callable[..., object]], ours: Any, hosts: Sequence[Any], cp: Any
) -> Contenders:
    """The operation ``function_in(namespace)`` on the same data: ruda_wgpu (``ours``) and, when
    ``cp`` is given, CuPy on device copies of ``hosts``, each waiting for its result, and NumPy on
    ``hosts`` themselves."""
    ours_args = [ours.asarray(h) for h in hosts]
    ours_fn, numpy_fn = function_in(ours), function_in(np)
    out: Contenders = {
        "ruda_wgpu": waiting(lambda: ours_fn(*ours_args), ours.synchronize),
        "numpy": lambda: numpy_fn(*hosts),
    }
    if cp is not None:
        cupy_args = [cp.asarray(h) for h in hosts]
        cupy_fn = function_in(cp)
        out["cupy"] = waiting(lambda: cupy_fn(*cupy_args), cp.cuda.Device().synchronize)
    return out


def time_rows(
    label: str,
    cases: Sequence[tuple[dict[str, Any], Callable[[], Contenders]]],
    repeats: int,
) -> list[dict[str, Any]]:
    """Time each case's contenders (``ruda_wgpu``, mostly ``numpy``, maybe ``cupy``): a row per case with
    its description, milliseconds per contender (GPU ones also pipelined, see :class:`Waiting`)
    and the ratios ours/numpy, ours/cupy and ours/cupy pipelined."""
    rows = []
    with Progress(transient=True) as progress:
        task = progress.add_task(label, total=len(cases))
        for description, contenders in cases:
            progress.update(task, description=" ".join(str(v) for v in description.values()))
            times, piped = {}, {}
            for name, fn in contenders().items():
                times[name] = best_time(fn, repeats=repeats, min_seconds=0.05)
                if isinstance(fn, Waiting):
                    piped[name] = best_time(fn.pipelined, repeats=repeats, min_seconds=0.05) / PIPELINE
            row = dict(description)
            row.update({f"{name} ms": t * 1e3 for name, t in times.items()})
            row.update({f"{name} pipelined ms": t * 1e3 for name, t in piped.items()})
            if "numpy" in times:  # (a case may leave NumPy out: see its contenders)
                row["ours/numpy"] = times["ruda_wgpu"] / times["numpy"]
            if "cupy" in times:
                row["ours/cupy"] = times["ruda_wgpu"] / times["cupy"]
                row["ours/cupy pipelined"] = piped["ruda_wgpu"] / piped["cupy"]
            rows.append(row)
            progress.advance(task)
    return rows


def cupy_cells(row: dict[str, Any]) -> str:
    """The markdown cells ``CuPy ms | ours/CuPy | ours/CuPy pipelined`` of a row (dashes without
    CuPy; results files from before pipelined timing have no last figure)."""
    if "cupy ms" not in row:
        return "— | — | —"
    piped = f"{row['ours/cupy pipelined']:.1f}" if "ours/cupy pipelined" in row else "—"
    return f"{row['cupy ms']:.3f} | {row['ours/cupy']:.1f} | {piped}"


def markdown_table(
    paths: Sequence[Path], header: Sequence[str], rows: Callable[[str, list[dict[str, Any]]], str]
) -> str:
    """One markdown table of every results file: ``header`` lines, then ``rows(device, rows)``."""
    lines = list(header)
    for path in paths:
        data = json.loads(path.read_text())
        lines.append(rows(data["device"], data["rows"]))
    return "\n".join(lines)


def save(name: str, device: str, cupy: bool, rows: list[dict[str, Any]], **extra: Any) -> Path:
    """Write the rows (and ``extra`` fields) to ``results/<name>-<device slug>.json``; returns
    the path."""
    results = {"device": device, "cupy": cupy, **extra, "rows": rows}
    return write_results(f"{name}-{device_slug(device)}", results)
