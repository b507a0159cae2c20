"""``MultiDevice``: a router's device, an enum with one variant per backend position.

Burn's router holds its devices as ``MultiDevice::B1(device)``,
``MultiDevice::B2(device)``: the variant says which backend, the payload is that
backend's own device. Here each variant is a small class, so a device reads and
matches the same way::

    dev = duo.MultiDevice.B2(torch.device("cpu"))
    match dev:
        case duo.MultiDevice.B1(inner): ...
        case duo.MultiDevice.B2(inner): ...

``duo``, ``trio`` and ``quad`` each have their own ``MultiDevice`` (two, three and
four variants), so a router over two backends refuses a ``trio`` device.
"""

from __future__ import annotations

from typing import Any, ClassVar


class MultiDeviceBase:
    """A device of one backend of a router: ``variant`` names the backend position
    (``B1`` is the first), ``device`` is that backend's own device object."""

    __slots__ = ("_device",)
    __match_args__ = ("device",)
    _device: Any

    #: 0-based position of the backend this variant names (set on each variant class)
    index: ClassVar[int]
    #: the variant's name: "B1", "B2", ...
    variant: ClassVar[str]
    #: number of backends of the routers this enum belongs to
    arity: ClassVar[int]
    #: the variant classes, in backend order (set on each MultiDevice enum)
    variants: ClassVar[tuple[type[MultiDeviceBase], ...]]

    def __init__(self, device: Any) -> None:
        if "index" not in type(self).__dict__:
            names = ", ".join(f"MultiDevice.{v.variant}(device)" for v in type(self).variants)
            raise TypeError(f"MultiDevice is an enum: pick a variant, one of {names}")
        if isinstance(device, MultiDeviceBase):
            raise TypeError(f"the payload of {type(self).variant} is a backend's own device, not {device!r}")
        object.__setattr__(self, "_device", device)

    @property
    def device(self) -> Any:
        """The backend's own device (``"cpu"``, ``torch.device("cuda", 0)``, ...)."""
        return self._device

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__qualname__} is immutable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MultiDeviceBase):
            return NotImplemented
        return type(self) is type(other) and bool(self._device == other._device)

    def __hash__(self) -> int:
        return hash((type(self), self._device))

    def __repr__(self) -> str:
        return f"{type(self).__module__.rpartition('.')[2]}.MultiDevice.{self.variant}({self._device!r})"

    def __str__(self) -> str:
        return f"{self.variant}({self._device})"


def add_variants(enum: type[MultiDeviceBase], arity: int) -> None:
    """Give ``enum`` its variant classes ``B1`` .. ``B<arity>`` as attributes."""
    variants = []
    for index in range(arity):
        name = f"B{index + 1}"
        variant = type(
            name,
            (enum,),
            {
                "__slots__": (),
                "__module__": enum.__module__,
                "__qualname__": f"{enum.__qualname__}.{name}",
                "__doc__": f"A device of the router's backend number {index + 1}.",
                "index": index,
                "variant": name,
            },
        )
        setattr(enum, name, variant)
        variants.append(variant)
    enum.arity = arity
    enum.variants = tuple(variants)
