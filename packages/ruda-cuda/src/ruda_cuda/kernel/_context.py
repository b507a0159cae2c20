"""Contexts: ``Context`` (owned), ``UnownedContext`` (shared between threads), the
per-thread context stack, and context-wide cache and shared-memory settings.

CuPy (and so every ``ruda_cuda`` array) works in each GPU's *primary* context;
``Context.primary(device)`` makes that one current, so kernels can take
``ruda_cuda`` arrays. ``Context.create_and_push`` makes a separate context, as
the CUDA driver API does: memory allocated in it belongs to it alone.
"""

from __future__ import annotations

import contextlib
import enum
import operator

from cupy.cuda import driver as cupy_driver

from ruda_cuda.kernel._device import Device
from ruda_cuda.kernel._driver import driver
from ruda_cuda.kernel._errors import check, from_cupy


class ContextFlags(enum.IntFlag):
    """Flags of ``cuCtxCreate``: scheduling policy and host-memory mapping."""

    SCHED_AUTO = 0x00
    SCHED_SPIN = 0x01
    SCHED_YIELD = 0x02
    SCHED_BLOCKING_SYNC = 0x04
    MAP_HOST = 0x08
    LMEM_RESIZE_TO_MAX = 0x10


class CacheConfig(enum.IntEnum):
    """Preferred split between L1 cache and shared memory (``CUfunc_cache``)."""

    PREFER_NONE = 0
    PREFER_SHARED = 1
    PREFER_L1 = 2
    PREFER_EQUAL = 3


class SharedMemoryConfig(enum.IntEnum):
    """Shared-memory bank size (``CUsharedconfig``); GPUs since Volta ignore it."""

    DEFAULT_BANK_SIZE = 0
    FOUR_BYTE_BANK_SIZE = 1
    EIGHT_BYTE_BANK_SIZE = 2


class ResourceLimit(enum.IntEnum):
    """Context-wide limits (``CUlimit``), for :meth:`CurrentContext.get_resource_limit` and
    :meth:`CurrentContext.set_resource_limit`. Sizes are in bytes."""

    STACK_SIZE = 0  # stack of each GPU thread
    PRINTF_FIFO_SIZE = 1  # buffer that device-side printf writes into
    MALLOC_HEAP_SIZE = 2  # heap that device-side malloc/new allocate from
    DEVICE_RUNTIME_SYNCHRONIZE_DEPTH = 3  # nesting depth of device-side synchronisation
    DEVICE_RUNTIME_PENDING_LAUNCH_COUNT = 4  # launches from the device still queued
    MAX_L2_FETCH_GRANULARITY = 5  # L2 fetch size hint, 0..128
    PERSISTING_L2_CACHE_SIZE = 6  # L2 set aside for persisting accesses


