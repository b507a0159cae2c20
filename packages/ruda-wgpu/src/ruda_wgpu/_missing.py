"""Functions of the standard that ruda_wgpu does not compute yet: each raises a clear error.

They exist so that ``hasattr`` finds the whole 2025.12 surface and a call says
what is missing instead of an AttributeError; none falls back to NumPy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

MISSING = ("take_along_axis", "argmax", "argmin", "nonzero", "searchsorted", "isin", "unique_all",
           "unique_counts", "unique_inverse", "unique_values", "argsort", "sort")
MISSING_LINALG = ("cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matrix_norm",
                  "matrix_power", "matrix_rank", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
                  "trace", "vector_norm")


def not_implemented(name: str) -> Callable[..., NoReturn]:
    """A function named ``name`` that raises NotImplementedError saying so."""

    def missing(*args: Any, **kwargs: Any) -> NoReturn:
        raise NotImplementedError(
            f"ruda_wgpu does not implement {name}() yet: it has elementwise functions, reductions, "
            "creation, manipulation and matmul; copy the data to another backend with "
            "ruda.to_device(x, 'cpu') if you need it now"
        )

    missing.__name__ = missing.__qualname__ = name
    missing.__doc__ = "Not implemented yet on ruda_wgpu: raises NotImplementedError."
    return missing
