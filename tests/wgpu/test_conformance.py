"""The shared property-based conformance checks, run on the WebGPU backend."""

from __future__ import annotations

from typing import ClassVar

import pytest
from ruda.testing.conformance import ConformanceChecks

ruda_wgpu = pytest.importorskip("ruda_wgpu", reason="ruda-wgpu is not installed")


class TestWgpuConformance(ConformanceChecks):
    xp = ruda_wgpu
    max_examples = 15
    # Every check of the kit covers a part this backend has: nothing is skipped.
    unsupported: ClassVar[dict[str, str]] = {}
