"""ruda_cuda: NVIDIA GPUs through CuPy, conforming to the Python Array API (2025.12).

Functions return :class:`ruda_cuda.Array`, a ``cupy.ndarray`` subclass with no
extra state: CuPy, SciPy and scikit-learn take it as a CuPy array at full
speed, and it adds the array methods the standard needs and CuPy lacks.
Most functions come from ``array_api_compat.cupy``; the ones CuPy computes
non-conformingly are fixed here (see ``_elementwise``, ``_creation``,
``linalg``, ``fft``). Each GPU is one device, ``cuda:N``.

The namespace loads CuPy on first use, so ``import ruda_cuda._plugin`` (what
``ruda`` does to list backends) stays cheap and works without CuPy.

The kernel runtime, :mod:`ruda_cuda.kernel`, sits beside the namespace:
``import ruda_cuda.kernel``.
"""

from __future__ import annotations

from typing import Any

from ruda import _nan, spec
from ruda._lazy import LazyNamespace

from ruda_cuda._plugin import install_fix

__all__ = spec.namespace_names("Array", *_nan.NAMES)


def _missing_cupy(err: ImportError) -> ImportError | None:
    if err.name != "cupy":
        return None
    return ImportError(f"ruda_cuda needs CuPy, which is not installed: {install_fix()}")


_NAMESPACE = LazyNamespace(__name__, "ruda_cuda._namespace", __all__, _missing_cupy)


def __getattr__(name: str) -> Any:
    return _NAMESPACE.attribute(name)


def __dir__() -> list[str]:
    return __all__
