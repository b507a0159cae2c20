"""What does launching a kernel through ruda_cuda.kernel cost, against cupy.RawKernel?

An empty kernel and one with three arguments (a pointer, a float, an int), launched through
ruda_cuda.kernel, cupy.RawKernel and (the empty one, where installed) cuda.core, in one process
on one GPU.

Each sample launches a batch of kernels back to back on a non-blocking stream and synchronises
once; the figure is the batch's wall time per launch (host-side launch cost; the GPU runs an
empty kernel faster than either library can enqueue it). The libraries take turns, and the
median of the batches is reported. Results go to ``benchmarks/results/cuda_launch.json``.

    python3 benchmarks/cuda_launch.py
    python3 benchmarks/cuda_launch.py --markdown     # the README's table, from the results file
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from _timing import benchmark_parser, report
from rich.progress import track

NAME = "cuda_launch"
SOURCE = r"""
extern "C" __global__ void empty() {}
extern "C" __global__ void three(float* x, float a, int n) {}
"""
BATCH = 1000
KERNELS = ("empty", "3 args")
LIBRARIES = ("ruda_cuda.kernel", "cupy.RawKernel", "cuda.core")

#: a batch of launches, and the wait for them
Runner = tuple[Callable[[], None], Callable[[], None]]


def per_launch_us(runner: Runner) -> float:
    """Microseconds per launch of one batch, timed until the GPU has run it."""
    launch_batch, synchronize = runner
    start = time.perf_counter()
    launch_batch()
    synchronize()
    return (time.perf_counter() - start) / BATCH * 1e6


def cuda_core_runner(cc: tuple[int, int]) -> Runner | str:
    """A batch launcher of the empty kernel through cuda.core, or the reason it cannot be measured."""
    try:
        try:
            from cuda.core import Device as CoreDevice
            from cuda.core import LaunchConfig, Program, ProgramOptions
            from cuda.core import launch as core_launch
        except ImportError:
            from cuda.core.experimental import Device as CoreDevice
            from cuda.core.experimental import LaunchConfig, Program, ProgramOptions
            from cuda.core.experimental import launch as core_launch
        device = CoreDevice(0)
        device.set_current()
        stream = device.create_stream()
        program = Program(SOURCE, code_type="c++", options=ProgramOptions(arch=f"sm_{cc[0]}{cc[1]}"))
        kernel = program.compile("cubin").get_kernel("empty")
        config = LaunchConfig(grid=1, block=1)
        core_launch(stream, config, kernel)

        def batch() -> None:
            for _ in range(BATCH):
                core_launch(stream, config, kernel)

        return batch, stream.sync
    except Exception as err:  # absent or a different API version: say so, measure the rest
        return f"{type(err).__name__}: {err}"


def measure(batches: int) -> dict[str, Any]:
    """Median microseconds per launch of each library and kernel, and our ratios to the others."""
    import cupy
    import numpy as np
    from ruda_cuda.kernel import Context, Device, Module, Stream, StreamFlags, init

    init()
    device = Device.get(0)
    context = Context.primary(device)
    module = Module.compile(SOURCE)
    stream = Stream(StreamFlags.NON_BLOCKING)
    cupy_stream = cupy.cuda.Stream(non_blocking=True)
    raw_empty = cupy.RawKernel(SOURCE, "empty")
    raw_three = cupy.RawKernel(SOURCE, "three")
    x = cupy.zeros(16, dtype=cupy.float32)
    a, n = np.float32(1.0), np.int32(16)

    def ours_empty() -> None:
        for _ in range(BATCH):
            module.empty[1, 1, 0, stream]()

    def ours_three() -> None:
        for _ in range(BATCH):
            module.three[1, 1, 0, stream](x, a, n)

    def cupy_empty() -> None:
        for _ in range(BATCH):
            raw_empty((1,), (1,), (), stream=cupy_stream)

    def cupy_three() -> None:
        for _ in range(BATCH):
            raw_three((1,), (1,), (x, a, n), stream=cupy_stream)

    runners: dict[tuple[str, str], Runner] = {
        ("ruda_cuda.kernel", "empty"): (ours_empty, stream.synchronize),
        ("cupy.RawKernel", "empty"): (cupy_empty, cupy_stream.synchronize),
        ("ruda_cuda.kernel", "3 args"): (ours_three, stream.synchronize),
        ("cupy.RawKernel", "3 args"): (cupy_three, cupy_stream.synchronize),
    }
    core = cuda_core_runner(device.compute_capability())
    if isinstance(core, str):
        print(f"cuda.core: not measured ({core})")
    else:
        runners["cuda.core", "empty"] = core
    for _ in range(3):  # warm-up: compile, caches, clocks
        for runner in runners.values():
            per_launch_us(runner)
    samples: dict[tuple[str, str], list[float]] = {key: [] for key in runners}
    for _ in track(range(batches), description=f"batches of {BATCH} launches", transient=True):
        for key, runner in runners.items():
            samples[key].append(per_launch_us(runner))
    context.close()
    median = {key: statistics.median(values) for key, values in samples.items()}
    rows = []
    for kernel in KERNELS:
        row: dict[str, Any] = {"kernel": kernel}
        row.update({f"{lib} us": median[lib, kernel] for lib in LIBRARIES if (lib, kernel) in median})
        for lib in LIBRARIES[1:]:
            if (lib, kernel) in median:
                row[f"ours / {lib}"] = median["ruda_cuda.kernel", kernel] / median[lib, kernel]
        rows.append(row)
    return {
        "device": device.name(),
        "cupy": cupy.__version__,
        "cuda.core": f"not measured: {core}" if isinstance(core, str) else "measured",
        "launches per batch": BATCH,
        "batches": batches,
        "rows": rows,
    }


def markdown(result: dict[str, Any]) -> str:
    """The README's table: microseconds per launch, ours and the others', and the ratios."""
    lines = [
        f"Host time per launch on {result['device']}, CuPy {result['cupy']}, median of "
        f"{result['batches']} batches of {result['launches per batch']} launches, µs:",
        "",
        "| kernel | ruda_cuda.kernel | cupy.RawKernel | ours / RawKernel | cuda.core | ours / cuda.core |",
        "|---|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        cells = [row["kernel"], f"{row['ruda_cuda.kernel us']:.2f}"]
        for lib in LIBRARIES[1:]:
            if f"{lib} us" in row:
                cells += [f"{row[f'{lib} us']:.2f}", f"{row[f'ours / {lib}']:.2f}"]
            else:
                cells += ["—", "—"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument(
        "--repeats", type=int, default=30, help="timed batches per library and kernel (median kept)"
    )
    args = parser.parse_args()
    report(NAME, args, lambda: measure(args.repeats), markdown)


if __name__ == "__main__":
    main()
