"""The OpenGL adapter, where wgpu offers one (Mesa's llvmpipe on a CPU machine): an API without
64-bit types, where ruda indexes with int32, and whose shader compiler treats float arithmetic
more loosely than Vulkan's (it lost bits of ``exp``'s argument reduction written with ``fma``).

The API is chosen once a process, so the accuracy, indexing and sorting tests run again in a
fresh process with ``RUDA_WGPU_BACKEND=gl``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: the tests that run again on OpenGL: float32 accuracy, int32 indices, sorting and searching
MODULES = [
    "tests/wgpu/test_float32_accuracy.py",
    "tests/wgpu/test_indexing_sets.py",
    "tests/wgpu/test_sorting_searching.py",
]
PROBE = "import ruda_wgpu as xp; print(xp.__array_namespace_info__().default_device().description)"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, RUDA_WGPU_BACKEND="gl")
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="module")
def opengl_adapter() -> str:
    probe = _run("-c", PROBE)
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"wgpu offers no OpenGL adapter here: {last}")
    return probe.stdout.strip().splitlines()[-1]


def test_accuracy_indexing_and_sorting_hold_on_opengl(opengl_adapter):
    assert "OpenGL" in opengl_adapter
    run = _run("-m", "pytest", "-q", "-p", "no:cacheprovider", *MODULES)
    assert run.returncode == 0, f"on {opengl_adapter}:\n{run.stdout[-4000:]}{run.stderr[-2000:]}"
    assert " passed" in run.stdout.splitlines()[-1]
