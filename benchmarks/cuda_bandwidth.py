"""How close do ruda_cuda's elementwise kernels come to the GPU's memory bandwidth?

add and exp on 2**28 float32 (1 GiB an array) through ruda_cuda with fusion off (one call, one
kernel: the vectorised streaming kernel), as a fraction of the device-to-device copy bandwidth
measured in the same process; beside them CuPy's own add and exp (into a new array and into
``out=``) and a hand-written float4 grid-stride add, what a bandwidth-tuned kernel reaches.

Bytes counted: copy reads n and writes n; add reads 2n and writes n; exp reads n and writes n
(4 bytes each). Times come from CUDA events, median of the repeats. Results go to
``benchmarks/results/cuda_bandwidth.json``.

    python3 benchmarks/cuda_bandwidth.py                # 2**28 elements
    python3 benchmarks/cuda_bandwidth.py --log2-size 24 --repeats 5
    python3 benchmarks/cuda_bandwidth.py --markdown     # the README's table, from the results file
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _gpu_bench import cuda_event_ms
from _timing import benchmark_parser, report

NAME = "cuda_bandwidth"

_ADD4 = r"""
extern "C" __global__ void add4(const float4* a, const float4* b, float4* c, long long n4) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4;
         i += (long long)blockDim.x * gridDim.x) {
        float4 x = a[i], y = b[i];
        c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
}
"""


def measure(log2_size: int, repeats: int) -> dict[str, Any]:
    """Each case's milliseconds, GB/s and fraction of the copy's GB/s, printed as measured."""
    import cupy
    import numpy as np
    import ruda_cuda as xp
    from ruda_cuda import _fusion

    _fusion.set_enabled(False)  # each call runs its kernel at once, inside the timed events
    n = 1 << log2_size
    nbytes = n * 4
    a = xp.linspace(0, 1, n, dtype=xp.float32)
    b = xp.linspace(1, 2, n, dtype=xp.float32)
    dst = xp.empty_like(a)
    add4 = cupy.RawKernel(_ADD4, "add4")
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]

    def copy() -> None:
        cupy.cuda.runtime.memcpyAsync(
            dst.data.ptr,
            a.data.ptr,
            nbytes,
            cupy.cuda.runtime.memcpyDeviceToDevice,
            cupy.cuda.get_current_stream().ptr,
        )

    # case -> (work, arrays it reads and writes); the copy first: the others are fractions of it
    cases: dict[str, tuple[Callable[[], object], int]] = {
        "device-to-device copy": (copy, 2),
        "ruda_cuda add": (lambda: xp.add(a, b), 3),
        "ruda_cuda exp": (lambda: xp.exp(a), 2),
        "cupy add": (lambda: cupy.add(a, b), 3),
        "cupy exp": (lambda: cupy.exp(a), 2),
        "cupy add, out=": (lambda: cupy.add(a, b, out=dst), 3),
        "cupy exp, out=": (lambda: cupy.exp(a, out=dst), 2),
        "float4 add RawKernel": (lambda: add4((sms * 8,), (512,), (a, b, dst, np.int64(n // 4))), 3),
    }
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    device = name.decode() if isinstance(name, bytes) else str(name)
    print(f"{device}, CuPy {cupy.__version__}: 2**{log2_size} float32 ({nbytes >> 20} MiB an array)")
    rows: list[dict[str, Any]] = []
    for case, (work, arrays) in cases.items():
        ms = cuda_event_ms(cupy, work, repeats)
        gb_per_s = arrays * nbytes / ms / 1e6
        of_copy = gb_per_s / rows[0]["GB/s"] if rows else 1.0
        print(f"  {case:22s} {ms:8.3f} ms {gb_per_s:6.0f} GB/s = {of_copy:4.0%} of copy", flush=True)
        rows.append({"case": case, "bytes": arrays * nbytes, "ms": ms, "GB/s": gb_per_s, "of copy": of_copy})
    return {
        "device": device,
        "cupy": cupy.__version__,
        "elements": n,
        "bytes per array": nbytes,
        "repeats": repeats,
        "rows": rows,
    }


def markdown(result: dict[str, Any]) -> str:
    """The README's table: each case's time, GB/s and fraction of the copy's GB/s."""
    lines = [
        f"2^{result['elements'].bit_length() - 1} float32 ({result['bytes per array'] >> 20} MiB an array) "
        f"on {result['device']}, CuPy {result['cupy']}; GB/s counts bytes read and written:",
        "",
        "| kernel | ms | GB/s | of copy |",
        "|---|---|---|---|",
    ]
    for row in result["rows"]:
        lines.append(f"| {row['case']} | {row['ms']:.3f} | {row['GB/s']:.0f} | {row['of copy']:.0%} |")
    return "\n".join(lines)


def main() -> None:
    parser = benchmark_parser(__doc__)
    parser.add_argument("--log2-size", type=int, default=28, help="elements per array, as a power of 2")
    parser.add_argument("--repeats", type=int, default=20, help="timed calls per case (median kept)")
    args = parser.parse_args()
    report(NAME, args, lambda: measure(args.log2_size, args.repeats), markdown)


if __name__ == "__main__":
    main()
