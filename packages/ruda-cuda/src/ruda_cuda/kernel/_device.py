"""``init`` and ``Device``: the GPUs the CUDA driver sees."""

from __future__ import annotations

from ruda_cuda.kernel._driver import driver
from ruda_cuda.kernel._errors import check


def init(flags: int = 0) -> None:
    """Initialise the CUDA driver (``cuInit``); call once before anything else. Idempotent."""
    check(driver().cuInit(flags), "cuInit")


class Device:
    """One GPU, by ordinal."""

    __slots__ = ("handle", "ordinal")

    def __init__(self, ordinal: int, handle: int):
        self.ordinal = ordinal
        self.handle = handle

    @classmethod
    def get(cls, ordinal: int) -> Device:
        """The GPU with this ordinal (``cuDeviceGet``)."""
        if not isinstance(ordinal, int) or ordinal < 0:
            raise ValueError(f"a device ordinal is a non-negative int, not {ordinal!r}")
        count = cls.count()
        if ordinal >= count:
            raise ValueError(f"no CUDA device {ordinal}: the driver sees {count} (ordinals 0..{count - 1})")
        return cls(ordinal, int(check(driver().cuDeviceGet(ordinal), "cuDeviceGet")))

    @staticmethod
    def count() -> int:
        """How many GPUs the driver sees (``cuDeviceGetCount``)."""
        return int(check(driver().cuDeviceGetCount(), "cuDeviceGetCount"))

    @classmethod
    def devices(cls) -> list[Device]:
        """Every GPU."""
        return [cls.get(i) for i in range(cls.count())]

    def name(self) -> str:
        """The GPU's marketing name, e.g. ``NVIDIA H200``."""
        raw = check(driver().cuDeviceGetName(256, self.handle), "cuDeviceGetName")
        return bytes(raw).split(b"\0", 1)[0].decode()

    def total_memory(self) -> int:
        """Global memory in bytes."""
        return int(check(driver().cuDeviceTotalMem(self.handle), "cuDeviceTotalMem"))

    def get_attribute(self, attribute: object) -> int:
        """One ``CUdevice_attribute`` of this GPU."""
        return int(check(driver().cuDeviceGetAttribute(attribute, self.handle), "cuDeviceGetAttribute"))

    def compute_capability(self) -> tuple[int, int]:
        """``(major, minor)``, e.g. ``(9, 0)`` for Hopper."""
        attr = driver().CUdevice_attribute
        return (
            self.get_attribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
            self.get_attribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.handle == self.handle

    def __hash__(self) -> int:
        return hash(("cuda-device", self.handle))

    def __repr__(self) -> str:
        return f"Device({self.ordinal})"
