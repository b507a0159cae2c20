"""Elementwise throughput of ruda_cuda (add, exp on 2**28 float32) as a fraction of the
GPU's measured device-to-device copy bandwidth, plus plain CuPy for reference.

Bytes counted: copy reads n and writes n; add reads 2n and writes n; exp reads n and
writes n (4 bytes each). Times come from CUDA events, median of the repeats.

    python benchmarks/cuda_bandwidth.py
"""

from __future__ import annotations

from collections.abc import Callable

import cupy
import numpy as np
import ruda_cuda as xp
from _gpu_bench import cuda_event_ms

N = 1 << 28

# A hand-written float4 grid-stride add: what a bandwidth-tuned kernel reaches here.
_ADD4 = cupy.RawKernel(
    r"""
extern "C" __global__ void add4(const float4* a, const float4* b, float4* c, long long n4) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4;
         i += (long long)blockDim.x * gridDim.x) {
        float4 x = a[i], y = b[i];
        c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
}
""",
    "add4",
)
REPEATS = 20


def gpu_ms(work: Callable[[], object]) -> float:
    """Median milliseconds of ``work``, timed with CUDA events."""
    return cuda_event_ms(cupy, work, REPEATS)


def main() -> None:
    a = xp.linspace(0, 1, N, dtype=xp.float32)
    b = xp.linspace(1, 2, N, dtype=xp.float32)
    dst = xp.empty_like(a)
    nbytes = N * 4

    def copy() -> None:
        cupy.cuda.runtime.memcpyAsync(
            dst.data.ptr,
            a.data.ptr,
            nbytes,
            cupy.cuda.runtime.memcpyDeviceToDevice,
            cupy.cuda.get_current_stream().ptr,
        )

    copy_gbs = 2 * nbytes / gpu_ms(copy) / 1e6
    print(
        f"{cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}: 2**28 float32 "
        f"({nbytes / 2**30:.0f} GiB per array)"
    )
    print(f"  device-to-device copy   {copy_gbs:8.0f} GB/s (read + write)")
    cases = {
        "ruda_cuda add": (lambda: xp.add(a, b), 3),
        "ruda_cuda exp": (lambda: xp.exp(a), 2),
        "cupy add (reference)": (lambda: cupy.add(a, b), 3),
        "cupy exp (reference)": (lambda: cupy.exp(a), 2),
        "cupy add into out=": (lambda: cupy.add(a, b, out=dst), 3),
        "cupy exp into out=": (lambda: cupy.exp(a, out=dst), 2),
        "float4 add RawKernel": (lambda: _ADD4((132 * 8,), (512,), (a, b, dst, np.int64(N // 4))), 3),
    }
    for name, (work, arrays) in cases.items():
        gbs = arrays * nbytes / gpu_ms(work) / 1e6
        print(f"  {name:22s} {gbs:8.0f} GB/s = {gbs / copy_gbs:6.1%} of copy  (target >= 85%)")


if __name__ == "__main__":
    main()
