"""Manipulation functions where torch's behaviour differs from the spec's."""

from __future__ import annotations

import torch


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
