"""Manipulation functions where torch's behaviour differs from the spec's."""

from __future__ import annotations

from typing import Any

import torch
from array_api_compat.torch import _aliases as _compat
from ruda import spec

from ruda_torch._checks import tensor


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape the spec's broadcasting rules give; ``ValueError`` when there is none."""
    try:
        # torch/functional.py has no annotations (it returns a torch.Size)
        return tuple(torch.broadcast_shapes(*shapes))  # type: ignore[no-untyped-call]
    except RuntimeError as err:
        raise ValueError(f"shapes {', '.join(map(str, shapes))} do not broadcast: {err}") from None


def moveaxis(
    x: torch.Tensor, source: int | tuple[int, ...], destination: int | tuple[int, ...], /
) -> torch.Tensor:
    """``x`` with axes ``source`` moved to ``destination`` (torch's, with the spec's signature)."""
    if isinstance(source, int) and isinstance(destination, int):
        return torch.moveaxis(x, source, destination)
    return torch.moveaxis(x, _as_tuple(source), _as_tuple(destination))


def _as_tuple(axes: int | tuple[int, ...]) -> tuple[int, ...]:
    return (axes,) if isinstance(axes, int) else axes


def tile(x: torch.Tensor, repetitions: tuple[int, ...], /) -> torch.Tensor:
    """``x`` repeated ``repetitions[i]`` times along axis ``i`` (torch's, with the spec's signature)."""
    return torch.tile(x, repetitions)


def roll(
    x: torch.Tensor, /, shift: int | tuple[int, ...], *, axis: int | tuple[int, ...] | None = None
) -> torch.Tensor:
    """``x`` shifted along ``axis``, as the spec has it: an int shift applies to every axis of a
    tuple (torch refuses), and ``axis=()`` rolls nothing (torch then rolls the flattened array)."""
    if axis is None:
        return torch.roll(x, shift)
    axes = _as_tuple(axis)
    shifts = (shift,) * len(axes) if isinstance(shift, int) else tuple(shift)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: {len(shifts)} shifts for {len(axes)} axes")
    return torch.roll(x, shifts, axes) if axes else x.clone()


def take(x: torch.Tensor, indices: torch.Tensor, /, *, axis: int | None = None) -> torch.Tensor:
    """``x``'s elements at ``indices`` along ``axis``; indices of any integer dtype (torch's
    ``index_select`` takes int32 and int64 only). One out of bounds raises IndexError (see
    :func:`_check_bounds`)."""
    x, indices = tensor(x, "take"), tensor(_as_int64(indices, "take"), "take", "indices")
    _check_bounds(x, indices, axis, "take()")
    # (array-api-compat is untyped)
    out: torch.Tensor = _compat.take(x, indices, axis=axis)
    return out


def take_along_axis(x: torch.Tensor, indices: torch.Tensor, /, *, axis: int = -1) -> torch.Tensor:
    """``x``'s elements at ``indices`` matched along ``axis``; indices of any integer dtype
    (torch's ``take_along_dim`` takes int64 only). One out of bounds raises IndexError: torch's
    ``take_along_dim`` read it as a flat offset, another row's element or another place's
    modulo the axis (see :func:`_check_bounds`)."""
    function = "take_along_axis"
    x, indices = tensor(x, function), tensor(_as_int64(indices, function), function, "indices")
    _check_bounds(x, indices, axis, "take_along_axis()")
    out: torch.Tensor = _compat.take_along_axis(x, indices, axis=axis)
    return out


def _check_bounds(x: torch.Tensor, indices: torch.Tensor, axis: int | None, what: str) -> None:
    """IndexError unless ``x`` has axis ``axis`` (:func:`ruda.spec.indexed_axis`) and every one
    of ``indices`` is in ``[-n, n)`` for its length ``n``, with the messages every backend gives
    (array-api-compat's had been "tuple index out of range" for a missing axis). torch's own
    checks raise a RuntimeError that names a wrapped index (``index_select``), or none at all
    (``take_along_dim``); on a GPU they are device-side asserts, which end the process's use of
    CUDA, so the check runs first, and there it reads one bool back."""
    axis = spec.indexed_axis(what, axis, x.ndim)
    if axis is None:
        return
    n = x.shape[axis]
    if indices.numel() and bool(((indices < -n) | (indices >= n)).any()):
        raise IndexError(spec.out_of_bounds(what, n))


def _as_int64(indices: Any, function: str) -> Any:
    """Integer ``indices`` as int64, which torch takes; a TypeError naming ``function`` for
    floating-point or complex ones, which had been truncated to integers without a word (NumPy
    refuses them; the standard asks for an integer dtype)."""
    if isinstance(indices, torch.Tensor) and indices.dtype not in (torch.int64, torch.bool):
        if indices.is_floating_point() or indices.is_complex():
            raise TypeError(f"{function}(): indices must have an integer dtype, not {indices.dtype}")
        return indices.to(torch.int64)
    return indices
