"""Explicit migration of an array from one backend of a router to another.

The same order as ``ruda.to_device``: DLPack first (zero-copy where the two
backends share memory, e.g. NumPy and ``torch:cpu``: the result then aliases
the source), else the bytes travel through the host as :class:`ruda.TensorData`.
The router calls this only from ``to_device``; nothing else moves data.
"""

from __future__ import annotations

from typing import Any

from ruda import TensorData, exporting

# What DLPack raises when an exchange is impossible (other device, dtype it cannot carry, ...).
_DLPACK_REFUSALS = (BufferError, TypeError, ValueError, RuntimeError, NotImplementedError, AttributeError)


def migrate(x: Any, namespace: Any, device: Any) -> Any:
    """``x`` (an array of any backend) as an array of ``namespace`` on its ``device``."""
    with exporting(x):  # what x's backend needs to export it (torch: its GPU current)
        try:
            return namespace.from_dlpack(x, device=device)
        except _DLPACK_REFUSALS:
            data = TensorData.from_array(x)
    return namespace.asarray(data.to_numpy(), device=device, copy=True)
