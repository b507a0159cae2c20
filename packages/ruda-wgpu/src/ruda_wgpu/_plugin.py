"""Registry entry for ruda_wgpu (entry point ``wgpu`` in ``ruda.backends``). Imports no GPU library."""

from __future__ import annotations

import importlib.metadata
from typing import Any

from ruda._device import Device
from ruda.plugin import Availability, Backend

from ruda_wgpu._devices import BACKEND_ENV

_FIX = (
    "install a Vulkan, Metal or DX12 driver; on Linux without a GPU: "
    "apt-get install mesa-vulkan-drivers libvulkan1"
)


#: the standard's dtypes a device may lack: the 64-bit ones
_WIDE = ("int64", "uint64", "float64", "complex128")


def sizes(largest: int, binding: int) -> str:
    """What ``ruda info`` adds to a device's line about array sizes: the largest buffer (an
    array's limit) and a kernel's storage binding (beyond which arrays go in parts)."""

    def size(n: int) -> str:
        if n >= 2**30:
            return f"{n / 2**30:.1f} GiB"
        return f"{n / 2**20:.0f} MiB" if n >= 2**20 else f"{n} bytes"

    return f"; arrays up to {size(largest)}, {size(binding)} a kernel binding (larger ones go in parts)"


def lacking(dtype_names: tuple[str, ...]) -> str:
    """What ``ruda info`` adds to a device's line when it lacks some of the standard's dtypes
    (an OpenGL adapter has no 64-bit types): empty when it has them all."""
    missing = [name for name in _WIDE if name not in dtype_names]
    if not missing:
        return ""
    # float64 is computed on 64-bit words: without shader-int64 all four are missing
    feature = "shader-int64" if "int64" in missing else "shader-f64"
    return f"; no {', '.join(missing)} (the adapter lacks {feature})"


class WgpuBackend(Backend):
    """Any GPU through WebGPU (wgpu-native): Vulkan, Metal, DX12, and OpenGL as a last resort."""

    name = "wgpu"

    def probe(self) -> Availability:
        try:
            from ruda_wgpu._engine import devices, excluded_adapters

            found, excluded = devices(), excluded_adapters()
        except ImportError as err:
            return Availability.unavailable(
                f"the wgpu package is not importable: {err}", 'pip install "wgpu>=0.32,<0.33"'
            )
        except (ValueError, RuntimeError) as err:
            if BACKEND_ENV in str(err):
                return Availability.unavailable(str(err), f"unset {BACKEND_ENV} or name an API listed")
            return Availability.unavailable(f"wgpu could not list adapters: {err}", _FIX)
        except Exception as err:  # a broken driver must not break `ruda info`
            return Availability.unavailable(f"wgpu could not list adapters: {err}", _FIX)
        if not found:
            why = "; ".join(f"{e.description}: {e.reason}" for e in excluded)
            return Availability.unavailable(
                f"wgpu found no adapter that runs compute kernels{' (' + why + ')' if why else ''}", _FIX
            )
        from ruda_wgpu import _preload
        from ruda_wgpu._fusion import FUSION_ENV, enabled
        from ruda_wgpu._info import DEFAULT_FLOAT_ENV, wide_default_float
        from ruda_wgpu._shader_cache import shader_cache_dir

        details = {"wgpu": importlib.metadata.version("wgpu")}
        details["compiled kernels"] = f"kept in {shader_cache_dir()} (ruda_wgpu.clear_shader_cache())"
        details["fusion"] = (
            f"on (elementwise chains run as one kernel; {FUSION_ENV}=0 turns it off)"
            if enabled()
            else f"off ({FUSION_ENV}=0: one kernel per operation)"
        )
        details["preload"] = (
            f"on (a program's kernels compile in {_preload.threads()} threads as its next process "
            f"opens the device; {_preload.PRELOAD_ENV}=0 turns it off)"
            if _preload.enabled()
            else f"off ({_preload.PRELOAD_ENV}=0: each kernel compiles when first used)"
        )
        details["default float"] = (
            f"float64 where the device has it ({DEFAULT_FLOAT_ENV}=float64)"
            if wide_default_float()
            else f"float32 ({DEFAULT_FLOAT_ENV}=float64 makes it float64 where the device has it)"
        )
        details.update(
            {
                d.name: d.description
                + sizes(int(d.limits["max-buffer-size"]), d.max_binding)
                + lacking(d.dtype_names)
                for d in found
            }
        )
        details.update({f"left out: {e.description}": e.reason for e in excluded})
        return Availability(
            available=True, devices=tuple(Device.parse(d.name) for d in found), details=details
        )

    def array_type(self) -> type:
        from ruda_wgpu._array import Array

        return Array

    def device_type(self) -> type:
        from ruda_wgpu._engine import GpuDevice

        return GpuDevice

    def device_of_native(self, native: Any) -> Device:
        return Device.parse(str(native))

    def native_device(self, device: Device) -> Any:
        from ruda_wgpu._engine import resolve_device

        return resolve_device(str(device))

    def move(self, x: Any, native_device: Any) -> Any:
        return x.to_device(native_device)


PLUGIN = WgpuBackend()
