"""Counting what a device records, for tests that pin how many kernels an operation takes."""

from __future__ import annotations

from typing import Any


def dispatch_count(xp: Any) -> int:
    """The default device's dispatches so far, recorded (pending) work run first: the difference
    of two calls is what the code between them dispatched."""
    xp.synchronize()
    return int(xp.memory_stats()["dispatches"])
