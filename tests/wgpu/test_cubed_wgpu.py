"""ruda_wgpu as Cubed's backend: chunk by chunk on the GPU, in this process or in worker processes
(arrays pickle as host copies), checked against NumPy.

Cubed's ``mean`` divides a float64 total by an int64 count: ruda_wgpu promotes an integer with a
floating dtype to the floating one (as PyTorch does), so it runs here too where the device has
float64.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("cubed", reason="cubed is not installed (requirements-dev.txt has it)")
pytest.importorskip("ruda_wgpu", reason="ruda-wgpu is not installed")

WORKLOAD = textwrap.dedent(
    """
    import sys

    import numpy as np
    import cubed
    import cubed.array_api as cxp
    from cubed.runtime.create import create_executor


    def main():
        executor = create_executor(sys.argv[1])
        host = np.random.default_rng(0).standard_normal((64, 48)).astype(np.float32)
        host[3, 5] = np.nan
        clean = np.nan_to_num(host)
        spec = cubed.Spec(allowed_mem="200MB")
        a = cxp.asarray(host, chunks=(16, 16), spec=spec)
        c = cxp.asarray(clean, chunks=(16, 16), spec=spec)
        checks = {
            "sum": (cxp.sum(c * 2 + 1, axis=0), np.sum(clean * 2 + 1, axis=0)),
            "matmul": (c @ cxp.matrix_transpose(c), clean @ clean.T),
            "nansum": (cubed.nansum(a), np.nansum(host)),
        }
        if "float64" in cxp.__array_namespace_info__().dtypes():
            checks["mean"] = (cxp.mean(c, axis=1), np.mean(clean, axis=1))
        for name, (lazy, want) in checks.items():
            got = np.asarray(lazy.compute(executor=executor))
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3, err_msg=name)
        print("ok", len(checks), sorted(checks))


    if __name__ == "__main__":  # the processes executor starts its workers by spawning
        main()
    """
)


@pytest.mark.parametrize("executor", ["single-threaded", "processes"])
def test_cubed_on_ruda_wgpu(executor: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "workload.py"
    script.write_text(WORKLOAD)
    env = {**os.environ, "CUBED_BACKEND_ARRAY_API_MODULE": "ruda_wgpu"}
    done = subprocess.run(
        [sys.executable, str(script), executor], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and "ok " in done.stdout, done.stderr[-4000:]
    import ruda_wgpu

    if "float64" in ruda_wgpu.__array_namespace_info__().dtypes():
        assert "'mean'" in done.stdout, done.stdout
