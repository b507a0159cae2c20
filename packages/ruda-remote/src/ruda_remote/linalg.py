"""The Array API ``linalg`` extension, computed on the remote server."""

from __future__ import annotations

from ruda import spec as _spec

from ruda_remote._functions import forward as _forward

for _name in _spec.LINALG:
    globals()[_name] = _forward(f"linalg.{_name}")

__all__ = list(_spec.LINALG)
