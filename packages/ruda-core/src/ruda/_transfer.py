"""``ruda.to_device``: move an array of any installed backend to any device."""

from __future__ import annotations

from typing import Any

from ruda import _registry
from ruda._device import Device
from ruda._tensordata import TensorData

# What DLPack raises when an exchange is impossible (other device, unsupported dtype, ...).
_DLPACK_REFUSALS = (BufferError, TypeError, ValueError, RuntimeError, NotImplementedError, AttributeError)


def to_device(x: Any, device: Any) -> Any:
    """Return ``x`` on ``device``, an array of the backend that owns that device.

    ``device`` is a canonical device (``"cuda:0"``, ``ruda.Device``) or a backend's own device
    object (``x.device`` of any ruda array: a ``torch.device``, a wgpu or remote device, a CuPy
    device), which is never read as a string: ``str(torch.device("cpu"))`` is ``"cpu"``, the
    host, but the object means ``torch:cpu``.

    Within one backend the array's own ``to_device`` is used. Across backends
    DLPack is tried first (zero-copy where the memory is shared, e.g. NumPy and
    ``torch:cpu``); otherwise the data travels as :class:`ruda.TensorData`
    through the host. Nothing else ever moves data between devices implicitly.
    """
    owner = None if isinstance(device, str | Device) else _registry.plugin_for_native_device(device)
    if owner is not None:
        target = owner.device_of_native(device)
    elif isinstance(device, str | Device):
        target = Device.parse(device)
    else:
        raise TypeError(
            f"a device is a string like 'cuda:0', a ruda.Device, or an installed backend's own device "
            f"object (an array's .device), not {type(device).__module__}.{type(device).__qualname__}"
        )
    destination = _registry.plugin_for_device(target)
    native = destination.native_device(target)
    if destination.owns(x):
        return destination.move(x, native)
    with _registry.exporting(x):
        try:
            return destination.from_dlpack(x, native)
        except _DLPACK_REFUSALS:
            data = TensorData.from_array(x)
    return destination.from_tensor_data(data, native)


def device_of(x: Any) -> Device:
    """The canonical device of an array of any installed backend."""
    return _registry.plugin_for_array(x).device_of_native(x.device)
