"""ruda.host as Cubed's backend on a real Dask cluster: a ``distributed.LocalCluster`` of two
worker processes on loopback, started and stopped by the test, driven by Cubed's Dask executor as
``ruda.scale("host", executor="dask", ...)`` sets it up.
Results are checked against NumPy, and a plan whose tasks would need more than Cubed's
``allowed_mem`` is refused with Cubed's error before anything runs.

Cubed reads its backend namespace from ``CUBED_BACKEND_ARRAY_API_MODULE`` when it is imported, so
the workload runs in a fresh interpreter (a script file: the cluster spawns its workers, which
inherit the variable ``ruda.scale`` set and so compute every chunk with ruda.host too).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib.metadata import version
from pathlib import Path

import pytest

pytest.importorskip("cubed", reason="cubed is not installed (requirements-dev.txt has it)")
INSTALL = "pip install 'dask[distributed]<2026.7' (requirements-dev.txt has it)"
pytest.importorskip("dask", reason=f"dask is not installed: {INSTALL}")
pytest.importorskip("distributed", reason=f"distributed is not installed: {INSTALL}")


def _release(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


if _release(version("distributed")) >= (2026, 7) and _release(version("cubed")) <= (0, 27):
    pytest.skip(
        f"Cubed {version('cubed')}'s Dask executor finds no workers with distributed "
        f"{version('distributed')} (from 2026.7 an async Client's scheduler_info() lists none): "
        f"{INSTALL}",
        allow_module_level=True,
    )

WORKLOAD = textwrap.dedent(
    """
    import sys

    import numpy as np
    import ruda
    from distributed import Client, LocalCluster


    def worker_backend():
        import cubed.backend_array_api

        return cubed.backend_array_api.namespace.__name__


    def tasks_run(dask_worker):
        return dask_worker.state.executed_count


    def main():
        work_dir = sys.argv[1]
        with (
            LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                memory_limit="1GiB",  # Cubed checks that each worker thread has allowed_mem
            ) as cluster,
            Client(cluster) as client,
        ):
            client.wait_for_workers(2)  # Cubed's executor refuses a cluster with none up yet
            cxp = ruda.scale(
                "host",
                executor="dask",
                compute_kwargs={"address": cluster.scheduler_address},
                allowed_mem="50MB",
                reserved_mem=0,
                work_dir=work_dir,
            )
            import cubed

            host = np.random.default_rng(0).standard_normal((400, 300))
            a = cxp.asarray(host, chunks=(50, 50))  # 8 x 6 chunks
            assert a.spec.executor.name == "dask", a.spec
            checks = {
                "sum over axis 0": (cxp.sum(a * 2 + 1, axis=0), np.sum(host * 2 + 1, axis=0)),
                "mean over axis 1": (cxp.mean(a, axis=1), np.mean(host, axis=1)),
                "chunked matmul": (a @ cxp.matrix_transpose(a), host @ host.T),
            }
            results = cubed.compute(*(lazy for lazy, _ in checks.values()))
            for (name, (_, want)), got in zip(checks.items(), results, strict=True):
                np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-10, err_msg=name)

            backends = client.run(worker_backend)
            assert sorted(backends.values()) == ["ruda.host", "ruda.host"], backends
            ran = client.run(tasks_run)
            assert len(ran) == 2 and all(n > 0 for n in ran.values()), ran

            # 2000 x 2000 float64 in one chunk: 32 MB to read and 32 MB to write per task
            whole = cxp.ones((2000, 2000), chunks=(2000, 2000))
            try:
                cxp.sum(whole + 1, axis=0).compute()
            except ValueError as err:
                assert "exceeds allowed_mem" in str(err), err
            else:
                raise AssertionError("a plan over allowed_mem ran")
            assert client.run(tasks_run) == ran, "the refused plan sent tasks to the cluster"
            # the same work in chunks that fit runs
            chunked = cxp.ones((2000, 2000), chunks=(500, 500))
            got = np.asarray(cxp.sum(chunked + 1, axis=0).compute())
            np.testing.assert_array_equal(got, np.sum(np.ones((2000, 2000)) + 1, axis=0))
        print("ok", len(checks) + 2)


    if __name__ == "__main__":  # the cluster starts its workers by spawning
        main()
    """
)


def test_cubed_on_ruda_host_on_a_dask_cluster(tmp_path: Path) -> None:
    script = tmp_path / "workload.py"
    script.write_text(WORKLOAD)
    env = {k: v for k, v in os.environ.items() if k != "CUBED_BACKEND_ARRAY_API_MODULE"}
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "cubed")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0 and "ok 5" in done.stdout, done.stdout[-2000:] + done.stderr[-4000:]
