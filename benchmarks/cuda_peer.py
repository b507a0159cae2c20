"""Moving ruda_cuda arrays between two GPUs: bandwidth of a large ``to_device`` against CuPy's
own copies between the same GPUs, and the latency of small ``to_device`` calls.

Both directions (cuda:0 -> cuda:1 and back) run in this process. The references are CuPy's
two ways to copy between GPUs: ``cupy.ndarray.copy()`` under the target device (one
``cudaMemcpyAsync`` on the target's stream, after enabling peer access) and
``MemoryPointer.copy_from_device_async`` into a ready buffer (the bare copy, no allocation).
Large copies are timed with CUDA events on the target GPU (median of the repeats); small ones
with the host clock until the copied array is ready (best batch, ours and CuPy's interleaved).
Needs two GPUs.

    python benchmarks/cuda_peer.py                  # 1 GiB, writes benchmarks/results/cuda_peer.json
    python benchmarks/cuda_peer.py --log2-bytes 28 --repeats 5
    python benchmarks/cuda_peer.py --markdown       # the README table from the last results
"""

from __future__ import annotations

from typing import Any

from _gpu_bench import cuda_event_ms
from _timing import benchmark_parser, ratio, report
from rich.progress import track

NAME = "cuda_peer"
SMALL_SIZES = (1, 1000, 100_000)


def bandwidth(cupy: Any, xp: Any, source: int, target: int, nbytes: int, repeats: int) -> dict[str, Any]:
    """GB/s of the three ways to copy ``nbytes`` from GPU ``source`` to GPU ``target``."""
    with cupy.cuda.Device(source):
        x = xp.ones(nbytes // 4, dtype=xp.float32)
    with cupy.cuda.Device(target):
        ready = cupy.empty_like(x)
        cases = {
            "ruda to_device": lambda: x.to_device(f"cuda:{target}"),
            "cupy copy()": lambda: cupy.ndarray.copy(x),
            "cupy copy_from_device_async": lambda: ready.data.copy_from_device_async(x.data, nbytes),
        }
        ms = {case: cuda_event_ms(cupy, work, repeats) for case, work in cases.items()}
        assert bool((x.to_device(f"cuda:{target}") == 1).all()), "the copy must arrive"
    best_cupy = min(ms["cupy copy()"], ms["cupy copy_from_device_async"])
    return {
        "direction": f"cuda:{source} -> cuda:{target}",
        "ms": ms,
        "gb_per_s": {case: nbytes / t / 1e6 for case, t in ms.items()},
        "ours / best cupy bandwidth": best_cupy / ms["ruda to_device"],
    }


def latency(cupy: Any, xp: Any, size: int) -> dict[str, Any]:
    """Microseconds per ``to_device`` of ``size`` float32 from cuda:0 to cuda:1, until ready."""
    x = xp.ones(size, dtype=xp.float32, device="cuda:0")
    target = cupy.cuda.Device(1)

    def ours() -> None:
        x.to_device("cuda:1")
        with target:
            cupy.cuda.get_current_stream().synchronize()

    def reference() -> None:
        with target:
            cupy.ndarray.copy(x)
            cupy.cuda.get_current_stream().synchronize()

    mine, theirs, _ = ratio(ours, reference)
    return {
        "elements": size,
        "ruda us": mine * 1e6,
        "cupy copy() us": theirs * 1e6,
        "ours / cupy": mine / theirs,
    }


def measure(log2_bytes: int, repeats: int) -> dict[str, Any]:
    import cupy
    import ruda_cuda as xp
    from ruda_cuda._plugin import PLUGIN

    if cupy.cuda.runtime.getDeviceCount() < 2:
        raise SystemExit("cuda_peer.py needs two GPUs")
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    result: dict[str, Any] = {
        "device": name.decode() if isinstance(name, bytes) else str(name),
        "between GPUs": PLUGIN.probe().details["between GPUs"],
        "bytes": 1 << log2_bytes,
        "bandwidth": [],
        "latency": [],
    }
    for source, target in track([(0, 1), (1, 0)], description="bandwidth"):
        result["bandwidth"].append(bandwidth(cupy, xp, source, target, 1 << log2_bytes, repeats))
    for size in track(SMALL_SIZES, description="latency"):
        result["latency"].append(latency(cupy, xp, size))
    return result


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"{result['bytes'] >> 20} MiB between two {result['device']} ({result['between GPUs']}), GB/s:",
        "",
        "| direction | ruda to_device | cupy copy() | cupy copy_from_device_async | ours / best cupy |",
        "|---|---|---|---|---|",
    ]
    for row in result["bandwidth"]:
        speeds = row["gb_per_s"]
        lines.append(
            f"| {row['direction']} | {speeds['ruda to_device']:.0f} | {speeds['cupy copy()']:.0f} | "
            f"{speeds['cupy copy_from_device_async']:.0f} | {row['ours / best cupy bandwidth']:.2f} |"
        )
    lines += ["", "Small `to_device` cuda:0 -> cuda:1, until ready:", ""]
    lines += ["| float32 elements | ruda µs | cupy copy() µs |", "|---|---|---|"]
    for row in result["latency"]:
        lines.append(f"| {row['elements']} | {row['ruda us']:.1f} | {row['cupy copy() us']:.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--log2-bytes", type=int, default=30, help="bytes of the large copy, as a power of 2")
    parser.add_argument("--repeats", type=int, default=20, help="timed large copies per case (median kept)")
    args = parser.parse_args()
    report(NAME, args, lambda: measure(args.log2_bytes, args.repeats), markdown)


if __name__ == "__main__":
    main()
