"""One client's session on the server: its arrays, its memory, and the ops it runs.

A session sees only the handles it created: any other number is an error, never a lookup
elsewhere. An op that fails marks its outputs failed; later ops that use them fail with
the original error without repeating it, so the client hears of each failure once.
Memory is bounded twice: each session by its own limit, and all sessions together by the
server's budget (:class:`MemoryBudget`), which every session reserves from before it allocates.
Each live array counts :data:`wire.HANDLE_BYTES` besides its data, in both.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Hashable
from typing import Any

import numpy as np

from ruda_remote import _bounds, _meta, wire
from ruda_remote._meta import VIEWS, is_basic_key
from ruda_remote._table import CREATION, OpTable, check_arguments

#: exception types the client re-raises as such; anything else becomes RuntimeError
ERROR_KINDS = (
    "IndexError",
    "ValueError",
    "TypeError",
    "ZeroDivisionError",
    "OverflowError",
    "NotImplementedError",
    "MemoryError",
    "KeyError",
    "RuntimeError",
)

_IN_PLACE_OPERATORS = frozenset(wire.INPLACE_DUNDERS)
_IN_PLACE = _IN_PLACE_OPERATORS | {"__setitem__"}
#: shapes and dtypes of elementwise results already worked out, by
#: :meth:`Session._elementwise_key`: they follow from the reference's rules alone, so every
#: session of the process shares them
_ELEMENTWISE_METAS: dict[tuple[Any, ...], tuple[list[_meta.Meta], int]] = {}
_MAX_CACHED = 4096
_SCALAR_TYPES = frozenset({bool, float, complex, type(None)})
#: characters of an op's error text kept and sent: errors may quote the client's arguments (up to
#: the header limit, 16 MiB), and a failed array keeps its op's error until it is released
MAX_ERROR_TEXT = 2000


class OpFailedError(Exception):
    """An op failed; carries the kind and text the client will see."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def error_kind(err: BaseException) -> str:
    """The most specific exception kind in :data:`ERROR_KINDS` that ``err`` is an instance of."""
    for cls in type(err).__mro__:
        if cls.__name__ in ERROR_KINDS and cls.__module__ == "builtins":
            return cls.__name__
    return "RuntimeError"


