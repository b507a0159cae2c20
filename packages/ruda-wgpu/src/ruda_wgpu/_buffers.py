"""GPU buffers: the pool a device's buffers come from, and the storage an array and its views share.

- Buffers come from a pool of size classes (powers of two in quarter steps), so steady-state
  work creates no new GPU buffers; an array's buffer returns to the pool when the last array
  viewing it is collected (:class:`Storage`).
- A storage tells the device's pending operations (``_fusion``) that it is about to be written
  (:meth:`Storage.will_write`), so that those reading it are recorded first.
- Narrow integers and bool are stored widened to 32 bits (:func:`storage_itemsize`).
"""

from __future__ import annotations

import functools
import heapq
import itertools
import os
import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from ruda_wgpu import _dtypes

if TYPE_CHECKING:
    from ruda_wgpu._engine import GpuDevice


@functools.lru_cache(maxsize=4096)  # every new array asks, mostly for a few sizes
def size_class(nbytes: int) -> int:
    """The pooled size for a request: at least 256 bytes, then powers of two in quarter steps."""
    n = max(int(nbytes), 256)
    base = 1 << (n - 1).bit_length() - 1
    for k in (5, 6, 7, 8):
        size = base * k // 4
        if size >= n:
            return size
    return base * 2


#: the environment variable that caps a kernel's storage bindings below the adapter's (bytes), so
#: that the paths of arrays beyond one binding run on small arrays (tests, the official suite)
MAX_BINDING_ENV = "RUDA_WGPU_MAX_BINDING"


def binding_limit(adapter_limit: int) -> int:
    """The storage binding size kernels keep to: the adapter's, or :data:`MAX_BINDING_ENV`'s
    when that is smaller."""
    value = os.environ.get(MAX_BINDING_ENV, "").strip()
    if not value:
        return adapter_limit
    try:
        cap = int(value)
    except ValueError:
        raise ValueError(f"{MAX_BINDING_ENV}={value!r}: give a number of bytes") from None
    if cap < 1024:
        raise ValueError(f"{MAX_BINDING_ENV}={cap}: a binding needs at least 1024 bytes")
    return min(adapter_limit, cap)


class BufferPool:
    """GPU buffers by size class; counts what is allocated and what is in use.

    A free buffer is handed out earliest made first, not last returned first: a loop then gets
    the same buffers in the same roles every round, and the bind groups, prepared dispatches
    and fused launches it made, which hold buffers, are found again. Last returned first, each
    round handed the buffers to new roles (as the loop's arrays died in another order than it
    made them): a 64 x 64 conjugate gradient loop made six bind groups a round for more than
    600 rounds, and ran at 440-800 us a round on lavapipe against 207 in this order, which
    makes none after the first round.
    """

    def __init__(self, device: Any, usage: int) -> None:
        self._device = device
        self._usage = usage
        #: the largest buffer the device makes (a size class above it is cut down to it)
        self.largest = int(device.limits["max-buffer-size"])
        #: free buffers by size class, each a heap of (serial, buffer): earliest made first
        self._free: dict[int, list[tuple[int, Any]]] = {}
        # Every buffer stays referenced here, with its serial, until destroyed, so it is never
        # part of garbage that the cycle collector finalises together with the Storage that would
        # return it to the pool.
        self._owned: dict[int, tuple[int, Any]] = {}
        self._serials = itertools.count()
        # Re-entrant: a garbage collection inside a locked section may finalise a Storage,
        # whose __del__ releases its buffer into this same pool from the same thread.
        self._lock = threading.RLock()
        self.allocated_bytes = 0
        self.in_use_bytes = 0
        self.buffers_created = 0

    def acquire(self, nbytes: int) -> Any:
        """A buffer of at least ``nbytes``, reused when one of its size class is free. Raises
        MemoryError, before asking the device, when it makes no buffer that large, and when the
        driver cannot allocate it even after the pool's free buffers are given back."""
        if nbytes > self.largest:
            raise MemoryError(
                f"{nbytes} bytes exceed the largest buffer this device makes ({self.largest} bytes, "
                "its WebGPU max-buffer-size): use smaller arrays"
            )
        size = min(size_class(nbytes), self.largest)
        with self._lock:
            free = self._free.get(size)
            buf = heapq.heappop(free)[1] if free else None
            self.in_use_bytes += size
        if buf is None:
            try:
                buf = self._create(size)
            except BaseException:
                with self._lock:
                    self.in_use_bytes -= size
                raise
            with self._lock:
                self._owned[id(buf)] = (next(self._serials), buf)
                self.allocated_bytes += size
                self.buffers_created += 1
        return buf

    def _create(self, size: int) -> Any:
        """A new buffer of ``size`` bytes; when the driver is out of memory, the free buffers are
        destroyed and it is asked once more, then MemoryError."""
        import wgpu  # (loaded with the device: this module is imported before wgpu is)

        try:
            return self._device.create_buffer(size=size, usage=self._usage)
        except wgpu.GPUError as err:
            if not _out_of_memory(err):
                raise
        self.empty()
        try:
            return self._device.create_buffer(size=size, usage=self._usage)
        except wgpu.GPUError as err:
            if not _out_of_memory(err):
                raise
            raise MemoryError(
                f"the device could not allocate a buffer of {size} bytes ({self.in_use_bytes - size} "
                "bytes in use by arrays): free arrays, or use smaller ones"
            ) from err

    def release(self, buf: Any, size: int = 0) -> None:
        """Return a buffer to the pool (it stays allocated for reuse); ``size``, when given, is
        its size, which ``acquire`` chose (spares asking wgpu-py: every array's end passes here)."""
        size = size or int(buf.size)
        with self._lock:
            free = self._free.get(size)
            if free is None:
                free = self._free[size] = []
            heapq.heappush(free, self._owned[id(buf)])
            self.in_use_bytes -= size

    def empty(self) -> None:
        """Destroy every free buffer, giving its memory back to the driver."""
        with self._lock:
            free, self._free = self._free, {}
            for bufs in free.values():
                for _, buf in bufs:
                    self.allocated_bytes -= int(buf.size)
                    del self._owned[id(buf)]
                    buf.destroy()


