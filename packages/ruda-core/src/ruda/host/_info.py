"""``__array_namespace_info__`` for ruda.host: what NumPy really offers."""

from __future__ import annotations

from typing import Any

import numpy as np

from ruda.spec import dtype_names

#: NumPy's default dtypes, which CuPy shares: float64, complex128, int64 and int64 indices
DEFAULT_DTYPES: dict[str, np.dtype[Any]] = {
    "real floating": np.dtype(np.float64),
    "complex floating": np.dtype(np.complex128),
    "integral": np.dtype(np.int64),
    "indexing": np.dtype(np.int64),
}


class __array_namespace_info__:  # noqa: N801  (the spec's name)
    """Capabilities, devices and dtypes of ruda.host.

    Examples
    --------
    >>> info = ruda.host.__array_namespace_info__()
    >>> info.default_dtypes()["real floating"]
    dtype('float64')
    """

    def capabilities(self) -> dict[str, Any]:
        """Boolean indexing and data-dependent shapes work; NumPy has at most 64 dimensions."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self) -> str:
        """The host's only device, ``"cpu"``."""
        return "cpu"

    def devices(self) -> tuple[str, ...]:
        """``("cpu",)``."""
        return ("cpu",)

    def default_dtypes(self, *, device: str | None = None) -> dict[str, np.dtype[Any]]:
        """float64, complex128, int64 and int64 indices."""
        _check_device(device)
        return dict(DEFAULT_DTYPES)

    def dtypes(
        self, *, device: str | None = None, kind: str | tuple[str, ...] | None = None
    ) -> dict[str, np.dtype[Any]]:
        """All 13 Array API dtypes, or those of ``kind`` (a name or a tuple of names)."""
        _check_device(device)
        return {name: np.dtype(name) for name in dtype_names(kind)}


def _check_device(device: Any) -> None:
    if device not in (None, "cpu"):
        raise ValueError(f"ruda.host has only the device 'cpu', not {device!r}")
