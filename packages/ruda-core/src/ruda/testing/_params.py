"""Parametrise a test over every available backend namespace."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import pytest

from ruda import _registry

F = TypeVar("F", bound=Callable[..., Any])

#: Comma-separated backend names; when set, only these run (e.g. ``RUDA_TEST_BACKENDS=host,wgpu``).
ENV_FILTER = "RUDA_TEST_BACKENDS"


def backend_params(names: Iterable[str] | None = None) -> list[Any]:
    """One ``pytest.param(namespace, id=name)`` per backend.

    With ``names``, exactly those backends: each one that is not installed or
    cannot run here becomes a skipped parameter whose reason says why, so a
    test never silently disappears. Without ``names``, every installed backend.
    """
    wanted = list(names) if names is not None else _registry.installed()
    env = os.environ.get(ENV_FILTER)
    if env:
        keep = {n.strip() for n in env.split(",") if n.strip()}
        wanted = [n for n in wanted if n in keep]
    params = []
    for name in wanted:
        try:
            xp = _registry.namespace(name)
        except (_registry.BackendNotFoundError, _registry.BackendUnavailableError) as err:
            params.append(pytest.param(None, id=name, marks=pytest.mark.skip(reason=str(err))))
            continue
        params.append(pytest.param(xp, id=name))
    return params


def parametrize_backends(*names: str) -> Callable[[F], F]:
    """Decorator: give the test an ``xp`` argument for each backend (all when none named)."""
    return pytest.mark.parametrize("xp", backend_params(names or None))
