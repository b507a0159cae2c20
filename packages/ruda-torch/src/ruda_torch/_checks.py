"""The check of the arrays that ruda_torch's functions take: torch tensors.

array-api-compat's functions pass anything on to torch, whose error names the function it
called; the functions written here read a tensor's attributes first (``is_complex``,
``dtype``, ``ndim``), and a NumPy array or a list met them as an AttributeError that named
neither the function nor the problem.
"""

from __future__ import annotations

from typing import Any

import torch
from ruda._arguments import naming_bad_arguments
from ruda._operators import is_foreign_array, mixing_error

Tensor = torch.Tensor


def tensor(x: Any, function: str, name: str = "x") -> Tensor:
    """``x`` when it is a tensor; else a TypeError naming ``function`` and the argument
    ``name``: another library's array is told how to come over, anything else what it was."""
    if isinstance(x, Tensor):
        return x
    if is_foreign_array(x):
        raise mixing_error("ruda_torch", function, x)
    raise TypeError(f"{function}() takes a torch tensor for {name}, not {type(x).__name__}")


def _takes(value: object) -> bool:
    """Whether ``value`` is a tensor, dtype or device (what the functions read)."""
    return isinstance(value, Tensor | torch.dtype | torch.device)


def named(function: Any, takes: str = "torch tensors") -> Any:
    """``function`` (array-api-compat's, or one of ours that reads its arguments' attributes
    first) raising a TypeError that names it and what it got, where it met what is no tensor
    (``takes``: what it does take, for the message) as an AttributeError (see
    :mod:`ruda._arguments`)."""
    return naming_bad_arguments(function, "ruda_torch", _takes, takes)
