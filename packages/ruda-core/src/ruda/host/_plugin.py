"""Registry entry for ruda.host (entry point ``host`` in ``ruda.backends``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ruda._device import CPU, Device
from ruda.plugin import Availability, Backend


class HostBackend(Backend):
    """NumPy on the CPU: always available."""

    name = "host"
    module = "ruda.host"
    extra = ""
    device_kinds = ("cpu",)
    array_packages = ("numpy",)

    def probe(self) -> Availability:
        return Availability(available=True, devices=(CPU,), details={"numpy": np.__version__})

    def array_type(self) -> tuple[type, ...]:
        return (np.ndarray, np.generic)

    def native_device(self, device: Device) -> str:
        if device != CPU:
            raise ValueError(f"ruda.host has only the device 'cpu', not {str(device)!r}")
        return "cpu"

    def device_of_native(self, native: Any) -> Device:
        return CPU

    def move(self, x: Any, native_device: Any) -> Any:
        return x

    def from_dlpack(self, x: Any, native_device: Any) -> Any:
        return np.from_dlpack(x)


PLUGIN = HostBackend()
