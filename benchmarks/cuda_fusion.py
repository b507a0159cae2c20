"""ruda_cuda's fusion on an 8-operation elementwise chain: fused, unfused, and a hand-written kernel.

The chain (2 float32 inputs, 1 output; the one ``benchmarks/wgpu_overhead.py`` times) runs four
ways in this process: ruda_cuda with fusion on (one generated kernel), with fusion off (8 kernels,
each reading and writing the whole array), a hand-written ``cupy.RawKernel`` computing the same
chain with float4 loads and stores in a grid-stride loop, and ``cupy.fuse`` for reference. Times
come from CUDA events, median of the repeats, two ways: one call alone (from before the host
records the chain to its result: the latency of one isolated chain, host work included), and
per call of 10 queued back to back (the rate of a loop, where the host records the next chain
while the GPU computes the last). GB/s counts the bytes the fused kernel must move (two inputs
read, one output written).

    python benchmarks/cuda_fusion.py                 # 2**28 elements, writes benchmarks/results/
    python benchmarks/cuda_fusion.py --log2-size 24 --repeats 5
    python benchmarks/cuda_fusion.py --markdown      # the README table from the last results
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _chain import chain, lets
from _gpu_bench import cuda_event_ms
from _timing import benchmark_parser, report

NAME = "cuda_fusion"
QUEUED = 10  # calls queued back to back for the loop rate

_HAND = r"""
__device__ __forceinline__ float chain(float a, float b) {
STEPS
  return t7;
}
extern "C" __global__ void chain4(const float4* x, const float4* y, float4* out, long long n4) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4;
         i += (long long)blockDim.x * gridDim.x) {
        const float4 a = x[i], b = y[i];
        out[i] = make_float4(chain(a.x, b.x), chain(a.y, b.y), chain(a.z, b.z), chain(a.w, b.w));
    }
}
""".replace("STEPS", lets("c", "const float"))


def measure(log2_size: int, repeats: int) -> dict[str, Any]:
    import cupy
    import numpy as np
    import ruda_cuda as xp
    from ruda_cuda import _fusion

    n = 1 << log2_size
    rng = np.random.default_rng(0)
    x = xp.asarray(rng.standard_normal(n, dtype=np.float32))
    y = xp.asarray(rng.standard_normal(n, dtype=np.float32))
    out = cupy.empty_like(x)
    hand = cupy.RawKernel(_HAND, "chain4")
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]

    def chain_of_cupy(a: Any, b: Any) -> Any:
        return chain(cupy, a, b)

    fuse = cupy.fuse(chain_of_cupy)

    def ours(fused: bool) -> Callable[[], object]:
        def run() -> object:
            previous = _fusion.set_enabled(fused)
            try:
                return _fusion.realized(chain(xp, x, y))  # the computed array
            finally:
                _fusion.set_enabled(previous)

        return run

    cases: dict[str, Callable[[], object]] = {
        "fused": ours(True),
        "unfused": ours(False),
        "hand-written": lambda: hand((sms * 8,), (512,), (x, y, out, np.int64(n // 4))),
        "cupy.fuse": lambda: fuse(x, y),
    }
    a = ours(True)()
    hand((sms * 8,), (512,), (x, y, out, np.int64(n // 4)))
    np.testing.assert_allclose(np.asarray(a[:4096]), cupy.asnumpy(out[:4096]), rtol=1e-5, atol=1e-6)
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    result: dict[str, Any] = {
        "device": name.decode() if isinstance(name, bytes) else str(name),
        "elements": n,
        "ms": {},
    }
    result["ms queued"] = {}
    for case, work in cases.items():
        print(f"  {case} ...", flush=True)
        result["ms"][case] = cuda_event_ms(cupy, work, repeats)
        result["ms queued"][case] = cuda_event_ms(cupy, queued(work), repeats) / QUEUED
    for timing in ("ms", "ms queued"):
        ms = result[timing]
        result[f"gb_per_s ({timing})"] = {case: 3 * 4 * n / t / 1e6 for case, t in ms.items()}
        result[f"unfused / fused ({timing})"] = ms["unfused"] / ms["fused"]
        result[f"fused / hand-written ({timing})"] = ms["fused"] / ms["hand-written"]
    return result


def queued(work: Callable[[], object]) -> Callable[[], object]:
    """``work`` called :data:`QUEUED` times back to back, keeping every result."""
    return lambda: [work() for _ in range(QUEUED)]


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"8-operation chain on 2^{result['elements'].bit_length() - 1} float32, {result['device']}:",
        "",
        f"| run | ms, one call | GB/s | ms per call, {QUEUED} queued | GB/s |",
        "|---|---|---|---|---|",
    ]
    for case, ms in result["ms"].items():
        queued = result["ms queued"][case]
        lines.append(
            f"| {case} | {ms:.3f} | {result['gb_per_s (ms)'][case]:.0f} | {queued:.3f} | "
            f"{result['gb_per_s (ms queued)'][case]:.0f} |"
        )
    lines.append("")
    for timing, label in (("ms", "one call"), ("ms queued", f"{QUEUED} queued")):
        lines.append(
            f"{label}: unfused / fused = {result[f'unfused / fused ({timing})']:.2f}; "
            f"fused / hand-written = {result[f'fused / hand-written ({timing})']:.2f}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--log2-size", type=int, default=28, help="elements per array, as a power of 2")
    parser.add_argument("--repeats", type=int, default=20, help="timed calls per case (median kept)")
    args = parser.parse_args()
    if not args.markdown:
        print(f"8-operation chain on 2**{args.log2_size} float32", flush=True)
    report(NAME, args, lambda: measure(args.log2_size, args.repeats), markdown)


if __name__ == "__main__":
    main()