def _out_of_memory(err: Exception) -> bool:
    """Whether a wgpu error says the driver could not allocate: an out-of-memory error, or (on
    OpenGL) a validation error saying "Not enough memory left"."""
    import wgpu

    return isinstance(err, wgpu.GPUOutOfMemoryError) or "not enough memory" in str(err).lower()


#: the serials of :class:`Storage` objects, in the order they are made
STORAGE_SERIALS = itertools.count()


class Storage:
    """One pooled GPU buffer shared by an array and its views; returned to the pool on collection."""

    __slots__ = ("__weakref__", "buffer", "device", "host", "mark", "nbytes", "serial")

    def __init__(self, device: GpuDevice, nbytes: int) -> None:
        self.device = device
        self.nbytes = nbytes
        self.buffer = device.pool.acquire(nbytes)
        #: the order it was made in (``fuse`` tells buffers made during its trace by it)
        self.serial = next(STORAGE_SERIALS)
        #: a host copy of the words while nothing has written to the buffer since it was read
        self.host: Any = None
        #: the device's generation (see GpuDevice.run_pending) in which a pending (lazy)
        #: operation last took this buffer as an operand (set by ``_fusion.record``): a mark
        #: costs an operation one assignment, where a list of the buffer's readers cost it a
        #: weak reference and a list entry, a third of what recording one cost
        self.mark = -1

    def will_write(self) -> None:
        """Call before recording a write into this buffer: pending operations that read it are
        recorded first, so that they see the old contents, and the host copy is dropped. A write
        that pending operations may read starts a new epoch of the device (see
        ``_fusion._launch``).

        Under the device's lock, and unmarked only once the readers have run: a second thread
        writing into the buffer meanwhile waits for them, rather than finding it unmarked and
        recording its write before them."""
        self.host = None
        device = self.device
        if self.mark == device.generation:  # a pending operation may read it
            with device._lock:
                if self.mark == device.generation:
                    device.run_readers(self)  # (they run before the write: in the old epoch)
                    self.mark = -1
                    device.epoch += 1

    def __del__(self) -> None:
        # try rather than contextlib.suppress: every array's end passes here, and the context
        # manager cost 0.3 us of the 1.7 that a buffer's round trip through the pool took
        try:
            pool = self.device._pool  # (open: it made this buffer, of the size acquire chose)
            pool.release(self.buffer, min(size_class(self.nbytes), pool.largest))
        except Exception:  # interpreter shutdown: the pool may be gone already
            pass


def storage_itemsize(dtype: np.dtype[Any]) -> int:
    """Bytes per stored element (narrow ints and bool are widened to 4)."""
    return STORAGE_ITEMSIZE[dtype]


#: :func:`storage_itemsize` as a table, for the per-operation launch path
STORAGE_ITEMSIZE = {
    dt: int(_dtypes.STORAGE_NP[name].itemsize) for dt, name in _dtypes.NAME.items() if name in _dtypes.STORAGE
}
