"""``__array_namespace_info__`` for ruda_remote: what the server's backend reports for its device."""

from __future__ import annotations

from typing import Any

import numpy as np

from ruda_remote import _dispatch
from ruda_remote._client import RemoteDevice, open_devices
from ruda_remote._reference import host


class __array_namespace_info__:  # noqa: N801  (the spec's name)
    """Capabilities, devices and dtypes of remote devices, as their servers report them.

    Examples
    --------
    >>> info = ruda_remote.__array_namespace_info__()
    >>> info.default_dtypes()["real floating"]     # the server device's default
    dtype('float64')
    """

    def capabilities(self) -> dict[str, Any]:
        """Boolean indexing and data-dependent shapes work (they wait for the server)."""
        device = _dispatch.default_device()
        return {
            "boolean indexing": True,
            "data-dependent shapes": True,
            "max dimensions": device.info.get("max_dimensions"),
        }

    def default_device(self) -> RemoteDevice:
        """The device of ``RUDA_REMOTE_URL`` or the one set with ``set_default_device``."""
        return _dispatch.default_device()

    def devices(self) -> tuple[RemoteDevice, ...]:
        """Every open remote device of this process (the default one first)."""
        default = _dispatch.default_device()
        return (default, *(d for d in open_devices() if d is not default))

    def default_dtypes(self, *, device: RemoteDevice | None = None) -> dict[str, np.dtype[Any]]:
        """The default dtypes of the server's device."""
        target = _dispatch.device_or_default(device)
        return {kind: np.dtype(name) for kind, name in target.info["default_dtypes"].items()}

    def dtypes(
        self, *, device: RemoteDevice | None = None, kind: str | tuple[str, ...] | None = None
    ) -> dict[str, np.dtype[Any]]:
        """The dtypes the server's device supports, or those of ``kind``."""
        target = _dispatch.device_or_default(device)
        found = {name: np.dtype(name) for name in target.info["dtypes"]}
        if kind is None:
            return found
        return {name: dt for name, dt in found.items() if host.isdtype(dt, kind)}
