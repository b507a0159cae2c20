"""CUDA errors as Python exceptions: one ``CudaError`` subclass per common CUresult.

Every failure names the CUresult (``CUDA_ERROR_INVALID_VALUE``), its code, the
driver call that returned it, and the driver's own description.
"""

from __future__ import annotations

from typing import Any

from ruda_cuda.kernel._driver import driver


class CudaError(RuntimeError):
    """A CUDA driver call failed. ``result`` is the CUresult name, ``code`` its value,
    ``call`` the driver function."""

    def __init__(self, code: int, call: str, result: str | None = None, detail: str | None = None):
        self.code = int(code)
        self.call = call
        self.result = result or _name_of(self.code)
        self.detail = detail if detail is not None else _description_of(self.code)
        super().__init__(f"{call} failed with {self.result} ({self.code}): {self.detail}")


class InvalidValueError(CudaError):
    """CUDA_ERROR_INVALID_VALUE: an argument was out of range."""


class OutOfMemoryError(CudaError):
    """CUDA_ERROR_OUT_OF_MEMORY: the allocation does not fit."""


class NotInitializedError(CudaError):
    """CUDA_ERROR_NOT_INITIALIZED: call ``ruda_cuda.kernel.init()`` first."""


class NoDeviceError(CudaError):
    """CUDA_ERROR_NO_DEVICE: no CUDA GPU is visible."""


class InvalidDeviceError(CudaError):
    """CUDA_ERROR_INVALID_DEVICE: no GPU has that ordinal."""


class InvalidImageError(CudaError):
    """CUDA_ERROR_INVALID_IMAGE: the module image is not valid CUBIN/FATBIN/PTX."""


class InvalidContextError(CudaError):
    """CUDA_ERROR_INVALID_CONTEXT: no context is current, or it was destroyed."""


class NoBinaryForGpuError(CudaError):
    """CUDA_ERROR_NO_BINARY_FOR_GPU: the module has no code for this GPU's architecture."""


class InvalidPtxError(CudaError):
    """CUDA_ERROR_INVALID_PTX: the PTX failed to JIT-compile."""


class InvalidSourceError(CudaError):
    """CUDA_ERROR_INVALID_SOURCE: the source is malformed."""


class FileNotFoundCudaError(CudaError):
    """CUDA_ERROR_FILE_NOT_FOUND: the module file does not exist."""


class InvalidHandleError(CudaError):
    """CUDA_ERROR_INVALID_HANDLE: a stream, event, module or function handle is stale."""


class NotFoundError(CudaError):
    """CUDA_ERROR_NOT_FOUND: no kernel or global of that name (is it ``extern "C"``?)."""


class NotReadyError(CudaError):
    """CUDA_ERROR_NOT_READY: the work is still running."""


class IllegalAddressError(CudaError):
    """CUDA_ERROR_ILLEGAL_ADDRESS: a kernel accessed memory it does not own."""


class LaunchOutOfResourcesError(CudaError):
    """CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: too many registers or threads for this launch."""


class LaunchFailedError(CudaError):
    """CUDA_ERROR_LAUNCH_FAILED: the kernel failed while running."""


class NotSupportedError(CudaError):
    """CUDA_ERROR_NOT_SUPPORTED: this GPU or driver does not support the operation."""


class UnsupportedLimitError(CudaError):
    """CUDA_ERROR_UNSUPPORTED_LIMIT: this GPU or driver does not have that ``ResourceLimit``."""


class CompileError(CudaError):
    """NVRTC failed to compile CUDA C source; ``log`` holds the compiler's messages."""

    def __init__(self, code: int, call: str, result: str, log: str):
        self.log = log
        super().__init__(code, call, result, f"compiler log:\n{log}")


_SUBCLASSES: dict[str, type[CudaError]] = {
    "CUDA_ERROR_INVALID_VALUE": InvalidValueError,
    "CUDA_ERROR_OUT_OF_MEMORY": OutOfMemoryError,
    "CUDA_ERROR_NOT_INITIALIZED": NotInitializedError,
    "CUDA_ERROR_NO_DEVICE": NoDeviceError,
    "CUDA_ERROR_INVALID_DEVICE": InvalidDeviceError,
    "CUDA_ERROR_INVALID_IMAGE": InvalidImageError,
    "CUDA_ERROR_INVALID_CONTEXT": InvalidContextError,
    "CUDA_ERROR_CONTEXT_IS_DESTROYED": InvalidContextError,
    "CUDA_ERROR_NO_BINARY_FOR_GPU": NoBinaryForGpuError,
    "CUDA_ERROR_INVALID_PTX": InvalidPtxError,
    "CUDA_ERROR_UNSUPPORTED_PTX_VERSION": InvalidPtxError,
    "CUDA_ERROR_INVALID_SOURCE": InvalidSourceError,
    "CUDA_ERROR_FILE_NOT_FOUND": FileNotFoundCudaError,
    "CUDA_ERROR_INVALID_HANDLE": InvalidHandleError,
    "CUDA_ERROR_NOT_FOUND": NotFoundError,
    "CUDA_ERROR_NOT_READY": NotReadyError,
    "CUDA_ERROR_ILLEGAL_ADDRESS": IllegalAddressError,
    "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES": LaunchOutOfResourcesError,
    "CUDA_ERROR_LAUNCH_FAILED": LaunchFailedError,
    "CUDA_ERROR_NOT_SUPPORTED": NotSupportedError,
    "CUDA_ERROR_UNSUPPORTED_LIMIT": UnsupportedLimitError,
}


def _name_of(code: int) -> str:
    try:
        return str(driver().CUresult(code).name)
    except (ValueError, ImportError):
        return f"CUresult {code}"


def _description_of(code: int) -> str:
    try:
        err, text = driver().cuGetErrorString(code)
    except Exception:  # no driver library to ask: the name alone has to do
        return "no description from the driver"
    if int(err) != 0 or text is None:
        return "no description from the driver"
    return text.decode() if isinstance(text, bytes) else str(text)


def error(code: int, call: str) -> CudaError:
    """The exception for CUresult ``code`` returned by ``call``."""
    name = _name_of(code)
    return _SUBCLASSES.get(name, CudaError)(code, call, name)


def check(returned: Any, call: str) -> Any:
    """Unpack a cuda-bindings result tuple ``(CUresult, *values)``; raise on failure.

    Returns ``None``, the single value, or the tuple of values.
    """
    if isinstance(returned, tuple):
        status, values = returned[0], returned[1:]
    else:
        status, values = returned, ()
    if int(status) != 0:
        raise error(int(status), call)
    if not values:
        return None
    return values[0] if len(values) == 1 else values


def from_cupy(err: Exception, call: str) -> CudaError:
    """Our exception for a CuPy ``CUDADriverError`` / ``CUDARuntimeError`` (same codes)."""
    return error(int(getattr(err, "status", 999)), call)
