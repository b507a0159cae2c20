"""Random programs of elementwise operations, views, in-place writes, drops and reads, run fused,
unfused and on NumPy (see :mod:`ruda.testing.programs`): what lazy execution does between calls."""

from __future__ import annotations

import pytest
import ruda_wgpu
from ruda.testing.programs import run_programs
from ruda_wgpu import _fusion

from tests.wgpu.dtype_support import keeps_float32_subnormals

#: every dtype class the device has everywhere, of one and two widths
DTYPES = ("float32", "float16", "int32", "uint8", "bool")


def _subnormals() -> dict[str, bool]:
    """How the device's float32 arithmetic treats subnormals (NVIDIA's flushes them, as WGSL
    allows), as run_programs takes it."""
    return {"float32_subnormals": keeps_float32_subnormals()}


def test_programs_fused_unfused_and_on_numpy_agree():
    run_programs(ruda_wgpu, set_fusion=_fusion.set_enabled, dtypes=DTYPES, **_subnormals())


def test_programs_alone_and_on_numpy_agree():
    # without the unfused run, which takes buffers from the same pool between the fused steps,
    # results and temporaries get the buffers they would in a program of their own
    run_programs(ruda_wgpu, dtypes=DTYPES, **_subnormals())


@pytest.mark.slow
@pytest.mark.timeout(1800)  # 3000 programs: 5-11 minutes on lavapipe
def test_many_programs_fused_unfused_and_on_numpy_agree():
    run_programs(
        ruda_wgpu, set_fusion=_fusion.set_enabled, dtypes=DTYPES, programs=3000, steps=60, **_subnormals()
    )
