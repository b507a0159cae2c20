"""``ruda.scale``: Cubed's namespace over a ruda backend, with the executor the caller names.

Cubed reads its backend module once, when it is imported, so every case that lets ``ruda.scale``
import Cubed runs in a fresh interpreter (a script file: the processes executor spawns workers,
which import the script's module). The refusals that come before Cubed is imported run here.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import ruda

if importlib.util.find_spec("cubed") is None:  # not imported here: it would pick its backend now
    pytest.skip("cubed is not installed (requirements-dev.txt has it)", allow_module_level=True)

WORKLOAD = textwrap.dedent(
    """
    import os
    import sys

    import numpy as np
    import ruda


    def worker_pid_and_backend(block):
        # runs in the executor's worker: which process, and which module computes the chunk
        import cubed.backend_array_api as backend

        ok = backend.namespace.__name__ == "ruda.host"
        return block * 0 + (os.getpid() if ok else -1)


    def main():
        executor = sys.argv[1]
        xp = ruda.scale("host", executor=executor, allowed_mem="100MB", reserved_mem="20MB", max_workers=2)
        import cubed

        host = np.random.default_rng(0).standard_normal((64, 48))
        host[3, 5] = np.nan
        clean = np.nan_to_num(host)
        a = xp.asarray(host, chunks=(16, 16))
        c = xp.asarray(clean, chunks=(16, 16))
        assert a.spec.executor.name == executor, a.spec
        assert a.spec.allowed_mem == 100_000_000, a.spec
        assert cubed.backend_array_api.namespace is ruda.host
        assert os.environ["CUBED_BACKEND_ARRAY_API_MODULE"] == "ruda.host"
        checks = {
            "sum": (xp.sum(c * 2 + 1, axis=0), np.sum(clean * 2 + 1, axis=0)),
            "mean": (xp.mean(c, axis=1), np.mean(clean, axis=1)),
            "matmul": (c @ xp.matrix_transpose(c), clean @ clean.T),
            "nansum": (cubed.nansum(a), np.nansum(host)),
            "nanmean": (cubed.nanmean(a, axis=0), np.nanmean(host, axis=0)),
        }
        for name, (lazy, want) in checks.items():
            got = np.asarray(lazy.compute())  # no executor given: the one ruda.scale chose
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10, err_msg=name)

        pids = np.asarray(cubed.map_blocks(worker_pid_and_backend, c, dtype=c.dtype).compute())
        assert (pids > 0).all(), "a worker computed with another backend than ruda.host"
        others = set(np.unique(pids).astype(int)) - {os.getpid()}
        print("worker processes", len(others))

        # one 2000 x 2000 float64 chunk: 32 MB in and 32 MB out per task, each counted twice (Zarr's
        # buffers), is over 100 MB: refused before anything runs; the same work in small chunks runs
        whole = xp.ones((2000, 2000), chunks=(2000, 2000))
        try:
            xp.sum(whole + 1, axis=0).compute()
        except ValueError as err:
            assert "exceeds allowed_mem" in str(err), err
        else:
            raise AssertionError("a plan over allowed_mem ran")
        chunked = xp.ones((2000, 2000), chunks=(200, 200))
        got = np.asarray(xp.sum(chunked + 1, axis=0).compute())
        np.testing.assert_array_equal(got, np.full(2000, 4000.0))
        print("ok", len(checks) + 2)


    if __name__ == "__main__":
        main()
    """
)


def _run(tmp_path: Path, code: str, *args: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "workload.py"
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if k != "CUBED_BACKEND_ARRAY_API_MODULE"}
    return subprocess.run(
        [sys.executable, str(script), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("executor", ["single-threaded", "threads", "processes"])
def test_scale_runs_cubed_on_ruda_host_with_the_chosen_executor(executor: str, tmp_path: Path) -> None:
    done = _run(tmp_path, WORKLOAD, executor)
    assert done.returncode == 0 and "ok 7" in done.stdout, done.stdout[-2000:] + done.stderr[-4000:]
    workers = int(done.stdout.split("worker processes")[1].split()[0])
    if executor == "processes":
        assert workers >= 1, done.stdout  # the chunks ran outside this process
    else:
        assert workers == 0, done.stdout


TORCH = textwrap.dedent(
    """
    import os
    import sys

    os.environ["RUDA_TORCH_DEVICE"] = sys.argv[1]  # before ruda_torch reads it

    import numpy as np
    import ruda
    import ruda_torch.cubed
    import torch

    xp = ruda.scale("torch", executor="single-threaded")
    import cubed

    assert cubed.backend_array_api.namespace is ruda_torch.cubed
    host = np.arange(12.0).reshape(3, 4)
    a = xp.asarray(host, chunks=(2, 2))
    got = xp.sum(a * 2, axis=0).compute()
    assert isinstance(got, torch.Tensor), type(got)
    assert got.device == torch.device(sys.argv[1]), got.device
    np.testing.assert_array_equal(np.asarray(got), np.sum(host * 2, axis=0))
    print("ok")
    """
)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda:0", marks=pytest.mark.gpu)])
def test_scale_gives_torch_through_its_cubed_namespace(device: str, tmp_path: Path) -> None:
    row = {b.name: b for b in ruda.backends()}.get("torch")
    if row is None or not row.available:
        pytest.skip(f"torch backend unavailable: {row and row.reason}")
    if device != "cpu" and not importlib.import_module("torch").cuda.is_available():
        pytest.skip("no CUDA device visible to torch (a CPU build or no GPU)")
    done = _run(tmp_path, TORCH, device)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-4000:]


ALREADY_IMPORTED = textwrap.dedent(
    """
    import cubed  # with no variable set: NumPy is its backend
    import ruda

    try:
        ruda.scale("host")
    except RuntimeError as err:
        print(err)
    else:
        raise AssertionError("ruda.scale accepted a Cubed imported with another backend")
    """
)


def test_scale_refuses_a_cubed_imported_with_another_backend(tmp_path: Path) -> None:
    done = _run(tmp_path, ALREADY_IMPORTED)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "already imported with 'numpy'" in done.stdout, done.stdout
    assert "CUBED_BACKEND_ARRAY_API_MODULE=ruda.host" in done.stdout, done.stdout


AGAIN = textwrap.dedent(
    """
    import ruda

    ruda.scale("host", executor="single-threaded")
    xp = ruda.scale(ruda.host, executor="threads", allowed_mem="300MB", max_workers=2)
    a = xp.ones((4, 4), chunks=(2, 2))
    assert a.spec.executor.name == "threads", a.spec
    assert a.spec.allowed_mem == 300_000_000, a.spec
    assert float(xp.sum(a).compute()) == 16.0
    print("ok")
    """
)


def test_scale_again_with_the_same_backend_changes_the_settings(tmp_path: Path) -> None:
    done = _run(tmp_path, AGAIN)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-4000:]


# -- refusals before Cubed is imported: nothing changes in this process ---------------------------


@pytest.fixture(autouse=False)
def unchanged() -> Iterator[None]:
    """The refusal leaves Cubed's backend variable as it found it."""
    before = os.environ.get("CUBED_BACKEND_ARRAY_API_MODULE")
    yield
    assert os.environ.get("CUBED_BACKEND_ARRAY_API_MODULE") == before


