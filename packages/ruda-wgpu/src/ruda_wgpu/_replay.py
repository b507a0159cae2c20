"""``fuse``: trace an elementwise function once per kind of arguments, then replay its kernel.

Lazy fusion (``_fusion``) already runs a chain of elementwise operations as one kernel, but
every call of the chain still records each operation in Python: dtype promotion, broadcasting,
an array and a graph node per operation, 4 to 12 us each on the hosts measured. A function
wrapped by :func:`fuse` pays that once per signature (the arrays' dtypes, shapes, strides and
devices, and the values of Python scalar arguments): the first call records the function as
usual and keeps the one fused kernel it made, with where each of its operands came from; later
calls with the same signature launch that kernel on the new arguments directly.

As with ``jax.jit`` and ``cupy.fuse``, the function must compute its result from its arguments
alone. A call that does anything else on the GPU or reads data (a reduction, a write into an
array, ``float(x)``), reads an array it did not get as an argument, or returns anything but new
arrays (one, or a tuple of them, each replayed as a kernel of its own), is not kept: such a
function runs as written on every call, with the same results, at the cost of recording. (A
call whose arguments share a buffer runs as written too, and leaves the decision to a later
call: the kernel could not tell them apart.) Python code in the function (side effects,
branches on its scalar arguments' values) runs at tracing only; a branch on a scalar's value is
safe, as the value is part of the signature.
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from ruda_wgpu import _fusion
from ruda_wgpu._array import Array
from ruda_wgpu._engine import STORAGE_ITEMSIZE, GpuDevice, Storage, remember
from ruda_wgpu._fusion import PREPARED_ALONE
from ruda_wgpu._kernels import Operand, Scalar, launch_elementwise

#: signatures a fused function keeps (each a compiled kernel's launch) before it starts over
TRACES = 64


class _Trace:
    """One traced call: the fused kernel's key and code, and per operand of the kernel the
    argument it reads (index, element offset from the argument's own, strides, dtype) or the
    constant scalar it is."""

    __slots__ = ("arguments", "code", "device", "dtype", "key", "nbytes", "operands", "shape", "what")

    def __init__(
        self,
        device: GpuDevice,
        key: tuple[Any, ...],
        code: tuple[str, str, str],
        operands: list[tuple[int, int, tuple[int, ...], np.dtype[Any]] | Scalar],
        shape: tuple[int, ...],
        dtype: np.dtype[Any],
        what: list[str],
    ) -> None:
        self.device, self.key, self.code, self.operands = device, key, code, operands
        self.shape, self.dtype, self.what = shape, dtype, what
        self.nbytes = math.prod(shape) * STORAGE_ITEMSIZE[dtype]
        #: the arguments the kernel reads, each once
        self.arguments = sorted({op[0] for op in operands if type(op) is not Scalar})  # type: ignore[index]

    def replay(self, args: tuple[Any, ...]) -> Array:
        """The kernel's result on ``args`` (of the traced signature), recorded now."""
        shape, dtype, dev = self.shape, self.dtype, self.device
        storage = Storage(dev, max(self.nbytes, 4))
        out = Array._new(storage, shape, dtype, dev)
        # a loop replays on the same few pooled buffers: its dispatch, prepared once, is kept by
        # the device with the single operations' (see _fusion._launch)
        key = [self, storage.buffer]
        for j in self.arguments:
            a = args[j]
            key.append(a._storage.buffer)
            key.append(a._offset)
        prepared = tuple(key)
        step = dev.prepared_alone.get(prepared)
        if step is not None:
            with dev._lock:
                dev._encode_one(*step)
            return out
        operands: list[Operand | Scalar] = []
        for op in self.operands:
            if type(op) is Scalar:
                operands.append(op)
            else:
                j, offset, strides, leaf_dtype = op  # type: ignore[misc]
                a = args[j]
                operands.append(Operand(a._storage, a._offset + offset, strides, leaf_dtype))
        code = self.code
        try:
            step = launch_elementwise(
                dev, self.key, "", "", out._operand(), operands, shape, code=lambda: code
            )
        except Exception as err:
            err.add_note(f"raised replaying the fused elementwise operations {self.what}")
            raise
        if step is not None:
            remember(dev.prepared_alone, PREPARED_ALONE, prepared, step)
        return out


class FusedFunction:
    """An elementwise function whose fused kernel is traced once per signature (see :func:`fuse`)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        #: per signature its trace (a tuple of them for a function returning a tuple), or None
        #: when calls of that signature run ``fn`` as written
        self.traces: dict[tuple[Any, ...], _Trace | tuple[_Trace, ...] | None] = {}
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key = _signature(args) if not kwargs and _fusion.enabled() else None
        if key is None:  # (fusion off: every operation runs alone, as without fuse)
            return self.fn(*args, **kwargs)
        trace = self.traces.get(key, _UNSEEN)
        if trace is None:
            return self.fn(*args)
        if type(trace) is _Trace:
            return trace.replay(args)
        if trace is not _UNSEEN:
            return tuple(t.replay(args) for t in trace)
        out, found = _traced(self.fn, args)
        if found is not _UNSEEN:
            remember(self.traces, TRACES, key, found)
        return out


_UNSEEN: Any = object()


def fuse(fn: Callable[..., Any]) -> FusedFunction:
    """Wrap an elementwise function of ruda_wgpu arrays and Python scalars so that its calls,
    after the first with the same dtypes, shapes, strides, devices and scalar values, launch its
    one fused kernel straight away instead of recording each operation again.

    >>> import ruda_wgpu as xp
    >>> @xp.fuse
    ... def scaled_sine(x, y):
    ...     return xp.sin(x * y + x) * 0.5
    >>> scaled_sine(xp.ones(3), xp.ones(3))  # doctest: +ELLIPSIS
    Array([0.4546..., 0.4546..., 0.4546...], dtype=float32, device='wgpu:0')

    Results are bit-identical to calling ``fn`` itself. A function that is not a pure
    elementwise computation of its arguments runs as written (see ``ruda_wgpu._replay``), as it
    does with ``RUDA_WGPU_FUSION=0``. Keyword arguments are passed on, untraced.
    """
    return FusedFunction(fn)


def _signature(args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """What a trace depends on, per argument; None when an argument is neither a ruda_wgpu array
    nor a Python scalar."""
    key: list[Any] = []
    for a in args:
        kind = type(a)
        if kind is Array:
            key.append((a._dtype, a._shape, a._strides, a._device))
        elif kind is float or kind is complex:
            key.append((kind, struct.pack("<2d", a.real, a.imag)))  # tells 0.0 from -0.0; nan == nan
        elif kind is int or kind is bool:
            key.append((kind, a))
        else:
            return None
    return tuple(key)


def _traced(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, Any]:
    """Call ``fn`` on ``args``, watching it; its result, and the trace to replay it by (None when
    the call was not a pure elementwise computation of its arguments, ``_UNSEEN`` when this
    call cannot tell)."""
    devices = {a._device for a in args if type(a) is Array}
    storages = {id(a._storage): j for j, a in enumerate(args) if type(a) is Array}  # runs pending ones
    if len(storages) != sum(type(a) is Array for a in args):
        # arguments sharing a buffer: their operands cannot be told apart; a later call decides
        return fn(*args), _UNSEEN
    before = _activity(devices)
    first = _fusion.order_mark()
    out = fn(*args)
    results = out if type(out) is tuple else (out,)
    if not (_activity(devices) == before and len(devices) == 1 and _fusion.enabled() and results):
        return out, None
    traces = []
    for result in results:
        trace = _trace_of(result, args, storages, first)
        if trace is None:
            return out, None
        traces.append(trace)
    return out, tuple(traces) if type(out) is tuple else traces[0]


def _trace_of(result: Any, args: tuple[Any, ...], storages: dict[int, int], first: int) -> _Trace | None:
    """The trace replaying ``result`` of a call on ``args`` (whose buffers ``storages`` maps to
    their indices); None when it is not a new pending array computed from them alone."""
    if type(result) is not Array:
        return None
    node = result._node
    if node is None or node.storage is not None:
        return None
    order, structure, leaves = _fusion.graph_of(node)
    if any(n.order < first for n in order):
        return None  # it read an array pending from before the call
    operands: list[Any] = []
    for leaf in leaves:
        if isinstance(leaf, Scalar):
            operands.append(leaf)
            continue
        j = storages.get(id(leaf.storage))
        if j is None:
            return None  # an array that is not an argument
        operands.append((j, leaf.offset - args[j]._offset, leaf.strides, leaf.dtype))
    code = _fusion.kernel_code(order, structure, [leaf.dtype for leaf in leaves])
    what = [n.what for n in order]
    return _Trace(node.device, ("fused", *structure), code, operands, node.shape, node.dtype, what)


def _activity(devices: set[GpuDevice]) -> list[tuple[int, int, int]]:
    """What a pure elementwise function leaves as it was: the devices' counts of dispatches
    recorded, submits and reads to the host."""
    return [(d.dispatches, d.submits, d.host_reads) for d in devices]