class UnownedContext:
    """A context handle that does not destroy the context: safe to hand to other threads."""

    __slots__ = ("handle",)

    def __init__(self, handle: int):
        self.handle = int(handle)

    def api_version(self) -> int:
        """The driver API version the context was created with."""
        return int(check(driver().cuCtxGetApiVersion(self.handle), "cuCtxGetApiVersion"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnownedContext) and other.handle == self.handle

    def __hash__(self) -> int:
        return hash(("cuda-context", self.handle))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(0x{self.handle:x})"


class Context(UnownedContext):
    """An owned context: destroyed (or released, for a primary context) by :meth:`close`,
    at the end of a ``with`` block, or when garbage-collected."""

    __slots__ = ("_device", "_primary")

    def __init__(self, handle: int, device: Device, primary: bool):
        super().__init__(handle)
        self._device = device
        self._primary = primary

    @classmethod
    def create_and_push(cls, flags: ContextFlags | int, device: Device) -> Context:
        """Create a new context on ``device`` and make it current (``cuCtxCreate``)."""
        d = driver()
        try:  # CUDA 13 bindings: cuCtxCreate(params, flags, dev); CUDA 12: cuCtxCreate(flags, dev)
            returned = d.cuCtxCreate(None, int(flags), device.handle)
        except TypeError:
            returned = d.cuCtxCreate(int(flags), device.handle)
        return cls(int(check(returned, "cuCtxCreate")), device, primary=False)

    @classmethod
    def primary(cls, device: Device) -> Context:
        """Retain ``device``'s primary context (CuPy's) and make it current."""
        handle = int(check(driver().cuDevicePrimaryCtxRetain(device.handle), "cuDevicePrimaryCtxRetain"))
        context = cls(handle, device, primary=True)
        CurrentContext.set_current(context)
        return context

    @property
    def device(self) -> Device:
        """The GPU this context runs on."""
        return self._device

    def get_unowned(self) -> UnownedContext:
        """A non-owning handle for another thread."""
        return UnownedContext(self.handle)

    def close(self) -> None:
        """Destroy the context (release it, for a primary context). Idempotent."""
        if self.handle == 0:
            return
        handle, self.handle = self.handle, 0
        if self._primary:
            check(driver().cuDevicePrimaryCtxRelease(self._device.handle), "cuDevicePrimaryCtxRelease")
        else:
            try:
                cupy_driver.ctxDestroy(handle)
            except cupy_driver.CUDADriverError as err:
                raise from_cupy(err, "cuCtxDestroy") from None

    def __enter__(self) -> Context:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # the driver may be gone at interpreter exit
            self.close()


class ContextStack:
    """The calling thread's stack of contexts (``cuCtxPushCurrent`` / ``cuCtxPopCurrent``)."""

    @staticmethod
    def push(context: UnownedContext) -> None:
        """Make ``context`` current, keeping the previous one below it."""
        check(driver().cuCtxPushCurrent(context.handle), "cuCtxPushCurrent")

    @staticmethod
    def pop() -> UnownedContext:
        """Remove the current context and return it; the one below becomes current."""
        return UnownedContext(int(check(driver().cuCtxPopCurrent(), "cuCtxPopCurrent")))


class CurrentContext:
    """Settings of the calling thread's current context."""

    @staticmethod
    def get_current() -> UnownedContext | None:
        """The current context, or ``None`` when there is none."""
        try:
            handle = cupy_driver.ctxGetCurrent()
        except cupy_driver.CUDADriverError as err:
            raise from_cupy(err, "cuCtxGetCurrent") from None
        return UnownedContext(handle) if handle else None

    @staticmethod
    def set_current(context: UnownedContext) -> None:
        """Replace the current context (the top of the stack) with ``context``."""
        try:
            cupy_driver.ctxSetCurrent(context.handle)
        except cupy_driver.CUDADriverError as err:
            raise from_cupy(err, "cuCtxSetCurrent") from None

    @staticmethod
    def get_device() -> Device:
        """The GPU of the current context."""
        handle = int(check(driver().cuCtxGetDevice(), "cuCtxGetDevice"))
        ordinal = next(
            i for i in range(Device.count()) if int(check(driver().cuDeviceGet(i), "cuDeviceGet")) == handle
        )
        return Device(ordinal, handle)

    @staticmethod
    def synchronize() -> None:
        """Wait for all work in the current context (``cuCtxSynchronize``)."""
        check(driver().cuCtxSynchronize(), "cuCtxSynchronize")

    @staticmethod
    def get_cache_config() -> CacheConfig:
        """The context's preferred L1/shared split."""
        return CacheConfig(int(check(driver().cuCtxGetCacheConfig(), "cuCtxGetCacheConfig")))

    @staticmethod
    def set_cache_config(config: CacheConfig) -> None:
        """Prefer more L1 or more shared memory for kernels of this context."""
        d = driver()
        check(d.cuCtxSetCacheConfig(d.CUfunc_cache(int(config))), "cuCtxSetCacheConfig")

    @staticmethod
    def get_shared_memory_config() -> SharedMemoryConfig:
        """The context's shared-memory bank size."""
        return SharedMemoryConfig(int(check(driver().cuCtxGetSharedMemConfig(), "cuCtxGetSharedMemConfig")))

    @staticmethod
    def set_shared_memory_config(config: SharedMemoryConfig) -> None:
        """Set the bank size (accepted and ignored by GPUs since Volta)."""
        d = driver()
        check(d.cuCtxSetSharedMemConfig(d.CUsharedconfig(int(config))), "cuCtxSetSharedMemConfig")

    @staticmethod
    def get_resource_limit(limit: ResourceLimit) -> int:
        """The current value of one context-wide limit (``cuCtxGetLimit``)."""
        limit = ResourceLimit(limit)
        d = driver()
        return int(check(d.cuCtxGetLimit(d.CUlimit(int(limit))), f"cuCtxGetLimit({limit.name})"))

    @staticmethod
    def set_resource_limit(limit: ResourceLimit, value: int) -> None:
        """Set one context-wide limit (``cuCtxSetLimit``); the driver may round the value up,
        so read it back with :meth:`get_resource_limit`. The heap size
        (``MALLOC_HEAP_SIZE``) can change only before the first kernel that uses ``malloc``."""
        limit = ResourceLimit(limit)
        try:
            size = operator.index(value)
        except TypeError:
            raise TypeError(f"a {limit.name} limit is an int, not {type(value).__name__}") from None
        if size < 0:
            raise ValueError(f"a {limit.name} limit is a non-negative int, not {size}")
        d = driver()
        check(d.cuCtxSetLimit(d.CUlimit(int(limit)), size), f"cuCtxSetLimit({limit.name}, {size})")

    @staticmethod
    def get_stream_priority_range() -> tuple[int, int]:
        """``(least, greatest)`` stream priority; greatest is the most urgent (numerically lowest)."""
        least, greatest = check(driver().cuCtxGetStreamPriorityRange(), "cuCtxGetStreamPriorityRange")
        return int(least), int(greatest)


def ensure_current(device_ordinal: int = 0) -> None:
    """Make the primary context of ``device_ordinal`` current if no context is, as CuPy does."""
    if CurrentContext.get_current() is None:
        import cupy

        cupy.cuda.Device(device_ordinal).use()
        cupy.cuda.runtime.free(0)  # initialises and binds the primary context
