"""A pytest plugin that runs SciPy's own array-API tests on ruda namespaces.

SciPy's conftest.py parametrizes its ``xp`` fixture with the libraries it knows (numpy,
array_api_strict, torch, cupy, jax.numpy, dask.array), fixed when the conftest is imported. This
plugin leaves SciPy's files alone: just before a test's parameters are generated it replaces the
params of SciPy's ``xp`` fixture with the ruda namespaces asked for, so every test that uses
``xp`` (SciPy marks them ``array_api_backends``) runs on ruda instead.

Usage (SCIPY_ARRAY_API=1 must be set before SciPy is imported)::

    SCIPY_ARRAY_API=1 python -m pytest --pyargs scipy.special -p tests.scipy.ruda_scipy_plugin \
        --ruda-backend host -m array_api_backends

SciPy's skip/xfail markers name backends; ruda is none of them, so the plugin applies two kinds
itself: ``np_only=True`` (SciPy declares the test NumPy-only) and, unless --ruda-not-strict,
markers naming ``array_api_strict``, SciPy's stand-in for "a conforming namespace it has no special
code for", which is what a ruda namespace is to SciPy.

SciPy's fixture yields ``array_namespace(xp.empty(0))``: the router's and ruda_remote's own
namespaces, but array_api_compat's numpy and torch for ruda.host and ruda_torch, whose arrays are
NumPy's and torch's. --ruda-raw-namespace gives the tests the ruda namespace itself; SciPy's torch
quirks, which its tests recognise by the namespace (is_torch(xp)), then show up as failures.

SciPy's tests take float64 as the default float: its conftest makes it torch's default unless
SCIPY_DEFAULT_DTYPE says float32. The plugin does the same for ruda_wgpu (RUDA_WGPU_DEFAULT_FLOAT),
whose default is otherwise float32.

SciPy's ``devices`` fixture assumes the 2023.12 standard's list from ``info.devices()``; for ruda
namespaces, which return 2025.12's tuple, the plugin makes the fixture's value itself.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.scipy import ruda_namespaces

_STATE: dict[str, Any] = {"params": None, "remote": None}


class _Named:
    """A namespace with a ``__name__``: SciPy's fixture reads ``request.param.__name__`` to match its
    markers, and a Router is an object, not a module. Everything else goes to the namespace."""

    def __init__(self, namespace: Any, name: str) -> None:
        self._namespace = namespace
        self.__name__ = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._namespace, attr)

    def __repr__(self) -> str:
        return repr(self._namespace)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ruda", "ruda namespaces in SciPy's xp fixture")
    group.addoption(
        "--ruda-backend",
        action="append",
        default=[],
        help=f"a ruda namespace for SciPy's xp fixture ({', '.join(ruda_namespaces.NAMES)}); repeatable; "
        "default: $RUDA_SCIPY_BACKENDS (comma-separated) or host",
    )
    group.addoption(
        "--ruda-not-strict",
        action="store_true",
        help="do not apply SciPy's array_api_strict skip/xfail markers to ruda namespaces",
    )
    group.addoption(
        "--ruda-raw-namespace",
        action="store_true",
        help="give tests the ruda namespace itself, not array_namespace(xp.empty(0)) (array_api_compat's "
        "numpy or torch for ruda.host and ruda_torch)",
    )


def pytest_configure(config: pytest.Config) -> None:
    names = config.getoption("--ruda-backend") or os.environ.get("RUDA_SCIPY_BACKENDS", "host").split(",")
    if "wgpu" in names:  # before ruda_wgpu first makes an array
        os.environ.setdefault("RUDA_WGPU_DEFAULT_FLOAT", os.environ.get("SCIPY_DEFAULT_DTYPE", "float64"))
    params = []
    for name in names:
        if name == "remote":
            _STATE["remote"] = ruda_namespaces.RemoteSession()
        namespace = ruda_namespaces.build(name)
        if not hasattr(namespace, "__name__"):
            namespace = _Named(namespace, f"ruda_{name}")
        params.append(pytest.param(namespace, id=f"ruda-{name}", marks=pytest.mark.array_api_backends))
    _STATE["params"] = tuple(params)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _STATE["remote"] is not None:
        _STATE["remote"].close()
        _STATE["remote"] = None


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Give SciPy's ``xp`` fixture our params before pytest's fixture manager parametrizes it."""
    for fixturedef in metafunc._arg2fixturedefs.get("xp", ()):
        is_scipys = getattr(fixturedef.func, "__module__", "").startswith("scipy")
        if is_scipys and fixturedef.params is not None:
            fixturedef.params = list(_STATE["params"])
            fixturedef.ids = None


