"""ruda: Array API backends for Python, found automatically.

``import ruda`` imports no GPU library. Backends are plugins found through the
``ruda.backends`` entry point group and loaded on first use::

    import ruda
    ruda.backends()          # what is installed, what can run here, and why not
    xp = ruda.host           # NumPy, conforming to the Array API
    xp = ruda.wgpu           # the same as ruda.namespace("wgpu")
    y = ruda.to_device(x, "cuda:0")
    xp = ruda.scale("cuda", executor="processes")  # Cubed: chunk by chunk, bounded memory
"""

from __future__ import annotations

import functools
from types import ModuleType

from ruda._device import Device
from ruda._registry import (
    BackendInfo,
    BackendNotFoundError,
    BackendUnavailableError,
    backends,
    exporting,
    installed,
    namespace,
)
from ruda._registry import plugin as backend_plugin
from ruda._scale import scale
from ruda._tensordata import TensorData, to_numpy
from ruda._transfer import device_of, to_device

#: the installed distribution's version ("0+unknown" in a source tree), looked up on first use:
#: importing importlib.metadata and the lookup took 13 of the 21 ms ``import ruda`` took
__version__: str

__all__ = [
    "BackendInfo",
    "BackendNotFoundError",
    "BackendUnavailableError",
    "Device",
    "TensorData",
    "backend_plugin",
    "backends",
    "device_of",
    "exporting",
    "installed",
    "namespace",
    "scale",
    "to_device",
    "to_numpy",
]


@functools.cache
def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # on use: see __version__

    try:
        return version("ruda")
    except PackageNotFoundError:  # running from a source tree without installing
        return "0+unknown"


def __getattr__(name: str) -> ModuleType | str:
    if name == "__version__":
        return _version()
    # ruda.cuda, ruda.wgpu, ...: resolved through the registry on first access.
    if name.startswith("_"):
        raise AttributeError(name)
    try:
        return namespace(name)
    except BackendNotFoundError as err:
        raise AttributeError(str(err)) from None


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(installed()))
