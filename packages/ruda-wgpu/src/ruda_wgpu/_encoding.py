"""How a device records dispatches: straight to wgpu-native (:class:`PassEncoding`), or through
wgpu-py's public methods (:class:`PublicPassEncoding`), and the prepared dispatches
(:class:`Step`) a device logs (:class:`StepLog`) and records again."""

from __future__ import annotations

from typing import Any, NamedTuple


class Step(NamedTuple):
    """A dispatch prepared by :meth:`GpuDevice.step`: its pipeline, bind group, the bytes it
    binds, its parameter words and its workgroups (x, y, z)."""

    pipe: Any
    group: Any
    bound: int
    params: bytes
    groups: tuple[int, int, int]


class StepLog:
    """The dispatches a device recorded while it logged them (see
    :meth:`GpuDevice.logging_steps`), and whether they are all it recorded (``whole``)."""

    __slots__ = ("steps", "whole")

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.whole = True

    def binds_only(self, buffers: list[Any]) -> bool:
        """Whether every buffer the logged dispatches bind is one of ``buffers`` (besides the
        parameters' arena, which every dispatch binds)."""
        allowed = {id(b) for b in buffers}
        return all(
            id(b) in allowed for step in self.steps for b in getattr(step.group, "ruda_buffers", (None,))
        )


