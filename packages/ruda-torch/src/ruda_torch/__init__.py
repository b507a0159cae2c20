"""ruda_torch: PyTorch, conforming to the Python Array API (2025.12).

Functions return plain ``torch.Tensor`` objects: no wrapper, torch's full
speed, autograd intact, and SciPy and scikit-learn keep their torch paths.
Most functions come from ``array_api_compat.torch``; the ones it leaves
non-conforming are fixed in the topic modules beside this one.

The namespace loads torch on first use, so ``import ruda_torch._plugin`` (what
``ruda`` does to list backends or route an array) stays cheap.

Devices are ``torch.device`` objects (``torch:cpu`` and ``torch:cuda:N`` in
ruda's names). Creation functions put arrays on ``RUDA_TORCH_DEVICE`` when that
environment variable is set (e.g. ``cuda:0``), else on torch's default device.

What returning torch's own tensors cannot fix: operators and methods are
torch's (``x[::-1]`` raises, ``x // y`` misses a few special cases the
function ``floor_divide`` gets right), and tensors have no
``__array_namespace__`` or ``to_device``. The official suite's skips file
lists each case.
"""

from __future__ import annotations

from typing import Any

from ruda import _nan, spec
from ruda._lazy import LazyNamespace

__all__ = spec.namespace_names(*_nan.NAMES)


def _missing_torch(err: ImportError) -> ImportError | None:
    if err.name != "torch":
        return None
    return ImportError(
        "ruda_torch needs PyTorch, which is not installed: pip install 'ruda[torch]' "
        "(any torch >= 2.4; a CPU build is enough)"
    )


_NAMESPACE = LazyNamespace(__name__, "ruda_torch._namespace", __all__, _missing_torch)


def __getattr__(name: str) -> Any:
    return _NAMESPACE.attribute(name)


def __dir__() -> list[str]:
    return __all__
