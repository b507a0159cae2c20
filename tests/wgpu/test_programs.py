"""Random programs of elementwise operations, views, in-place writes, drops and reads, run fused,
unfused and on NumPy (see :mod:`ruda.testing.programs`): what lazy execution does between calls."""

from __future__ import annotations

import pytest
import ruda_wgpu
from ruda.testing.programs import run_programs
from ruda_wgpu import _fusion

from tests.wgpu.dtype_support import keeps_float32_subnormals, needs

#: every dtype class the device has everywhere, of one and two widths (complex64: float32 pairs)
DTYPES = ("float32", "float16", "int32", "uint8", "bool", "complex64")


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


@pytest.mark.slow
@needs("complex128", "float64", why="the programs mix complex128 with its float64 parts")
@pytest.mark.timeout(1800)  # 1000 programs: about 3 minutes on lavapipe
def test_many_complex_programs_fused_unfused_and_on_numpy_agree():
    # both complex widths together (a complex64 and a complex128 operand make a complex128), with
    # the real dtypes their parts, casts and real, imag and abs give
    run_programs(
        ruda_wgpu,
        set_fusion=_fusion.set_enabled,
        dtypes=("complex64", "complex128", "float32", "float64", "bool"),
        programs=1000,
        **_subnormals(),
    )
