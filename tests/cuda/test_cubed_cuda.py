"""ruda_cuda as Cubed's backend: what Cubed needs from it (a host copy through ``np.asarray``,
arrays that pickle, the ``nan*`` reductions on the device), and Cubed through ``ruda.scale`` on
every local executor, checked against NumPy, with every chunk computed on the GPU.

Cubed reads its backend module when it is imported, so the Cubed workloads run in a fresh
interpreter (a script file: the processes executor spawns its workers, which import it).
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
import ruda

_ROW = {b.name: b for b in ruda.backends()}["cuda"]
if not _ROW.available:
    pytest.skip(f"cuda backend unavailable: {_ROW.reason} (fix: {_ROW.fix})", allow_module_level=True)

import cupy  # noqa: E402
import ruda_cuda as xp  # noqa: E402

pytestmark = pytest.mark.gpu


def test_numpy_asarray_is_a_host_copy() -> None:
    x = xp.reshape(xp.arange(12, dtype=xp.float32), (3, 4))
    host = np.asarray(x.mT)  # a strided view too
    assert type(host) is np.ndarray and host.dtype == np.float32
    np.testing.assert_array_equal(host, np.arange(12, dtype=np.float32).reshape(3, 4).T)
    np.testing.assert_array_equal(np.asarray(x, dtype=np.float64), np.arange(12.0).reshape(3, 4))
    with pytest.raises(ValueError, match="without a copy"):
        np.asarray(x, copy=False)


@pytest.mark.parametrize(
    "host",
    [
        np.arange(24, dtype=np.float64).reshape(2, 3, 4),
        np.array(-0.0, dtype=np.float32),
        np.array([1 + 2j, np.nan], dtype=np.complex64),
        np.array([True, False]),
        np.zeros((0, 3), dtype=np.int16),
    ],
    ids=["float64-3d", "negative-zero-0d", "complex64", "bool", "empty"],
)
def test_arrays_pickle_to_the_current_device_as_ruda_cuda_arrays(host: np.ndarray) -> None:
    x = xp.asarray(host)
    back = pickle.loads(pickle.dumps(x))
    assert type(back) is xp.Array
    assert back.dtype == x.dtype and back.shape == x.shape
    assert int(back.device.id) == int(cupy.cuda.Device().id)
    assert back.get().tobytes() == host.tobytes()  # every bit: -0.0 and NaN too


def test_a_view_pickles_as_its_own_values() -> None:
    x = xp.reshape(xp.arange(20, dtype=xp.int32), (4, 5))[1:, ::2]
    back = pickle.loads(pickle.dumps(x))
    assert type(back) is xp.Array
    np.testing.assert_array_equal(back.get(), np.arange(20, dtype=np.int32).reshape(4, 5)[1:, ::2])


@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmean", "nanmin", "nanmax"])
def test_nan_reductions_stay_on_the_device(name: str) -> None:
    host = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]], dtype=np.float32)
    got = getattr(xp, name)(xp.asarray(host), axis=1)
    assert type(got) is xp.Array and got.dtype == xp.float32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy warns on the all-NaN row
        want = getattr(np, name)(host, axis=1)
    np.testing.assert_allclose(got.get(), want, rtol=1e-6)


WORKLOAD = textwrap.dedent(
    """
    import sys

    import numpy as np
    import ruda


    def on_the_gpu(block):
        # runs in the executor's worker: 1 where the chunk is a ruda_cuda (CuPy) array
        import cupy
        import ruda_cuda

        return ruda_cuda.ones_like(block) if type(block) is ruda_cuda.Array else block * 0 - 1


    def main():
        executor = sys.argv[1]
        xp = ruda.scale("cuda", executor=executor, allowed_mem="500MB", max_workers=2)
        import cubed

        host = np.random.default_rng(0).standard_normal((96, 64))
        host[3, 5] = np.nan
        clean = np.nan_to_num(host)
        a = xp.asarray(host, chunks=(32, 32))
        c = xp.asarray(clean, chunks=(32, 32))
        checks = {
            "sum": (xp.sum(c * 2 + 1, axis=0), np.sum(clean * 2 + 1, axis=0)),
            "mean": (xp.mean(c, axis=1), np.mean(clean, axis=1)),
            "matmul": (c @ xp.matrix_transpose(c), clean @ clean.T),
            "nansum": (cubed.nansum(a), np.nansum(host)),
            "nanmean": (cubed.nanmean(a, axis=0), np.nanmean(host, axis=0)),
            "float32 matmul": (
                xp.astype(c, xp.float32) @ xp.astype(xp.matrix_transpose(c), xp.float32),
                (clean.astype(np.float32) @ clean.T.astype(np.float32)),
            ),
        }
        for name, (lazy, want) in checks.items():
            got = lazy.compute()
            assert type(got).__module__.startswith("ruda_cuda"), (name, type(got))
            tol = 1e-4 if "float32" in name else 1e-10
            np.testing.assert_allclose(got.get(), want, rtol=tol, atol=tol, err_msg=name)
        marks = cubed.map_blocks(on_the_gpu, c, dtype=c.dtype).compute()
        assert bool((marks == 1).all()), "a chunk was not a ruda_cuda array in the worker"
        print("ok", len(checks) + 1)


    if __name__ == "__main__":
        main()
    """
)


@pytest.mark.skipif(importlib.util.find_spec("cubed") is None, reason="cubed is not installed")
@pytest.mark.parametrize("executor", ["single-threaded", "threads", "processes"])
def test_cubed_on_ruda_cuda(executor: str, tmp_path: Path) -> None:
    script = tmp_path / "workload.py"
    script.write_text(WORKLOAD)
    env = {k: v for k, v in os.environ.items() if k != "CUBED_BACKEND_ARRAY_API_MODULE"}
    done = subprocess.run(
        [sys.executable, str(script), executor],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and "ok 7" in done.stdout, done.stdout[-2000:] + done.stderr[-4000:]
