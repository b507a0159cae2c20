"""ruda.host as Cubed's backend: chunked work with bounded memory, checked against NumPy.

Cubed reads its backend namespace from ``CUBED_BACKEND_ARRAY_API_MODULE`` when it is imported,
so each case runs in a fresh interpreter. Cubed calls ``nansum`` on the backend for its
``nansum`` and ``nanmean``, which the ruda namespaces bind beyond the standard.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("cubed", reason="cubed is not installed (requirements-dev.txt has it)")

WORKLOAD = textwrap.dedent(
    """
    import numpy as np
    import cubed
    import cubed.array_api as cxp

    host = np.random.default_rng(0).standard_normal((64, 48))
    host[3, 5] = np.nan
    spec = cubed.Spec(allowed_mem="200MB")
    a = cxp.asarray(host, chunks=(16, 16), spec=spec)
    clean = cxp.asarray(np.nan_to_num(host), chunks=(16, 16), spec=spec)
    checks = {
        "sum": (cxp.sum(clean * 2 + 1, axis=0), np.sum(np.nan_to_num(host) * 2 + 1, axis=0)),
        "mean": (cxp.mean(clean, axis=1), np.mean(np.nan_to_num(host), axis=1)),
        "matmul": (clean @ cxp.matrix_transpose(clean), np.nan_to_num(host) @ np.nan_to_num(host).T),
        "nansum": (cubed.nansum(a), np.nansum(host)),
        "nanmean": (cubed.nanmean(a, axis=0), np.nanmean(host, axis=0)),
    }
    for name, (lazy, want) in checks.items():
        got = np.asarray(lazy.compute(executor=EXECUTOR))
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10, err_msg=name)
    print("ok", len(checks))
    """
)


@pytest.mark.parametrize("executor", ["single-threaded", "threads", "processes"])
def test_cubed_on_ruda_host(executor: str) -> None:
    from cubed.runtime.create import create_executor

    assert create_executor(executor) is not None  # the executor exists in this Cubed
    code = f"EXECUTOR = __import__('cubed.runtime.create', fromlist=['x']).create_executor({executor!r})\n"
    env = {**os.environ, "CUBED_BACKEND_ARRAY_API_MODULE": "ruda.host"}
    done = subprocess.run(
        [sys.executable, "-c", code + WORKLOAD], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and "ok 5" in done.stdout, done.stderr[-4000:]
