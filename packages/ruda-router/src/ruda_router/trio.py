"""Devices of a router over three backends: ``MultiDevice.B1(device)`` .. ``MultiDevice.B3(device)``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ruda_router._devices import MultiDeviceBase, add_variants


class MultiDevice(MultiDeviceBase):
    """The device enum of a router over three backends; each variant wraps that backend's device."""

    __slots__ = ()
    if TYPE_CHECKING:
        B1: type[MultiDevice]
        B2: type[MultiDevice]
        B3: type[MultiDevice]


add_variants(MultiDevice, 3)

__all__ = ["MultiDevice"]
