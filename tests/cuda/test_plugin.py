"""The cuda plugin's contract with the core; runs on any machine, GPU or not."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest
import ruda
from ruda.plugin import install_command
from ruda_cuda._plugin import PLUGIN, CudaBackend


def test_registered_under_cuda() -> None:
    assert "cuda" in ruda.installed()
    assert isinstance(PLUGIN, CudaBackend)
    assert PLUGIN.device_kinds == ("cuda",)
    assert PLUGIN.module == "ruda_cuda"


def test_import_ruda_and_plugin_import_no_gpu_library() -> None:
    code = (
        "import sys, ruda, ruda_cuda._plugin; ruda.backends(); "
        "print(sorted(m for m in ('cupy', 'cuda.bindings') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # probing may import CuPy (when installed) to ask the driver; plain import must not
    code_plain = "import sys, ruda, ruda_cuda._plugin; print('cupy' in sys.modules)"
    plain = subprocess.run([sys.executable, "-c", code_plain], capture_output=True, text=True, check=True)
    assert plain.stdout.strip() == "False"
    assert "cuda.bindings" not in out.stdout


def test_probe_never_raises_and_explains() -> None:
    status = PLUGIN.probe()
    if status.available:
        assert status.devices and all(d.kind == "cuda" for d in status.devices)
        assert "cupy" in status.details
    else:
        assert status.reason
        if importlib.util.find_spec("cupy") is None:
            assert status.reason == "CuPy not installed"
            assert install_command("cuda") in (status.fix or "")


def test_backends_row_matches_probe() -> None:
    row = {b.name: b for b in ruda.backends()}["cuda"]
    assert row.distribution == "ruda-cuda"
    assert row.available == PLUGIN.probe().available


def test_to_device_on_a_machine_cuda_cannot_use_names_the_reason() -> None:
    status = PLUGIN.probe()
    if status.available or importlib.util.find_spec("cupy") is None:
        pytest.skip("needs CuPy installed on a machine whose CUDA it cannot use")
    with pytest.raises(ruda.BackendUnavailableError, match="ruda_cuda cannot reach a GPU") as caught:
        ruda.to_device(np.arange(3.0), "cuda:0")
    assert status.reason in str(caught.value)
