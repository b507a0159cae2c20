"""SAXPY (y = a*x + y) on ruda_cuda arrays with a kernel compiled from CUDA C source,
checked against the same computation in the Array API namespace.

    python examples/cuda_saxpy.py
"""

from __future__ import annotations

import numpy as np
import ruda
import ruda_cuda as xp
from ruda_cuda.kernel import Module

SOURCE = r"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def main(n: int = 1 << 20) -> None:
    x = xp.linspace(0, 1, n, dtype=xp.float32)
    y = xp.ones(n, dtype=xp.float32)
    expected = 2.0 * x + y  # the namespace's own elementwise kernels

    module = Module.compile(SOURCE)
    block = 256
    module.saxpy[(n + block - 1) // block, block](np.float32(2.0), x, y, np.int64(n))

    error = float(xp.max(xp.abs(y - expected)))
    print(f"saxpy on {n} floats on {ruda.device_of(y)}: y[-1] = {float(y[-1])}, max error {error}")
    assert error == 0.0


if __name__ == "__main__":
    main()
