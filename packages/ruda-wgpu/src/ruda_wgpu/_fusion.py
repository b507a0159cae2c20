"""Lazy elementwise operations, fused into one generated kernel when their result is needed.

An elementwise operation (``_ops.unary``, ``binary``, ``apply``, ``where``, ``astype``) does not
run when it is called: it returns an array whose data is a pending :class:`Node` (an
:class:`Operation`, its operands and shape). An operand is a leaf (a strided view of an existing
buffer, or a Python scalar carried in the kernel's parameters) or another pending node of the
same shape, so a chain of operations is a graph. A pending operand of a few operations that an
operation broadcasts (a solver's step size, a mean kept as its axes) is copied into its graph
(see :func:`_spread`). A
node runs when anything other than an elementwise operation needs its data (a read, a
reduction, a view, a write into a buffer it reads), at ``synchronize()``, or when its graph
would pass :data:`MAX_NODES` operations or :data:`MAX_LEAVES` array operands. Then its whole
pending graph becomes one kernel: a ``let`` per node in the order the operations were called,
cached by the graph's structure, dtypes and operand layouts (scalars are parameters), so a loop
re-uses one compiled kernel. Intermediates that only fed the graph never reach memory.
A graph does not run ahead of need: running each large one as soon as the next one starts, so
that the GPU would compute it while the host records, gained nothing for the 8-operation chain
on 1e7 elements on an H200 host (96-177 us a chain with and without, 2 to 32 chains a round),
where recording a chain (36-40 us) and launching and submitting it cost more than its kernel
(52 us); ``xp.fuse`` removes that host cost instead. Submitting each graph as soon as it was
recorded lost outright on another H200 host, where a submit costs the host about 40 us: rounds
of 40 chains took 127 us a chain against 91, rounds of 40 additions of 1e6 elements 66 us an
addition against 23. Tried again once a chain recorded in about 33 us and launched in 7, less
than its kernel (48-53): launching and submitting the pending graphs that nothing pending
reads whenever those not yet run wrote more than 64, 128 or 256 MB, rounds of 40 chains on 1e7
elements took 81-139 us a chain against 89-97 without, on one noisy H200 host in one process,
and rounds of two gained nothing either; the GPU did not overlap the recording as that
arithmetic expects, and it was left out. A third try, on a faster H200 host with four-lane
kernels (a chain recorded in 26 us, launched in 7, its kernel 37): launching the newest pending
graph of at least 4 operations and 2^18 elements when an operation starts another graph, and
submitting it, took rounds of 40 chains on 1e7 elements to 2499 us against 3032 (1.25 against
1.52 times the hand-written kernel) and rounds of two to 216 against 221, but rounds of two on
1e6 elements to 137 against 110, where a submit costs more than the kernel saves. A fourth,
bounded by what the graph's kernel reads and writes (64 MB at least, 4 operations), left 1e6
and 4e6 elements alone (within 2%), but on a slower H200 host (a chain recorded in 32-35 us)
it lost at 1e7: rounds of two took 478 us against 396, rounds of 40 5085 against 3542, the
calls costing the host 122 us each against 35 once each started with a launch and a submit.
Whether running ahead pays depends on the host's submit, so it is left out. Those tries were
timed on the wall clock alone: a retry should also rule out the GPU's clocks (an H200 left idle
for seconds, as during NumPy's rounds, runs slower for a while; see ``HandWritten.keep_busy`` in
benchmarks/wgpu_overhead.py), and ``gpu_time()`` tells the GPU's part from the host's. A bound on what any
running ahead could gain, measured on an H200 host with the hand-written chain kernel and a busy
host loop standing in for recording (26 us a call, rounds of two on 1e7 elements): recording
both calls and then submitting took 204 us, submitting each call as soon as it was recorded 199
(166 without the stand-in); handing the submits to a second thread took 389, as that thread
waits for the recording one to release the GIL. Halving the stand-in took the first to 178:
what the chain needs is a cheaper recording, not overlap.

What recording costs, on the lavapipe machine's host: the chain records in 13 us (20 when each
buffer kept a list of its pending readers and a node held its operation's five fields) and
launches in 4. Of the 13, calling the operators and functions down to the record takes 3.1 and
making and dropping the eight result arrays 2.8 (the record replaced by one that returns an
array); the rest is the nodes, structure ids, marks and pending list. On one H200 host, the
chain on 1e7 elements went from 1.62 and 1.70 times the hand-written kernel to 1.43 and 1.36.

Fused results are bit-identical to running each operation alone: each intermediate is rounded
to its dtype as storing it would round it (narrow integers wrap, float16 rounds), and each float
intermediate passes through an XOR with a zero the compiler cannot know (the top bit of the
element count), so that a driver cannot contract one operation's multiply with the next one's
add into an fma, which rounds once where separate kernels round twice.

Complex operations run alone, on computed operands: NVIDIA's compiler contracts the products
inside complex arithmetic into fmas differently depending on the code around it, so the bits of
a complex result would depend on what it was fused with. So do float64 sin, cos and tan (on an
H100, a chain of five of them, fused, differed from unfused in the last bits of 35 elements of
301), whose argument reduction keeps arrays in local variables: compilers also take such code
badly inlined many times (lavapipe compiled kernels of 1, 2 and 3 fused float64 sines in 0.31,
0.85 and 1.84 s, and of 30 in minutes).

``RUDA_WGPU_FUSION=0`` runs every operation when it is called (one kernel each, made by the same
generator). A node that has run keeps its result; a graph that still reads a pending node which
has since run reads its result instead. A pending node that two separately run graphs share is
computed in each: elementwise work is cheap next to a round trip through memory.
"""

