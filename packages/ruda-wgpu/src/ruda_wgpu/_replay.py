"""``fuse``: trace a function once per kind of arguments, then replay the kernels it launched.

Lazy fusion (``_fusion``) already runs a chain of elementwise operations as one kernel, but
every call of the chain still records each operation in Python: dtype promotion, broadcasting,
an array and a graph node per operation, 4 to 12 us each on the hosts measured. A function
wrapped by :func:`fuse` pays that once per signature (the arrays' dtypes, shapes, strides and
devices, and the values of Python scalar arguments). The first call runs the function as usual
and captures the launches of elementwise kernels (fused chains, copies), reductions and matrix
products it makes, noting where each operand came from: an argument, or the result of an
earlier launch. Later calls with the same signature make those launches again on the new
arguments directly, as a CUDA graph replays what it captured. ``sum(x * y)``, ``mean``,
``var``, ``concat``, writes into arrays made inside the function, a layer ``maximum(x @ w + b,
0)`` and a tuple of results replay so.

A replay of several launches is itself recorded once per set of buffers
(``_kernels.Recorded``): from the second replay on, the dispatches its launches record are
logged and the device keeps them under the arguments' buffers and offsets and the buffers the
launches made, which a loop gets back from the pool in the same order (every other call, when
a step's results become the next call's arguments); a replay on those buffers then records the
logged dispatches and nothing else, as a single fused chain's replay already did. A
conjugate-gradient step on a 256 x 256 system (a product with a vector, two dot products, three
updates: 6 dispatches) replayed in 40-48 us against 91 launch by launch, and 120-137 recorded
operation by operation, on the lavapipe machine's host with a GPU's code paths.

As with ``jax.jit`` and ``cupy.fuse``, the function must compute its results from its arguments
alone. A call that launches any other kernel (sorting, FFT, a decomposition), reads data
(``float(x)``), writes into an argument or any array made before the call, reads an array it did
not get as an argument, or returns anything but new arrays (one, or a tuple of them), is not
kept: such a function runs as written on every call, with the same results, at the cost of
recording. A capture tells an argument's operands by their buffer, so neither is a call kept
while the function reaches an argument's buffer by a name of its own (a view of an argument it
closes over, or a global it reads that is passed to it too: see :func:`_reached_by_name`), and
pending operations that read an argument run before the call. An array the function uploads from
the host is not kept either: a replay would not upload it. (A call whose arguments share a
buffer runs as written too, and leaves the decision to a later call: a capture could not tell
them apart.) Python code in the function (side effects, branches on its scalar arguments'
values) runs at tracing only; a branch on a scalar's value is safe, as the value is part of the
signature.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import struct
import types
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ruda_wgpu import _fusion
from ruda_wgpu._array import Array
from ruda_wgpu._buffers import STORAGE_SERIALS, Storage
from ruda_wgpu._encoding import Step
from ruda_wgpu._engine import CAPTURE, GpuDevice, remember
from ruda_wgpu._fusion import PREPARED_ALONE
from ruda_wgpu._kernels import Operand, OutputRead, Recorded, Scalar, launch_elementwise
from ruda_wgpu._matmul_kernels import launch_matmul
from ruda_wgpu._reduce_kernels import Fused, launch_reduce

#: signatures a fused function keeps before it starts over
TRACES = 64


class _From(NamedTuple):
    """Where a captured operand's buffer came from: argument ``at`` (``made`` False) or the
    result of launch ``at`` of the trace, and the view of it that the launch read."""

    made: bool
    at: int
    offset: int
    strides: tuple[int, ...]
    dtype: np.dtype[Any]

    def operand(self, args: tuple[Any, ...], made: list[Storage]) -> Operand:
        if self.made:
            return Operand(made[self.at], self.offset, self.strides, self.dtype)
        a = args[self.at]
        return Operand(a._storage, a._offset + self.offset, self.strides, self.dtype)


Source = _From | Scalar | OutputRead


def _operands(sources: Sequence[Source], args: tuple[Any, ...], made: list[Storage]) -> list[Any]:
    return [s.operand(args, made) if isinstance(s, _From) else s for s in sources]


class _Elementwise(NamedTuple):
    """A captured :func:`launch_elementwise` into a new buffer of ``nbytes``, or into the
    buffer that launch ``into`` made (``concat`` fills one buffer piece by piece)."""

    key: Any
    body: str
    prelude: str
    out: tuple[int, tuple[int, ...], np.dtype[Any]]  # offset, strides, dtype
    nbytes: int
    sources: list[Source]
    shape: tuple[int, ...]
    code: tuple[str, str, str] | None
    into: int | None

    def run(self, dev: GpuDevice, args: tuple[Any, ...], made: list[Storage]) -> Storage:
        storage = Storage(dev, self.nbytes) if self.into is None else made[self.into]
        self.launch(dev, storage, args, made)
        return storage

    def launch(
        self, dev: GpuDevice, storage: Storage, args: tuple[Any, ...], made: list[Storage]
    ) -> Step | None:
        """Make the launch writing ``storage``; its prepared dispatch when it took one."""
        offset, strides, dtype = self.out
        code = self.code
        return launch_elementwise(
            dev,
            self.key,
            self.body,
            self.prelude,
            Operand(storage, offset, strides, dtype),
            _operands(self.sources, args, made),
            self.shape,
            code=None if code is None else lambda: code,
        )


class _Reduction(NamedTuple):
    """A captured :func:`launch_reduce`; ``fused`` holds the dtype, key and code of Fused values
    read from ``sources`` (None when the source is one operand)."""

    key: Any
    sources: list[Source]
    fused: tuple[np.dtype[Any], Any, tuple[str, str, str]] | None
    rest: tuple[Any, ...]  # m, k, acc, combine, identity, load, prelude

    def run(self, dev: GpuDevice, args: tuple[Any, ...], made: list[Storage]) -> Storage:
        leaves = _operands(self.sources, args, made)
        if self.fused is None:
            return launch_reduce(dev, self.key, leaves[0], *self.rest)
        dtype, key, code = self.fused
        return launch_reduce(dev, self.key, Fused(leaves, dtype, key, lambda: code), *self.rest)


class _Matmul(NamedTuple):
    """A captured :func:`launch_matmul` into a new buffer of ``nbytes``, or into the buffer
    that launch ``into`` made."""

    sources: list[Source]
    nbytes: int
    into: int | None
    rest: tuple[int, int, int, int, int]  # batch, m, k, n, inner

    def run(self, dev: GpuDevice, args: tuple[Any, ...], made: list[Storage]) -> Storage:
        storage = Storage(dev, self.nbytes) if self.into is None else made[self.into]
        a, b = _operands(self.sources, args, made)
        launch_matmul(dev, a, b, storage, *self.rest)
        return storage


Launch = _Elementwise | _Reduction | _Matmul


class _Output(NamedTuple):
    """A result: a view of the buffer that launch ``launch`` made."""

    launch: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int
    dtype: np.dtype[Any]


class Capture:
    """The launches one traced call makes (see :data:`ruda_wgpu._engine.CAPTURE`), with where
    their operands came from; ``failed`` once the call did anything a replay would not repeat."""

    def __init__(self, args: tuple[Any, ...]) -> None:
        #: argument index by buffer (arguments sharing one are not captured: see _traced)
        self.arguments = {id(a._storage): j for j, a in enumerate(args) if type(a) is Array}
        #: the serial of the first buffer made during the call (see _target)
        self.first = next(STORAGE_SERIALS)
        self.args = args
        #: launch index by the buffer it made
        self.made: dict[int, int] = {}
        #: every buffer seen, kept alive so that no other takes its id during the call
        self.seen: list[Storage] = []
        self.launches: list[Launch] = []
        self.failed = False
        self._busy = self._own = False

    def dispatched(self) -> None:
        """This thread encodes a dispatch: one of a captured launch's, or one that no captured
        launch makes (a sort, a solver), which a replay would not repeat."""
        if not self._busy:
            self.failed = True

    def unrepeatable(self) -> None:
        """This thread reads data to the host, or uploads it: a replay would do neither."""
        self.failed = True

    def takes(self) -> bool:
        """Whether a launch starting now is captured: an outermost one is; one inside another
        (a write running the pending operations that read its buffer) spoils the capture."""
        if not self._busy:
            return True
        if self._own:  # the launch this capture made itself
            self._own = False
        else:
            self.failed = True
        return False

    def elementwise(self, dev: GpuDevice, *call: Any) -> Any:
        """Capture and make a :func:`launch_elementwise` (``call``: its arguments after ``dev``)."""
        key, body, prelude, out, operands, shape, code = call
        sources = [self._source(op) for op in operands]
        into = self._target(out.storage)
        self.launches.append(
            _Elementwise(
                key, body, prelude, (out.offset, out.strides, out.dtype), out.storage.nbytes,
                sources, shape, None if code is None else code(), into,
            )
        )  # fmt: skip
        return self._launch(dev, launch_elementwise, dev, key, body, prelude, out, operands, shape, code)

    def reduction(self, dev: GpuDevice, key: Any, src: Operand | Fused, *rest: Any) -> Storage:
        """Capture and make a :func:`launch_reduce`."""
        if isinstance(src, Operand):
            captured = _Reduction(key, [self._source(src)], None, rest)
        else:
            sources = [self._source(leaf) for leaf in src.leaves]
            captured = _Reduction(key, sources, (src.dtype, src.key, src.code()), rest)
        self.launches.append(captured)
        storage: Storage = self._launch(dev, launch_reduce, dev, key, src, *rest)
        self.made[id(storage)] = len(self.launches) - 1
        self.seen.append(storage)
        return storage

    def matmul(self, dev: GpuDevice, a: Operand, b: Operand, out: Storage, *rest: int) -> None:
        """Capture and make a :func:`launch_matmul`."""
        sources = [self._source(a), self._source(b)]
        into = self._target(out)
        self.launches.append(_Matmul(sources, out.nbytes, into, rest))  # type: ignore[arg-type]
        self._launch(dev, launch_matmul, dev, a, b, out, *rest)

    def _target(self, out: Storage) -> int | None:
        """The launch that made ``out``, which a launch now writes (None: it is new, made by
        this launch)."""
        if id(out) in self.arguments:
            self.failed = True  # a write into an argument
        into = self.made.get(id(out))
        if into is None and out.serial < self.first:
            self.failed = True  # a write into an array made before the call (a global, say)
        if into is None:
            self.made[id(out)] = len(self.launches)
            self.seen.append(out)
        return into

    def _launch(self, dev: GpuDevice, launch: Callable[..., Any], *args: Any) -> Any:
        self._busy = self._own = True
        try:
            return launch(*args)
        finally:
            self._busy = self._own = False

    def _source(self, op: Operand | Scalar | OutputRead) -> Source:
        if type(op) is not Operand:
            return op  # type: ignore[return-value]
        self.seen.append(op.storage)
        i = self.made.get(id(op.storage))
        if i is not None:
            return _From(True, i, op.offset, op.strides, op.dtype)
        j = self.arguments.get(id(op.storage))
        if j is None:  # an array the function was not given
            self.failed = True
            return _From(False, -1, 0, op.strides, op.dtype)
        return _From(False, j, op.offset - self.args[j]._offset, op.strides, op.dtype)

    def output(self, result: Any) -> _Output | None:
        """Where ``result`` of the call lies among the launches' buffers; None when it is not an
        array one of them made."""
        if type(result) is not Array:
            return None
        i = self.made.get(id(result._storage))  # (runs it, captured, if it is pending)
        if i is None:
            return None
        return _Output(i, result._shape, result._strides, result._offset, result._dtype)


class _Trace:
    """The launches of one traced call and where its results lie among their buffers."""

    __slots__ = ("device", "launches", "name", "outputs", "recorded", "tuple")

    def __init__(
        self,
        device: GpuDevice,
        launches: list[Launch],
        outputs: list[_Output],
        is_tuple: bool,
        name: str,
    ) -> None:
        self.device, self.launches, self.outputs, self.tuple = device, launches, outputs, is_tuple
        self.name = name
        #: its launches, recorded again from their dispatches on buffers met before
        self.recorded = Recorded()

    def replay(self, args: tuple[Any, ...]) -> Any:
        """The results on ``args`` (of the traced signature), their launches recorded now."""
        dev = self.device
        try:
            if len(self.launches) == 1 and type(self.launches[0]) is _Elementwise:
                # (a single launch writes a new buffer: ``into`` names an earlier launch)
                made = [self._alone(self.launches[0], args)]
            else:
                made = self._launched(args)
        except Exception as err:
            err.add_note(f"raised replaying the kernels that fuse traced in {self.name}()")
            raise
        results = [
            Array._new(made[o.launch], o.shape, o.dtype, dev, o.strides, o.offset) for o in self.outputs
        ]
        return tuple(results) if self.tuple else results[0]

    def _launched(self, args: tuple[Any, ...]) -> list[Storage]:
        """The buffers of the launches, made as they were captured, or, on buffers met before,
        by the dispatches they recorded then (see ``_kernels.Recorded``): a loop replays a step
        on the same few pooled buffers."""
        reads: list[Any] = []
        bound: list[Any] = []
        for a in args:
            if type(a) is Array:
                storage = a._storage  # (runs a pending argument first, outside the log)
                reads += (storage.buffer, a._offset)
                bound.append(storage.buffer)
        return self.recorded.run(self.device, reads, bound, lambda: self._each(args))

    def _each(self, args: tuple[Any, ...]) -> list[Storage]:
        """The buffers of the launches, each made as it was captured."""
        made: list[Storage] = []
        for launch in self.launches:
            made.append(launch.run(self.device, args, made))
        return made

    def _alone(self, launch: _Elementwise, args: tuple[Any, ...]) -> Storage:
        """One elementwise launch (a fused chain): a loop replays it on the same few pooled
        buffers, so its dispatch, prepared once, is kept by the device with the single
        operations' (see _fusion._launch) and only copied into the batch."""
        dev = self.device
        storage = Storage(dev, launch.nbytes)
        key: list[Any] = [self, storage.buffer]
        for source in launch.sources:
            if type(source) is _From:
                a = args[source.at]
                key.append(a._storage.buffer)
                key.append(a._offset)
        prepared = tuple(key)
        step = dev.prepared_alone.get(prepared)
        if step is not None:
            with dev._lock:
                dev._encode_one(*step)
            return storage
        step = launch.launch(dev, storage, args, [])
        if step is not None:
            remember(dev.prepared_alone, PREPARED_ALONE, prepared, step)
        return storage


