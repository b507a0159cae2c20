"""``ruda.to_device``: move an array of any installed backend to any device."""

from __future__ import annotations

from collections.abc import Callable
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

    Within one backend the array's own ``to_device`` is used, as it is for a device of the
    kind of ``x.device`` that no backend owns (a router's ``MultiDevice``). Across backends
    DLPack is tried first (zero-copy where the memory is shared, e.g. NumPy and
    ``torch:cpu``); otherwise the data travels as :class:`ruda.TensorData`
    through the host. Nothing else ever moves data between devices implicitly.
    """
    owner = None if isinstance(device, str | Device) else _registry.plugin_for_native_device(device)
    if owner is not None:
        target = owner.device_of_native(device)
    elif isinstance(device, str | Device):
        target = Device.parse(device)
    elif _kin(device, getattr(x, "device", None)) and hasattr(x, "to_device"):
        # a device of the kind of x's own, which no backend owns (a router's MultiDevice): the
        # array's library moves it itself
        return x.to_device(device)
    else:
        raise TypeError(
            f"a device is a string like 'cuda:0', a ruda.Device, or an installed backend's own device "
            f"object (an array's .device), not {type(device).__module__}.{type(device).__qualname__}"
        )
    destination = _registry.plugin_for_device(target)
    try:
        native = destination.native_device(target)
    except ImportError as err:  # (the backend's library is missing: say so, and what installs it)
        raise _registry.unavailable(destination.name) from err
    if destination.owns(x):
        return destination.move(x, native)
    return migrate(
        x,
        lambda a: destination.from_dlpack(a, native),
        lambda data: destination.from_tensor_data(data, native),
    )


def _kin(device: Any, own: Any) -> bool:
    """Whether ``device`` and ``own`` are devices of one kind: instances of a class of
    ``own``'s other than ``object`` (a router's ``MultiDevice.B2`` and ``MultiDevice.B1``)."""
    return own is not None and any(c is not object and isinstance(device, c) for c in type(own).__mro__)


def migrate(x: Any, from_dlpack: Callable[[Any], Any], from_tensor_data: Callable[[TensorData], Any]) -> Any:
    """``x``, an array of any backend, made an array of another by ``from_dlpack(x)`` (zero-copy
    where the two share memory), or where DLPack refuses the exchange, by
    ``from_tensor_data(data)`` from its bytes on the host. ``ruda.to_device`` and the router's
    ``to_device`` move data between backends this way, and only they do."""
    with _registry.exporting(x):  # what x's backend needs to export it (torch: its GPU current)
        try:
            return from_dlpack(x)
        except _DLPACK_REFUSALS:
            data = TensorData.from_array(x)
    return from_tensor_data(data)


def device_of(x: Any) -> Device:
    """The canonical device of an array of any installed backend."""
    return _registry.plugin_for_array(x).device_of_native(x.device)
