"""The five ruda namespaces that SciPy and scikit-learn are run on: ruda.host, ruda_torch, a
host+torch router, ruda_remote over a loopback server, and ruda_wgpu on its default adapter
(lavapipe where there is no GPU), each built the way the package's own tests build it (the
router as in tests/router, the server with tests/remote's ``ServerThread``)."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

#: every namespace by the name the tests and the plugin's --ruda-backend use
NAMES = ("host", "torch", "router", "remote", "wgpu")
#: ruda_cuda, unfused and fused, for the tests that run where a GPU is
GPU_NAMES = ("cuda", "cuda-fusion")

_TESTS = Path(__file__).resolve().parent.parent


def load_remote_conftest() -> types.ModuleType:
    """tests/remote/conftest.py as a module of its own name (its helpers, not its fixtures)."""
    name = "ruda_tests_remote_conftest"
    if name in sys.modules:
        return sys.modules[name]
    remote_dir = str(_TESTS / "remote")
    if remote_dir not in sys.path:
        sys.path.insert(0, remote_dir)  # its conftest imports remote_handshake from there
    spec = importlib.util.spec_from_file_location(name, _TESTS / "remote" / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class RemoteSession:
    """A loopback ruda_remote server (backed by ruda.host) and one session on it as the default device."""

    def __init__(self) -> None:
        import ruda_remote

        self.server = load_remote_conftest().ServerThread()
        self.device = ruda_remote.RemoteDevice(self.server.url, timeout=60)
        ruda_remote.set_default_device(self.device)

    def close(self) -> None:
        import ruda_remote

        ruda_remote.set_default_device(None)
        self.device.close()
        self.server.stop()


def build(name: str) -> Any:
    """The namespace called ``name`` (one of :data:`NAMES`); for "remote", start a RemoteSession first."""
    if name == "host":
        import ruda.host

        return ruda.host
    if name == "torch":
        import ruda_torch

        return ruda_torch
    if name == "router":
        import ruda.host
        import ruda_router
        import ruda_torch

        return ruda_router.Router((ruda.host, ruda_torch))
    if name == "remote":
        import ruda_remote

        return ruda_remote
    if name == "wgpu":
        import ruda_wgpu

        return ruda_wgpu
    if name in GPU_NAMES:
        import ruda_cuda

        return ruda_cuda
    raise ValueError(f"unknown ruda namespace {name!r}: use one of {', '.join(NAMES + GPU_NAMES)}")
