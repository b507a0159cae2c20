"""Fixtures of the router tests."""

from __future__ import annotations

from typing import Any

import pytest
from router_backends import second_backend


@pytest.fixture(scope="session")
def torch_ns() -> Any:
    return second_backend()
