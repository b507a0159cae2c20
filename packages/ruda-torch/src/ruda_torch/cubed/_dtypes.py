"""The two spellings of each Array API dtype: NumPy's ``np.dtype`` (what Cubed sees) and torch's
``torch.dtype`` (what the computation uses), and the conversions between them."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from ruda.spec import DTYPES

TO_TORCH: dict[np.dtype[Any], torch.dtype] = {np.dtype(name): getattr(torch, name) for name in DTYPES}
TO_NUMPY: dict[torch.dtype, np.dtype[Any]] = {t: n for n, t in TO_TORCH.items()}


def to_torch(dtype: Any) -> Any:
    """The torch dtype for ``dtype`` (a NumPy dtype, anything ``np.dtype`` takes, or already a torch
    dtype); ``None`` stays ``None``, meaning "the default"."""
    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype
    try:
        return TO_TORCH[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise TypeError(
            f"{dtype!r} is not one of the Array API dtypes ruda_torch.cubed computes with: "
            f"use one of {', '.join(DTYPES)}"
        ) from None


def to_numpy(dtype: torch.dtype) -> np.dtype[Any]:
    """The NumPy dtype that stands for the torch dtype ``dtype`` in Cubed's plans and storage."""
    try:
        return TO_NUMPY[dtype]
    except KeyError:
        raise TypeError(
            f"torch's {dtype} has no Array API counterpart in NumPy that Cubed could store: "
            f"cast to one of {', '.join(DTYPES)} first"
        ) from None


def kind_to_torch(kind: Any) -> Any:
    """``isdtype``'s ``kind`` with each dtype in it (alone or in a tuple) as torch's; names stay."""
    if isinstance(kind, tuple):
        return tuple(kind_to_torch(k) for k in kind)
    return kind if isinstance(kind, str) else to_torch(kind)