from __future__ import annotations

import itertools
import math
import re
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from ruda_wgpu import _wgsl
from ruda_wgpu._array import Array, pending_array
from ruda_wgpu._buffers import STORAGE_ITEMSIZE, Storage
from ruda_wgpu._devices import switched_on
from ruda_wgpu._encoding import Step
from ruda_wgpu._engine import CAPTURE, GpuDevice, remember
from ruda_wgpu._kernels import (
    Operand,
    OutputRead,
    Scalar,
    broadcast_strides,
    c_strides,
    convert,
    launch_elementwise,
    wgsl_type,
    wrap,
)
from ruda_wgpu._reduce_kernels import Fused

#: pending operations one kernel computes at most (bounds the shader's size and compile time)
MAX_NODES = 64
#: array operands one fused kernel reads at most (every device allows 8 storage bindings a kernel)
MAX_LEAVES = 7
#: operations of a pending operand that an elementwise operation broadcasting it computes again
#: at every element rather than running it first (see :func:`_spread`)
SPREAD_NODES = 8
#: library code that keeps arrays in local variables (float64 sin, cos and tan: their argument
#: reduction), whose operations run alone (see the module docstring)
_LOCAL_ARRAY = re.compile(r"var\s+\w+\s*:\s*array<")
#: the environment variable that turns fusion off (``0``)
FUSION_ENV = "RUDA_WGPU_FUSION"

_NO_LEAVES: frozenset[Any] = frozenset()
_enabled = switched_on(FUSION_ENV)


def enabled() -> bool:
    """Whether elementwise operations wait to be fused (``RUDA_WGPU_FUSION``, default on)."""
    return _enabled


def set_enabled(on: bool) -> bool:
    """Turn fusion on or off in this process (operations already pending stay so); returns the
    previous setting."""
    global _enabled
    previous, _enabled = _enabled, bool(on)
    return previous


class Operation:
    """What one elementwise operation computes: ``fn`` (a WGSL function that ``source`` defines)
    of operands converted to ``targets``, giving ``dtype``; ``what`` is its name for error
    messages, and ``alone`` says whether it runs on its own (complex, and library code that keeps
    local arrays: see the module docstring).

    Made once for each operation and dtypes (its makers are cached), and told apart by identity
    in structure ids: a node refers to it rather than holding its five fields.
    """

    __slots__ = ("alone", "dtype", "fn", "source", "targets", "what")

    def __init__(
        self, what: str, fn: str, source: str, targets: tuple[np.dtype[Any], ...], dtype: np.dtype[Any]
    ) -> None:
        self.what, self.fn, self.source, self.targets, self.dtype = what, fn, source, targets, dtype
        self.alone = (
            dtype.kind == "c"
            or any(t.kind == "c" for t in targets)
            or _LOCAL_ARRAY.search(_wgsl.link(source)) is not None
        )


