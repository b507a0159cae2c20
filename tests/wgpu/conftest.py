"""WebGPU tests run on whatever adapter wgpu finds (lavapipe in CI)."""

from __future__ import annotations

import os
import tempfile

# wgpu-native (through the Vulkan loader) warns when XDG_RUNTIME_DIR is unset; give it a private one.
if not os.environ.get("XDG_RUNTIME_DIR"):
    os.environ["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="ruda-wgpu-xdg-")
    os.chmod(os.environ["XDG_RUNTIME_DIR"], 0o700)


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Tests marked slow run only when asked for (``-m slow``)."""
    import pytest

    if "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        if "slow" in item.keywords and "tests/wgpu/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(skip)
