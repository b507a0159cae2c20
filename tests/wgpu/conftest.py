"""Fixtures of the wgpu tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture
def cache_folder(tmp_path: Path) -> Path:
    """An empty cache folder but for the adapter verdicts (each adapter's probe takes seconds)."""
    from ruda_wgpu import _devices

    verdicts = _devices.cache_dir() / "wgpu-adapters.json"
    if verdicts.exists():
        shutil.copy(verdicts, tmp_path / verdicts.name)
    return tmp_path
