"""Device memory (``DeviceBuffer``, ``DeviceBox``), page-locked host memory
(``LockedBuffer``) and module globals (``DeviceGlobal``), with synchronous
copies and asynchronous copies on a stream.

Host data is NumPy: a copy checks the dtype and length, so a wrong buffer is
an error that says what was expected, never a silent reinterpretation.
"""

from __future__ import annotations

import contextlib
from typing import Any

import cupyx
import numpy as np
from cupy.cuda import runtime as cupy_runtime

from ruda_cuda.kernel._driver import driver
from ruda_cuda.kernel._errors import check
from ruda_cuda.kernel._stream import Stream, _handle


class _DeviceMemory:
    """``length`` elements of ``dtype`` at device address ``ptr``."""

    __slots__ = ("dtype", "length", "ptr")

    def __init__(self, ptr: int, dtype: np.dtype[Any], length: int):
        self.ptr = int(ptr)
        self.dtype = dtype
        self.length = length

    @property
    def nbytes(self) -> int:
        """Size in bytes."""
        return self.length * self.dtype.itemsize

    def __len__(self) -> int:
        return self.length

    def _host(self, host: Any, writable: bool) -> np.ndarray:
        if not isinstance(host, np.ndarray):
            raise TypeError(
                f"expected a NumPy array of {self.length} {self.dtype}, not {type(host).__name__}"
            )
        if host.dtype != self.dtype or host.size != self.length:
            raise ValueError(
                f"expected {self.length} elements of {self.dtype}, got {host.size} of {host.dtype}"
            )
        if not host.flags.c_contiguous or (writable and not host.flags.writeable):
            raise ValueError("the host array must be C-contiguous" + (" and writable" if writable else ""))
        return host

    def copy_from(self, host: np.ndarray) -> None:
        """Copy ``host`` (same dtype and length) to the device; returns when done."""
        src = self._host(host, writable=False)
        check(driver().cuMemcpyHtoD(self.ptr, src, self.nbytes), "cuMemcpyHtoD")

    def copy_to(self, host: np.ndarray) -> None:
        """Copy the device data into ``host`` (same dtype and length); returns when done."""
        dst = self._host(host, writable=True)
        check(driver().cuMemcpyDtoH(dst, self.ptr, self.nbytes), "cuMemcpyDtoH")

    def async_copy_from(self, host: np.ndarray, stream: Stream) -> None:
        """Queue a copy from page-locked ``host`` (made by :func:`LockedBuffer`) on ``stream``;
        ``host`` must stay alive and unchanged until the stream has passed this point."""
        src = self._host(_locked(host), writable=False)
        check(driver().cuMemcpyHtoDAsync(self.ptr, src, self.nbytes, _handle(stream)), "cuMemcpyHtoDAsync")

    def async_copy_to(self, host: np.ndarray, stream: Stream) -> None:
        """Queue a copy into page-locked ``host`` (made by :func:`LockedBuffer`) on ``stream``; read
        it after synchronising."""
        dst = self._host(_locked(host), writable=True)
        check(driver().cuMemcpyDtoHAsync(dst, self.ptr, self.nbytes, _handle(stream)), "cuMemcpyDtoHAsync")

    def copy_from_device(self, other: _DeviceMemory, stream: Stream | None = None) -> None:
        """Copy another device allocation of the same dtype and length (async on ``stream``)."""
        if other.dtype != self.dtype or other.length != self.length:
            raise ValueError(
                f"expected {self.length} elements of {self.dtype}, got {other.length} of {other.dtype}"
            )
        if stream is None:
            check(driver().cuMemcpyDtoD(self.ptr, other.ptr, self.nbytes), "cuMemcpyDtoD")
        else:
            check(
                driver().cuMemcpyDtoDAsync(self.ptr, other.ptr, self.nbytes, _handle(stream)),
                "cuMemcpyDtoDAsync",
            )

    def to_numpy(self) -> np.ndarray:
        """A new NumPy array holding a copy of the device data."""
        out = np.empty(self.length, dtype=self.dtype)
        self.copy_to(out)
        return out


