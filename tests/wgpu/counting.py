"""Counting what a device records, for tests that pin how many kernels an operation takes."""

from __future__ import annotations

from typing import Any

import pytest


def dispatch_count(xp: Any) -> int:
    """The default device's dispatches so far, recorded (pending) work run first: the difference
    of two calls is what the code between them dispatched."""
    xp.synchronize()
    return int(xp.memory_stats()["dispatches"])


def calls_of(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[tuple[Any, ...]]:
    """The arguments of every call of the method ``owner.name`` from now on (it still runs): a
    list the caller may clear between rounds."""
    calls: list[tuple[Any, ...]] = []
    method = getattr(owner, name)

    def counting(self: Any, *args: Any) -> Any:
        calls.append(args)
        return method(self, *args)

    monkeypatch.setattr(owner, name, counting)
    return calls


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[None]:
    """A list that grows by one at every call of ``owner.name`` (a function or a method) from
    now on, which still runs; unlike :func:`calls_of` it keeps nothing of a call, so that the
    buffers a call was given go back to the pool as they would without it."""
    calls: list[None] = []
    function = getattr(owner, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(None)
        return function(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return calls


def reduction_scratch_made_anew(dev: Any) -> None:
    """Replace each of the device's scratch buffers for reductions' partial results by one twice
    its size, as a longer reduction than any before would (the old ones go back to the pool)."""
    with dev._lock:
        for slot, store in list(dev._scratch.items()):
            if str(slot[0]).startswith("reduce"):
                dev.scratch(slot, 2 * store.nbytes)