class FusedFunction:
    """A function whose kernel launches are traced once per signature (see :func:`fuse`)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        #: per signature its trace, or None when calls of that signature run ``fn`` as written
        self.traces: dict[tuple[Any, ...], _Trace | None] = {}
        #: per signature the traced calls that could not tell (see :data:`UNDECIDED`)
        self.undecided: dict[tuple[Any, ...], int] = {}
        #: new signatures traced, and replays, since :meth:`_trace_new` last weighed them
        self.traced = self.replayed = 0
        #: whether new signatures run as written without a trace (see :meth:`_trace_new`)
        self.untraced = False
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # Fusion off: every operation runs alone, as without fuse. Inside another fused
        # function's trace: run as written, so that the outer trace captures these launches.
        key = _signature(args) if not kwargs and _fusion.enabled() and CAPTURE.log is None else None
        if key is None:
            return self.fn(*args, **kwargs)
        trace = self.traces.get(key, _UNSEEN)
        if trace is None:
            return self.fn(*args)
        if trace is not _UNSEEN:
            self.replayed += 1
            return trace.replay(args)
        if not self._trace_new():
            return self.fn(*args)
        out, found = _traced(self.fn, args)
        if found is _UNDECIDED:
            tries = self.undecided.get(key, 0) + 1
            found = None if tries >= UNDECIDED else _UNSEEN
            remember(self.undecided, TRACES, key, tries)
        if found is not _UNSEEN:
            remember(self.traces, TRACES, key, found)
        return out

    def _trace_new(self) -> bool:
        """Whether a call of a new signature is traced. A function whose signatures keep changing
        (a Python float argument that differs every call: a value is part of the signature) would
        pay a trace on every call, several times the recording it saves: once :data:`TRACES`
        signatures were traced with fewer replays than that among them, new signatures run as
        written from then on (pass such a value as a 0-d array instead)."""
        if self.untraced:
            return False
        self.traced += 1
        if self.traced > TRACES:
            self.untraced = self.replayed < TRACES
            self.traced = self.replayed = 0
        return not self.untraced


#: a call whose function also reaches an argument by a name of its own cannot tell whether its
#: signature replays: it leaves the decision to the next call of its signature (on other arrays),
#: for this many calls; then that signature runs as written
UNDECIDED = 4


_UNSEEN: Any = object()
_UNDECIDED: Any = object()


def fuse(fn: Callable[..., Any]) -> FusedFunction:
    """Wrap a function of ruda_wgpu arrays and Python scalars so that its calls, after the first
    with the same dtypes, shapes, strides, devices and scalar values, make its kernel launches
    straight away instead of recording each operation again.

    >>> import ruda_wgpu as xp
    >>> @xp.fuse
    ... def scaled_sine(x, y):
    ...     return xp.sin(x * y + x) * 0.5
    >>> scaled_sine(xp.ones(3), xp.ones(3))  # doctest: +ELLIPSIS
    Array([0.4546..., 0.4546..., 0.4546...], dtype=float32, device='wgpu:0')

    An elementwise chain replays as its one fused kernel; reductions (``sum(x * y)``, ``mean``)
    and the elementwise work around them replay too. Results are bit-identical to calling ``fn``
    itself. A function that is not such a computation of its arguments runs as written (see
    ``ruda_wgpu._replay``), as it does with ``RUDA_WGPU_FUSION=0``. Keyword arguments are passed
    on, untraced.
    """
    if not callable(fn):
        raise TypeError(f"fuse() takes a function, not {type(fn).__name__}")
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


def _reached_by_name(fn: Any, arrays: list[Array]) -> bool:
    """Whether ``fn`` reaches an argument's buffer by a name of its own: an array viewing it held
    in a closure's cell, a default, a ``functools.partial``'s arguments, or a global, a module's,
    class's or object's attribute that its code names (``origin`` of ``fuse(lambda p: p -
    origin)`` called on ``origin`` itself, or on the data ``origin`` is a point of), or an item of
    a list, tuple or dict held so; and the same of the functions it reaches so, a few levels
    down. A capture tells an argument's operands by their buffer, so it would read such an array
    from the next call's arguments. (An array reached otherwise, by ``getattr`` with a computed
    name or ``globals()``, is not seen: as with ``jax.jit``, the function should take it as an
    argument.)"""
    buffers = {id(a._storage) for a in arrays}
    seen: set[int] = set()
    todo: list[tuple[Any, frozenset[str], int]] = [(fn, frozenset(), 0)]
    while todo:
        obj, names, depth = todo.pop()
        if id(obj) in seen or depth > _REACH_DEPTH:
            continue
        seen.add(id(obj))
        if type(obj) is Array:
            if obj._store is not None and id(obj._store) in buffers:
                return True
            continue
        if type(obj) in (list, tuple, dict):
            items = obj.values() if type(obj) is dict else obj
            todo += [(v, names, depth + 1) for v in itertools.islice(items, _REACH_ITEMS)]
            continue
        held = _held_by(obj)
        if held is not None:
            todo += [(v, held[1], depth + 1) for v in held[0]]
        # (a module, class or other object, a callable one too: what the referrer names of it)
        todo += [(v, names, depth + 1) for v in _named_attributes(obj, names)]
    return False


#: how many steps from the function :func:`_reached_by_name` looks, and how many items of a container
_REACH_DEPTH = 4
_REACH_ITEMS = 64


def _held_by(obj: Any) -> tuple[list[Any], frozenset[str]] | None:
    """What a function ``obj`` holds and reads by name, with the names its code uses; None when
    ``obj`` is not a Python function (see :func:`_reached_by_name`)."""
    if isinstance(obj, functools.partial):
        return [obj.func, *obj.args, *obj.keywords.values()], frozenset()
    if isinstance(obj, FusedFunction):
        obj = obj.fn
    call = getattr(type(obj), "__call__", None)  # noqa: B004  (the method itself, not whether it exists)
    if isinstance(call, types.FunctionType):  # an object called as a function: its method
        obj = types.MethodType(call, obj)
    owner = None
    if isinstance(obj, types.MethodType):
        owner, obj = obj.__self__, obj.__func__
    if not isinstance(obj, types.FunctionType):
        return None
    names = frozenset(_code_names(obj.__code__))
    values = []
    for cell in obj.__closure__ or ():
        with contextlib.suppress(ValueError):  # (a closure's variable not yet assigned)
            values.append(cell.cell_contents)
    values += [*(obj.__defaults__ or ()), *(obj.__kwdefaults__ or {}).values()]
    values += [v for k, v in obj.__globals__.items() if k in names]
    values += _named_attributes(owner, names)  # (its instance's, or class's for a classmethod)
    return values, names


def _named_attributes(obj: Any, names: frozenset[str]) -> list[Any]:
    """The attributes of ``obj`` (a module, class or other object) that ``names`` names."""
    attributes = getattr(obj, "__dict__", None)
    if not names or not isinstance(attributes, dict | types.MappingProxyType):
        return []
    return [v for k, v in attributes.items() if k in names]


def _code_names(code: types.CodeType) -> set[str]:
    """The global and attribute names ``code`` and the functions defined in it use."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _traced(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, Any]:
    """Call ``fn`` on ``args``, capturing its launches; its result, and the trace to replay it by
    (None when the call was not a computation of its arguments that launches replay; ``_UNSEEN``
    when this call cannot tell, ``_UNDECIDED`` when it cannot tell but may leave that to a few
    calls only: see :data:`UNDECIDED`)."""
    arrays = [a for a in args if type(a) is Array]
    devices = {a._device for a in arrays}
    if len(devices) != 1 or len({id(a._storage) for a in arrays}) != len(arrays):  # runs pending ones
        # no array, arrays on several devices, or arguments sharing a buffer
        return fn(*args), None if len(devices) != 1 else _UNSEEN
    (dev,) = devices
    for a in arrays:  # pending operations reading an argument (``g = a * 2`` of ``fuse(lambda x:
        # x + g)`` called on ``a``) run first: the trace then sees arrays it was not given
        if a._storage.mark == dev.generation:
            dev.run_readers(a._storage)
    if _reached_by_name(fn, arrays):
        return fn(*args), _UNDECIDED
    capture = Capture(args)
    CAPTURE.log = capture
    try:
        out = fn(*args)
        results = out if type(out) is tuple else (out,)
        outputs = [capture.output(r) for r in results]  # (runs the pending ones, captured)
    finally:
        CAPTURE.log = None
    if capture.failed or not outputs or None in outputs or not _fusion.enabled():
        return out, None
    found = [o for o in outputs if o is not None]
    name = getattr(fn, "__qualname__", type(fn).__name__)
    return out, _Trace(dev, capture.launches, found, type(out) is tuple, name)
