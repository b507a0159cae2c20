"""The TypeError for a ruda.host function handed what is no array (see :mod:`ruda._arguments`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ruda._arguments import naming_bad_arguments


def _takes(value: object) -> bool:
    """Whether ``value`` is a NumPy array, scalar or dtype (what the functions read)."""
    return isinstance(value, np.ndarray | np.generic | np.dtype) or (
        isinstance(value, type) and issubclass(value, np.generic)
    )


def named(function: Any, takes: str = "NumPy arrays") -> Any:
    """``function`` raising a TypeError that names it and what it got, where it met what is no
    array (``takes``: what it does take, for the message) as an AttributeError."""
    return naming_bad_arguments(function, "ruda.host", _takes, takes)