class Node:
    """One pending elementwise operation: ``op`` over ``shape``.

    ``args`` are pending nodes of the same shape, :class:`Operand` views broadcast to ``shape``,
    or :class:`Scalar` values. Once run, ``storage`` holds the contiguous result and ``args`` is
    empty, so the graph under it can be freed.
    """

    __slots__ = ("args", "device", "epoch", "leaves", "op", "read", "shape", "sid", "size", "storage")

    def __init__(
        self,
        device: GpuDevice,
        op: Operation,
        args: tuple[Any, ...],
        shape: tuple[int, ...],
        size: int,
        leaves: frozenset[int],
        epoch: int,
    ) -> None:
        self.device, self.op, self.args, self.shape = device, op, args, shape
        self.storage: Storage | None = None
        #: whether a pending operation takes this one's result (its buffer is then marked as
        #: read when it runs: see Storage.will_write)
        self.read = False
        #: the operations under it, an upper bound (shared ones count once per use)
        self.size = size
        #: the structure ids (see :func:`leaf_id`) of the array operands its graph reads
        self.leaves = leaves
        #: what its graph computes from what (see :func:`_structure_id`; set by :func:`record`)
        self.sid = 0
        #: the device's epoch when the oldest pending node of its graph was recorded
        self.epoch = epoch

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.op.dtype

    @property
    def what(self) -> str:
        return self.op.what

    def reads(self, storage: Storage) -> bool:
        """Whether this node's pending graph reads ``storage`` (False once it has run)."""
        if self.storage is not None:
            return False
        # (an array operand, or an operation that has run: pending ones hold no storage yet)
        return any(type(a) is not Scalar and a.storage is storage for n in _pending(self) for a in n.args)

    def mark_reads(self) -> None:
        """Mark the buffers its pending graph reads with the device's generation, so that a write
        into one runs it first (see ``Storage.will_write``): for a graph that stays pending into
        a new generation (one whose run raised)."""
        if self.storage is not None:
            return
        generation = self.device.generation
        for n in _pending(self):
            for a in n.args:
                if type(a) is not Scalar and a.storage is not None:  # (an operand, or a run node)
                    a.storage.mark = generation

    def run(self) -> Storage:
        """Compute this node and the pending graph under it (once); the result's storage."""
        if self.storage is None:
            with self.device._lock:
                if self.storage is None:
                    _launch(self)
        assert self.storage is not None
        return self.storage


def record(device: GpuDevice, op: Operation, values: Sequence[Any], shape: tuple[int, ...]) -> Array:
    """A new array for ``op`` of ``values``: pending when fusion is on, computed now when it is off.

    ``values`` are ruda_wgpu arrays (broadcast here to ``shape``) and :class:`Scalar` values of
    their target dtype; the caller has checked dtypes, devices and shapes.
    """
    # one pass over the operands: the node's arguments, its graph's size and leaves, the key of
    # its structure id (see _structure_id), and the marks of what it reads (every operation
    # passes here: the record of one costs a microsecond or two)
    args: list[Any] = []
    parts: list[Any] = [op, shape]
    size, leaves, strides, generation, epoch = 1, _NO_LEAVES, None, device.generation, device.epoch
    for v in values:
        if type(v) is Scalar:
            args.append(v)
            parts.append(v.key())
            continue
        node = v._node
        lazy = node is not None and node.storage is None
        if v._shape != shape:
            if lazy and node.size <= SPREAD_NODES and not op.alone:
                node = _spread(node, shape, {})  # (a pending operand broadcast: see _spread)
            else:
                lazy = False
                leaf = _leaf(v, shape)
                ident = leaf_id(leaf)
        elif lazy:
            strides = v._strides  # (a pending result is contiguous, of this shape)
        else:
            leaf = v._leaf or v._operand()
            ident = v._leaf_id or _array_leaf_id(v)
        if lazy:
            args.append(node)
            parts.append(node.sid)
            node.read = True
            size += node.size
            if node.epoch < epoch:
                epoch = node.epoch
            if leaves is not node.leaves:
                leaves = leaves | node.leaves if leaves else node.leaves
            continue
        args.append(leaf)
        parts.append(ident)
        leaf.storage.mark = generation  # a write into it runs this operation first
        if ident not in leaves:
            leaves = leaves | {ident}
    alone = op.alone
    if alone or size > MAX_NODES or len(leaves) > MAX_LEAVES:
        # the pending operands run as graphs of their own; this node starts a new graph on them
        args = [_result(a) if type(a) is Node else a for a in args]
        size, leaves = 1, frozenset(leaf_id(a) for a in args if type(a) is Operand)
        for a in args:
            if type(a) is Operand:
                a.storage.mark = generation
        node = Node(device, op, tuple(args), shape, size, leaves, device.epoch)
        _structure_id(node)
    else:
        node = Node(device, op, tuple(args), shape, size, leaves, epoch)
        node.sid = _number(tuple(parts))
    out = pending_array(node, shape, op.dtype, device, strides)
    if alone or not _enabled or 0 in shape:
        out._storage  # noqa: B018  (runs it now)
    else:
        pending = device.pending
        pending.append(weakref.ref(out))
        if len(pending) >= device.pending_bound:  # now and then, drop the dead
            device.drop_dead_pending()
        if device.generation != generation:
            # another thread ran the pending operations since this one read the generation: the
            # buffers it marked may be written with no check for readers, so it runs now
            out._storage  # noqa: B018
    return out


