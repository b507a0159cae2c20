"""More data than one device holds: ``ruda.scale`` gives Cubed's Array API namespace over the ruda
backend you name, and Cubed runs the code chunk by chunk, each task within ``allowed_mem``, on the
executor you pick (threads, processes, a Dask or Ray cluster). The chunks are computed by the
backend (on the GPU for ``cuda`` and ``wgpu``) and stored between steps as host Zarr arrays.

    python3 examples/cubed_chunked.py                           # ruda.host, threads
    python3 examples/cubed_chunked.py cuda processes            # every chunk on the GPU, 4 workers
    python3 examples/cubed_chunked.py cuda threads --n 200000   # a 160 GB operand and product:
                                                                # more than an H200 holds
    python3 examples/cubed_chunked.py torch                     # torch tensors (ruda_torch.cubed)
    python3 examples/cubed_chunked.py wgpu                      # minutes on a CPU Vulkan driver
"""

from __future__ import annotations

import argparse

import numpy as np
import ruda


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("backend", nargs="?", default="host", help="a ruda backend: host, cuda, torch, wgpu")
    parser.add_argument("executor", nargs="?", default="threads", help="single-threaded, threads, processes")
    parser.add_argument("--n", type=int, default=4000, help="the side of the big square operand")
    parser.add_argument("--chunk", type=int, default=1000, help="the side of a chunk")
    args = parser.parse_args()

    # before anything imports cubed: Cubed reads its backend when it is imported
    xp = ruda.scale(args.backend, executor=args.executor, allowed_mem="2GB", max_workers=4)
    import cubed

    # checked against NumPy on a case small enough to compute whole
    host = np.random.default_rng(0).standard_normal((300, 200)).astype(np.float32)
    small = xp.asarray(host, chunks=(100, 100))
    np.testing.assert_allclose(np.asarray((small @ small.mT).compute()), host @ host.T, rtol=1e-4, atol=1e-3)
    total = cubed.nansum(xp.where(small > 1, xp.nan, small))  # a chunked reduction that skips NaN
    want = np.nansum(np.where(host > 1, np.nan, host))
    np.testing.assert_allclose(float(np.asarray(total.compute())), want, rtol=1e-4)
    print(f"chunked matmul and nansum of (300, 200) on {args.backend} match NumPy")

    # the same code at any size whose chunks fit allowed_mem: a @ a made, multiplied and summed
    # chunk by chunk, never whole in memory (Cubed refuses a plan whose tasks would not fit)
    a = cubed.random.random((args.n, args.n), dtype=xp.float32, chunks=(args.chunk, args.chunk))
    column_sums = xp.sum(a @ a, axis=0)
    print(
        f"a @ a: a {a.nbytes / 1e9:.2f} GB operand and product, in {args.chunk} x {args.chunk} chunks, "
        f"each task within {a.spec.allowed_mem / 1e9:.1f} GB"
    )
    sums = np.asarray(column_sums.compute())
    # each entry of a @ a sums n products of two uniform [0, 1) numbers: about n / 4
    print(f"column sums of a @ a: {sums[:3]} ... (about n * n / 4 = {args.n * args.n / 4:.3g} each)")


if __name__ == "__main__":  # Cubed's processes executor starts its workers by spawning
    main()
