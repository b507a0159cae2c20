"""``__array_namespace_info__`` for a router: each device's truth comes from its backend."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ruda_router._dtypes import DTYPES

if TYPE_CHECKING:
    from ruda_router._devices import MultiDeviceBase
    from ruda_router._dtypes import DType
    from ruda_router._router import Router


class RouterInfo:
    """Capabilities, devices and dtypes of a router.

    Devices are the variants of every backend's devices; the dtypes of a device
    are those its backend lists for it (a WGPU device without float64 does not
    list it here either).

    Examples
    --------
    >>> xp = Router((ruda.host, ruda.torch))
    >>> xp.__array_namespace_info__().default_device()
    duo.MultiDevice.B1('cpu')
    >>> xp.__array_namespace_info__().default_dtypes(device=xp.MultiDevice.B2(torch.device("cpu")))
    {'real floating': ruda_router.float32, ...}
    """

    def __init__(self, router: Router) -> None:
        self._router = router
        self._inner = tuple(ns.__array_namespace_info__() for ns in router._namespaces)

    def capabilities(self) -> dict[str, Any]:
        """What every backend can do: a capability holds only if it holds for all of them."""
        caps = [info.capabilities() for info in self._inner]
        limits = [c.get("max dimensions") for c in caps if c.get("max dimensions") is not None]
        return {
            "boolean indexing": all(c.get("boolean indexing", False) for c in caps),
            "data-dependent shapes": all(c.get("data-dependent shapes", False) for c in caps),
            "max dimensions": min(limits) if limits else None,
        }

    def default_device(self) -> MultiDeviceBase:
        """The first backend's default device, as variant ``B1``."""
        return self._router.MultiDevice.variants[0](self._inner[0].default_device())

    def devices(self) -> tuple[MultiDeviceBase, ...]:
        """Every device of every backend, in backend order."""
        variants = self._router.MultiDevice.variants
        return tuple(variants[i](d) for i, info in enumerate(self._inner) for d in info.devices())

    def default_dtypes(self, *, device: MultiDeviceBase | None = None) -> dict[str, DType]:
        """The default dtypes of ``device``'s backend on that device (default: the default device)."""
        index, inner = self._split(device)
        found = self._inner[index].default_dtypes(device=inner)
        return {kind: self._router._dtype_out(dtype, index) for kind, dtype in found.items()}

    def dtypes(
        self, *, device: MultiDeviceBase | None = None, kind: str | tuple[str, ...] | None = None
    ) -> dict[str, DType]:
        """The dtypes ``device`` supports (default: the default device), optionally of ``kind``."""
        index, inner = self._split(device)
        found = self._inner[index].dtypes(device=inner, kind=kind)
        return {
            name: self._router._dtype_out(dtype, index) for name, dtype in found.items() if name in DTYPES
        }

    def _split(self, device: MultiDeviceBase | None) -> tuple[int, Any]:
        if device is None:
            return 0, None
        index = self._router._device_index(device, "__array_namespace_info__")
        return index, device.device