#: structure ids by what they stand for (see :func:`_structure_id`), kept up to this many
STRUCTURE_IDS = 1 << 16
_structure_ids: dict[tuple[Any, ...], int] = {}
_next_structure_id = itertools.count(1)


def forget_structures() -> None:
    """Drop the structure ids' table (its keys hold buffers: ``empty_cache`` destroys them)."""
    _structure_ids.clear()


def _structure_id(node: Node) -> int:
    """A number for the computation of ``node`` (kept in ``node.sid``): its operation and shape,
    and per operand a pending node's number, an array operand's (see :func:`leaf_id`) or a
    scalar's key. Equal numbers, equal computations from the same buffers, so that the launch of
    a graph recorded again (a loop) is found by its root's number alone (see :func:`_launch`).
    :func:`record` works it out as it goes through the operands; this is for a node whose
    operands it changed."""
    parts: list[Any] = [node.op, node.shape]
    for a in node.args:
        kind = type(a)
        if kind is Node:
            parts.append(a.sid)
        elif kind is Operand:
            parts.append(leaf_id(a))
        else:
            parts.append(a.key())
    node.sid = sid = _number(tuple(parts))
    return sid


def leaf_id(leaf: Operand) -> int:
    """The structure id of an array operand: a number for its buffer, offset, strides and dtype."""
    return _number((leaf.storage.buffer, leaf.offset, leaf.strides, leaf.dtype))


def _array_leaf_id(x: Array) -> int:
    """:func:`leaf_id` of array ``x`` as an operand, kept in the array (a loop reads the same
    arrays again and again; an array's buffer and layout never change)."""
    x._leaf_id = ident = leaf_id(x._operand())
    return ident


def _number(key: tuple[Any, ...]) -> int:
    """The structure id standing for ``key``. Numbers are never reused: the table starting over
    only makes new ones."""
    sid = _structure_ids.get(key)
    if sid is None:
        if len(_structure_ids) >= STRUCTURE_IDS:
            _structure_ids.clear()
        sid = _structure_ids[key] = next(_next_structure_id)
    return sid


