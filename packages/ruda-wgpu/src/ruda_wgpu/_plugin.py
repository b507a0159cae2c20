"""Registry entry for ruda_wgpu (entry point ``wgpu`` in ``ruda.backends``). Imports no GPU library."""

from __future__ import annotations

import importlib.metadata
from typing import Any

from ruda._device import Device
from ruda.plugin import Availability, Backend

_FIX = (
    "install a Vulkan, Metal or DX12 driver; on Linux without a GPU: "
    "apt-get install mesa-vulkan-drivers libvulkan1"
)


class WgpuBackend(Backend):
    """Any GPU through WebGPU (wgpu-native): Vulkan, Metal, DX12, and OpenGL as a last resort."""

    name = "wgpu"
    module = "ruda_wgpu"
    extra = "wgpu"
    device_kinds = ("wgpu",)
    array_packages = ("ruda_wgpu",)

    def probe(self) -> Availability:
        try:
            from ruda_wgpu._engine import devices

            found = devices()
        except ImportError as err:
            return Availability.unavailable(f"the wgpu package is not importable: {err}", "pip install wgpu")
        except Exception as err:  # a broken driver must not break `ruda info`
            return Availability.unavailable(f"wgpu could not list adapters: {err}", _FIX)
        if not found:
            return Availability.unavailable("wgpu found no GPU adapter", _FIX)
        details = {"wgpu": importlib.metadata.version("wgpu")}
        details.update({d.name: d.description for d in found})
        return Availability(
            available=True, devices=tuple(Device.parse(d.name) for d in found), details=details
        )

    def array_type(self) -> type:
        from ruda_wgpu._array import Array

        return Array

    def device_of_native(self, native: Any) -> Device:
        return Device.parse(str(native))

    def native_device(self, device: Device) -> Any:
        from ruda_wgpu._engine import resolve_device

        return resolve_device(str(device))

    def move(self, x: Any, native_device: Any) -> Any:
        return x.to_device(native_device)


PLUGIN = WgpuBackend()
