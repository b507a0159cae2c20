"""Devices of ruda_cuda: one ``cupy.cuda.Device`` per GPU, written ``cuda:N``.

Every ``device=`` argument of the namespace accepts the device objects that
``__array_namespace_info__().devices()`` returns, the canonical strings
``"cuda:N"``, and ``ruda.Device("cuda", "N")``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import cupy
from ruda import BackendUnavailableError
from ruda._device import Device

from ruda_cuda._plugin import runtime_failure

T = TypeVar("T")

_current_device = cupy.cuda.runtime.getDevice
#: cudaErrorPeerAccessAlreadyEnabled (CuPy, or another library, enabled it first)
_PEER_ACCESS_ALREADY_ENABLED = 704


def device_count() -> int:
    """The number of GPUs CuPy sees; BackendUnavailableError says why where CUDA cannot answer
    (no driver, a driver older than CuPy's runtime)."""
    try:
        return int(cupy.cuda.runtime.getDeviceCount())
    except cupy.cuda.runtime.CUDARuntimeError as err:
        reason, fix = runtime_failure(err)
        hint = f" Fix: {fix}" if fix else ""
        raise BackendUnavailableError(f"ruda_cuda cannot reach a GPU: {reason}.{hint}") from err


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


def arrays_device(values: Iterable[Any]) -> int | None:
    """The index of the GPU that holds the CuPy arrays among ``values`` (items of lists and
    tuples among them too), or None when there are none.

    Raises ValueError when they are on two GPUs: ruda_cuda computes where its inputs are and
    never moves data between GPUs implicitly (CuPy would read the other GPU's memory over
    peer access from the current device)."""
    found: int | None = None
    for value in values:
        kind = type(value)
        if kind is list or kind is tuple:
            index = arrays_device(value)
        elif isinstance(value, cupy.ndarray):
            index = value.data.device_id
        else:
            continue
        if index is None or index == found:
            continue
        if found is not None:
            raise ValueError(
                f"arrays on cuda:{found} and cuda:{index} met in one call; ruda_cuda never moves "
                f"data between GPUs implicitly: move one first, e.g. x.to_device('cuda:{found}')"
            )
        found = index
    return found


def on_inputs_device(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``function(*args, **kwargs)`` run with the GPU of its array arguments current (as the
    standard asks: a computation happens on its inputs' device, whichever is CuPy's current
    device); on the current device when it has no array argument."""
    index = arrays_device((*args, *kwargs.values()) if kwargs else args)
    if index is None:
        return function(*args, **kwargs)
    return on_device(index, function, *args, **kwargs)


def on_device(index: int, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``function(*args, **kwargs)`` with GPU ``index`` current (entering CuPy's device context
    only when another GPU is current: the context costs microseconds on every call)."""
    if index == _current_device():
        return function(*args, **kwargs)
    with cupy.cuda.Device(index):
        return function(*args, **kwargs)


def peers(a: int, b: int) -> bool:
    """Whether GPUs ``a`` and ``b`` can reach each other's memory (NVLink or PCIe) both ways."""
    runtime = cupy.cuda.runtime
    return bool(runtime.deviceCanAccessPeer(a, b) and runtime.deviceCanAccessPeer(b, a))


@functools.cache
def peer_to_peer(source: int, target: int) -> bool:
    """Whether GPUs ``source`` and ``target`` copy to each other directly (:func:`peers`),
    enabling that access both ways the first time; when False, the driver stages their copies
    through host memory."""
    if not peers(source, target):
        return False
    runtime = cupy.cuda.runtime
    for device, peer in ((target, source), (source, target)):
        with cupy.cuda.Device(device):
            try:
                runtime.deviceEnablePeerAccess(peer)
            except runtime.CUDARuntimeError as err:
                if err.status != _PEER_ACCESS_ALREADY_ENABLED:
                    raise
    return True
