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

DTYPES = ("float32", "float16", "int32", "uint8", "bool")


def test_programs_fused_unfused_and_on_numpy_agree():
    run_programs(ruda_cuda, set_fusion=_fusion.set_enabled, dtypes=DTYPES)


@pytest.mark.slow
def test_many_programs_fused_unfused_and_on_numpy_agree():
    run_programs(ruda_cuda, set_fusion=_fusion.set_enabled, dtypes=DTYPES, programs=3000, steps=60)