class MemoryBudget:
    """Bytes that the arrays of all of a server's sessions may hold together.

    Sessions run on their own threads: :meth:`take` checks and takes in one step under a lock,
    so two sessions can never both get the last of the budget.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()

    def take(self, nbytes: int) -> bool:
        """Take ``nbytes`` if they fit in what is left; say whether they did."""
        with self._lock:
            if self.used + nbytes > self.limit:
                return False
            self.used += nbytes
            return True

    def give_back(self, nbytes: int) -> None:
        """Return ``nbytes`` taken before."""
        with self._lock:
            self.used -= nbytes


class Session:
    """The arrays and memory of one connection.

    Memory is charged per buffer: a handle costs the whole buffer its array keeps alive (a
    view, its base's), and handles that share a buffer share one charge, given back when the
    last of them is released. Each handle also costs :data:`wire.HANDLE_BYTES` of its own (the
    array object and the session's entries for it, which a 0-d or empty array needs as well),
    reserved with its op's result and given back when it is released. Everything a session
    holds is also taken from the server's ``budget``; the bytes an op may allocate and its
    handles are reserved there before it runs (and an upload's before its bytes are kept), then
    become the charge of what it made, and what is left of them is returned when the op ends.
    """

    def __init__(self, table: OpTable, limits: wire.Limits, budget: MemoryBudget | None = None) -> None:
        self.table = table
        self.limits = limits
        #: the server's, shared by its sessions; a session alone gets one of its own
        self.budget = budget if budget is not None else MemoryBudget(limits.server_bytes)
        #: bytes taken from the budget for the op running now, not yet charged to an array
        self._reserved = 0
        #: bytes taken from the budget for an upload's bytes, until its op runs
        self._payload_reserved = 0
        #: bytes taken from the budget for the copies the batch's reads make (see _reserve_read),
        #: until its replies have been sent (:meth:`sent`)
        self._reading = 0
        #: a batch whose upload's bytes follow it, and what has come of them, until all has come
        self._awaiting_payload: tuple[wire.Batch, wire.PayloadReader, OpFailedError | None] | None = None
        self.arrays: dict[int, Any] = {}
        #: each handle's shape and dtype name (its own bytes are what an op that reads it touches)
        self.metas: dict[int, _meta.Meta] = {}
        self.failed: dict[int, OpFailedError] = {}
        #: the buffer each handle keeps alive, and each buffer's bytes and number of handles
        self._buffer_of: dict[int, Hashable] = {}
        self._buffers: dict[Hashable, _Buffer] = {}
        self.used_bytes = 0

    # -- public ------------------------------------------------------------------------------------
    def receive(self, raw: Any) -> list[wire.Frame]:
        """Decode one message from the client, run it, and return the encoded replies.

        All of a session's work goes through here, one message at a time and in the order they
        came (the server calls it from the session's own worker thread), so decoding a large
        message and running a long op never happen on the server's event loop, and the
        session's arrays, memory and errors change in one order only. It never raises for
        anything a client sends: a malformed message is answered with an error.
        """
        try:
            pending, self._awaiting_payload = self._awaiting_payload, None
            if pending is not None:  # this message is (a piece of) the bytes of the batch before it
                return self._take_payload(pending, raw)
            message = wire.decode_client_message(raw, self.limits)
        except wire.WireError as err:
            self._give_back_payload()  # a transfer cut short by a bad piece holds nothing now
            return [_refused_batch(err)]
        if isinstance(message, wire.Hello):
            return [wire.encode(["error", wire.NO_SEQ, "hello", "ValueError", "already greeted"])]
        if message.payload_args is not None:
            return self._await_payload(message)
        return self.run(message)

    def _await_payload(self, batch: wire.Batch) -> list[wire.Frame]:
        """Get ready for the bytes of ``batch``'s upload, which follow it in one or more messages.

        The session's memory is checked for the whole array before any of it is kept: a transfer
        that would pass the limit is read and dropped as it comes, and its op fails with the
        limit's error (the client sent the pieces without waiting, so they come anyway).
        """
        refusal = None
        try:
            self._reserve(batch.payload_bytes, 1, "__upload__")  # its bytes, and the array they make
        except OpFailedError as err:
            refusal = err
        # held for the bytes until the batch's upload op runs (then the array's), or it ends
        self._payload_reserved, self._reserved = self._reserved, 0
        reader = wire.PayloadReader(batch.payload_bytes, "the upload's bytes", keep=refusal is None)
        if reader.done:  # no bytes to wait for
            wire.attach_payload(batch, refusal if refusal is not None else b"")
            return self.run(batch)
        self._awaiting_payload = (batch, reader, refusal)
        return []

    def _take_payload(
        self, pending: tuple[wire.Batch, wire.PayloadReader, OpFailedError | None], raw: Any
    ) -> list[wire.Frame]:
        batch, reader, refusal = pending
        reader.add(raw)
        if not reader.done:
            self._awaiting_payload = pending
            return []
        wire.attach_payload(batch, refusal if refusal is not None else reader.result())
        return self.run(batch)

    def run(self, batch: wire.Batch) -> list[wire.Frame]:
        """Run a batch in order, then release its handles; return the encoded replies."""
        replies = []
        # Floating-point warnings are values (inf, nan) the client sees, not server events to print.
        try:
            with np.errstate(all="ignore"):
                for op in batch.ops:
                    reply = self._run_op(op)
                    if reply is not None:
                        replies.append(reply)
        finally:  # an upload whose op did not take its reservation (it failed before) returns it
            self._give_back_payload()
        # Releasing a handle this session does not hold does nothing: a client may release the
        # outputs of an op whose fate it did not learn (its wait raised an earlier error).
        for handle in batch.free:
            self._release(handle)
        return replies

    def sent(self) -> None:
        """Return what the copies made for the last message's reads held, now that its replies
        have been handed to the connection. Until then the copies count against the session's
        limit and the server's budget: a client that stops reading keeps its reply waiting in
        the server's buffers (when the charge ended with the batch, 16 sessions that each read a
        60 MB view and stopped reading held 1 GB of a server whose budget was 128 MiB)."""
        self.budget.give_back(self._reading)
        self._reading = 0

    def _give_back_payload(self) -> None:
        self.budget.give_back(self._payload_reserved)
        self._payload_reserved = 0

    def close(self) -> None:
        """Free every array of the session (the client disconnected), and return all it held
        or had reserved to the server's budget."""
        self.budget.give_back(self.used_bytes + self._reserved + self._payload_reserved + self._reading)
        self._reserved = self._payload_reserved = self._reading = 0
        self._awaiting_payload = None
        self.arrays.clear()
        self.metas.clear()
        self.failed.clear()
        self._buffer_of.clear()
        self._buffers.clear()
        self.used_bytes = 0

    # -- one op ------------------------------------------------------------------------------------
    def _run_op(self, op: wire.Op) -> wire.Frame | None:
        name = op.name
        try:
            return self._execute(op)
        except _InheritedError as inherited:
            self._fail(op, inherited.cause)
            if op.flags & wire.FLAG_META or name == "__read__":
                return wire.encode(["error", op.seq, name, inherited.cause.kind, inherited.cause.message])
            return None
        except Exception as err:  # the backend's own errors too: reported to the client, never fatal
            if isinstance(err, OpFailedError):
                kind, text = err.kind, err.message
            else:
                kind, text = error_kind(err), f"{type(err).__name__}: {err}"
            if len(text) > MAX_ERROR_TEXT:
                text = f"{text[:MAX_ERROR_TEXT]}... ({len(text) - MAX_ERROR_TEXT} more characters)"
            cause = OpFailedError(kind, f"op {op.seq} ({name}) failed: {text}")
            if not isinstance(err, _BadOutputsError):
                self._fail(op, cause)
            return wire.encode(["error", op.seq, name, cause.kind, cause.message])
        finally:  # what the op reserved and did not keep goes back to the server
            self.budget.give_back(self._reserved)
            self._reserved = 0

    def _execute(self, op: wire.Op) -> wire.Frame | None:
        name = op.name
        if name == "__stats__":
            return wire.encode(["stats", op.seq, {"arrays": len(self.arrays), "bytes": self.used_bytes}])
        if name == "__read__":
            if len(op.args) != 1 or not isinstance(op.args[0], wire.Handle):
                raise OpFailedError("TypeError", "__read__ takes one array handle")
            x = self._array(op.args[0].id)
            self._reserve_read(op.args[0].id)
            dtype, shape, data = self.table.read(x)
            if data.nbytes <= wire.INLINE_BYTES:  # small: in the header, one message
                return wire.encode(["data", op.seq, dtype, list(shape), bytes(data)])
            head = wire.encode(["data", op.seq, dtype, list(shape), wire.PAYLOAD])
            return [head, *wire.payload_messages(data, wire.chunk_bytes(self.limits.max_message_bytes))]
        if name == "__upload__":  # its bytes' reservation is now the op's, for the array it makes
            self._reserved += self._payload_reserved
            self._payload_reserved = 0
        self._check_outputs(op)
        if name not in wire.PROTOCOL_OPS:
            check_arguments(name, op.args, op.kwargs)
        if name == "__upload__" and isinstance(op.args[2], OpFailedError):
            raise op.args[2]  # refused before its bytes came (_await_payload), with the reason why
        self._reserve_before(op)
        if name == "__upload__":
            dtype, shape, data = op.args
            results = [self.table.upload(dtype, tuple(shape), data)]
        else:
            args = [self._resolve(a) for a in op.args]
            kwargs = {k: self._resolve(v) for k, v in op.kwargs.items()}
            result = self.table.call(op.code, args, kwargs)
            if name in _IN_PLACE:
                self._store_in_place(op, args[0], result)
                return None
            results = self._outputs(op, result)
        metas = [self.table.meta(r) for r in results]
        self._check_logical(name, metas)
        if op.expect is not None and tuple(metas) != op.expect:
            raise OpFailedError(
                "RuntimeError",
                f"the backend's result {_fmt(metas)} differs from the Array API "
                f"result the client expected {_fmt(op.expect)}",
            )
        self._store(op, results, metas)
        if op.flags & wire.FLAG_META:
            return wire.encode(["meta", op.seq, [[list(s), d] for s, d in metas]])
        return None

    def _reserve_before(self, op: wire.Op) -> None:
        """Refuse an op before it allocates when its result would pass the session's limit.

        A creation function's size comes from its arguments, worked out here; the client's
        expected result is then only checked against it, so a false one is refused before the
        op runs. An upload's is its bytes'. Other ops are sized by the server itself
        (:meth:`_inferred_bytes`) whether or not the client announced a size, and reserve the
        larger of the two: an announcement is the client's word, and a raw client's false one
        (one element for ``tile(x, (10**5,))``) had the backend make the result before it was
        compared. Views allocate nothing. Every op also reserves the handles of its outputs,
        before it runs.
        """
        name = op.name
        handles = 0 if name in _IN_PLACE else len(op.out)
        expected = None if op.expect is None else sum(_nbytes(m) for m in op.expect)
        if name in CREATION:
            nbytes = self.table.result_bytes(op.name, op.args, op.kwargs)
            assert nbytes is not None
            if expected is not None and expected != nbytes:
                raise OpFailedError(
                    "ValueError",
                    f"the client expected a result of {_fmt(op.expect)} ({expected} bytes), but {op.name} "
                    f"of these arguments makes {nbytes} bytes; nothing was run",
                )
        elif op.name == "__upload__":
            dtype, shape, _ = op.args
            nbytes = _nbytes((tuple(shape), dtype))
        elif _is_view(op) or (name == "reshape" and self._reshapes_in_place(op)):
            nbytes = 0
        elif name in _IN_PLACE_OPERATORS:
            nbytes = self._in_place_bytes(op)
        else:
            inferred = self._inferred_bytes(op)
            nbytes = inferred if expected is None else max(expected, inferred)
        self._reserve(nbytes, handles, op.name)

    def _inferred_bytes(self, op: wire.Op) -> int:
        """The bytes of ``op``'s results as the client works them out (:meth:`_inferred_metas`),
        or where it cannot, at most what ``op`` can make (:func:`_bounds.result_bound`;
        ``repeat``'s counts are read), or 0: so that a raw client, which may announce nothing or
        a false size, cannot have the backend make ``x[:, None] + y[None, :]`` or
        ``tile(x, (10**6, 10**6))`` of any size before the limit is checked. An inference that
        fails leaves the error to the backend."""
        inferred = self._inferred_metas(op)
        if inferred is not None:
            return inferred[1]
        try:
            args = tuple(self._stand_in(a) for a in op.args)
            kwargs = {k: self._stand_in(v) for k, v in op.kwargs.items()}
            if op.name == "repeat" and len(args) == 2 and isinstance(op.args[1], wire.Handle):
                args = (args[0], self._values(op.args[1]))
        except (_InheritedError, OpFailedError):  # (an array of a failed op; the counts' read)
            raise
        except Exception:
            return 0
        return _bounds.result_bound(op.name, args, kwargs) or 0

    def _inferred_metas(self, op: wire.Op) -> tuple[list[_meta.Meta], int] | None:
        """The shapes and dtypes of ``op``'s results as the client works them out
        (:func:`_meta.infer`, on stand-ins of the session's arrays that hold one element each),
        and their bytes (a dtype the wire does not carry, the reference's float16, counts as the
        widest, so that the estimate errs towards refusing); None where it cannot.

        An elementwise op's are kept by what decides them (:meth:`_elementwise_key`), as the
        client keeps its dtypes: worked out on stand-ins each time, they cost about 11 us an op,
        a third of the server's pipelined throughput (``x = x + 1.0``: 47k ops/s, 31k), and a
        look-up costs about 1 us."""
        key = self._elementwise_key(op)
        if key is not None:
            known = _ELEMENTWISE_METAS.get(key)
            if known is not None:
                return known
        args = tuple(self._stand_in(a) for a in op.args)
        kwargs = {k: self._stand_in(v) for k, v in op.kwargs.items()}
        try:
            metas = _meta.infer(op.name, args, kwargs, _is_stand_in)
        except Exception:
            return None
        if metas is None:
            return None
        widest = max(wire.ITEMSIZE.values())
        nbytes = sum(math.prod(shape) * wire.ITEMSIZE.get(dtype, widest) for shape, dtype in metas)
        if key is not None:
            if len(_ELEMENTWISE_METAS) >= _MAX_CACHED:
                _ELEMENTWISE_METAS.clear()
            _ELEMENTWISE_METAS[key] = (metas, nbytes)
        return metas, nbytes

    def _stand_in(self, value: Any) -> Any:
        """``value`` with the session's arrays as NumPy arrays of their shapes and dtypes that
        hold one element each, and dtypes as NumPy's, for :func:`_meta.infer` and the bounds."""
        if isinstance(value, wire.Handle):
            shape, dtype = self._meta_of(value.id)
            return np.broadcast_to(np.zeros((), dtype), shape)
        if isinstance(value, wire.DType):
            return np.dtype(value.name)
        if isinstance(value, (list, tuple)):
            return type(value)(self._stand_in(v) for v in value)
        return value

    def _elementwise_key(self, op: wire.Op) -> tuple[Any, ...] | None:
        """What the shape and dtype of elementwise op ``op``'s result depend on: its code, its
        arrays' shapes and dtypes and its scalars' types (of a Python int, its range:
        :func:`_meta.int_range`); None for any other op or argument."""
        if op.kwargs or op.name not in _meta.ELEMENTWISE_OPS:
            return None
        key: list[Any] = [op.code]
        for value in op.args:
            kind = type(value)
            if kind is wire.Handle:
                key.append(self._meta_of(value.id))
            elif kind is int:
                key.append(_meta.int_range(value))
            elif kind in _SCALAR_TYPES:
                key.append(kind)
            else:
                return None
        return tuple(key)

    def _meta_of(self, handle: int) -> _meta.Meta:
        """The shape and dtype name of one of the session's arrays (see :meth:`_array`)."""
        meta = self.metas.get(handle)
        return meta if meta is not None else self.table.meta(self._array(handle))

    def _in_place_bytes(self, op: wire.Op) -> int:
        """The bytes of what ``target <op>= other`` computes before it writes into the target:
        the result of its base operator (``target + other`` for ``+=``), sized as that is. A
        result whose shape is not the target's is refused before it runs, as NumPy refuses a
        non-broadcastable output: a target of (10**4, 1) and an operand of (1, 10**4) had made
        the whole 800 MB sum, under a 1 MiB limit, before the write into the target failed."""
        base = wire.Op(op.seq, wire.OP_CODES[wire.base_operator(op.name)], (0,), op.args, op.kwargs)
        target = self._meta_of(op.args[0].id)
        inferred = self._inferred_metas(base)
        if inferred is None:  # the arrays' shapes still decide; the backend will say what else is wrong
            operands = [self._meta_of(a.id)[0] for a in op.args if isinstance(a, wire.Handle)]
            try:
                shape = tuple(np.broadcast_shapes(*operands))
            except ValueError:  # (shapes no backend computes with)
                shape = target[0]
            inferred = [(shape, target[1])], _nbytes(target)
        metas, nbytes = inferred
        if metas[0][0] != target[0]:
            raise OpFailedError(
                "ValueError",
                f"{op.name}: non-broadcastable output: the result of {_fmt(metas)} does not fit the "
                f"target's shape {list(target[0])}; nothing was run",
            )
        return nbytes

    def _reshapes_in_place(self, op: wire.Op) -> bool:
        """Whether ``reshape`` returns a view of its operand, which allocates nothing: without
        ``copy=True``, of an operand whose elements lie in row-major order in its memory. Any
        other is sized as a copy of its operand before it runs (a backend may still find a view,
        and the reservation then returns): ``reshape`` of ``broadcast_to(x, (10**4, 10**4))``
        had made 800 MB under a 1 MiB limit as a free view."""
        if op.kwargs.get("copy") or not op.args or not isinstance(op.args[0], wire.Handle):
            return False
        return self.table.is_contiguous(self._array(op.args[0].id))

    def _check_logical(self, name: str, metas: list[tuple[tuple[int, ...], str]]) -> None:
        """Refuse a result whose elements take more bytes than the session may hold, before its
        handle is kept, even where it is a view that holds less (``broadcast_to`` of a 0-d
        array): so that no operand of a later op is larger than the limit, and the ops that make
        at most a few times their operands, checked once they have run (sorting, ``unique_*``,
        ``nonzero``, a ``reshape`` that copies), make at most a few times the limit. A view of
        10**8 elements charged 8 bytes had let ``sort`` and ``cumulative_sum`` make 800 MB under
        a limit of 1 MiB."""
        limit = self.limits.max_session_bytes
        for meta in metas:
            nbytes = _nbytes(meta)
            if nbytes > limit:
                raise OpFailedError(
                    "MemoryError",
                    f"session memory limit exceeded: the result of {name}, {_fmt([meta])}, has {nbytes} "
                    f"bytes of elements and the session may hold {limit} bytes; no array may be larger "
                    "than that, views included (a view's elements are read, copied and sorted as an "
                    "array's); work on smaller pieces, or ask the server's operator for a larger limit "
                    "(ruda serve --max-session-mb)",
                )

    def _values(self, handle: wire.Handle) -> np.ndarray[Any, Any]:
        """The data of a session's array, on the host (``repeat``'s counts, for its bound),
        charged as a read (a view of a 0-d array is made whole)."""
        self._reserve_read(handle.id)
        dtype, shape, data = self.table.read(self._array(handle.id))
        return np.frombuffer(data, np.dtype(dtype)).reshape(shape)

    def _outputs(self, op: wire.Op, result: Any) -> list[Any]:
        if isinstance(result, (tuple, list)):
            results = [self.table.as_array(r) for r in result]
        else:
            results = [self.table.as_array(result)]
        if len(results) != len(op.out):
            raise OpFailedError(
                "RuntimeError", f"{op.name} returned {len(results)} arrays; the client expected {len(op.out)}"
            )
        return results

    def _store(self, op: wire.Op, results: list[Any], metas: list[tuple[tuple[int, ...], str]]) -> None:
        buffers = self._charge(results, len(op.out), op.name)
        for handle, result, meta, buffer in zip(op.out, results, metas, buffers, strict=True):
            self.arrays[handle] = result
            self.metas[handle] = meta
            self._attach(handle, buffer)

    def _store_in_place(self, op: wire.Op, target: Any, result: Any) -> None:
        handle = op.args[0].id
        if op.name == "__setitem__":
            return
        result = self.table.as_array(result)
        if self.table.meta(result) != self.table.meta(target):
            raise OpFailedError(
                "TypeError",
                f"{op.name} would change the array's shape or dtype "
                f"from {_fmt([self.table.meta(target)])} to {_fmt([self.table.meta(result)])}",
            )
        if result is not target:  # a read-only target: the handle now keeps the result's buffer
            (buffer,) = self._charge([result], 0, op.name)  # the same handle: no new one to charge
            self._give_back(self._detach(handle))
            self._attach(handle, buffer)
        self.arrays[handle] = result

    # -- handles -----------------------------------------------------------------------------------
    def _array(self, handle: int) -> Any:
        try:
            return self.arrays[handle]
        except KeyError:
            pass
        if handle in self.failed:
            raise _InheritedError(self.failed[handle])
        raise OpFailedError(
            "KeyError", f"unknown handle {handle}: not created in this session, or already released"
        )

    def _resolve(self, value: Any) -> Any:
        if isinstance(value, wire.Handle):
            return self._array(value.id)
        if isinstance(value, wire.DType):
            return self.table.dtype(value.name)
        if isinstance(value, list):
            return [self._resolve(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self._resolve(v) for v in value)
        if isinstance(value, dict):
            return {k: self._resolve(v) for k, v in value.items()}
        return value

    def _check_outputs(self, op: wire.Op) -> None:
        if op.name in _IN_PLACE:
            if op.out or not op.args or not isinstance(op.args[0], wire.Handle):
                raise _BadOutputsError(
                    "TypeError", f"{op.name} takes the target array's handle first and has no outputs"
                )
            return
        if not op.out:
            raise _BadOutputsError("TypeError", f"{op.name} needs at least one output handle")
        if len(set(op.out)) != len(op.out):
            raise _BadOutputsError("ValueError", f"output handles of {op.name} repeat: {list(op.out)}")
        for handle in op.out:
            if handle in self.arrays or handle in self.failed:
                raise _BadOutputsError("ValueError", f"output handle {handle} is already in use here")
        if len(self.arrays) + len(op.out) > self.limits.max_arrays:
            raise OpFailedError(
                "MemoryError",
                f"session array limit reached: {len(self.arrays)} live arrays, "
                f"limit {self.limits.max_arrays}; release arrays you no longer need",
            )

    def _reserve(self, data: int, handles: int, name: str) -> None:
        """Make sure ``data`` bytes and ``handles`` new handles (:data:`wire.HANDLE_BYTES` each)
        more fit in the session's limit, and that the op running now holds at least as much of
        the server's budget (taking what it lacks); refuse if either is short. Nothing is
        allocated yet: this comes before the backend is asked for memory."""
        nbytes = data + handles * wire.HANDLE_BYTES
        limit = self.limits.max_session_bytes
        if self.used_bytes + self._reading + nbytes > limit:
            raise OpFailedError(
                "MemoryError",
                f"session memory limit exceeded: {name} needs {_needs(data, handles)} and the session "
                f"already holds {self.used_bytes} of its {limit} bytes ({self._holding()}); release "
                "arrays you no longer need, or ask the server's operator for a larger limit "
                "(ruda serve --max-session-mb)",
            )
        lacking = nbytes - self._reserved
        if lacking > 0:
            if not self.budget.take(lacking):
                raise OpFailedError(
                    "MemoryError",
                    f"server memory budget exhausted: {name} needs {_needs(data, handles)}, and the "
                    f"arrays of all sessions on this server together may hold {self.budget.limit} bytes, "
                    f"of which this session holds {self.used_bytes} ({self._holding()}); release arrays "
                    "you no longer need, try again when other sessions have released theirs, or ask the "
                    "server's operator for a larger budget (ruda serve --max-server-mb)",
                )
            self._reserved += lacking

    def _reserve_read(self, handle: int) -> None:
        """Charge the batch, until its replies are sent (:meth:`sent`), for what reading
        ``handle`` makes beyond the memory it is charged for: a view larger than its buffer
        (``broadcast_to`` of a 0-d array) is made whole to be sent. Before, a session under a
        1 MiB limit made the server allocate 248 MB with one read of such a view, and as much
        again with each read of it in the same batch."""
        extra = _nbytes(self.metas[handle]) - self._buffers[self._buffer_of[handle]].nbytes
        if extra > 0:
            self._reserve(extra, 0, "__read__ of a view larger than its memory")
            self._reserved -= extra
            self._reading += extra

    def _holding(self) -> str:
        """What the session's charge is made of, for a refusal."""
        live, each = len(self.arrays), wire.HANDLE_BYTES
        return (
            f"{live * each} of them for its live arrays' handles: {live} x {each} bytes, besides their data"
        )

    def _fail(self, op: wire.Op, cause: OpFailedError) -> None:
        """Mark the op's results failed, so that ops using them report its error. The target of
        a failed in-place op or setitem keeps its value, as the reference's does when the
        operation raises: a program that catches the error goes on with its array."""
        for handle in op.out:
            if handle in self.arrays:
                self._drop(handle)
            if len(self.failed) < self.limits.max_arrays:
                self.failed[handle] = cause

    def _release(self, handle: int) -> None:
        if handle in self.arrays:
            self._drop(handle)
        else:
            self.failed.pop(handle, None)

    # -- memory ------------------------------------------------------------------------------------
    def _charge(self, results: list[Any], handles: int, name: str) -> list[Hashable]:
        """The buffers ``results`` keep alive; refuse them if the buffers the session does not
        hold yet and ``handles`` new handles would take it past its limit (the results are then
        dropped, never stored)."""
        buffers, new = [], {}
        for result in results:
            buffer, nbytes = self.table.memory(result)
            buffers.append(buffer)
            if buffer not in self._buffers:
                new[buffer] = nbytes
        total = sum(new.values())
        self._reserve(total, handles, name)
        charged = total + handles * wire.HANDLE_BYTES
        self._reserved -= charged  # the reservation becomes the charge of the new buffers and handles
        self.used_bytes += charged
        for buffer, nbytes in new.items():
            self._buffers[buffer] = _Buffer(nbytes)
        return buffers

    def _attach(self, handle: int, buffer: Hashable) -> None:
        self._buffer_of[handle] = buffer
        self._buffers[buffer].handles += 1

    def _detach(self, handle: int) -> int:
        """Take ``handle`` off its buffer; the bytes that frees (the buffer's, if it was the last)."""
        buffer = self._buffer_of.pop(handle)
        held = self._buffers[buffer]
        held.handles -= 1
        if held.handles:
            return 0
        del self._buffers[buffer]  # the last handle on it: the buffer is freed with the array
        return held.nbytes

    def _drop(self, handle: int) -> None:
        del self.arrays[handle]
        del self.metas[handle]
        self._give_back(self._detach(handle) + wire.HANDLE_BYTES)

    def _give_back(self, nbytes: int) -> None:
        """Uncharge ``nbytes`` the session no longer holds, and return them to the server."""
        self.used_bytes -= nbytes
        self.budget.give_back(nbytes)


def _refused_batch(err: wire.WireError) -> bytes:
    """The error for a message that was refused whole: the client stops waiting for its ops."""
    text = f"the server refused a batch, none of its operations ran: {err}"
    return wire.encode(["error", wire.NO_SEQ, "batch", "ValueError", text])


class _Buffer:
    """Memory the session's arrays keep alive: its bytes and how many handles keep it."""

    __slots__ = ("handles", "nbytes")

    def __init__(self, nbytes: int) -> None:
        self.nbytes = nbytes
        self.handles = 0


class _BadOutputsError(OpFailedError):
    """The op's output handles are unusable; the arrays they name are left alone."""


class _InheritedError(Exception):
    """An op used an array whose own op had failed."""

    def __init__(self, cause: OpFailedError) -> None:
        super().__init__(cause.message)
        self.cause = cause


def _is_stand_in(value: Any) -> bool:
    return isinstance(value, np.ndarray)


def _is_view(op: wire.Op) -> bool:
    """Whether ``op`` returns a view of its input: its result is charged for the buffer it keeps
    alive once it exists, as its expected shape says nothing of the memory it needs (``reshape``
    is one only where its operand allows: :meth:`Session._reshapes_in_place`)."""
    if op.name == "__getitem__":
        return len(op.args) == 2 and is_basic_key(op.args[1])
    return op.name in VIEWS


def _needs(data: int, handles: int) -> str:
    """What an op needs, for a refusal: its data's bytes and its new handles'."""
    if not handles:
        return f"{data} bytes"
    each = wire.HANDLE_BYTES
    return f"{data + handles * each} bytes ({data} of data and {handles} x {each} for its arrays' handles)"


def _nbytes(meta: tuple[tuple[int, ...], str]) -> int:
    shape, dtype = meta
    n = wire.ITEMSIZE[dtype]
    for side in shape:
        n *= side
    return n


def _fmt(metas: Any) -> str:
    return ", ".join(f"{d}{list(s)}" for s, d in metas)
