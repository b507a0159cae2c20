"""Random programs of elementwise operations, views, in-place writes, drops and reads, run fused,
unfused and on NumPy (see :mod:`ruda.testing.programs`): what pending chains do between calls."""

from __future__ import annotations

import pytest
import ruda
from ruda.testing.programs import run_programs

_ROW = {b.name: b for b in ruda.backends()}["cuda"]
if not _ROW.available:
    pytest.skip(f"cuda backend unavailable: {_ROW.reason} (fix: {_ROW.fix})", allow_module_level=True)

import ruda_cuda  # noqa: E402
from ruda_cuda import _fusion  # noqa: E402

pytestmark = pytest.mark.gpu

#: the standard's dtypes of one and two widths (ruda_cuda names no float16)
DTYPES = ("float32", "int32", "uint8", "bool", "complex64")
#: CuPy compiles its kernels with -ftz=true: float32 subnormals are zeros (see the README)
SUBNORMALS = {"float32_subnormals": False}


def test_programs_fused_unfused_and_on_numpy_agree():
    run_programs(ruda_cuda, set_fusion=_fusion.set_enabled, dtypes=DTYPES, **SUBNORMALS)


@pytest.mark.slow
@pytest.mark.timeout(1800)  # 3000 programs
def test_many_programs_fused_unfused_and_on_numpy_agree():
    run_programs(
        ruda_cuda, set_fusion=_fusion.set_enabled, dtypes=DTYPES, programs=3000, steps=60, **SUBNORMALS
    )
