"""Timing helpers shared by the benchmarks: batches of calls, the two sides of a ratio
interleaved batch by batch and the best batch of each kept, so that a busy machine slows
both sides alike instead of skewing the ratio; and where results files go."""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

Clock = Callable[[], float]

#: the benchmarks' results files, kept in the repository: READMEs quote them
RESULTS = Path(__file__).resolve().parent / "results"


def write_results(name: str, results: dict[str, Any]) -> Path:
    """Write ``results`` to ``RESULTS/<name>.json``; returns the path."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"{name}.json"
    out.write_text(json.dumps(results, indent=1) + "\n")
    return out


def device_slug(device: str) -> str:
    """``"nvidia-h200"`` for ``"NVIDIA H200 (Vulkan, DiscreteGPU)"``: a results file's suffix."""
    return re.sub(r"[^a-z0-9]+", "-", device.split(" (")[0].lower()).strip("-")


def benchmark_parser(doc: str | None, markdown: bool = True) -> argparse.ArgumentParser:
    """A benchmark's command line: ``--help`` shows the module docstring ``doc``; with
    ``markdown``, ``--markdown`` prints the README's tables from the results files instead of
    measuring (see :func:`report`)."""
    made = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    if markdown:
        made.add_argument(
            "--markdown", action="store_true", help="print the README's tables from the results files"
        )
    return made


def report(
    name: str,
    args: argparse.Namespace,
    measure: Callable[[], dict[str, Any]],
    markdown: Callable[[dict[str, Any]], str],
    where: str = "on a CUDA GPU",
) -> None:
    """With ``--markdown``, print the table of ``RESULTS/<name>.json``; otherwise ``measure``,
    print the table and write the results file (run ``where``)."""
    if args.markdown:
        print(markdown(read_results(name, f"`python3 benchmarks/{name}.py` {where}")))
        return
    result = measure()
    print(markdown(result))
    print(f"results: {write_results(name, result)}")


def read_results(name: str, writer: str) -> dict[str, Any]:
    """The results in ``RESULTS/<name>.json`` (a ``--markdown`` table's source); exits naming the
    ``writer`` (a command, where it runs) that makes them when the file is missing."""
    path = RESULTS / f"{name}.json"
    if not path.exists():
        raise SystemExit(f"{path} is missing: {writer} writes it")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _calls_per_batch(fn: Callable[[], object], min_seconds: float, clock: Clock) -> int:
    calls = 1
    while _batch(fn, calls, clock) * calls < min_seconds:
        calls *= 2
    return calls


def _batch(fn: Callable[[], object], calls: int, clock: Clock) -> float:
    start = clock()
    for _ in range(calls):
        fn()
    return (clock() - start) / calls


def best_time(
    fn: Callable[[], object], *, repeats: int = 7, min_seconds: float = 0.02, clock: Clock = time.perf_counter
) -> float:
    """Seconds per call: the best of ``repeats`` batches of at least ``min_seconds`` each.

    ``clock`` is wall time by default (right for GPU work, which runs outside this
    process's CPU time); CPU-bound single-threaded work may pass ``time.process_time``,
    which other processes on a busy machine do not inflate."""
    fn()  # warm up: compilation, caches, allocation
    calls = _calls_per_batch(fn, min_seconds, clock)
    return min(_batch(fn, calls, clock) for _ in range(repeats))


def ratio(
    ours: Callable[[], object],
    reference: Callable[[], object],
    *,
    repeats: int = 15,
    min_seconds: float = 0.02,
    clock: Clock = time.perf_counter,
) -> tuple[float, float, float]:
    """``(our seconds, reference seconds, ours / reference)`` per call, batches interleaved."""
    ours(), reference()
    calls = max(_calls_per_batch(ours, min_seconds, clock), _calls_per_batch(reference, min_seconds, clock))
    best_ours = best_ref = float("inf")
    for _ in range(repeats):
        best_ref = min(best_ref, _batch(reference, calls, clock))
        best_ours = min(best_ours, _batch(ours, calls, clock))
    return best_ours, best_ref, best_ours / best_ref
