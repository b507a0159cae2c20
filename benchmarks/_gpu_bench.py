"""What the GPU benchmarks share: CuPy when present, timing a list of cases against NumPy (and
CuPy) with a progress bar, and writing the rows to ``benchmarks/results/<name>-<device>.json``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _timing import best_time
from rich.progress import Progress

RESULTS = Path(__file__).resolve().parent / "results"

Contenders = dict[str, Callable[[], object]]


def cupy_or_none() -> Any:
    """CuPy when it is installed and sees a GPU, else None."""
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
    except Exception:
        return None
    return cupy


def waiting(fn: Callable[[], object], sync: Callable[[], object]) -> Callable[[], None]:
    """``fn`` followed by ``sync``: a GPU contender timed until its work is done."""

    def run() -> None:
        fn()
        sync()

    return run


def time_rows(
    label: str,
    cases: Sequence[tuple[dict[str, Any], Callable[[], Contenders]]],
    repeats: int,
) -> list[dict[str, Any]]:
    """Time each case's contenders (``ruda_wgpu``, ``numpy``, maybe ``cupy``): a row per case with
    its description, milliseconds per contender and the ratios ours/numpy and ours/cupy."""
    rows = []
    with Progress(transient=True) as progress:
        task = progress.add_task(label, total=len(cases))
        for description, contenders in cases:
            progress.update(task, description=" ".join(str(v) for v in description.values()))
            times = {
                name: best_time(fn, repeats=repeats, min_seconds=0.05) for name, fn in contenders().items()
            }
            row = dict(description)
            row.update({f"{name} ms": t * 1e3 for name, t in times.items()})
            row["ours/numpy"] = times["ruda_wgpu"] / times["numpy"]
            if "cupy" in times:
                row["ours/cupy"] = times["ruda_wgpu"] / times["cupy"]
            rows.append(row)
            progress.advance(task)
    return rows


def markdown_table(
    paths: Sequence[Path], header: Sequence[str], rows: Callable[[str, list[dict[str, Any]]], str]
) -> str:
    """One markdown table of every results file: ``header`` lines, then ``rows(device, rows)``."""
    lines = list(header)
    for path in paths:
        data = json.loads(path.read_text())
        lines.append(rows(data["device"], data["rows"]))
    return "\n".join(lines)


def save(name: str, device: str, cupy: bool, rows: list[dict[str, Any]]) -> Path:
    """Write the rows to ``results/<name>-<device slug>.json``; returns the path."""
    slug = re.sub(r"[^a-z0-9]+", "-", device.split(" (")[0].lower()).strip("-")
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"{name}-{slug}.json"
    out.write_text(json.dumps({"device": device, "cupy": cupy, "rows": rows}, indent=1))
    return out
