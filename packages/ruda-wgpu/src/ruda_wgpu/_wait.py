"""Waiting on the calling thread for the work a wgpu-native device has been given, and for a
staging buffer to map.

A blocking ``wgpuDevicePoll(wait=True)`` sleeps until the driver wakes the thread, which on an
H200 (NVIDIA's Vulkan driver) came 20-25 us after the GPU had finished. A thread that spins on
non-blocking polls until the queue's work-done callback fires sees the end at once, as CUDA's
default synchronisation does while a core is free. Measured there, one call and its wait
(medians): ``fft`` of 2^20 points 204 us blocking against 165 spinning, ``exp`` of 1e6 float32
160 against 127, ``add`` of 1e7 204 against 167. Spinning takes a core, so it lasts at most
``spin_seconds`` (then the wait blocks, and its wake-up is a few percent of it at most), and
CPU adapters do not spin at all: there the driver's own threads need the cores to run the
kernels (on lavapipe with two cores spinning made ``exp`` of 1e7 twice as slow).

Written against wgpu-native directly because wgpu-py 0.32 offers neither half: its
``on_submitted_work_done`` hands wgpu-native a callback of the wrong type, and the bool that
``wgpuDevicePoll`` returns is not whether the queue is empty (it is true at once).

Mapping a buffer to read it back goes the same way (:class:`MapReader`): wgpu-py's
``map_async`` makes a new cffi callback each call and wakes its polling thread, whose poll
delivers the mapping to a promise the caller waits on; reading 4 KB back took 290 us (median)
that way on lavapipe and 192 us mapped here and polled on the calling thread.
"""

from __future__ import annotations

import time
from typing import Any

#: the longest a wait spins before it blocks, on GPUs
SPIN_SECONDS = 1e-3


class Waiter:
    """Waits until a wgpu-native device has done everything submitted to it so far.

    Each wait asks the queue for a work-done callback carrying a ticket, the wait's number; the
    callbacks come in order of submission, and a wait ends once its own ticket is back (a late
    answer to an earlier wait cannot end a later one). Counts the waits that ended spinning
    and those that blocked.
    """

    def __init__(self, api: Any, device: Any, spin_seconds: float) -> None:
        """``api`` is wgpu-py's wgpu-native module (``_devices.native_api``), ``device`` one of
        its devices."""
        ffi, lib = api.ffi, api.lib
        self._ffi = ffi
        self._poll = lib.wgpuDevicePoll
        self._on_done = lib.wgpuQueueOnSubmittedWorkDone
        self._device, self._queue = device._internal, device.queue._internal
        #: kept alive as long as wgpu-native may call it
        self._callback = ffi.callback(
            "void(WGPUQueueWorkDoneStatus, WGPUStringView, void *, void *)", self._answer
        )
        self._info = ffi.new("WGPUQueueWorkDoneCallbackInfo *")
        self._info.mode = lib.WGPUCallbackMode_AllowProcessEvents  # called inside our polls
        self._info.callback = self._callback
        self._asked = self._answered = 0
        self.spin_seconds = spin_seconds
        self.spun = self.blocked = 0

    def _answer(self, status: Any, message: Any, ticket: Any, unused: Any) -> None:
        # any status ends the wait: a lost device's errors come from the calls that follow
        self._answered = max(self._answered, int(self._ffi.cast("uintptr_t", ticket)))

    def wait(self) -> None:
        """Return once the device has done all submitted work."""
        if self.spin_seconds > 0:
            self._asked += 1
            ticket = self._asked
            self._info.userdata1 = self._ffi.cast("void *", ticket)
            self._on_done(self._queue, self._info[0])
            poll, device, null = self._poll, self._device, self._ffi.NULL
            deadline = time.perf_counter() + self.spin_seconds
            while self._answered < ticket:
                poll(device, False, null)
                if time.perf_counter() > deadline:
                    break
            else:
                self.spun += 1
                return
        self._poll(self._device, True, self._ffi.NULL)
        self.blocked += 1


class MapReader:
    """Reads the start of a MAP_READ staging buffer that no pending work writes: maps it with
    wgpu-native, polls on the calling thread until the mapping is there, copies, unmaps.

    The buffer stays "unmapped" to wgpu-py throughout, so only the engine's own staging
    buffers, which nothing else maps, may be read this way.
    """

    def __init__(self, api: Any, device: Any) -> None:
        """``api`` is wgpu-py's wgpu-native module (``_devices.native_api``), ``device`` one of
        its devices."""
        ffi, lib = api.ffi, api.lib
        self._ffi, self._device = ffi, device._internal
        self._poll, self._map = lib.wgpuDevicePoll, lib.wgpuBufferMapAsync
        self._range, self._unmap = lib.wgpuBufferGetConstMappedRange, lib.wgpuBufferUnmap
        self._read_mode, self._success = lib.WGPUMapMode_Read, lib.WGPUMapAsyncStatus_Success
        #: kept alive as long as wgpu-native may call it
        self._callback = ffi.callback(
            "void(WGPUMapAsyncStatus, WGPUStringView, void *, void *)", self._answer
        )
        self._info = ffi.new("WGPUBufferMapCallbackInfo *")
        self._info.mode = lib.WGPUCallbackMode_AllowProcessEvents  # called inside our polls
        self._info.callback = self._callback
        self._status: int | None = None
        self._message = ""

    def _answer(self, status: Any, message: Any, unused1: Any, unused2: Any) -> None:
        self._status = int(status)
        if status != self._success and message.data != self._ffi.NULL:
            self._message = self._ffi.string(message.data, message.length).decode(errors="replace")

    def read(self, buffer: Any, nbytes: int) -> bytearray:
        """The first ``nbytes`` of the wgpu-py buffer ``buffer``; RuntimeError if it cannot be
        mapped (a lost device)."""
        self._status, self._message = None, ""
        self._map(buffer._internal, self._read_mode, 0, buffer.size, self._info[0])
        while self._status is None:  # no work is pending on it: the first poll maps it
            self._poll(self._device, True, self._ffi.NULL)
        if self._status != self._success:
            raise RuntimeError(
                f"could not map a buffer to read it back (status {self._status}): {self._message}"
            )
        try:
            return bytearray(self._ffi.buffer(self._range(buffer._internal, 0, nbytes), nbytes))
        finally:
            self._unmap(buffer._internal)
