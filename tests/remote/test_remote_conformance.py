"""The shared property-based checks of ruda.testing, run through a loopback server backed by ruda.host."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import ruda_remote
from ruda.testing.conformance import ConformanceChecks


@pytest.fixture(autouse=True, scope="module")
def _remote_default_device(server) -> Iterator[None]:
    device = ruda_remote.RemoteDevice(server.url, timeout=60)
    ruda_remote.set_default_device(device)
    yield
    ruda_remote.set_default_device(None)
    device.close()


class TestRemoteConformance(ConformanceChecks):
    xp = ruda_remote
    max_examples = 15
