"""ruda_cuda.kernel: the CUDA kernel runtime (NVIDIA only).

RustaCUDA's concepts in Python, beside (not part of) the Array API namespace::

    from ruda_cuda.kernel import *
    init()
    device = Device.get(0)
    context = Context.primary(device)          # or Context.create_and_push(flags, device)
    module = Module.compile(source)            # or load_from_file / _string / _bytes
    stream = Stream(StreamFlags.NON_BLOCKING, None)  # None: the default priority
    module.sum[1, 1, 0, stream](x, y, result)  # launch!(module.sum<<<1, 1, 0, stream>>>(...))
    stream.synchronize()

Calls go through CuPy's driver bindings where CuPy has them (context,
module, function, launch, NVRTC) and NVIDIA's ``cuda-bindings`` where it
does not (device queries, stacks, cache and shared-memory configuration,
streams, events, memory, limits). Every failure raises a :class:`CudaError`
subclass naming the CUresult and the call.

Kernels loaded from PTX (text, file, or ``Module.compile``) know their parameter
types from the PTX ``.entry`` declaration (``function.parameters``), so Python
``int`` and ``float`` arguments are converted and checked; CUBIN and FATBIN
kernels take NumPy scalars with explicit C types.
"""

from __future__ import annotations

from ruda_cuda.kernel._context import (
    CacheConfig,
    Context,
    ContextFlags,
    ContextStack,
    CurrentContext,
    ResourceLimit,
    SharedMemoryConfig,
    UnownedContext,
)
from ruda_cuda.kernel._device import Device, init
from ruda_cuda.kernel._driver import driver as _driver
from ruda_cuda.kernel._errors import (
    CompileError,
    CudaError,
    FileNotFoundCudaError,
    IllegalAddressError,
    InvalidContextError,
    InvalidDeviceError,
    InvalidHandleError,
    InvalidImageError,
    InvalidPtxError,
    InvalidSourceError,
    InvalidValueError,
    LaunchFailedError,
    LaunchOutOfResourcesError,
    NoBinaryForGpuError,
    NoDeviceError,
    NotFoundError,
    NotInitializedError,
    NotReadyError,
    NotSupportedError,
    OutOfMemoryError,
    UnsupportedLimitError,
)
from ruda_cuda.kernel._memory import DeviceBox, DeviceBuffer, DeviceGlobal, LockedBuffer
from ruda_cuda.kernel._module import Function, FunctionAttribute, Module, launch
from ruda_cuda.kernel._parameters import KernelParameter
from ruda_cuda.kernel._stream import Event, EventFlags, Stream, StreamFlags, StreamWaitEventFlags

#: The driver's ``CUdevice_attribute`` enum, for :meth:`Device.get_attribute`.
DeviceAttribute = _driver().CUdevice_attribute

__all__ = [
    "CacheConfig",
    "CompileError",
    "Context",
    "ContextFlags",
    "ContextStack",
    "CudaError",
    "CurrentContext",
    "Device",
    "DeviceAttribute",
    "DeviceBox",
    "DeviceBuffer",
    "DeviceGlobal",
    "Event",
    "EventFlags",
    "FileNotFoundCudaError",
    "Function",
    "FunctionAttribute",
    "IllegalAddressError",
    "InvalidContextError",
    "InvalidDeviceError",
    "InvalidHandleError",
    "InvalidImageError",
    "InvalidPtxError",
    "InvalidSourceError",
    "InvalidValueError",
    "KernelParameter",
    "LaunchFailedError",
    "LaunchOutOfResourcesError",
    "LockedBuffer",
    "Module",
    "NoBinaryForGpuError",
    "NoDeviceError",
    "NotFoundError",
    "NotInitializedError",
    "NotReadyError",
    "NotSupportedError",
    "OutOfMemoryError",
    "ResourceLimit",
    "SharedMemoryConfig",
    "Stream",
    "StreamFlags",
    "StreamWaitEventFlags",
    "UnownedContext",
    "UnsupportedLimitError",
    "init",
    "launch",
]
