"""Explicit migration of an array from one backend of a router to another.

The same order as ``ruda.to_device``: DLPack first (zero-copy where the two
backends share memory, e.g. NumPy and ``torch:cpu``: the result then aliases
the source), else the bytes travel through the host as :class:`ruda.TensorData`.
The router calls this only from ``to_device`` and the explicit moves of ``asarray``,
``astype`` and ``from_dlpack`` with another backend's device; nothing else moves data. The
order itself is the core's (``ruda._transfer.migrate``).
"""

from __future__ import annotations

from typing import Any

from ruda._transfer import migrate as _migrate


def migrate(x: Any, namespace: Any, device: Any, *, copy: bool = False) -> Any:
    """``x`` (an array of any backend) as an array of ``namespace`` on its ``device``; with
    ``copy``, never one that shares ``x``'s memory."""
    extra = {"copy": True} if copy else {}
    return _migrate(
        x,
        lambda a: namespace.from_dlpack(a, device=device, **extra),
        lambda data: namespace.asarray(data.to_numpy(), device=device, copy=True),
    )
