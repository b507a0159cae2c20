"""The second backend of the router tests: ruda's torch backend when it can run here, else
``array_api_compat.torch`` (any Array API namespace is a valid backend), else skip with why."""

from __future__ import annotations

from typing import Any

import pytest
import ruda


def second_backend() -> Any:
    """A namespace over a different array library than the host's: migration must really move."""
    try:
        return ruda.namespace("torch")
    except (ruda.BackendNotFoundError, ruda.BackendUnavailableError):
        pass
    try:
        import array_api_compat.torch as compat_torch
    except ImportError as err:
        pytest.skip(
            f"router tests need a second array library: torch is not importable ({err})",
            allow_module_level=True,
        )
    return compat_torch
