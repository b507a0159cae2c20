"""More data than one device holds at a time: Cubed runs Array API code chunk by chunk, with a
bound on each task's memory, on the ruda backend you name; its executors spread the chunks over
threads, processes or a cluster (Dask, Ray, ...).

    python3 examples/cubed_chunked.py                   # on ruda.host
    python3 examples/cubed_chunked.py ruda_torch.cubed  # every chunk a torch tensor (ruda_torch with
                                                        # the NumPy dtypes Cubed needs)
    python3 examples/cubed_chunked.py ruda_wgpu         # every chunk computed on the GPU (minutes on
                                                        # a CPU Vulkan driver such as lavapipe)
"""

from __future__ import annotations

import os
import sys

# Cubed reads its backend when it is imported
os.environ["CUBED_BACKEND_ARRAY_API_MODULE"] = sys.argv[1] if len(sys.argv) > 1 else "ruda.host"

import cubed
import cubed.array_api as cxp
import numpy as np


def main() -> None:
    spec = cubed.Spec(allowed_mem="100MB")  # no task may hold more than this
    # Checked against NumPy on a case small enough to compute whole
    host = np.random.default_rng(0).standard_normal((300, 200)).astype(np.float32)
    small = cxp.asarray(host, chunks=(100, 100), spec=spec)
    got = np.asarray((small @ cxp.matrix_transpose(small)).compute())
    np.testing.assert_allclose(got, host @ host.T, rtol=1e-4, atol=1e-3)
    print("chunked matmul of (300, 200) matches NumPy")

    # 2000 x 2000 float32 operands, made, multiplied and reduced 500 x 500 at a time: the same code
    # takes any size whose chunks fit the bound
    a = cubed.random.random((2000, 2000), chunks=(500, 500), spec=spec)
    a = cxp.astype(a, cxp.float32)
    total = cxp.sum(a @ a, axis=0)
    column_sums = np.asarray(total.compute())
    print(f"sum over rows of a @ a, 2000 x 2000 in 16 chunks: {column_sums[:3]} ...")


if __name__ == "__main__":  # Cubed's processes executor starts workers by spawning
    main()
