"""The opt-in fallback of a router: what the holding backend cannot do runs on the fallback
device, comes back to the holding device, and is logged once; without the option, nothing moves."""

from __future__ import annotations

import logging
import types
from typing import Any

import numpy as np
import pytest
import ruda
import torch
from router_backends import second_backend
from ruda.testing import assert_matches_numpy
from ruda_router import Router, duo, trio

TORCH = second_backend()
HOST = duo.MultiDevice.B1("cpu")
TDEV = duo.MultiDevice.B2(torch.device("cpu"))


def _refuse(name: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{name} is not written for this device yet")

    return refuse


def _host_without(refused: tuple[str, ...] = (), unlisted: tuple[str, ...] = ()) -> Any:
    """The host namespace whose ``refused`` functions raise NotImplementedError and whose
    ``dtypes()`` leaves out ``unlisted``: a backend that cannot do everything."""
    fake = types.SimpleNamespace(
        **{n: getattr(ruda.host, n) for n in dir(ruda.host) if not n.startswith("__")}
    )
    fake.__name__ = "partial_host"
    for name in refused:
        setattr(fake, name, _refuse(name))
    real_info = ruda.host.__array_namespace_info__

    class Info:
        def __getattr__(self, name: str) -> Any:
            return getattr(real_info(), name)

        def dtypes(self, **kwargs: Any) -> dict[str, Any]:
            return {k: v for k, v in real_info().dtypes(**kwargs).items() if k not in unlisted}

    fake.__array_namespace_info__ = Info
    return fake


def _fallbacks(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.name == "ruda_router" and r.levelno == logging.WARNING
    ]


def test_not_implemented_runs_on_the_fallback_and_comes_back(caplog: pytest.LogCaptureFixture) -> None:
    xp = Router((_host_without(refused=("cumulative_sum", "add")), TORCH), fallback=TDEV)
    x = xp.asarray([1.0, 2.0, 3.0])
    with caplog.at_level(logging.WARNING, logger="ruda_router"):
        for _ in range(3):
            y = xp.cumulative_sum(x)
            assert y.device == HOST and isinstance(y.inner, np.ndarray), "the result is back on the holder"
            assert_matches_numpy(y, np.array([1.0, 3.0, 6.0]))
        z = x + x  # operators call the same functions, so they fall back too
        assert z.device == HOST and isinstance(z.inner, np.ndarray)
        assert_matches_numpy(z, np.array([2.0, 4.0, 6.0]))
        assert_matches_numpy(xp.exp(x), np.exp([1.0, 2.0, 3.0]))  # what the host can do stays there
    logged = _fallbacks(caplog)
    assert len(logged) == 2, f"once per operation, not per call: {logged}"
    assert "cumulative_sum runs on the fallback duo.MultiDevice.B2(device(type='cpu'))" in logged[0]
    assert "NotImplementedError: cumulative_sum is not written for this device yet" in logged[0]
    assert logged[1].startswith("add runs on the fallback")


def test_a_function_the_backend_lacks_runs_on_the_fallback(caplog: pytest.LogCaptureFixture) -> None:
    partial = _host_without()
    del partial.searchsorted
    xp = Router((partial, TORCH), fallback=TDEV)
    with caplog.at_level(logging.WARNING, logger="ruda_router"):
        got = xp.searchsorted(xp.asarray([1, 2, 3]), xp.asarray([2]))
    assert got.device == HOST
    assert_matches_numpy(got, np.array([1]))
    assert "searchsorted runs on the fallback" in _fallbacks(caplog)[0]
    assert "does not provide it" in _fallbacks(caplog)[0]


def test_a_dtype_the_device_does_not_list_runs_on_the_fallback(caplog: pytest.LogCaptureFixture) -> None:
    xp = Router((_host_without(unlisted=("float64",)), TORCH), fallback=TDEV)
    with caplog.at_level(logging.WARNING, logger="ruda_router"):
        x = xp.asarray([1.0, 4.0], dtype=xp.float64)  # dtype= names it: created there, moved back
        root = xp.sqrt(x)  # an input of that dtype
        small = xp.sqrt(xp.asarray([9.0], dtype=xp.float32))  # a listed dtype stays on the host
    assert x.device == root.device == HOST and root.dtype == xp.float64
    assert_matches_numpy(root, np.array([1.0, 2.0]))
    assert_matches_numpy(small, np.array([3.0], dtype=np.float32))
    logged = _fallbacks(caplog)
    assert [m.split()[0] for m in logged] == ["asarray", "sqrt"], logged
    assert "its dtypes() do not list float64" in logged[1]


def test_without_fallback_the_original_error_propagates(caplog: pytest.LogCaptureFixture) -> None:
    xp = Router((_host_without(refused=("cumulative_sum",), unlisted=("float64",)), TORCH))
    x = xp.asarray([1.0, 2.0], dtype=xp.float64)  # no check of dtypes() without a fallback
    assert isinstance(x.inner, np.ndarray)
    refused = pytest.raises(NotImplementedError, match="^cumulative_sum is not written for this device yet$")
    with caplog.at_level(logging.WARNING, logger="ruda_router"), refused:
        xp.cumulative_sum(x)
    assert not _fallbacks(caplog)


def test_the_fallback_device_itself_does_not_fall_back() -> None:
    xp = Router((TORCH, _host_without(refused=("cumulative_sum",))), fallback=duo.MultiDevice.B2("cpu"))
    on_fallback = xp.asarray([1.0, 2.0], device=duo.MultiDevice.B2("cpu"))
    with pytest.raises(NotImplementedError, match="cumulative_sum is not written"):
        xp.cumulative_sum(on_fallback)


def test_a_fallback_that_is_not_a_device_of_the_router_is_refused() -> None:
    for wrong in ("cpu", torch.device("cpu"), trio.MultiDevice.B2("cpu")):
        with pytest.raises(TypeError, match=r"fallback must be a device of this router .*MultiDevice.B2"):
            Router((ruda.host, TORCH), fallback=wrong)  # type: ignore[arg-type]
    with pytest.raises(
        ValueError, match=r"fallback=duo.MultiDevice.B2\('cuda:7'\) is not one of the devices"
    ):
        Router((ruda.host, TORCH), fallback=duo.MultiDevice.B2("cuda:7"))
