"""The GPU's own time for a block of work, from timestamps the GPU writes at the beginning and
end of each compute pass (the adapter's ``timestamp-query`` feature).

A wall clock around GPU work also counts the host: recording the operations, launching and
submitting them, and waiting. The GPU's timestamps leave all that out, so they tell how fast the
kernels themselves are, whatever the host costs (as ``torch.cuda.Event(enable_timing=True)``
does for CUDA). ``ruda_wgpu.gpu_time()`` is the public face::

    with xp.gpu_time() as t:
        y = xp.sin(x) * 2 + 1
    print(t.seconds, t.passes)

While a timer is attached to a device (:meth:`GpuDevice.attach_timer`), every compute pass it
opens takes a pair of queries; each batch resolves its passes' pairs into a buffer as it is
submitted, and the timer reads them back when the block ends, or when it runs short of pairs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ruda_wgpu import _devices

if TYPE_CHECKING:
    from ruda_wgpu._engine import GpuDevice

#: passes one timer's query set measures (two queries each, within wgpu's 4096 a set)
PASSES = 2048
#: a timer reads its pairs back, and starts over, once this many are taken when a batch is
#: submitted: a batch opens at most one pass per dispatch, and has at most BATCH_DISPATCHES
COLLECT_AT = PASSES // 2
#: pairs in wgpu's alignment of the offset a query set is resolved to (256 bytes)
_ALIGN_PAIRS = 16


def timestamp_period(device: Any) -> float:
    """Nanoseconds a timestamp tick of the wgpu ``device``'s queue lasts, from wgpu-native (wgpu-py
    does not say); 1 where wgpu-native's API is out of reach."""
    api = _devices.native_api(device)
    return float(api.lib.wgpuQueueGetTimestampPeriod(device.queue._internal)) if api else 1.0


class GpuTimer:
    """The summed GPU time of the compute passes a device opened while this was attached."""

    def __init__(self, dev: GpuDevice) -> None:
        import wgpu

        if "timestamp-query" not in dev.features:
            raise RuntimeError(
                f"gpu_time() needs timestamp queries, which {dev.name} ({dev.description}) does not "
                "offer (its adapter lacks the 'timestamp-query' feature)"
            )
        device = dev.device
        self.query_set = device.create_query_set(type="timestamp", count=2 * PASSES)
        self.resolved = device.create_buffer(
            size=16 * PASSES, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
        )
        #: nanoseconds a timestamp tick lasts
        self.period = timestamp_period(device)
        #: pairs handed to passes (or skipped, see resolve)
        self.used = 0
        #: (first pair, pairs) of each submitted batch, resolved to the same place of the buffer
        self.batches: list[tuple[int, int]] = []
        self._unresolved = 0
        #: the GPU time of the passes read back so far, and how many passes they were
        self.seconds = 0.0
        self.passes = 0

    def writes(self) -> dict[str, Any]:
        """The timestamp writes for the next pass (``timestamp_writes`` of begin_compute_pass)."""
        if self.used == PASSES:  # cannot happen while batches are collected at COLLECT_AT
            raise RuntimeError(f"a GPU timer measures at most {PASSES} passes between reads")
        first, self.used = 2 * self.used, self.used + 1
        return {
            "query_set": self.query_set,
            "beginning_of_pass_write_index": first,
            "end_of_pass_write_index": first + 1,
        }

    def resolve(self, encoder: Any) -> None:
        """Record, into ``encoder`` (whose passes have ended), the resolution of the pairs its
        passes took. The next batch's pairs start at the next aligned place: the pairs between
        are skipped."""
        first, count = self._unresolved, self.used - self._unresolved
        if count:
            encoder.resolve_query_set(self.query_set, 2 * first, 2 * count, self.resolved, 16 * first)
            self.batches.append((first, count))
            self.used = self._unresolved = min(-(-self.used // _ALIGN_PAIRS) * _ALIGN_PAIRS, PASSES)

    def collect(self, dev: GpuDevice) -> None:
        """Read back the resolved pairs (waiting for the device) and start the pairs over."""
        batches, self.batches, self.used, self._unresolved = self.batches, [], 0, 0
        if not batches:
            return
        end = batches[-1][0] + batches[-1][1]
        ticks = np.frombuffer(dev.read(self.resolved, 0, 16 * end), np.uint64).reshape(end, 2)
        taken = np.concatenate([np.arange(first, first + count) for first, count in batches])
        spans = ticks[taken, 1].astype(np.int64) - ticks[taken, 0].astype(np.int64)
        self.seconds += float(np.maximum(spans, 0).sum()) * self.period * 1e-9
        self.passes += len(taken)