class PassEncoding:
    """The calls that record a dispatch (three into a compute pass, made by one method, and
    making a bind group when its buffers are new), and that open a batch's command encoder and
    compute pass, made straight to wgpu-native.

    wgpu-py wraps every native call in an error capture (about 1.5 us of Python a call, three
    times that on a slower host; a dispatch makes two or three), and builds a bind group's
    entries through checked Python structs (19 us for four entries on a desktop CPU, against 4
    here). WebGPU reports errors in a pass's commands, and the use of an invalid bind group,
    when the pass ends or its encoder is finished, and those calls still go through wgpu-py's
    error capture and raise, so the capture has nothing to catch here; the windows bound are
    checked first (``_kernels.window``). Bind groups and pipelines stay alive in the device's caches, which
    a batch is submitted before clearing. Opening an encoder and a pass cannot fail on a live
    device; wgpu-py's own calls spend most of their time building the unlabelled descriptors,
    which are made once here (on an H200 host the two took 16 us of a 150-220 us round of one
    small operation, submit and wait). With another wgpu-py backend (no native handles) the
    public methods are used.
    """

    __slots__ = (
        "_begin_pass",
        "_bind",
        "_bind_group_class",
        "_buffer_descriptor",
        "_buffers",
        "_create_bind_group",
        "_create_encoder",
        "_dispatch",
        "_encoder_class",
        "_encoder_descriptor",
        "_ffi",
        "_finish",
        "_offset",
        "_pass_class",
        "_pass_descriptor",
        "_pipeline",
        "_release_buffer",
        "_submit",
    )

    def __init__(self, api: Any) -> None:
        lib, self._ffi = api.lib, api.ffi
        self._pipeline = lib.wgpuComputePassEncoderSetPipeline
        self._bind = lib.wgpuComputePassEncoderSetBindGroup
        self._dispatch = lib.wgpuComputePassEncoderDispatchWorkgroups
        self._create_bind_group = lib.wgpuDeviceCreateBindGroup
        self._bind_group_class = api.GPUBindGroup
        self._offset = self._ffi.new("uint32_t []", 1)  # the type string wgpu-py uses, parsed already
        self._create_encoder = lib.wgpuDeviceCreateCommandEncoder
        self._begin_pass = lib.wgpuCommandEncoderBeginComputePass
        self._encoder_class, self._pass_class = api.GPUCommandEncoder, api.GPUComputePassEncoder
        # zeroed: no chained struct, an empty label, no timestamp writes
        self._encoder_descriptor = self._ffi.new("WGPUCommandEncoderDescriptor *")
        self._pass_descriptor = self._ffi.new("WGPUComputePassDescriptor *")
        # through wgpu-py's error capture: errors in a batch's commands raise when it is finished
        self._finish, self._submit = api.libf.wgpuCommandEncoderFinish, api.libf.wgpuQueueSubmit
        self._release_buffer = lib.wgpuCommandBufferRelease
        self._buffer_descriptor = self._ffi.new("WGPUCommandBufferDescriptor *")
        self._buffers = self._ffi.new("WGPUCommandBuffer[]", 1)

    def command_encoder(self, device: Any) -> Any:
        """A new command encoder of ``device`` (a wgpu-py object, which releases it)."""
        handle = self._create_encoder(device._internal, self._encoder_descriptor)
        return self._encoder_class("", handle, device)

    def compute_pass(self, encoder: Any) -> Any:
        """A compute pass begun on ``encoder`` (a wgpu-py object: its ``end`` reports errors)."""
        handle = self._begin_pass(encoder._internal, self._pass_descriptor)
        return self._pass_class("", handle, encoder._device)

    def submit(self, device: Any, encoder: Any) -> None:
        """Finish ``encoder`` and submit its command buffer to ``device``'s queue. wgpu-py's
        ``finish`` and ``submit`` build a descriptor, an array and a command buffer object a
        batch (7 us of Python on a 2-core host); the ones made here are reused."""
        handle = self._finish(encoder._internal, self._buffer_descriptor)
        try:
            self._buffers[0] = handle
            self._submit(device.queue._internal, 1, self._buffers)
        finally:
            self._release_buffer(handle)

    def bind_group(self, device: Any, layout: Any, windows: list[tuple[Any, int, int]]) -> Any:
        """A bind group of ``layout`` whose binding ``i`` is ``windows[i]``: (buffer, offset, size)."""
        new = self._ffi.new
        entries = new("WGPUBindGroupEntry[]", len(windows))
        for i, (buffer, offset, size) in enumerate(windows):
            entry = entries[i]
            entry.binding, entry.buffer, entry.offset, entry.size = i, buffer._internal, offset, size
        descriptor = new("WGPUBindGroupDescriptor *")
        descriptor.layout, descriptor.entries, descriptor.entryCount = layout._internal, entries, len(windows)
        # (the wrapper releases the native group when collected, as wgpu-py's own do)
        return self._bind_group_class("", self._create_bind_group(device._internal, descriptor), device)

    def record(self, cpass: Any, pipe: Any, group: Any, offset: int, groups: tuple[int, int, int]) -> None:
        """Record a dispatch of ``groups`` (x, y, z) workgroups into ``cpass``: set ``pipe``
        (None: the pass's current one), bind ``group`` with its parameters at ``offset``,
        dispatch."""
        handle = cpass._internal
        if pipe is not None:
            self._pipeline(handle, pipe._internal)
        self._offset[0] = offset
        self._bind(handle, 0, group._internal, 1, self._offset)
        x, y, z = groups
        self._dispatch(handle, x, y, z)


class PublicPassEncoding:
    """:class:`PassEncoding` through wgpu-py's public methods."""

    @staticmethod
    def command_encoder(device: Any) -> Any:
        return device.create_command_encoder()

    @staticmethod
    def compute_pass(encoder: Any) -> Any:
        return encoder.begin_compute_pass()

    @staticmethod
    def submit(device: Any, encoder: Any) -> None:
        device.queue.submit([encoder.finish()])

    @staticmethod
    def bind_group(device: Any, layout: Any, windows: list[tuple[Any, int, int]]) -> Any:
        entries = [
            {"binding": i, "resource": {"buffer": b, "offset": off, "size": size}}
            for i, (b, off, size) in enumerate(windows)
        ]
        return device.create_bind_group(layout=layout, entries=entries)

    @staticmethod
    def record(cpass: Any, pipe: Any, group: Any, offset: int, groups: tuple[int, int, int]) -> None:
        if pipe is not None:
            cpass.set_pipeline(pipe)
        cpass.set_bind_group(0, group, [offset])
        cpass.dispatch_workgroups(*groups)
