"""Large arrays: the device's largest buffer."""

from __future__ import annotations

import pytest
import ruda_wgpu as xp


def test_arrays_beyond_the_largest_buffer_raise_memory_error() -> None:
    dev = xp.__array_namespace_info__().default_device()
    xp.asarray([0.0]) + 1  # (opens the device)
    largest = dev.pool.largest
    with pytest.raises(MemoryError, match="largest buffer"):
        xp.empty((largest // 4 + 1,), dtype=xp.float32)
    before = xp.memory_stats()
    x = xp.empty(((largest - 1000) // 4,), dtype=xp.float32)  # (its size class is cut to the largest)
    assert xp.memory_stats()["allocated_bytes"] - before["allocated_bytes"] in (0, largest)
    del x
