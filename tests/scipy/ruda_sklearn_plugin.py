"""A pytest plugin that runs scikit-learn's own array-API tests on ruda namespaces.

scikit-learn parametrizes those tests with the namespaces ``sklearn.utils._array_api`` yields
(numpy, array_api_strict, cupy, torch on each device, dpnp) and imports each by its name in the
test (``_array_api_for_tests``). This plugin leaves scikit-learn's files alone: before its test
modules are collected it makes those generators yield the ruda namespaces asked for instead,
float64 and float32 each, and for the mixed-input tests each namespace with NumPy both ways.
A namespace that is not a module of its own (the router) is entered in ``sys.modules`` under its
id, so that scikit-learn's import finds it.

Usage (SCIPY_ARRAY_API=1 must be set, as for scikit-learn's own array-API runs)::

    SCIPY_ARRAY_API=1 python -m pytest --pyargs sklearn -p tests.scipy.ruda_sklearn_plugin \
        --ruda-backend wgpu -k array_api

The NumPy-only checks (``array_namespace=numpy``) and the array_api_strict consistency checks
stay as scikit-learn has them.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest

from tests.scipy import ruda_namespaces

#: the backends the plugin takes (ruda.host's and ruda_torch's arrays are NumPy's and torch's,
#: which scikit-learn tests itself)
BACKENDS = ("wgpu", "router", "remote")
_STATE: dict[str, Any] = {"names": (), "remote": None}


class _Module:
    """A namespace under a module name: scikit-learn imports namespaces by name, and a Router is an
    object, not a module. Everything else goes to the namespace."""

    def __init__(self, namespace: Any, name: str) -> None:
        self._namespace = namespace
        self.__name__ = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._namespace, attr)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ruda", "ruda namespaces in scikit-learn's array-API tests")
    group.addoption(
        "--ruda-backend",
        action="append",
        default=[],
        help=f"a ruda namespace for scikit-learn's array-API tests ({', '.join(BACKENDS)}); repeatable; "
        "default: $RUDA_SKLEARN_BACKENDS (comma-separated) or wgpu",
    )


def pytest_configure(config: pytest.Config) -> None:
    import sklearn.utils._array_api as array_api
    import sklearn.utils.estimator_checks as estimator_checks

    names = config.getoption("--ruda-backend") or os.environ.get("RUDA_SKLEARN_BACKENDS", "wgpu").split(",")
    modules = []
    for name in names:
        if name not in BACKENDS:
            raise pytest.UsageError(f"--ruda-backend {name!r}: use one of {', '.join(BACKENDS)}")
        if name == "remote":
            _STATE["remote"] = ruda_namespaces.RemoteSession()
        namespace = ruda_namespaces.build(name)
        if isinstance(namespace, types.ModuleType):
            module = namespace.__name__
        else:
            module = f"ruda_{name}_namespace"
            sys.modules[module] = _Module(namespace, module)  # type: ignore[assignment]
        modules.append(module)
    _STATE["names"] = tuple(modules)
    for owner in (array_api, estimator_checks):
        owner.yield_namespace_device_dtype_combinations = _combinations
        owner.yield_mixed_namespace_input_permutations = _mixed
    array_api.yield_namespaces = _namespaces


def pytest_unconfigure(config: pytest.Config) -> None:
    if _STATE["remote"] is not None:
        _STATE["remote"].close()
        _STATE["remote"] = None


def _namespaces(include_numpy_namespaces: bool = True) -> Iterator[str]:
    yield from _STATE["names"]


def _combinations(include_numpy_namespaces: bool = True) -> Iterator[tuple[str, None, str]]:
    """(namespace, device, dtype) as scikit-learn's generator yields them: the default device."""
    for name in _STATE["names"]:
        for dtype in ("float64", "float32"):
            yield name, None, dtype


def _mixed() -> Iterator[tuple[Any, Any, str]]:
    """Inputs of two namespaces: NumPy to each ruda namespace and back."""
    from sklearn.utils._array_api import NamespaceAndDevice

    for name in _STATE["names"]:
        numpy, ours = NamespaceAndDevice("numpy", None), NamespaceAndDevice(name, None)
        yield numpy, ours, f"numpy to {name}"
        yield ours, numpy, f"{name} to numpy"