def _spread(node: Node, shape: tuple[int, ...], copies: dict[int, Node]) -> Node:
    """A pending copy over ``shape`` of the graph under ``node``, whose shape broadcasts to it:
    every element computes its operand's value again, its array operands read with zero strides
    along the broadcast axes, so that ``alpha * p`` of a pending ``alpha = rs / d`` (an iterative
    solver's step size), or ``x - mu`` of a mean kept as (1, n), is one kernel rather than a
    dispatch for ``alpha`` or ``mu`` first (at most :data:`SPREAD_NODES` operations an element
    more). Operations that have run are read as their results; ``copies`` holds those made so
    far, so that a shared operation is copied once. The buffers the copy reads are marked
    already: the graph under ``node`` was recorded in this generation (a new one runs every
    pending array, and ``node`` belongs to one that is alive)."""
    small = node.shape
    zeros = (0,) * len(shape)
    single = math.prod(small) == 1  # (a step size, 0-D: every stride 0, at once)
    args: list[Any] = []
    size, leaves = 1, _NO_LEAVES
    for a in node.args:
        if type(a) is Scalar:
            args.append(a)
            continue
        if type(a) is Node and a.storage is None:
            copy = copies.get(id(a)) or _spread(a, shape, copies)
            args.append(copy)
            size += copy.size
            leaves = leaves | copy.leaves
            continue
        if type(a) is Operand:
            strides = zeros if single else broadcast_strides(small, a.strides, shape)
            leaf = Operand(a.storage, a.offset, strides, a.dtype)
        else:  # an operation that has run: its result
            strides = zeros if single else broadcast_strides(small, c_strides(small), shape)
            leaf = Operand(a.storage, 0, strides, a.dtype)
        args.append(leaf)
        leaves = leaves | {leaf_id(leaf)}
    copy = copies[id(node)] = Node(node.device, node.op, tuple(args), shape, size, leaves, node.epoch)
    _structure_id(copy)
    return copy


def _leaf(x: Any, shape: tuple[int, ...]) -> Operand:
    """The operand reading array ``x`` broadcast to ``shape`` (stride 0 along broadcast axes)."""
    return Operand(x._storage, x._offset, broadcast_strides(x._shape, x._strides, shape), x._dtype)


def _result(node: Node) -> Operand:
    """The operand reading the result of ``node`` (run now if it is pending)."""
    return Operand(node.run(), 0, c_strides(node.shape), node.dtype)


#: prepared dispatches of operations on results computed since they were recorded, and of
#: ``fuse`` replays, a device keeps (see :func:`_launch`) before it starts over
PREPARED_ALONE = 1024


#: graphs' prepared dispatches a device keeps (see :func:`_launch`) before it starts over
PREPARED_FUSED = 1024


def _launch(root: Node) -> None:
    """Run the pending graph under ``root`` as one kernel and keep the result in ``root``.

    A loop repeats the same graphs on the same few pooled buffers, and their dispatches are
    kept by the root's structure id (which :func:`record` works out as it goes) and output
    buffer, so that a repeat skips the walk of the graph, the plan's signature and its launch
    key (the 8-operation benchmark chain launched in 8 us against 22 on the lavapipe machine's
    host). The prepared dispatch computes the whole graph from its leaves as they were recorded:
    it serves only while no write into a buffer that pending operations read has happened since
    the graph's oldest operation was recorded (the device's epoch; such a write runs the graphs
    that still read the buffer, but one of the graph's operations may have run alone before it
    and left the rest reading its result), and it is kept only from a launch whose operations
    were all still pending. A graph whose pending operands have all run since it was recorded
    is one operation on their results, kept by what :func:`_alone_key` names.
    """
    shape, dtype, dev = root.shape, root.dtype, root.device
    try:
        out = Storage(dev, max(math.prod(shape) * STORAGE_ITEMSIZE[dtype], 4))
    except Exception as err:  # (a result too large for the device: named as a launch's error)
        _name_graph(err, _pending(root))
        raise
    # (a fuse trace sees every launch: it takes none straight from the device)
    tracing = CAPTURE.log is not None
    key = (root.sid, out.buffer)
    # (a single operation's dispatch reads its operands as they are now, whatever the epoch)
    prepared = not tracing and (root.size == 1 or root.epoch == dev.epoch)
    step = dev.prepared_fused.get(key) if prepared else None
    alone = None
    if step is None and root.size > 1:  # its pending operands may all have run since
        alone = _alone_key(root, out)
        if alone is not None and not tracing:
            step = dev.prepared_alone.get(alone)
    if step is not None:
        dev._encode_one(*step)  # (the device's lock is held: see Node.run)
    else:
        order, structure, leaves = graph_of(root)
        step = _run_graph(order, structure, leaves, leaves, Operand(out, 0, c_strides(shape), dtype))
        if step is not None and not tracing:
            if _all_pending(order):
                remember(dev.prepared_fused, PREPARED_FUSED, key, step)
            elif alone is not None:
                remember(dev.prepared_alone, PREPARED_ALONE, alone, step)
    root.storage, root.args = out, ()
    if root.read:  # pending operations may read it (a write into it runs them first)
        out.mark = dev.generation