class DeviceBuffer(_DeviceMemory):
    """An owned device allocation of ``length`` elements of ``dtype`` (``cuMemAlloc``),
    freed by :meth:`close` or when garbage-collected. Pass it to a kernel as a pointer."""

    __slots__ = ()

    def __init__(self, dtype: Any, length: int):
        dtype = np.dtype(dtype)
        if not isinstance(length, (int, np.integer)) or length < 0:
            raise ValueError(f"length must be a non-negative int, not {length!r}")
        nbytes = max(int(length) * dtype.itemsize, 1)  # cuMemAlloc rejects 0 bytes
        super().__init__(int(check(driver().cuMemAlloc(nbytes), "cuMemAlloc")), dtype, int(length))

    @classmethod
    def from_slice(cls, host: np.ndarray) -> DeviceBuffer:
        """A new buffer holding a copy of the 1-D NumPy array ``host``."""
        host = np.ascontiguousarray(host).reshape(-1)
        buffer = cls(host.dtype, host.size)
        buffer.copy_from(host)
        return buffer

    @classmethod
    def zeroed(cls, dtype: Any, length: int) -> DeviceBuffer:
        """A new buffer with every byte zero."""
        buffer = cls(dtype, length)
        check(driver().cuMemsetD8(buffer.ptr, 0, buffer.nbytes), "cuMemsetD8")
        return buffer

    def close(self) -> None:
        """Free the memory. Idempotent; the buffer is unusable afterwards."""
        if self.ptr:
            ptr, self.ptr = self.ptr, 0
            check(driver().cuMemFree(ptr), "cuMemFree")

    def __enter__(self) -> DeviceBuffer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # the context or the driver may be gone already
            self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.dtype}, {self.length}, ptr=0x{self.ptr:x})"


class DeviceBox(DeviceBuffer):
    """One value on the device: ``DeviceBox(np.float32(1.0))``; :meth:`get` reads it back."""

    __slots__ = ()

    def __init__(self, value: Any):
        if not isinstance(value, (np.generic, np.ndarray)) or np.ndim(value) != 0:
            raise TypeError(
                f"DeviceBox needs a NumPy scalar with a C type (np.float32(1.0), "
                f"np.int32(4)), not {type(value).__name__}"
            )
        host = np.asarray(value).reshape(1)
        super().__init__(host.dtype, 1)
        self.copy_from(host)

    def get(self) -> Any:
        """The value, read back from the device (synchronously)."""
        return self.to_numpy()[0]

    def set(self, value: Any) -> None:
        """Overwrite the value (converted to the box's dtype)."""
        self.copy_from(np.asarray(value, dtype=self.dtype).reshape(1))


class DeviceGlobal(_DeviceMemory):
    """A ``__device__`` variable of a module; owned by the module, never freed here."""

    __slots__ = ()


def LockedBuffer(dtype: Any, length: int) -> np.ndarray:  # noqa: N802  (a constructor by role)
    """``length`` elements of page-locked host memory as a NumPy array: copies to and from it
    can run asynchronously on a stream. Allocated through CuPy's pinned-memory pool."""
    if not isinstance(length, (int, np.integer)) or length < 0:
        raise ValueError(f"length must be a non-negative int, not {length!r}")
    pinned: np.ndarray = cupyx.empty_pinned((int(length),), dtype=np.dtype(dtype))  # CuPy is untyped
    return pinned


def _locked(host: Any) -> np.ndarray:
    if isinstance(host, np.ndarray) and host.size:
        attributes = cupy_runtime.pointerGetAttributes(host.__array_interface__["data"][0])
        if attributes.type == cupy_runtime.memoryTypeHost:
            return host
    raise TypeError("asynchronous copies need page-locked host memory: allocate it with LockedBuffer")
