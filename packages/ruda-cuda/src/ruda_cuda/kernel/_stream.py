"""Streams and events."""

from __future__ import annotations

import contextlib
import enum
import operator
from collections.abc import Callable
from typing import Any

from cupy.cuda import runtime as cupy_runtime

from ruda_cuda.kernel._driver import driver
from ruda_cuda.kernel._errors import CudaError, check, error, from_cupy

_NOT_READY = 600  # CUDA_ERROR_NOT_READY


class StreamFlags(enum.IntFlag):
    """``CU_STREAM_DEFAULT`` or ``CU_STREAM_NON_BLOCKING`` (no implicit sync with stream 0)."""

    DEFAULT = 0x0
    NON_BLOCKING = 0x1


class EventFlags(enum.IntFlag):
    """Flags of ``cuEventCreate``."""

    DEFAULT = 0x0
    BLOCKING_SYNC = 0x1
    DISABLE_TIMING = 0x2
    INTERPROCESS = 0x4


class StreamWaitEventFlags(enum.IntFlag):
    """Flags of ``cuStreamWaitEvent``."""

    DEFAULT = 0x0
    EXTERNAL = 0x1


class Event:
    """A marker in a stream: record it, wait for it, time between two of them."""

    __slots__ = ("handle",)

    def __init__(self, flags: EventFlags | int = EventFlags.DEFAULT):
        self.handle = int(check(driver().cuEventCreate(int(flags)), "cuEventCreate"))

    def record(self, stream: Stream | None = None) -> None:
        """Mark the point in ``stream`` (the legacy default stream when None)."""
        check(driver().cuEventRecord(self.handle, _handle(stream)), "cuEventRecord")

    def query(self) -> bool:
        """Whether all work before the record has finished (never blocks)."""
        return _ready(driver().cuEventQuery(self.handle), "cuEventQuery")

    def synchronize(self) -> None:
        """Block until the recorded work has finished."""
        check(driver().cuEventSynchronize(self.handle), "cuEventSynchronize")

    def elapsed_time(self, start: Event) -> float:
        """Milliseconds from ``start`` to this event (both recorded, both completed)."""
        return float(check(driver().cuEventElapsedTime(start.handle, self.handle), "cuEventElapsedTime"))

    def close(self) -> None:
        """Destroy the event. Idempotent."""
        if self.handle:
            handle, self.handle = self.handle, 0
            check(driver().cuEventDestroy(handle), "cuEventDestroy")

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # the driver may be gone at interpreter exit
            self.close()


class Stream:
    """A queue of GPU work: ``Stream(flags, priority)``, as ``Stream::new(flags, priority)``.

    ``priority`` is None for the default priority (``cuStreamCreate``) or an int
    (``cuStreamCreateWithPriority``): lower is more urgent, and
    :meth:`CurrentContext.get_stream_priority_range` gives the range (the driver clamps
    values outside it).
    """

    __slots__ = ("_owned", "handle")

    def __init__(self, flags: StreamFlags | int = StreamFlags.DEFAULT, priority: int | None = None):
        d = driver()
        if priority is None:
            self.handle = int(check(d.cuStreamCreate(int(flags)), "cuStreamCreate"))
        else:
            try:
                level = operator.index(priority)
            except TypeError:
                raise TypeError(
                    f"a stream priority is an int (lower is more urgent; "
                    f"CurrentContext.get_stream_priority_range() gives the range) or None for the "
                    f"default, not {type(priority).__name__}"
                ) from None
            self.handle = int(
                check(d.cuStreamCreateWithPriority(int(flags), level), "cuStreamCreateWithPriority")
            )
        self._owned = True

    @classmethod
    def null(cls) -> Stream:
        """The legacy default stream (handle 0); never destroyed."""
        stream = cls.__new__(cls)
        stream.handle, stream._owned = 0, False
        return stream

    @property
    def priority(self) -> int:
        """The stream's priority (lower is more urgent)."""
        return int(check(driver().cuStreamGetPriority(self.handle), "cuStreamGetPriority"))

    @property
    def flags(self) -> StreamFlags:
        """The flags the stream was created with."""
        return StreamFlags(int(check(driver().cuStreamGetFlags(self.handle), "cuStreamGetFlags")))

    def synchronize(self) -> None:
        """Block until all work queued so far has finished."""
        check(driver().cuStreamSynchronize(self.handle), "cuStreamSynchronize")

    def query(self) -> bool:
        """Whether all queued work has finished (never blocks)."""
        return _ready(driver().cuStreamQuery(self.handle), "cuStreamQuery")

    def wait_event(
        self, event: Event, flags: StreamWaitEventFlags | int = StreamWaitEventFlags.DEFAULT
    ) -> None:
        """Make later work in this stream wait until ``event`` completes."""
        check(driver().cuStreamWaitEvent(self.handle, event.handle, int(flags)), "cuStreamWaitEvent")

    def add_callback(self, callback: Callable[[CudaError | None], None]) -> None:
        """Run ``callback(status)`` on a driver thread once the work queued so far is done;
        ``status`` is ``None``, or the error that broke the stream. The callback must not
        call CUDA."""

        def trampoline(_stream: int, status: int, _arg: int) -> None:
            callback(None if status == 0 else error(status, "stream callback"))

        try:
            cupy_runtime.streamAddCallback(self.handle, trampoline, 0, 0)
        except cupy_runtime.CUDARuntimeError as err:
            raise from_cupy(err, "cuStreamAddCallback") from None

    def close(self) -> None:
        """Destroy the stream (its queued work still runs). Idempotent."""
        if self._owned and self.handle:
            handle, self.handle = self.handle, 0
            check(driver().cuStreamDestroy(handle), "cuStreamDestroy")

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # the driver may be gone at interpreter exit
            self.close()

    def __repr__(self) -> str:
        return f"Stream(0x{self.handle:x})"


def _handle(stream: Stream | None) -> int:
    if stream is None:
        return 0
    if not isinstance(stream, Stream):
        raise TypeError(f"expected a ruda_cuda.kernel.Stream or None, not {type(stream).__name__}")
    return stream.handle


def _ready(returned: Any, call: str) -> bool:
    status = int(returned[0] if isinstance(returned, tuple) else returned)
    if status == _NOT_READY:
        return False
    check(returned, call)
    return True