def _all_pending(order: list[Node]) -> bool:
    """Whether no operation under the graph ``order`` has run since it was recorded (the graph's
    kernel then computes every one of them from the leaves)."""
    return not any(type(a) is Node and a.storage is not None for n in order for a in n.args)


def _alone_key(root: Node, out: Storage) -> tuple[Any, ...] | None:
    """What the dispatch of ``root`` alone depends on (its operation, shape, output buffer, and
    per operand its buffer, offset, strides and dtype, or a scalar's words); None when an
    operand is pending (a graph of several operations)."""
    key: list[Any] = [root.op, root.shape, out.buffer]
    for a in root.args:
        kind = type(a)
        if kind is Operand:
            key.append((a.storage.buffer, a.offset, a.strides, a.dtype))
        elif kind is Scalar:
            key.append((a.dtype, *a.words()))
        elif a.storage is None:
            return None
        else:  # a node that has run: its contiguous result
            key.append((a.storage.buffer, 0, None, a.dtype))
    return tuple(key)


def _run_graph(
    order: list[Node],
    structure: list[tuple[Any, ...]],
    leaves: list[Operand | Scalar],
    operands: Sequence[Operand | Scalar | OutputRead],
    out: Operand,
) -> Step | None:
    """Launch the fused kernel of a graph (see :func:`graph_of`) writing ``out``, reading
    ``operands`` (the leaves, or stand-ins for them); a failure names the graph's operations.
    Returns the prepared dispatch when the launch took one."""
    root = order[-1]
    try:
        return launch_elementwise(
            root.device,
            ("fused", *structure),
            "",
            "",
            out,
            operands,
            root.shape,
            code=lambda: kernel_code(order, structure, [leaf.dtype for leaf in leaves]),
        )
    except Exception as err:
        _name_graph(err, order)
        raise


def _name_graph(err: Exception, order: list[Node]) -> None:
    """Note on ``err`` the operations of the graph ``order`` whose run raised it (the error may
    surface far from their calls: at a read or ``synchronize()``)."""
    err.add_note(f"raised running the deferred elementwise operations {[n.what for n in order]}")


def write_into(value: Array, target: Array) -> bool:
    """Compute the pending ``value`` straight into the view ``target`` (``x += y`` without a
    temporary and a copy); False, with nothing done, when that is not safe: ``value`` is not
    pending or differs in shape or dtype, or its graph reads ``target``'s buffer through another
    view than ``target`` itself (a thread could read an element another one has written).

    ``value`` must be an array no one else holds (the operators' temporary result).
    """
    node = value._node
    if node is None or node.storage is not None or not _enabled:
        return False
    if value._shape != target._shape or node.dtype != target._dtype:
        return False
    if any(s == 0 for s, n in zip(target._strides, target._shape, strict=True) if n > 1):
        return False  # a broadcast view: several of its elements are one
    storage = target._storage
    # (under the device's lock until the kernel is recorded: another thread's synchronize()
    # must not run the graph meanwhile, nor its write into a leaf land before the kernel)
    with node.device._lock:
        if node.storage is not None:  # another thread ran it
            return False
        # pending readers of the buffer run first and see the old values; this node is marked
        # as run, so that it is not among them
        node.storage = storage
        storage.will_write()
        order, structure, leaves = graph_of(node)
        operands: list[Operand | Scalar | OutputRead] = []
        here = (target._offset, target._strides, target._dtype)
        for leaf in leaves:
            if type(leaf) is Operand and leaf.storage is storage:
                if (leaf.offset, leaf.strides, leaf.dtype) != here:
                    node.storage = None
                    return False
                operands.append(OutputRead(leaf.dtype))  # read through the output's own binding
            else:
                operands.append(leaf)
        _run_graph(order, structure, leaves, operands, target._operand())
        node.args = ()
    return True


