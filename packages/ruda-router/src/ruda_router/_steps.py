"""Negative slice steps for backends that refuse them (torch): the same elements through positive
steps, then flipped.

``x[a:b:-s]`` selects the indices ``range(*slice(a, b, -s).indices(n))``; the same set in
ascending order is a slice with step ``s``, so ``x[a:b:-s]`` is that slice flipped along the
result axis, and ``x[a:b:-s] = v`` is ``x[that slice] = flip(v)``. Only basic keys (integers,
slices, ``...``, ``None``, and one Python bool without integers) are translated; a key with arrays
in it goes to the backend unchanged.
"""

from __future__ import annotations

from typing import Any


def positive_steps(key: Any, shape: tuple[int, ...]) -> tuple[Any, tuple[int, ...]] | None:
    """``(key with every step positive, result axes to flip)``, or None when nothing needs it."""
    items = key if isinstance(key, tuple) else (key,)
    if not any(isinstance(k, slice) and k.step is not None and k.step < 0 for k in items):
        return None
    if not all(k is None or k is Ellipsis or isinstance(k, int | slice) for k in items):
        return None  # advanced indexing: the backend's own rules
    # A Python bool is a 0-d mask, an advanced index: alone it adds an axis where it stands, as
    # None does; with an integer or another bool (each an int) NumPy's rules may move that axis
    if any(isinstance(k, bool) for k in items) and sum(1 for k in items if isinstance(k, int)) > 1:
        return None
    consumed = sum(1 for k in items if k is not None and k is not Ellipsis and not isinstance(k, bool))
    out: list[Any] = []
    flips: list[int] = []
    axis = 0  # axis of x the next item applies to
    result_axis = 0  # axis of the result the next slice or None makes
    for k in items:
        if k is Ellipsis:
            skipped = len(shape) - consumed
            out.append(k)
            axis += skipped
            result_axis += skipped
        elif k is None or isinstance(k, bool):
            out.append(k)
            result_axis += 1
        elif isinstance(k, slice):
            if k.step is not None and k.step < 0 and axis < len(shape):
                start, stop, step = k.indices(shape[axis])
                count = len(range(start, stop, step))
                last = start + step * (count - 1) if count else 0
                out.append(slice(last, last + (-step) * count if count else 0, -step))
                flips.append(result_axis)
            else:
                out.append(k)
            axis += 1
            result_axis += 1
        else:  # an integer removes its axis
            out.append(k)
            axis += 1
    return (tuple(out) if isinstance(key, tuple) else out[0]), tuple(flips)
