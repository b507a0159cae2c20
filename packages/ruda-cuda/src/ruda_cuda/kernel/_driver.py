"""NVIDIA's ``cuda-bindings`` driver module, for the calls CuPy's bindings lack."""

from __future__ import annotations

import functools
import importlib
from types import ModuleType


@functools.cache
def driver() -> ModuleType:
    """``cuda.bindings.driver``; a clear error when the package is missing."""
    try:
        module = importlib.import_module("cuda.bindings.driver")
    except ImportError as err:
        raise ImportError(
            "ruda_cuda.kernel needs NVIDIA's cuda-bindings package for driver calls CuPy does not "
            "expose: pip install 'ruda-cuda[cuda12]' or 'ruda-cuda[cuda13]' (matching your CuPy)"
        ) from err
    return module
