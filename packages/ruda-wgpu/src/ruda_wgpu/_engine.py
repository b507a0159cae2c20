"""The engine: one WebGPU device per adapter, its pipeline cache and batched commands.

- Devices (``wgpu:0``, ``wgpu:1``, ...) are the adapters that run our kernels
  (see :mod:`ruda_wgpu._devices`), best first: discrete before integrated
  before CPU, Vulkan/Metal/DX12 before OpenGL. Adapters are found at first use;
  a device (~300 ms) is opened only when an array is first created on it.
- Buffers come from a pool of size classes (:mod:`ruda_wgpu._buffers`), so steady-state work
  creates no new GPU buffers.
- Pipelines are compiled once per kernel key (:meth:`GpuDevice.pipeline`); those a program
  used in its last process are compiled ahead in threads as the device opens (:mod:`_preload`).
- Kernels are recorded into one command encoder and one compute pass (straight to
  wgpu-native: :mod:`ruda_wgpu._encoding`); the batch is submitted when data is read, when it
  reaches :data:`BATCH_DISPATCHES` dispatches or :data:`BATCH_BYTES` bound, or on
  :meth:`GpuDevice.flush`. Kernel parameters of a batch live in one parameter buffer written
  just before the batch is submitted.
- Reads copy into a staging buffer reused per size class. Waiting, and mapping the staging
  buffer, happen on the calling thread, spinning briefly on a GPU (:mod:`ruda_wgpu._wait`):
  wgpu's own waits and maps hand the GPU's completion over from its polling thread, which
  costs ~0.1 ms a wait on a discrete GPU, as much as the work of a small operation.
"""

from __future__ import annotations

import contextlib
import math
import re
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import numpy as np

from ruda_wgpu import _devices, _dtypes, _preload, _wait, _wgsl
from ruda_wgpu._buffers import BufferPool, Storage, binding_limit
from ruda_wgpu._encoding import PassEncoding, PublicPassEncoding, Step, StepLog
from ruda_wgpu._gpu_time import COLLECT_AT, GpuTimer

#: dispatches recorded before a batch is submitted without being asked
BATCH_DISPATCHES = 256
#: bytes bound by a batch's dispatches (a rough measure of its GPU work) before it is submitted
#: without being asked, so that the GPU starts on a long stream of work while the host records
#: the rest: 40 queued FFTs of 2^20 points (48 MB each) on an H200 had taken record + GPU time,
#: the GPU idle until the last was recorded. A submit costs the host 50-100 us there, about
#: the GPU time of 128 MB.
BATCH_BYTES = 256 << 20
#: bytes of kernel parameters one batch can hold
PARAM_ARENA_BYTES = 1 << 17
#: bind groups kept for reuse before the cache starts over
BIND_GROUP_CACHE = 4096
#: threads per workgroup of every one-thread-per-element kernel
WORKGROUP = 256

_BASE_DTYPES = (
    "bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16", "float32", "complex64"
)  # fmt: skip


#: references to pending arrays a device holds before it first drops the dead ones
PENDING_BOUND = 64

#: words in which kernels flag the errors they find (see GpuDevice.defer_check); one more check
#: reads them all back first, a wait for the device. A read brings back only the words in use:
#: with 256, a loop of 1000 gathers (x[i]) waited four times (on lavapipe 64 ms against 26)
CHECK_WORDS = 16384


_V = TypeVar("_V")


class _Capturing(threading.local):
    """The capture of kernel launches by a ``ruda_wgpu.fuse`` trace running on this thread
    (a :class:`ruda_wgpu._replay.Capture`), or None: the launch functions of ``_kernels`` hand
    their calls to it while a trace runs, and the device tells it of each dispatch, read and
    upload this thread makes (those no captured launch makes spoil the capture)."""

    log: Any = None


CAPTURE = _Capturing()


def remember(cache: dict[Any, Any], limit: int, key: Any, value: _V) -> _V:
    """Keep ``value`` in ``cache`` under ``key``, the cache starting over once it holds ``limit``
    entries (plans and prepared dispatches: a loop needs the few it repeats); ``value``."""
    if len(cache) >= limit:
        cache.clear()
    cache[key] = value
    return value


