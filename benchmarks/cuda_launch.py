"""Launch latency of an empty kernel: ruda_cuda.kernel against cupy.RawKernel (and
cuda.core when installed), in one process on one GPU.

Each sample launches a batch of kernels back to back on a non-blocking stream and
synchronises once; the figure is the batch's wall time per launch (host-side launch
cost; the GPU runs an empty kernel faster than either library can enqueue it). The
libraries take turns, and the median of many batches is reported.

    python benchmarks/cuda_launch.py
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import cupy
import numpy as np
from ruda_cuda.kernel import Context, Device, Module, Stream, StreamFlags, init

SOURCE = r"""
extern "C" __global__ void empty() {}
extern "C" __global__ void three(float* x, float a, int n) {}
"""
BATCH = 1000
SAMPLES = 30


def per_launch_us(launch_batch: Callable[[], None], synchronize: Callable[[], None]) -> float:
    start = time.perf_counter()
    launch_batch()
    synchronize()
    return (time.perf_counter() - start) / BATCH * 1e6


def cuda_core_runner(cc: tuple[int, int]) -> tuple[Callable[[], None], Callable[[], None]] | str:
    """A batch launcher through cuda.core, or the reason it cannot be measured."""
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


def main() -> None:
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

    runners: dict[str, tuple[Callable[[], None], Callable[[], None]]] = {
        "ruda_cuda.kernel, empty": (ours_empty, stream.synchronize),
        "cupy.RawKernel, empty": (cupy_empty, cupy_stream.synchronize),
        "ruda_cuda.kernel, 3 args": (ours_three, stream.synchronize),
        "cupy.RawKernel, 3 args": (cupy_three, cupy_stream.synchronize),
    }
    core = cuda_core_runner(device.compute_capability())
    if isinstance(core, str):
        print(f"cuda.core: not measured ({core})")
    else:
        runners["cuda.core launch, empty"] = core
    samples: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(3):  # warm-up: compile, caches, clocks
        for launch_batch, sync in runners.values():
            per_launch_us(launch_batch, sync)
    for _ in range(SAMPLES):
        for name, (launch_batch, sync) in runners.items():
            samples[name].append(per_launch_us(launch_batch, sync))
    median = {name: statistics.median(values) for name, values in samples.items()}
    print(f"{device.name()}: median host time per launch over {SAMPLES} batches of {BATCH}")
    for name, value in median.items():
        print(f"  {name:28s} {value:6.2f} us")
    for what in ("empty", "3 args"):
        ratio = median[f"ruda_cuda.kernel, {what}"] / median[f"cupy.RawKernel, {what}"]
        print(f"ratio ruda_cuda.kernel / cupy.RawKernel ({what}): {ratio:.3f}  (target <= 1.15)")
    if "cuda.core launch, empty" in median:
        ratio = median["ruda_cuda.kernel, empty"] / median["cuda.core launch, empty"]
        print(f"ratio ruda_cuda.kernel / cuda.core (empty): {ratio:.3f}")
    context.close()


if __name__ == "__main__":
    main()