def _is_ruda(param: Any) -> bool:
    return any(param is p.values[0] for p in _STATE["params"] or ())


def _reason(item: pytest.Item, kind: str, strict: bool) -> str | None:
    """The reason of the first ``{kind}_xp_backends`` marker of ``item`` that covers a ruda namespace."""
    for marker in item.iter_markers(f"{kind}_xp_backends"):
        if marker.kwargs.get("np_only"):
            return "SciPy: np_only: " + (marker.kwargs.get("reason") or "do not run with non-NumPy backends")
        if strict and marker.args == ("array_api_strict",):
            return "SciPy: array_api_strict: " + (marker.kwargs.get("reason") or "")
    return None


def pytest_runtest_setup(item: pytest.Item) -> None:
    callspec = getattr(item, "callspec", None)
    if callspec is None or not _is_ruda(callspec.params.get("xp")):
        return
    strict = not item.config.getoption("--ruda-not-strict")
    reason = _reason(item, "skip", strict)
    if reason is not None:
        pytest.skip(reason)
    reason = _reason(item, "xfail", strict)
    if reason is not None:
        item.add_marker(pytest.mark.xfail(reason=reason, strict=False))


# a second pytest_fixture_setup in this module: pytest registers it by specname, and by a name that
# starts with "pytest_"
@pytest.hookimpl(tryfirst=True, specname="pytest_fixture_setup")
def pytest_fixture_setup_scipy_devices(fixturedef: Any, request: pytest.FixtureRequest) -> Any:
    """SciPy's ``devices`` fixture returns ``xp.__array_namespace_info__().devices() + [None]``: a
    list in the 2023.12 standard, but 2025.12 (which ruda follows, and the official suite checks)
    makes ``devices()`` a tuple, and a tuple plus a list raises TypeError. For a ruda namespace whose
    ``devices()`` is a tuple this hook gives SciPy's tests the same value as a list; every other
    fixture (and namespace, such as array_api_compat's numpy or torch) goes to SciPy's own."""
    if fixturedef.argname != "devices" or not getattr(fixturedef.func, "__module__", "").startswith("scipy"):
        return None
    callspec = getattr(request.node, "callspec", None)
    if callspec is None or not _is_ruda(callspec.params.get("xp")):
        return None
    devices = request.getfixturevalue("xp").__array_namespace_info__().devices()
    if not isinstance(devices, tuple):
        return None
    value = [*devices, None]
    # pytest_fixture_setup is firstresult: returning a value skips pytest's own implementation, which
    # is what otherwise caches it as (value, cache key, exception); FixtureDef.execute reads it back
    fixturedef.cached_result = (value, fixturedef.cache_key(request), None)
    return value


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: Any, request: pytest.FixtureRequest) -> Any:
    """With --ruda-raw-namespace, the tests get the ruda namespace itself rather than what SciPy's
    fixture makes of it: ``array_namespace(xp.empty(0))``, which for ruda.host and ruda_torch (whose
    arrays are NumPy's and torch's) is array_api_compat's numpy or torch namespace."""
    result = yield
    if (
        fixturedef.argname == "xp"
        and request.config.getoption("--ruda-raw-namespace")
        and _is_ruda(getattr(request, "param", None))
    ):
        param = request.param
        namespace = param._namespace if isinstance(param, _Named) else param
        # pytest hands tests fixturedef.cached_result[0], which its own hook has set to SciPy's value
        fixturedef.cached_result = (namespace, *fixturedef.cached_result[1:])
        return namespace
    return result
