"""Every example in examples/ runs to the end, so that none can break unnoticed."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import ruda

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.py"))


def _available(name: str) -> bool:
    return any(b.name == name and b.available for b in ruda.backends())


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs(path: Path) -> None:
    needs = path.stem.split("_")[0]
    if needs in ("cuda", "wgpu") and not _available(needs):
        pytest.skip(f"{path.name} needs the {needs} backend, which cannot run here")
    if needs == "cubed" and importlib.util.find_spec("cubed") is None:
        pytest.skip(f"{path.name} needs cubed, which is not installed")
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    if path.stem == "least_squares":  # every available backend finds the line y = 3x + 2
        fits = [line for line in done.stdout.splitlines() if "y = " in line]
        assert fits and all("y = 3.00" in line and "x + 1.9" in line for line in fits), done.stdout
