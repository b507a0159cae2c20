"""A pytest plugin for the official suite's process: ruda_wgpu's default device takes the code
paths of a GPU (long rows a workgroup a row, sorts a workgroup a row up to 4096 keys, a GPU's
matmul split rule, ...) though its adapter is a CPU one, so that the kernels only a GPU would
run are checked, as real WGSL on lavapipe, on a machine without one. Waits still do not spin
(they are chosen when the device opens)."""

from __future__ import annotations

from typing import Any


def pytest_configure(config: Any) -> None:
    import ruda_wgpu

    ruda_wgpu.__array_namespace_info__().default_device().cpu = False
