"""Fixtures that install fake backend distributions, so the registry's failure modes are
exercised through real entry points (dist-info folders on sys.path), not mocks."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from ruda import _registry


@pytest.fixture
def install_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """Install a fake distribution whose ``ruda.backends`` entry point is ``name = value``,
    with an optional module of source code beside it."""

    def install(name: str, value: str, module: str | None = None, source: str = "") -> None:
        dist = tmp_path / f"fake_{name}-1.2.3.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fake-{name}\nVersion: 1.2.3\n")
        (dist / "entry_points.txt").write_text(f"[ruda.backends]\n{name} = {value}\n")
        if module:
            (tmp_path / f"{module}.py").write_text(source)
        _registry.clear_cache()

    monkeypatch.syspath_prepend(str(tmp_path))
    _registry.clear_cache()
    yield install
    _registry.clear_cache()
    for mod in [m for m in sys.modules if m.startswith("fake_")]:
        del sys.modules[mod]
