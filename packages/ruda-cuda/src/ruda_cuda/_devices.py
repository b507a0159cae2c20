"""Devices of ruda_cuda: one ``cupy.cuda.Device`` per GPU, written ``cuda:N``.

Every ``device=`` argument of the namespace accepts the device objects that
``__array_namespace_info__().devices()`` returns, the canonical strings
``"cuda:N"``, and ``ruda.Device("cuda", "N")``.
"""

from __future__ import annotations

from typing import Any

import cupy
from ruda._device import Device


def device_count() -> int:
    """The number of GPUs CuPy sees."""
    return int(cupy.cuda.runtime.getDeviceCount())


def native_device(device: Any) -> cupy.cuda.Device:
    """The ``cupy.cuda.Device`` for any accepted spelling of a device; errors name the choices."""
    if isinstance(device, cupy.cuda.Device):
        return device
    if isinstance(device, (str, Device)):
        parsed = Device.parse(device)
        if parsed.kind != "cuda" or parsed.id is None or not parsed.id.isdigit():
            raise ValueError(
                f"ruda_cuda has no device {str(parsed)!r}: its devices are {_names()}; "
                "move data between backends with ruda.to_device"
            )
        index = int(parsed.id)
    else:
        raise TypeError(
            f"a ruda_cuda device is a cupy.cuda.Device, 'cuda:N' or ruda.Device, not {type(device).__name__}"
        )
    if index >= device_count():
        raise ValueError(f"ruda_cuda has no device 'cuda:{index}': its devices are {_names()}")
    return cupy.cuda.Device(index)


def name_of(device: cupy.cuda.Device) -> str:
    """The canonical name ``cuda:N`` of a device."""
    return f"cuda:{int(device.id)}"


def _names() -> str:
    return ", ".join(f"'cuda:{i}'" for i in range(device_count())) or "none (no GPU)"