def reduction_input(x: Array, strided: bool = False) -> Fused | None:
    """The pending graph of ``x`` as values a reduction computes as it reads them, so that
    ``sum(x * y)`` reads x and y once and writes nothing; None when ``x`` is not pending or
    fusion is off, or when a leaf is not contiguous over ``x``'s shape (a kernel indexing
    leaves by the flat index), unless ``strided`` (a kernel taking each leaf's strides: the
    caller checks them)."""
    node = x._node
    if node is None or node.storage is not None or not _enabled:
        return None
    order, structure, leaves = graph_of(node)
    full = c_strides(node.shape)
    for leaf in leaves:
        if (
            not strided
            and type(leaf) is Operand
            and any(n != 1 and s != c for n, s, c in zip(node.shape, leaf.strides, full, strict=True))
        ):
            return None

    def code() -> tuple[str, str, str]:
        expr, prelude, lets = kernel_code(order, structure, [leaf.dtype for leaf in leaves])
        fence = _FENCES.get(wgsl_type(node.dtype))
        if fence is not None and fence not in prelude:  # not contracted with the accumulation
            prelude += "\n" + fence
        return _fence(wrap(expr, node.dtype), node.dtype), prelude, lets

    return Fused(leaves, node.dtype, ("fused", *structure), code)


def graph_of(root: Node) -> tuple[list[Node], list[tuple[Any, ...]], list[Operand | Scalar]]:
    """The pending nodes under ``root`` (operands first), the graph's structure, which with the
    leaves' dtypes and layouts keys its kernel (per node its function and operands: ``j`` for
    node j, ``-1 - k`` for leaf k), and the leaves (each array operand once)."""
    if any(type(a) is Node and a.storage is None for a in root.args):
        order = _pending(root)
        index = {id(n): j for j, n in enumerate(order)}
    else:  # one operation on computed operands, the most common graph: no walk, no index
        order, index = [root], {}
    leaves: list[Operand | Scalar] = []
    leaf_index: dict[Operand, int] = {}
    structure: list[tuple[Any, ...]] = []
    for n in order:
        refs: list[Any] = [n.op.fn]
        for a in n.args:
            if type(a) is Node and a.storage is None:
                refs.append(index[id(a)])
                continue
            leaf = _result(a) if type(a) is Node else a
            k = leaf_index.get(leaf) if type(leaf) is Operand else None
            if k is None:  # scalars are never shared: 0.0 == -0.0, but their bits differ
                k = len(leaves)
                leaves.append(leaf)
                if type(leaf) is Operand:
                    leaf_index[leaf] = k
            refs.append(-1 - k)
        structure.append(tuple(refs))
    return order, structure, leaves


def kernel_code(
    order: list[Node], structure: list[tuple[Any, ...]], leaf_dtypes: list[np.dtype[Any]]
) -> tuple[str, str, str]:
    """The WGSL of a fused graph: the root's expression, the functions it calls, and a ``let``
    per intermediate node (``v{j}``; leaves are ``x{k}``).

    Drivers compile WGSL assuming finite floats, so ``a - a`` may become 0 and ``a / a`` 1,
    where NaN and infinities want NaN; ``select(y, x, x < y)`` may become ``min(x, y)``, which
    drops a NaN (NVIDIA's did, fused: ``where(x < y, x, y)`` gave 0 for x = 0, y = NaN); and
    equal expressions become one value. So each use of a float value after its first, in the
    same operation (``x - x``) or another one, is fenced with a salt of its own, and each node's
    value has a fence of its own (``(x*y) - (x*y)`` subtracts two values no compiler can prove
    equal): no pattern spans two operations, as when they are computed one at a time."""
    calls = []
    fenced_types: set[str] = set()
    uses: dict[str, int] = {}  # per operand expression, how many operations took it so far
    for n, (_, *refs) in zip(order, structure, strict=True):
        args: list[str] = []
        for ref, target in zip(refs, n.op.targets, strict=True):
            if ref >= 0:
                arg = convert(f"v{ref}", order[ref].dtype, target)
            else:
                arg = convert(f"x{-1 - ref}", leaf_dtypes[-1 - ref], target)
            seen = uses.get(arg, 0)
            uses[arg] = seen + 1
            if seen and wgsl_type(target) in _FENCES:
                fenced_types.add(wgsl_type(target))
                arg = _fence(arg, target, salt=seen)
            args.append(arg)
        calls.append(f"{n.op.fn}({', '.join(args)})")
    lets = [
        f"  let v{j} = {_fence(wrap(call, n.dtype), n.dtype, salt=j + 1)};"
        for j, (call, n) in enumerate(zip(calls[:-1], order[:-1], strict=True))
    ]
    sources = dict.fromkeys(n.op.source for n in order)
    fenced_types.update(wgsl_type(n.dtype) for n in order[:-1])
    fences = [_FENCES[t] for t in sorted(fenced_types) if t in _FENCES]
    return calls[-1], "\n".join([*sources, *fences]), "\n".join(lets)


