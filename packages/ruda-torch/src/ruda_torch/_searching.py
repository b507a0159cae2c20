"""``searchsorted`` that orders NaN as ``sort`` does: last.

``torch.searchsorted`` compares with the NaNs that ``sort`` puts at the end of a floating
sequence as it finds them, so ``searchsorted([5, nan], 2.5)`` gave 2 instead of 0. The standard
asks for the order of ``sort``. Here the NaNs are searched as infinities and the answers kept
below their start; a NaN looked for goes before them (``side="left"``) or after them.
"""

from __future__ import annotations

from typing import Literal

import torch

Tensor = torch.Tensor


def searchsorted(
    x1: Tensor,
    x2: Tensor | float,
    /,
    *,
    side: Literal["left", "right"] = "left",
    sorter: Tensor | None = None,
) -> Tensor:
    """Indices at which the elements of ``x2`` would keep the sorted 1-D ``x1`` sorted."""
    if side not in ("left", "right"):  # (torch's is a RuntimeError)
        raise ValueError(f"searchsorted(): side must be 'left' or 'right', not {side!r}")
    if not isinstance(x1, Tensor) or not x1.dtype.is_floating_point:
        found: Tensor = torch.searchsorted(x1, x2, side=side, sorter=sorter)
        return found
    nan = torch.isnan(x1)
    numbers = x1.shape[-1] - nan.sum(dim=-1, keepdim=x1.ndim > 1)  # (the NaNs come last)
    found = torch.searchsorted(torch.where(nan, torch.inf, x1), x2, side=side, sorter=sorter)
    found = torch.minimum(found, numbers)
    looked_for = torch.as_tensor(x2, device=x1.device)
    if looked_for.dtype.is_floating_point:
        after = numbers if side == "left" else torch.full_like(numbers, x1.shape[-1])
        found = torch.where(torch.isnan(looked_for), after, found)
    return found