class GpuDevice:
    """One adapter and its lazily created device, with the pool, pipelines and current batch."""

    def __init__(self, index: int, adapter: Any) -> None:
        self.index = index
        self.adapter = adapter
        self.name = f"wgpu:{index}"
        self.description = _devices.describe(adapter)
        self.features = frozenset(adapter.features)
        self.limits = dict(adapter.limits)
        #: whether its subgroups are runs of consecutive threads (None: not looked at yet; see
        #: _kernels.lanes_in_order)
        self.subgroups_in_order: bool | None = None
        #: a CPU adapter (lavapipe): the driver's own threads run the kernels on the host's cores
        self.cpu = adapter.info["adapter_type"] == "CPU"
        int64 = "shader-int64" in self.features
        # float64 needs 64-bit integers too: its math library works on the bit patterns
        float64 = int64 and "shader-f64" in self.features
        self.dtype_names = (
            _BASE_DTYPES
            + (("int64", "uint64") if int64 else ())
            + (("float64", "complex128") if float64 else ())
        )
        self.max_binding = binding_limit(int(self.limits["max-storage-buffer-binding-size"]))
        self.max_groups = int(self.limits["max-compute-workgroups-per-dimension"])
        self.offset_align = int(self.limits["min-storage-buffer-offset-alignment"])
        self.uniform_align = int(self.limits["min-uniform-buffer-offset-alignment"])
        self._device: Any = None
        self._lock = threading.RLock()
        #: weak references to the arrays whose elementwise operations wait to be fused (dead
        #: ones are dropped now and then: see ``_fusion.record``); synchronize() runs them.
        #: Threads append to it without a lock; taking references out (drop_dead_pending,
        #: run_pending, run_readers) holds ``_pending_lock`` and touches only the references
        #: there when it started, so that no other thread's append is lost.
        self.pending: list[weakref.ref[Any]] = []
        #: the length at which ``pending`` next drops its dead references
        self.pending_bound = PENDING_BOUND
        self._pending_lock = threading.Lock()
        #: how many times run_pending() has run: a buffer marked with the present generation
        #: may be read by a pending operation (see Storage.will_write)
        self.generation = 0
        #: writes so far into buffers that pending operations may read (see Storage.will_write)
        self.epoch = 0
        #: the errors that kernels may have flagged since the last read, by word of the check
        #: buffer (see defer_check)
        self.checks: list[str | None] = []
        #: the checks deferred so far, read back or not (the slot of check t is t minus those
        #: made before the words were last read back: see check_slot)
        self.checks_made = 0
        self._check_words: Storage | None = None
        #: what times the compute passes opened now (see attach_timer), if anything does
        self.timer: GpuTimer | None = None
        #: what collects the dispatches recorded now (see logging_steps), if anything does
        self._step_log: StepLog | None = None

    def __repr__(self) -> str:
        return f"Device({self.name!r}: {self.description})"

    def __str__(self) -> str:
        return self.name

    # -- lazy device ------------------------------------------------------------------
    @property
    def device(self) -> Any:
        if self._device is None:
            self._open()
        return self._device

    @property
    def pool(self) -> BufferPool:
        """Storage buffers of arrays (opens the device on first use)."""
        if self._device is None:
            self._open()
        return self._pool

    @property
    def staging(self) -> BufferPool:
        """Mappable buffers for reads back to the host."""
        if self._device is None:
            self._open()
        return self._staging

    def _open(self) -> None:
        import wgpu

        with self._lock:
            if self._device is not None:
                return
            # (timestamp queries for gpu_time(), which only passes opened while it runs use)
            # (subgroups for the scans that use them where their lanes are in order: see
            # _kernels.lanes_in_order)
            optional = ("shader-int64", "shader-f64", "timestamp-query", "subgroup")
            wanted = [f for f in optional if f in self.features]
            limits = {
                k: self.limits[k]
                for k in (
                    "max-storage-buffer-binding-size",
                    "max-buffer-size",
                    "max-storage-buffers-per-shader-stage",
                    "max-compute-workgroup-storage-size",
                    "max-compute-invocations-per-workgroup",
                    "max-compute-workgroup-size-x",
                )
            }
            dev = self.adapter.request_device_sync(required_features=wanted, required_limits=limits)
            usage = wgpu.BufferUsage
            self._pool = BufferPool(dev, usage.STORAGE | usage.COPY_SRC | usage.COPY_DST)
            self._staging = BufferPool(dev, usage.MAP_READ | usage.COPY_DST)
            self._arena = dev.create_buffer(size=PARAM_ARENA_BYTES, usage=usage.UNIFORM | usage.COPY_DST)
            # the parameters of the batch being recorded: bytes [0, _arena_used) of _arena_data
            self._arena_data = bytearray(PARAM_ARENA_BYTES)
            self._arena_used = 0
            # what the arena holds on the device: the bytes of the last batch that wrote it
            self._arena_sent = b""
            self._pipelines: dict[Any, Any] = {}
            self._layout_cache: dict[tuple[tuple[str, str], ...], tuple[Any, Any]] = {}
            self._layout_lock = threading.Lock()
            # (bind group, bytes its buffer windows span) by (pipeline, parameter size, buffer
            # windows); pooled buffers are only destroyed by empty_cache(), which clears this too
            self._groups: dict[Any, Any] = {}
            #: elementwise launch plans by signature (see _kernels.launch_elementwise)
            self.plans: dict[Any, Any] = {}
            #: prepared dispatches of single elementwise operations, and of fused graphs by
            #: their root's structure id and output buffer (see _fusion._launch)
            self.prepared_alone: dict[Any, Step] = {}
            self.prepared_fused: dict[tuple[int, Any], Step] = {}
            #: buffers for results that live within one recorded operation (see scratch)
            self._scratch: dict[Any, Storage] = {}
            #: changes whenever a scratch buffer is made, so that dispatches prepared across
            #: operations can tell whether the scratch buffers they bind are still the device's
            self.scratch_version = 0
            #: operations' dispatches, logged to be recorded again (see ``_kernels.Recorded``)
            self.recorded: dict[tuple[Any, ...], list[Step]] = {}
            self._encoder: Any = None
            self._pass: Any = None
            self._pass_pipeline: Any = None
            api = _devices.native_api(dev)
            self._encode: PassEncoding | PublicPassEncoding = (
                PassEncoding(api) if api else PublicPassEncoding()
            )
            spin = 0.0 if self.cpu else _wait.SPIN_SECONDS
            self._waiter = _wait.Waiter(api, dev, spin) if api else None
            self._reader = _wait.MapReader(api, dev) if api else None
            self._pending = self._pending_bytes = 0
            self.dispatches = 0
            self.submits = 0
            #: reads of array data to the host (``fuse`` tells a pure function by it)
            self.host_reads = 0
            self._device = dev
            # after the device is set: the preloading threads compile on it
            self._preload = _preload.Preload(self.description, self._compile)

    # -- dtypes -----------------------------------------------------------------------
    def check_dtype(self, dtype: np.dtype[Any]) -> None:
        """Raise a TypeError naming this device and what it lacks when it cannot hold ``dtype``."""
        if _dtypes.NAME.get(dtype) in self.dtype_names:
            return
        if dtype.name in ("int64", "uint64"):
            lack = "the 'shader-int64' feature"
        else:  # float64, complex128
            lack = "the 'shader-f64' and 'shader-int64' features (float64 arithmetic on 64-bit words)"
        raise TypeError(
            f"{dtype.name} is not supported on {self.name} ({self.description}): the device lacks {lack}. "
            f"Use one of {', '.join(self.dtype_names)}, or a device whose "
            "__array_namespace_info__().dtypes() lists it"
        )

    # -- pipelines ----------------------------------------------------------------------
    def pipeline(self, key: Any, source: Callable[[], str]) -> Any:
        """The compute pipeline for ``key``, compiled from ``source()`` the first time.

        Kernels read their parameters as ``P[k]`` (u32 words, constant ``k``) from binding 0;
        here that becomes a uniform buffer of ``vec4<u32>``, which every driver reads as one
        value for the whole dispatch (lavapipe is markedly slower with a storage buffer).
        """
        pipe = self._pipelines.get(key)
        if pipe is None:
            # the parameters are rewritten before linking: no library function reads them
            code = _wgsl.link(_uniform_params(source()))
            pipe = self._preload.pipeline(code)
            self._pipelines[key] = pipe
        return pipe

    def _compile(self, code: str) -> Any:
        """A compute pipeline from linked WGSL (also called by :mod:`ruda_wgpu._preload`'s
        threads)."""
        module = self.device.create_shader_module(code=code)
        layout, pipeline_layout = self._layouts(tuple(_BINDING.findall(code)))
        pipe = self.device.create_compute_pipeline(
            layout=pipeline_layout, compute={"module": module, "entry_point": "main"}
        )
        pipe.ruda_layout = layout
        return pipe

    def _layouts(self, bindings: tuple[tuple[str, str], ...]) -> tuple[Any, Any]:
        """The bind group layout and pipeline layout of a kernel's ``(binding, kind)`` list,
        made once per list: most kernels share one of a few (parameters, inputs, an output).

        An explicit layout whose parameter binding has a dynamic offset: one bind group then
        serves every dispatch on the same buffers, wherever its parameters sit."""
        with self._layout_lock:  # preloading threads ask too
            made = self._layout_cache.get(bindings)
            if made is None:
                import wgpu

                entries = [
                    {
                        "binding": int(n),
                        "visibility": wgpu.ShaderStage.COMPUTE,
                        "buffer": {
                            "type": "uniform"
                            if kind == "uniform"
                            else "storage"
                            if kind.endswith("read_write")
                            else "read-only-storage",
                            "has_dynamic_offset": kind == "uniform",
                        },
                    }
                    for n, kind in bindings
                ]
                layout = self.device.create_bind_group_layout(entries=entries)
                made = layout, self.device.create_pipeline_layout(bind_group_layouts=[layout])
                self._layout_cache[bindings] = made
            return made

    # -- recording ----------------------------------------------------------------------
    def grid(self, groups: int) -> tuple[int, int]:
        """A 2-D workgroup grid with at least ``groups`` groups within the per-dimension limit."""
        if groups <= self.max_groups:
            return max(groups, 1), 1
        gy = math.ceil(groups / self.max_groups)
        return math.ceil(groups / gy), gy

    def batch_chunks(self, batch: int) -> Iterator[tuple[int, int]]:
        """``(first, count)`` of each dispatch's share of ``batch`` matrices, for kernels that take
        one grid dimension per matrix: at most the per-dimension limit a dispatch."""
        for first in range(0, batch, self.max_groups):
            yield first, min(self.max_groups, batch - first)

    def dispatch(
        self,
        pipe: Any,
        buffers: list[tuple[Any, int, int]],
        params: np.ndarray[Any, Any] | bytes,
        groups: int | tuple[int, ...],
    ) -> None:
        """Record one dispatch: binding 0 is ``params`` (u32 words), then ``(buffer, offset, size)``.

        Every operation passes here, so it does only what each dispatch needs: its parameters
        are copied into the batch's arena, and a bind group is made only for a pipeline and
        buffer windows not seen before (the parameters' place is the dynamic offset).
        """
        with self._lock:
            self._encode_one(pipe, *self._bound(pipe, buffers, params), self._workgroups(groups))

    def step(
        self,
        pipe: Any,
        buffers: list[tuple[Any, int, int]],
        params: np.ndarray[Any, Any] | bytes,
        groups: int | tuple[int, ...],
    ) -> Step:
        """A dispatch as :meth:`dispatch` records it, prepared once: a loop that records the
        same dispatches again and again (the rounds of a Jacobi sweep) passes its steps to
        :meth:`replay`, which only copies their parameters and encodes them. A step holds its
        bind group, which the group cache may drop: keep the steps until the batch that records
        them is submitted (a read, :meth:`flush`)."""
        with self._lock:
            return Step(pipe, *self._bound(pipe, buffers, params), self._workgroups(groups))

    def scratch(self, slot: Any, nbytes: int) -> Storage:
        """A buffer of at least ``nbytes`` that the device keeps, by ``slot`` (one per use: a
        reduction's pass, the FFT's second buffer), for results that live only within one
        operation: that operation's prepared dispatches then find the same buffer every time.
        Taken from the pool instead, such buffers share size classes with the results, and a
        loop holding many results got them in a new order each round, so nothing prepared was
        found again (on the H200 a sum of 1e4 elements cost 2.6-3.1 times a hand-written one). Call
        with the device's lock held, and record the operation before releasing it."""
        store = self._scratch.get(slot)
        if store is None or store.nbytes < nbytes:
            store = self._scratch[slot] = Storage(self, nbytes)
            self.scratch_version += 1
        return store

    def scratch_buffers(self) -> list[Any]:
        """The buffers of the scratch slots now (see :meth:`scratch`)."""
        return [store.buffer for store in self._scratch.values()]

    @contextlib.contextmanager
    def logging_steps(self) -> Iterator[StepLog]:
        """Hold the device's lock and collect every dispatch recorded meanwhile as a prepared
        step (see :meth:`step`), in order, so that the work can be recorded again by
        :meth:`replay` alone; the log is not ``whole`` when a copy, an upload or an inner log
        came in between, which replaying the steps would leave out, or a checked kernel, whose
        parameters name this call's check word (see :meth:`defer_check`)."""
        with self._lock:
            self._unlogged()
            log, outer = StepLog(), self._step_log
            self._step_log = log
            try:
                yield log
            finally:
                self._step_log = outer

    def _unlogged(self) -> None:
        """Mark the step log being collected, if any, as not whole: what is recorded now is not
        a dispatch that replaying its steps would make again (the lock held)."""
        if self._step_log is not None:
            self._step_log.whole = False

    def _workgroups(self, groups: int | tuple[int, ...]) -> tuple[int, int, int]:
        """The (x, y, z) workgroups of a dispatch of ``groups`` (a count, spread over a grid
        beyond the per-dimension limit, or up to three sizes)."""
        if isinstance(groups, int):
            return (groups, 1, 1) if 0 < groups <= self.max_groups else (*self.grid(groups), 1)
        x, y, z = (*groups, 1, 1)[:3]
        return x, y, z

    def replay(self, steps: Sequence[Step]) -> None:
        """Record the prepared ``steps`` (see :meth:`step`) in order."""
        with self._lock:
            for step in steps:
                self._encode_one(*step)

    def _bound(
        self, pipe: Any, buffers: list[tuple[Any, int, int]], params: np.ndarray[Any, Any] | bytes
    ) -> tuple[Any, int, bytes]:
        """(bind group, bytes it binds, parameter words padded to whole vec4s) of a dispatch."""
        blob = params if type(params) is bytes else np.ascontiguousarray(params, dtype=np.uint32).tobytes()
        size = len(blob)
        if size % 16 or not size:  # whole vec4<u32> words
            blob += b"\0" * (-size % 16 or 16)
            size = len(blob)
        if len(self._groups) >= BIND_GROUP_CACHE:
            self.flush()  # the batch holds no reference of its own to the groups it binds
            self._groups.clear()
        # the buffers themselves are part of the key: pooled buffers live until empty_cache(),
        # which clears this cache first
        cache_key = (pipe, size, *buffers)
        entry = self._groups.get(cache_key)
        if entry is None:
            group = self._bind_group(pipe, buffers, size)
            group.ruda_buffers = tuple(window[0] for window in buffers)  # (see StepLog.binds_only)
            entry = self._groups[cache_key] = (group, sum(window[2] for window in buffers))
        return entry[0], entry[1], blob

    def _encode_one(
        self, pipe: Any, group: Any, bound: int, blob: bytes, groups: tuple[int, int, int]
    ) -> None:
        """Encode a dispatch of ``pipe`` with ``group`` bound and ``blob`` its parameters (the
        lock held)."""
        size, align = len(blob), self.uniform_align
        start = -(-self._arena_used // align) * align
        if start + size > PARAM_ARENA_BYTES:
            self.flush()
            start = 0
        self._arena_data[start : start + size] = blob
        self._arena_used = start + size
        cpass = self._pass if self._pass is not None else self._open_pass()
        if pipe is self._pass_pipeline:  # a pass keeps its pipeline between dispatches
            self._encode.record(cpass, None, group, start, groups)
        else:
            self._encode.record(cpass, pipe, group, start, groups)
            self._pass_pipeline = pipe
        self._pending += 1
        self._pending_bytes += bound
        self.dispatches += 1
        capture = CAPTURE.log
        if capture is not None:
            capture.dispatched()
        if self._step_log is not None:
            self._step_log.steps.append(Step(pipe, group, bound, blob, groups))
        if self._pending >= BATCH_DISPATCHES or self._pending_bytes >= BATCH_BYTES:
            self.flush()

    def _open_pass(self) -> Any:
        """Begin a compute pass for the next dispatches, on a new command encoder if none is
        open (the lock held)."""
        if self._encoder is None:
            self._encoder = self._encode.command_encoder(self._device)
        if self.timer is None:
            self._pass = self._encode.compute_pass(self._encoder)
        else:
            self._pass = self._encoder.begin_compute_pass(timestamp_writes=self.timer.writes())
        self._pass_pipeline = None
        return self._pass

    def attach_timer(self, timer: GpuTimer | None) -> None:
        """Have ``timer`` measure the compute passes opened from now on (None: stop). Work
        recorded before is submitted first, and a batch opened ahead with nothing in it is
        dropped, so that no pass holds work from both sides."""
        with self._lock:
            if timer is not None and self.timer is not None:
                raise RuntimeError(f"{self.name} is already being timed: gpu_time() blocks do not nest")
            self.flush()
            if self._encoder is not None and not self._pending:
                if self._pass is not None:
                    self._pass.end()
                self._pass = self._encoder = None
            self.timer = timer

    def _bind_group(self, pipe: Any, buffers: list[tuple[Any, int, int]], params_size: int) -> Any:
        """A bind group of ``pipe``: binding 0 the parameter arena's window of ``params_size``
        bytes (placed by the dynamic offset), then the buffer windows ``(buffer, offset, size)``."""
        windows = [(self._arena, 0, params_size), *buffers]
        return self._encode.bind_group(self._device, pipe.ruda_layout, windows)

    def copy(self, src: Any, src_offset: int, dst: Any, dst_offset: int, nbytes: int) -> None:
        """Record a buffer-to-buffer copy (offsets and size multiples of 4)."""
        with self._lock:
            self._unlogged()
            if self._encoder is None:
                self._encoder = self._encode.command_encoder(self._device)
            if self._pass is not None:
                self._pass.end()
                self._pass = None
            self._encoder.copy_buffer_to_buffer(src, src_offset, dst, dst_offset, nbytes)
            self._pending += 1

    def flush(self) -> None:
        """Submit the recorded batch (does not wait for it)."""
        with self._lock:
            if self._device is None or self._encoder is None or not self._pending:
                return  # nothing recorded (an encoder opened ahead waits for the next batch)
            # taken first: a batch whose commands are invalid raises once, not at every flush
            cpass, encoder, self._pass, self._encoder = self._pass, self._encoder, None, None
            self._pending = self._pending_bytes = 0
            if self._arena_used:
                used, self._arena_used = self._arena_used, 0
                # A loop records the same parameters batch after batch (the same shapes and
                # offsets): the arena already holds them, and a write costs the host more than
                # the comparison (on an H200 host 16 us of a 120 us submit-and-wait round).
                batch = memoryview(self._arena_data)[:used]
                if batch != self._arena_sent[:used]:
                    # write_buffer copies the bytes at once: the arena is free for the next batch
                    self._device.queue.write_buffer(self._arena, 0, batch)
                    self._arena_sent = bytes(batch)
            if cpass is not None:
                cpass.end()
            timer = self.timer
            if timer is not None:
                timer.resolve(encoder)
            self._encode.submit(self._device, encoder)
            self.submits += 1
            if timer is not None and timer.used >= COLLECT_AT:
                timer.collect(self)

    # -- transfers ----------------------------------------------------------------------
    def write(self, buffer: Any, offset: int, data: bytes | memoryview) -> None:
        """Upload bytes. Recorded work goes first: a pooled buffer may still be read by it."""
        with self._lock:
            self._unlogged()
            if self._encoder is not None:
                self.flush()
            if len(data):
                self._device.queue.write_buffer(buffer, offset, data)

    def wait_idle(self) -> bool:
        """Block this thread until the device has done every submitted batch (see
        :mod:`ruda_wgpu._wait`); False where wgpu offers no way to (then callers wait by mapping
        a buffer)."""
        if self._waiter is None:
            return False
        if self._pass is None:
            # Opening the next batch's encoder and pass costs the host 5-10 us, which here
            # overlap the device's work instead of delaying the next operation.
            self._open_pass()
        self._waiter.wait()
        return True

    def read(self, buffer: Any, offset: int, nbytes: int) -> bytearray:
        """Copy ``nbytes`` back to the host through a reused staging buffer, into memory of the
        caller's own (an array made on it needs no copy of its own to be writable). The words in
        which kernels flag errors come back with them: a flagged one is raised (see defer_check)."""
        with self._lock:
            checks, self.checks = self.checks, []
            if not checks:
                return self._read(buffer, offset, nbytes, None)
            assert self._check_words is not None
            flags_at = -(-nbytes // 4) * 4
            words = (self._check_words.buffer, 4 * len(checks), flags_at)
            data = self._read(buffer, offset, nbytes, words)
            self.write(words[0], 0, bytes(words[1]))  # cleared for the next checks
            flags = np.frombuffer(data[flags_at:], np.uint32, len(checks))
            if flags.any() and (error := _flagged(checks, flags)) is not None:
                raise error
            del data[nbytes:]
            return data

    def _read(self, buffer: Any, offset: int, nbytes: int, also: tuple[Any, int, int] | None) -> bytearray:
        """Bytes ``[offset, offset + nbytes)`` of ``buffer``, followed when ``also`` is
        ``(buffer, nbytes, at)`` by that buffer's first bytes, placed from ``at`` (the lock held)."""
        import wgpu

        total = nbytes if also is None else also[2] + also[1]
        if total == 0:
            return bytearray()
        staging = self.staging.acquire(total)
        try:
            if nbytes:
                self.copy(buffer, offset, staging, 0, nbytes)
            if also is not None:
                self.copy(also[0], 0, staging, also[2], also[1])
            self.flush()
            if self._reader is not None and self.wait_idle():
                return self._reader.read(staging, total)  # the copy is done: map, read
            staging.map_sync(wgpu.MapMode.READ, 0, staging.size)
            try:
                return bytearray(staging.read_mapped(0, total, copy=False))
            finally:
                staging.unmap()
        finally:
            self.staging.release(staging)

    # -- errors found by kernels ------------------------------------------------------------
    def defer_check(self, error: str) -> tuple[Storage, int]:
        """A word for a kernel to set when it finds ``error`` (an index out of bounds): the
        buffer of such words and the word's index. The error is raised, as an IndexError, by the
        next read of data back to the host or ``synchronize()``, whichever comes first, so that a
        checked gather does not wait for the device; a kernel that finds it writes nothing where
        it would have read out of bounds."""
        with self._lock:
            self._unlogged()  # (the slot in a logged dispatch's parameters is this call's)
            if len(self.checks) >= self.check_slots():
                self.raise_checks()
            words = self.check_words()
            self.checks.append(error)
            self.checks_made += 1
            return words, len(self.checks) - 1

    def withdraw_checks(self, made: int) -> None:
        """Let the checks deferred since the ``made``-th (counting from 0, as :meth:`check_slot`)
        flag nothing: the call that deferred them raised before it wrote or made anything, so
        what they find belongs to no operation (their kernels still run)."""
        with self._lock:
            for slot in range(self.check_slot(made), len(self.checks)):
                self.checks[slot] = None

    def check_slot(self, made: int) -> int:
        """The word of the check that was the ``made``-th deferred (counting from 0), or of the
        first since the words were last read back where that one has been read back already."""
        return max(0, made - (self.checks_made - len(self.checks)))

    def check_slots(self) -> int:
        """How many of the :data:`CHECK_WORDS` check words one storage binding of the device
        holds: those kernels may set (all of them, unless the binding is capped very low)."""
        return max(1, min(CHECK_WORDS, self.max_binding // 4))

    def check_words(self) -> Storage:
        """The buffer of :data:`CHECK_WORDS` words in which kernels flag errors (see
        :meth:`defer_check`), zeroed when first made and after each read."""
        with self._lock:
            if self._check_words is None:
                self._check_words = Storage(self, 4 * CHECK_WORDS)
                self.write(self._check_words.buffer, 0, bytes(4 * CHECK_WORDS))
            return self._check_words

    def raise_checks(self) -> None:
        """Wait for the kernels that may have flagged errors, and raise the first they found."""
        with self._lock:
            if self._check_words is not None and self.checks:
                self.host_reads += 1
                if CAPTURE.log is not None:
                    CAPTURE.log.unrepeatable()  # (a replay would not check)
                self.read(self._check_words.buffer, 0, 0)  # (brings back the check words alone)

    def run_pending(self) -> None:
        """Record every pending operation whose array is alive, newest first (an older one may
        already be part of a newer one's kernel, though it still runs as its own when its array
        is alive: it may be read later), and start a new generation: no pending operation reads
        a buffer marked before it.

        One that raises (a result too large for the device) does not stop the others; it stays
        pending, its buffers marked in the new generation, so that a write into them still runs
        it first, and the first such error is raised once all have been tried."""
        with self._lock:  # (another thread's write waits for them: see Storage.will_write)
            with self._pending_lock:
                # the new generation first: an operation another thread appends after the references
                # are taken out was recorded under it, or sees that it has changed and runs itself
                # (see _fusion.record)
                self.generation += 1
                pending = self.pending
                taken = len(pending)
                refs = pending[:taken]
                del pending[:taken]
            error: Exception | None = None
            for ref in reversed(refs):
                array = ref()
                if array is None:
                    continue
                try:
                    array._storage  # noqa: B018  (runs it, if it has not run)
                except Exception as err:
                    error = error or err
                    if array._node is not None:
                        array._node.mark_reads()
                    self.pending.append(ref)
            if error is not None:
                array = None  # (the frames the error holds must not keep an array alive)
                try:
                    raise error
                finally:
                    error = None

    def drop_dead_pending(self) -> list[Any]:
        """Drop the references to dead arrays from ``pending``; the arrays alive, oldest first."""
        with self._pending_lock:
            pending = self.pending
            taken = len(pending)
            alive = [(ref, array) for ref in pending[:taken] if (array := ref()) is not None]
            pending[:taken] = [ref for ref, _ in alive]
            self.pending_bound = max(PENDING_BOUND, 2 * len(pending))
        return [array for _, array in alive]

    def run_readers(self, storage: Storage) -> None:
        """Record every pending operation whose array is alive and whose graph reads
        ``storage`` (see Storage.will_write); the others stay pending."""
        for array in reversed(self.drop_dead_pending()):
            node = array._node
            if node is not None and node.reads(storage):
                array._storage  # noqa: B018  (runs it, if it has not run)

    def synchronize(self) -> None:
        """Run pending operations, submit the batch and wait until the device has finished."""
        with self._lock:
            if self._device is None:
                return
            self.run_pending()
            self.flush()
            if self.checks:
                self.raise_checks()  # (waits for the device)
                return
            if self.wait_idle():
                return
            probe = self.pool.acquire(4)
            try:
                self.read(probe, 0, 4)
            finally:
                self.pool.release(probe)

    def memory_stats(self) -> dict[str, int]:
        """Bytes of GPU buffers allocated (pooled included) and in use by arrays, and counters."""
        if self._device is None:
            return {
                "allocated_bytes": 0,
                "in_use_bytes": 0,
                "buffers_created": 0,
                "pipelines": 0,
                "pipelines_preloaded": 0,
                "dispatches": 0,
                "submits": 0,
                "waits_spun": 0,
                "waits_blocked": 0,
            }
        return {
            "allocated_bytes": self.pool.allocated_bytes + self.staging.allocated_bytes + PARAM_ARENA_BYTES,
            "in_use_bytes": self.pool.in_use_bytes,
            "buffers_created": self.pool.buffers_created + self.staging.buffers_created,
            "pipelines": len(self._pipelines),
            "pipelines_preloaded": self._preload.preloaded,
            "dispatches": self.dispatches,
            "submits": self.submits,
            "waits_spun": self._waiter.spun if self._waiter else 0,
            "waits_blocked": self._waiter.blocked if self._waiter else 0,
        }


def _flagged(checks: list[str | None], flags: np.ndarray[Any, Any]) -> IndexError | None:
    """The error of the first of ``checks`` that a kernel flagged (see GpuDevice.defer_check),
    None when those flagged were withdrawn."""
    found = [error for error, flag in zip(checks, flags, strict=True) if flag and error is not None]
    if not found:
        return None
    err = IndexError(found[0])
    more = f" (with {len(found) - 1} more)" if len(found) > 1 else ""
    err.add_note(
        "found by the kernel of an earlier operation, and raised at the first read of data back "
        f"to the host or synchronize() after it{more}"
    )
    return err


#: a constant parameter read ``P[k]``. No leading ``\b``: a pattern that starts with a literal
#: is searched for quickly (60 times faster on a 25 KB kernel), so :func:`_reads_param` checks
#: the character before a match instead.
_PARAM = re.compile(r"P\[(\d+)\]")
_PARAM_DECL = re.compile(r"var<storage, read> P: array<u32(?:, (\d+))?>;")
_BINDING = re.compile(r"@binding\((\d+)\) var<(uniform|storage, read_write|storage, read)>")


def _reads_param(code: str, match: re.Match[str]) -> bool:
    """Whether ``match`` of :data:`_PARAM` is a read of ``P`` (not the end of a longer name)."""
    before = code[match.start() - 1] if match.start() else " "
    return not (before.isalnum() or before == "_")


def _uniform_params(code: str) -> str:
    """Rewrite ``var<storage, read> P: array<u32>`` and its reads as a uniform of ``vec4<u32>``.

    Constant reads ``P[k]`` become ``P[k / 4].x`` (.y, .z, .w); a kernel that reads a
    computed index calls ``param(k)`` and, where k may pass its highest constant read, declares
    its word count, ``array<u32, N>`` (the fusion fence's ``param`` reads word 0).
    """
    declared = _PARAM_DECL.search(code)
    if declared is None:
        return code
    words = [int(m.group(1)) for m in _PARAM.finditer(code) if _reads_param(code, m)]
    count = max(max(words, default=0) + 1, int(declared.group(1) or 0))
    code = _PARAM_DECL.sub(f"var<uniform> P: array<vec4<u32>, {-(-count // 4)}>;", code)
    if "param(" in code:
        code += "\nfn param(k: u32) -> u32 { return P[k >> 2u][k & 3u]; }\n"

    def vector_read(m: re.Match[str]) -> str:
        if not _reads_param(code, m):
            return m.group(0)
        k = int(m.group(1))
        return f"P[{k // 4}].{'xyzw'[k % 4]}"

    return _PARAM.sub(vector_read, code)


_Found = tuple[tuple[GpuDevice, ...], tuple[_devices.Excluded, ...]]
_found: _Found | None = None
_finding = threading.Lock()


def _discovered() -> _Found:
    """The devices and the adapters left out, found once a process: threads that ask at once
    wait for the first (each had made devices of its own, named alike, whose arrays would not
    mix: "add() got arrays on two devices, wgpu:0 and wgpu:0")."""
    global _found
    found = _found
    if found is None:
        with _finding:
            if _found is None:
                usable, excluded = _devices.usable_adapters()
                _found = tuple(GpuDevice(i, a) for i, a in enumerate(usable)), tuple(excluded)
            found = _found
    return found


def devices() -> tuple[GpuDevice, ...]:
    """Every adapter that runs our kernels, best first, as ``wgpu:0``, ``wgpu:1``, ..."""
    return _discovered()[0]


def excluded_adapters() -> tuple[_devices.Excluded, ...]:
    """Adapters wgpu found that are not devices, each with the reason."""
    return _discovered()[1]


def default_device() -> GpuDevice:
    """``wgpu:0``, the best adapter; a RuntimeError saying how to get one when there is none."""
    found = devices()
    if not found:
        raise RuntimeError(
            "wgpu found no GPU adapter: install a Vulkan, Metal or DX12 driver "
            "(on Linux without a GPU: apt-get install mesa-vulkan-drivers libvulkan1)"
        )
    return found[0]


def resolve_device(device: Any) -> GpuDevice:
    """A :class:`GpuDevice` from ``None`` (the default), a GpuDevice, or a name like ``"wgpu:1"``."""
    if device is None:
        return default_device()
    if isinstance(device, GpuDevice):
        return device
    text = str(device)
    for dev in devices():
        if dev.name == text:
            return dev
    raise ValueError(f"ruda_wgpu has no device {device!r}: it has {[d.name for d in devices()]}")