def _pending(root: Node) -> list[Node]:
    """The pending nodes under ``root`` and ``root`` itself, operands before their users, each once."""
    order: list[Node] = []
    _collect(root, order, set())
    return order


def _collect(node: Node, order: list[Node], seen: set[int]) -> None:
    """Append the pending nodes under ``node``, operands before their users, each once."""
    seen.add(id(node))
    for a in node.args:
        if type(a) is Node and a.storage is None and id(a) not in seen:
            _collect(a, order, seen)
    order.append(node)


def _fence(expr: str, dtype: np.dtype[Any], salt: int = 1) -> str:
    """``expr`` behind a fence (see :data:`_FENCES`) when it is a float (real or complex);
    fences of other ``salt`` values are different expressions to a compiler."""
    t = wgsl_type(dtype)
    return f"fence_{_FENCE_SUFFIX[t]}({expr}, {salt}u)" if t in _FENCES else expr


def fenced(expr: str, dtype: np.dtype[Any]) -> tuple[str, str]:
    """``expr``, a float value (real or complex) of ``dtype`` in an elementwise kernel, behind the
    fence that keeps a driver from contracting it into an fma with what uses it, and the fence's
    WGSL for the kernel's prelude (other dtypes: ``expr`` as it is, no prelude)."""
    fence = _FENCES.get(wgsl_type(dtype), "")
    return _fence(expr, dtype), fence


# ``P[0] >> 31u`` is the top bit of the element count (of the rows, in a reduction), always 0
# (a dispatch covers < 2^31 of them), which no compiler can know: XOR with it times the salt
# keeps a value's bits and ends a float expression, so nothing is contracted across it, and
# values fenced with other salts are not taken for one another. It is read at a computed
# index, 0: lavapipe compiles a kernel again with the values of the parameters its branches
# test written in as constants (Mesa's nir_inline_uniforms), P[0] among them in some kernels,
# which made the fence 0 and fused ``(x - x) / 3.0`` 0 for an infinite x; it replaces only
# reads at constant indices.
_FENCE_ZERO = "(param(P[0] >> 31u) >> 31u)"
_FENCE_SUFFIX = {"f32": "f32", "f64": "f64", "vec2<f32>": "c64", "vec2<f64>": "c128"}
_FENCES = {
    "f32": "fn fence_f32(v: f32, salt: u32) -> f32 "
    f"{{ return bitcast<f32>(bitcast<u32>(v) ^ ({_FENCE_ZERO} * salt)); }}",
    "f64": "fn fence_f64(v: f64, salt: u32) -> f64 "
    f"{{ return bitcast<f64>(bitcast<u64>(v) ^ u64({_FENCE_ZERO} * salt)); }}",
    "vec2<f32>": "fn fence_c64(v: vec2<f32>, salt: u32) -> vec2<f32> "
    f"{{ return bitcast<vec2<f32>>(bitcast<vec2<u32>>(v) ^ vec2<u32>({_FENCE_ZERO} * salt)); }}",
    "vec2<f64>": f"fn fence_c128(v: vec2<f64>, salt: u32) -> vec2<f64> {{ let z = u64({_FENCE_ZERO} * salt); "
    "return vec2<f64>(bitcast<f64>(bitcast<u64>(v.x) ^ z), bitcast<f64>(bitcast<u64>(v.y) ^ z)); }",
}