@pytest.mark.usefixtures("unchanged")
def test_unknown_executor_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="no executor 'gpu'.*threads, processes, dask, ray"):
        ruda.scale("host", executor="gpu")


@pytest.mark.usefixtures("unchanged")
@pytest.mark.skipif(importlib.util.find_spec("ray") is not None, reason="Ray is installed here")
def test_ray_executor_without_ray_says_what_to_install() -> None:
    with pytest.raises(ImportError, match=r"needs ray, which is not installed: pip install 'ray\[default\]'"):
        ruda.scale("host", executor="ray")


@pytest.mark.usefixtures("unchanged")
def test_executor_options_must_be_plain_values() -> None:
    with pytest.raises(TypeError, match="plain values"):
        ruda.scale("host", executor="processes", mp_context=object())


@pytest.mark.usefixtures("unchanged")
def test_unknown_backend_is_refused_by_the_registry() -> None:
    with pytest.raises(ruda.BackendNotFoundError):
        ruda.scale("tpu")


@pytest.mark.usefixtures("unchanged")
def test_a_backend_that_cannot_run_here_is_refused_with_its_reason() -> None:
    row = {b.name: b for b in ruda.backends()}.get("cuda")
    if row is None or row.available:
        pytest.skip("the cuda backend is not installed, or runs here")
    with pytest.raises(ruda.BackendUnavailableError, match="'cuda' is installed but unavailable"):
        ruda.scale("cuda", executor="processes")
