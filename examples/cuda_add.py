"""Add two numbers on the GPU with the kernel runtime: a kernel `sum` over two DeviceBox
floats, launched on a stream, the result read back and printed.

    python examples/cuda_add.py
"""

from __future__ import annotations

import numpy as np
from ruda_cuda.kernel import Context, Device, DeviceBox, Module, Stream, StreamFlags, init

SOURCE = r"""
extern "C" __global__ void sum(const float* x, const float* y, float* out) {
    *out = *x + *y;
}
"""


def main() -> None:
    init()
    context = Context.primary(Device.get(0))
    module = Module.compile(SOURCE)
    stream = Stream(StreamFlags.NON_BLOCKING, 0)

    x = DeviceBox(np.float32(10.0))
    y = DeviceBox(np.float32(20.0))
    result = DeviceBox(np.float32(0.0))

    # launch!(module.sum<<<1, 1, 0, stream>>>(x, y, result))
    module.sum[1, 1, 0, stream](x, y, result)
    stream.synchronize()

    print(f"Sum is {result.get()}")
    for owned in (x, y, result, stream, module):  # free what lives in the context before it goes
        owned.close()
    context.close()


if __name__ == "__main__":
    main()
