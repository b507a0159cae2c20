"""The remote wire format: every message between client and server, checked on the way in.

Each WebSocket binary message (the framing is the ``websockets`` library's) is a 4-byte
big-endian length and a msgpack array of exactly that length whose first item names the
message kind. The two messages that carry array data announce it with the ``PAYLOAD``
marker, and the raw bytes follow as the next WebSocket messages, on their own, so bulk data
is never copied through msgpack or joined to a header: one message, or for an array larger
than :func:`chunk_bytes` several, each of at most that size, in order, until the announced
number of bytes (shape times item size) has come. So an array of any size fits under the
receiver's message limit, and neither side holds more than one piece beyond the array::

    server -> client   ["challenge", version, server nonce]
    client -> server   ["hello", version, client nonce, address, client proof or nil]
    server -> client   ["welcome", version, server proof or nil, info]
                       or ["error", -1, "hello", kind, message]
        (proofs: :mod:`ruda_remote._auth`, HMACs keyed by the token over both nonces and the
        server's address as the client dialled it; until the welcome the server accepts
        messages of a few KiB only, and the client sends nothing after its hello until it has
        checked the server's proof. The challenge keeps its shape in every version, so that a
        client reads the server's version from it: either side that reads another version
        stops there, naming both, and sends nothing more.)
    client -> server   ["batch", [op, ...], [released handle, ...]]
        op = [seq, code, [out handle, ...], [arg, ...], {kwarg: value}, flags, expect]
    server -> client   ["meta", seq, [[shape, dtype], ...]]  when the op asked for it (FLAG_META)
                       ["data", seq, dtype, shape, bytes | PAYLOAD]: ``__read__``
                       ["stats", seq, {"arrays": n, "bytes": n}]
                       ["error", seq, op name, kind, message]
                       ["error", -1, ..., kind, message]: a whole message was refused (none of
                       its ops ran); the client fails the call it is waiting for

``code`` indexes :data:`OPS`, a fixed table built from the names of the Array API
specification: the server looks a code up in that table and nothing else, so a client
can name only operations the table holds (no pickle, no eval, no attribute lookup by a
received name). Argument values are msgpack scalars, strings, lists and maps plus the
extension types below (array handles, slices, ``...``, dtypes, complex numbers, tuples).
Array bytes travel only in ``__upload__`` (as a msgpack ``bin`` for small arrays, or as the
payload message) and in ``data`` (always the payload message); their length is checked
against shape and dtype.

This module imports no backend, so it can be fuzzed on its own.
"""

from __future__ import annotations

import hashlib
import math
import struct
import threading
from dataclasses import dataclass
from typing import Any, overload

import msgpack
import numpy as np
from ruda import spec

from ruda_remote._auth import MAX_ADDRESS_CHARS, NONCE_BYTES, PROOF_BYTES

#: 3: an array's bytes may follow in several messages (2: always one; 2 and 3: mutual
#: authentication bound to both nonces and the dialled address; 1: the client's proof covered
#: the server's nonce only)
PROTOCOL_VERSION = 3

#: extension type codes of argument values
EXT_HANDLE, EXT_SLICE, EXT_ELLIPSIS, EXT_DTYPE, EXT_COMPLEX, EXT_TUPLE, EXT_PAYLOAD = 1, 2, 3, 4, 5, 6, 7

#: op flag: the server answers with the result's shapes and dtypes (or the error) at once
FLAG_META = 1

#: bytes per element of each dtype the wire carries
ITEMSIZE: dict[str, int] = {
    "bool": 1,
    "int8": 1,
    "int16": 2,
    "int32": 4,
    "int64": 8,
    "uint8": 1,
    "uint16": 2,
    "uint32": 4,
    "uint64": 8,
    "float32": 4,
    "float64": 8,
    "complex64": 8,
    "complex128": 16,
}

#: arrays up to this size travel inside the header message (one message instead of two)
INLINE_BYTES = 64 * 1024
#: largest piece of an array's bytes sent as one message (less when the receiver's message
#: limit is lower): what either side holds of a transfer besides the array itself
CHUNK_BYTES = 64 * 2**20
#: a header longer than this is decoded counting its containers (a shorter one cannot make
#: more than a few MiB of Python objects, whatever it holds)
COUNTED_HEADER_BYTES = 64 * 1024
#: lists, maps, tuples and slices one message may hold: an empty msgpack array is one byte and
#: becomes a Python list of 56 bytes, so this bounds what decoding a header can allocate
MAX_CONTAINERS = 65_536

MAX_DEPTH = 32  # nesting of argument values (lists, maps, tuples)
MAX_DIMS = 64
MAX_OUTPUTS = 4096
#: the seq of an error about a whole message: none of its ops ran, so none will be answered
NO_SEQ = -1
MAX_HANDLE = 2**63 - 1
#: full sessions the server's memory budget holds when none is given (Limits.server_bytes)
SERVER_SESSIONS = 4
#: server memory each live array is charged besides its data, against the session's limit and
#: the server's budget: its array object, its shape and strides, and its entries in the
#: session's tables, which cost this much even for a 0-d or empty array. Measured by creating
#: 0-d and empty arrays through a server and dividing the growth by the live handles: ruda.host
#: 0.5 KB each (RSS and tracemalloc; 1.5 KB with 64 dimensions), ruda_torch 1.0 KB (RSS),
#: ruda_wgpu on lavapipe 2.8 KB (RSS, its driver's buffer objects included); the largest,
#: rounded up to a page.
HANDLE_BYTES = 4096


@dataclass(frozen=True)
class Limits:
    """What a server allows each message, each session and each client address.

    ``max_message_bytes``: largest WebSocket message accepted (bigger ones close the
    connection with code 1009; the client refuses to send them in the first place). Arrays
    larger than this travel in several messages.
    ``max_header_bytes``: largest message header (the msgpack part: operations and their
    arguments, not an array's raw bytes; ``max_message_bytes`` if that is lower); a longer one
    is refused before it is decoded.
    ``max_session_bytes``: memory all of a session's live arrays may hold on the server, each
    array counting :data:`HANDLE_BYTES` besides its data (so that a million empty arrays are
    not free).
    ``max_arrays``: live arrays per session.
    ``max_sessions``: connections the server holds at once (handshakes included; at the cap
    the oldest handshake that has not said hello makes room for a new connection);
    ``max_sessions_per_address``: of those, from one client IP address. A connection past
    either is refused with an error that names the limit.
    ``max_server_bytes``: memory the live arrays of all sessions together may hold on the
    server (None: 4 times ``max_session_bytes``, see :attr:`server_bytes`), so that many
    sessions each within their own limit cannot together exhaust the machine. An op that would
    pass it is refused like one past the session's limit; a session may then hold less than
    ``max_session_bytes``.
    """

    max_message_bytes: int = 256 * 2**20
    max_session_bytes: int = 4 * 2**30
    max_arrays: int = 1_000_000
    # (fields added later come after these, so that positional arguments keep their meaning)
    max_header_bytes: int = 16 * 2**20
    max_sessions: int = 256
    max_sessions_per_address: int = 64
    max_server_bytes: int | None = None

    def __post_init__(self) -> None:
        for name in (
            "max_message_bytes",
            "max_session_bytes",
            "max_arrays",
            "max_header_bytes",
            "max_sessions",
            "max_sessions_per_address",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"Limits.{name} must be a positive integer, got {value!r}")
        server = self.max_server_bytes
        if server is not None and (not isinstance(server, int) or isinstance(server, bool) or server <= 0):
            raise ValueError(f"Limits.max_server_bytes must be a positive integer or None, got {server!r}")
        if self.max_message_bytes < 4096:
            raise ValueError(f"Limits.max_message_bytes must be at least 4096, got {self.max_message_bytes}")
        if self.max_header_bytes < 4096:
            raise ValueError(f"Limits.max_header_bytes must be at least 4096, got {self.max_header_bytes}")

    @property
    def server_bytes(self) -> int:
        """Memory all sessions' arrays may hold together: ``max_server_bytes``, or by default
        4 times ``max_session_bytes`` (16 GiB with the defaults), so that raising the session
        limit raises the server's with it."""
        if self.max_server_bytes is not None:
            return self.max_server_bytes
        return SERVER_SESSIONS * self.max_session_bytes

    @property
    def header_bytes(self) -> int:
        """The largest header accepted: ``max_header_bytes``, or the message limit if lower."""
        return min(self.max_header_bytes, self.max_message_bytes)


def chunk_bytes(max_message_bytes: int) -> int:
    """The largest piece of an array's bytes sent as one message to a receiver whose message
    limit is ``max_message_bytes``."""
    return min(CHUNK_BYTES, max_message_bytes)


def payload_messages(payload: bytes | memoryview, chunk: int) -> list[bytes | memoryview]:
    """An array's bytes as the messages that carry them: one, or pieces of ``chunk`` bytes
    (views of ``payload``, not copies)."""
    view = memoryview(payload).cast("B")
    if view.nbytes <= chunk:
        return [payload]
    return [view[start : start + chunk] for start in range(0, view.nbytes, chunk)]


class WireError(ValueError):
    """A message that does not follow the wire format; the text says what was wrong."""


@dataclass(frozen=True, slots=True)
class Handle:
    """A reference to an array that lives in the server's session."""

    id: int


@dataclass(frozen=True, slots=True)
class DType:
    """A dtype by its Array API name."""

    name: str


class _Payload:
    """Marks where the payload (raw array bytes, the next message) belongs."""

    def __repr__(self) -> str:
        return "PAYLOAD"


PAYLOAD = _Payload()

Frame = bytes | list[bytes | memoryview]
"""An encoded message (bytes), or a header and its payload: two messages, sent in order."""


# -- the table of operations ---------------------------------------------------------------------

#: operations of the protocol itself
PROTOCOL_OPS: tuple[str, ...] = ("__read__", "__upload__", "__stats__")

#: functions a client answers from dtypes and shapes alone; they never travel
LOCAL_FUNCTIONS = frozenset(
    {"broadcast_shapes", "can_cast", "finfo", "from_dlpack", "iinfo", "isdtype", "result_type"}
)

BINARY_DUNDERS: tuple[str, ...] = (
    "__add__",
    "__sub__",
    "__mul__",
    "__truediv__",
    "__floordiv__",
    "__mod__",
    "__pow__",
    "__matmul__",
    "__and__",
    "__or__",
    "__xor__",
    "__lshift__",
    "__rshift__",
)
COMPARISON_DUNDERS: tuple[str, ...] = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")
UNARY_DUNDERS: tuple[str, ...] = ("__abs__", "__neg__", "__pos__", "__invert__")
REFLECTED_DUNDERS: tuple[str, ...] = tuple("__r" + n[2:] for n in BINARY_DUNDERS)
INPLACE_DUNDERS: tuple[str, ...] = tuple("__i" + n[2:] for n in BINARY_DUNDERS)
_DERIVED_DUNDERS = frozenset(REFLECTED_DUNDERS + INPLACE_DUNDERS)


def base_operator(name: str) -> str:
    """The operator that a reflected or in-place one is a form of (``__radd__`` and ``__iadd__``:
    ``__add__``); any other name as it is."""
    return "__" + name[3:] if name in _DERIVED_DUNDERS else name


#: indexing, and the attributes that return arrays
ACCESS_OPS: tuple[str, ...] = ("__getitem__", "__setitem__", "mT", "T")
#: operations on the array object: indexing, attributes that return arrays, operators
ARRAY_OPS: tuple[str, ...] = (
    ACCESS_OPS + BINARY_DUNDERS + COMPARISON_DUNDERS + UNARY_DUNDERS + REFLECTED_DUNDERS + INPLACE_DUNDERS
)

#: every operation a client can ask for; its index in this tuple is its code on the wire
OPS: tuple[str, ...] = (
    PROTOCOL_OPS
    + tuple(name for name in spec.FUNCTIONS if name not in LOCAL_FUNCTIONS)
    + tuple(f"linalg.{name}" for name in spec.LINALG)
    + tuple(f"fft.{name}" for name in spec.FFT)
    + ARRAY_OPS
)
OP_CODES: dict[str, int] = {name: code for code, name in enumerate(OPS)}
#: fingerprint of the table: client and server must number operations alike
OPS_DIGEST: str = hashlib.sha256("\n".join(OPS).encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Op:
    """One operation of a batch: run ``OPS[code]`` on ``args``, store results as ``out``."""

    seq: int
    code: int
    out: tuple[int, ...]
    args: list[Any]
    kwargs: dict[str, Any]
    flags: int = 0
    expect: tuple[tuple[tuple[int, ...], str], ...] | None = None

    @property
    def name(self) -> str:
        return OPS[self.code]


@dataclass(frozen=True, slots=True)
class Hello:
    """A client's hello. Of another protocol version, only ``version`` is read (the rest is
    left empty): the server refuses it naming both versions."""

    version: int
    nonce: bytes
    #: the server's address as the client dialled it (``_auth.dialled_address``)
    address: str
    proof: bytes | None


@dataclass(slots=True)
class Batch:
    ops: list[Op]
    free: list[int]
    #: the args of the op that named the payload, until :func:`attach_payload` fills them in
    payload_args: list[Any] | None = None
    payload_bytes: int = 0


# -- encoding ------------------------------------------------------------------------------------


def _default(obj: Any) -> msgpack.ExtType:
    if isinstance(obj, Handle):
        return msgpack.ExtType(EXT_HANDLE, struct.pack(">q", obj.id))
    if isinstance(obj, tuple):
        return msgpack.ExtType(EXT_TUPLE, _pack(list(obj)))
    if isinstance(obj, slice):
        return msgpack.ExtType(EXT_SLICE, _pack([obj.start, obj.stop, obj.step]))
    if obj is Ellipsis:
        return msgpack.ExtType(EXT_ELLIPSIS, b"")
    if isinstance(obj, DType):
        return msgpack.ExtType(EXT_DTYPE, obj.name.encode())
    if isinstance(obj, complex):
        return msgpack.ExtType(EXT_COMPLEX, struct.pack("<dd", obj.real, obj.imag))
    if obj is PAYLOAD:
        return msgpack.ExtType(EXT_PAYLOAD, b"")
    if isinstance(obj, np.generic) and obj.dtype.kind in "biufc":
        return obj.item()  # a NumPy scalar travels as the Python scalar the standard's rules are for
    raise TypeError(f"a {type(obj).__qualname__} cannot be sent to a remote server")


def _pack(obj: Any) -> bytes:
    packed: bytes = msgpack.packb(obj, default=_default, strict_types=True, use_bin_type=True)
    return packed  # (through a typed name: msgpack has no type information)


@overload
def encode(message: list[Any], payload: None = None) -> bytes: ...
@overload
def encode(message: list[Any], payload: bytes | memoryview) -> list[bytes | memoryview]: ...
def encode(message: list[Any], payload: bytes | memoryview | None = None) -> Frame:
    """Encode one message (a list whose first item is its kind), with raw bytes after it."""
    header = _pack(message)
    head = struct.pack(">I", len(header)) + header
    if payload is None:
        return head
    return [head, payload]


def messages(frame: Frame) -> list[bytes | memoryview]:
    """The WebSocket messages of an encoded frame, in the order they are sent."""
    return [frame] if isinstance(frame, bytes) else frame


def pack_op(op: list[Any]) -> bytes:
    """One op ``[seq, code, out, args, kwargs, flags, expect]`` in msgpack, to be queued: an
    argument that cannot be sent raises here, at the call, not when the queue is sent."""
    try:
        return _pack(op)
    except (TypeError, OverflowError, ValueError) as err:
        raise TypeError(f"cannot send the arguments of {OPS[op[1]]} to a remote server: {err}") from None


def encode_batch(
    packed_ops: list[bytes], free: list[int], payload: bytes | memoryview | None = None
) -> Frame:
    """A ``batch`` message of ops packed with :func:`pack_op`."""
    packer = msgpack.Packer(use_bin_type=True)
    header = b"".join(
        [
            packer.pack_array_header(3),
            packer.pack("batch"),
            packer.pack_array_header(len(packed_ops)),
            *packed_ops,
            packer.pack(free),
        ]
    )
    head = struct.pack(">I", len(header)) + header
    return head if payload is None else [head, payload]


# -- decoding ------------------------------------------------------------------------------------

_local = threading.local()


def _ext_hook(code: int, data: bytes) -> Any:
    if code == EXT_HANDLE:
        if len(data) != 8:
            raise WireError(f"a handle is 8 bytes, got {len(data)}")
        return Handle(struct.unpack(">q", data)[0])
    if code in (EXT_ELLIPSIS, EXT_PAYLOAD):
        if data:
            raise WireError("the ellipsis and payload extensions carry no bytes")
        return Ellipsis if code == EXT_ELLIPSIS else PAYLOAD
    if code == EXT_DTYPE:
        name = data.decode("ascii", errors="replace")
        if name not in ITEMSIZE:
            raise WireError(f"unknown dtype {name!r}: expected one of {', '.join(ITEMSIZE)}")
        return DType(name)
    if code == EXT_COMPLEX:
        if len(data) != 16:
            raise WireError(f"a complex number is 16 bytes, got {len(data)}")
        real, imag = struct.unpack("<dd", data)
        return complex(real, imag)
    if code in (EXT_TUPLE, EXT_SLICE):
        depth = getattr(_local, "depth", 0)
        if depth >= MAX_DEPTH:
            raise WireError(f"values nested more than {MAX_DEPTH} deep")
        _local.depth = depth + 1
        try:
            inner = _unpack(data)
        finally:
            _local.depth = depth
        _count(inner)
        if not isinstance(inner, list):
            raise WireError("a tuple or slice extension must hold a msgpack array")
        if code == EXT_TUPLE:
            return tuple(inner)
        if len(inner) != 3 or not all(v is None or _is_int(v) for v in inner):
            raise WireError("a slice is [start, stop, step] of integers or nil")
        return slice(*inner)
    raise WireError(f"unknown extension type {code}")


def _count(container: Any) -> Any:
    """Count one decoded container against the message's budget (when it has one)."""
    budget: int | None = getattr(_local, "budget", None)
    if budget is not None:
        if budget <= 0:
            raise WireError(
                f"a message may hold at most {MAX_CONTAINERS} lists, maps, tuples and slices; split the batch"
            )
        _local.budget = budget - 1
    return container


def _unpack(data: bytes, max_len: int = 2**31 - 1) -> Any:
    """Decode msgpack with every length bounded by ``max_len`` and by the data itself (an item
    takes at least a byte, so no header can announce more items than the data could hold), and
    its containers counted while a budget is set (:func:`_decode_frame`). msgpack's own stack
    bounds the nesting of lists and maps within one value, and :data:`MAX_DEPTH` that of
    tuples and slices."""
    bound = min(max_len, len(data))
    hooks: dict[str, Any] = {}
    if getattr(_local, "budget", None) is not None:
        hooks = {"list_hook": _count, "object_hook": _count}
    return msgpack.unpackb(
        data,
        **hooks,
        ext_hook=_ext_hook,
        raw=False,
        strict_map_key=True,
        use_list=True,
        max_bin_len=bound,
        max_str_len=min(bound, 2**20),
        max_array_len=bound,
        max_map_len=bound,
        max_ext_len=bound,
    )


def _decode_frame(data: Any, max_len: int) -> list[Any]:
    """Decode one header: refused unread past ``max_len`` bytes; past
    :data:`COUNTED_HEADER_BYTES`, decoded counting its containers (:data:`MAX_CONTAINERS`),
    so that what a header costs the decoder is bounded by its size, whatever it holds."""
    if not isinstance(data, bytes):
        raise WireError(f"expected a binary message, got {type(data).__name__}")
    if len(data) < 4:
        raise WireError(f"a message starts with a 4-byte header length; got {len(data)} bytes")
    size = int.from_bytes(data[:4], "big")
    if size != len(data) - 4:
        raise WireError(f"the header length {size} does not match the message ({len(data)} bytes)")
    if size > max_len:
        raise WireError(
            f"a message header of {size} bytes is longer than the limit of {max_len} bytes (an array's "
            "bytes travel after the header, not in it); send fewer operations at a time"
        )
    _local.budget = MAX_CONTAINERS if size > COUNTED_HEADER_BYTES else None
    try:
        message = _unpack(data[4:], max_len)
    except WireError:
        raise
    except Exception as err:  # msgpack reports bad input with several exception types
        raise WireError(f"malformed message: {type(err).__name__}: {err}") from None
    finally:
        _local.budget = None
    if not isinstance(message, list) or not message or not isinstance(message[0], str):
        raise WireError("a message is a msgpack array whose first item is its kind (a string)")
    return message


def decode_client_message(data: Any, limits: Limits) -> Hello | Batch:
    """Decode and check a message sent by a client; raise :class:`WireError` if it is malformed."""
    message = _decode_frame(data, limits.header_bytes)
    kind = message[0]
    if kind == "hello":
        return _decode_hello(message)
    if kind == "batch":
        _expect_len(message, 3, "batch")
        ops, free = message[1], message[2]
        if not isinstance(ops, list) or not isinstance(free, list):
            raise WireError('batch: expected ["batch", [op, ...], [handle, ...]]')
        slot: list[Any] = []
        batch = Batch([_decode_op(op, slot) for op in ops], [_handle_id(h, "released handle") for h in free])
        if slot:
            batch.payload_args, batch.payload_bytes = slot
        return batch
    raise WireError(f"unknown message kind {kind!r}: a client sends 'hello' or 'batch'")


def _decode_hello(message: list[Any]) -> Hello:
    if len(message) < 2 or not _is_int(message[1]):
        raise WireError("hello: the protocol version must be an integer")
    version = message[1]
    if version != PROTOCOL_VERSION:  # another version's hello reads differently: only refuse it
        return Hello(version, b"", "", None)
    _expect_len(message, 5, "hello")
    nonce, address, proof = message[2:]
    if not isinstance(nonce, bytes) or len(nonce) != NONCE_BYTES:
        raise WireError(f"hello: the client nonce must be {NONCE_BYTES} bytes")
    if not isinstance(address, str) or not 0 < len(address) <= MAX_ADDRESS_CHARS:
        raise WireError(f"hello: the address must be a string of 1 to {MAX_ADDRESS_CHARS} characters")
    if proof is not None and (not isinstance(proof, bytes) or len(proof) != PROOF_BYTES):
        raise WireError(f"hello: the proof must be {PROOF_BYTES} bytes or nil")
    return Hello(version, nonce, address, proof)


def _decode_op(raw: Any, payload: list[Any]) -> Op:
    if not isinstance(raw, list) or len(raw) != 7:
        raise WireError("an op is [seq, code, out, args, kwargs, flags, expect]")
    seq, code, out, args, kwargs, flags, expect = raw
    if not _is_int(seq) or seq < 0:
        raise WireError(f"op seq must be a non-negative integer, got {seq!r}")
    if not _is_int(code) or not 0 <= code < len(OPS):
        raise WireError(f"op {seq}: unknown operation code {code!r} (the table has {len(OPS)} operations)")
    name = OPS[code]
    if not isinstance(out, list) or len(out) > MAX_OUTPUTS:
        raise WireError(f"op {seq} ({name}): out must be a list of at most {MAX_OUTPUTS} handles")
    if not isinstance(args, list):
        raise WireError(f"op {seq} ({name}): args must be a list")
    if not isinstance(kwargs, dict):
        raise WireError(f"op {seq} ({name}): kwargs must be a map")
    if "device" in kwargs:
        raise WireError(f"op {seq} ({name}): the server chooses the device; do not send 'device'")
    if not _is_int(flags) or flags < 0:
        raise WireError(f"op {seq} ({name}): flags must be a non-negative integer")
    for handle in out:
        if type(handle) is not int or not 1 <= handle <= MAX_HANDLE:
            raise WireError(
                f"op {seq} ({name}) output must be an integer handle in 1..2**63-1, got {handle!r}"
            )
    out_ids = tuple(out)
    if name == "__upload__":
        _check_upload(seq, args, payload)
    else:
        for value in args:
            _check_value(value, 0, seq, name)
    for key, value in kwargs.items():
        if not isinstance(key, str):
            raise WireError(f"op {seq} ({name}): keyword names must be strings")
        _check_value(value, 0, seq, name)
    return Op(seq, code, out_ids, args, kwargs, flags, _decode_expect(expect, len(out_ids), seq, name))


def _decode_expect(
    expect: Any, n_out: int, seq: int, name: str
) -> tuple[tuple[tuple[int, ...], str], ...] | None:
    if expect is None:
        return None
    if not isinstance(expect, list) or len(expect) != n_out:
        raise WireError(f"op {seq} ({name}): expect must list one [shape, dtype] per output")
    return tuple(_decode_meta(m, f"op {seq} ({name}) expect") for m in expect)


def _decode_meta(meta: Any, where: str) -> tuple[tuple[int, ...], str]:
    if type(meta) is not list or len(meta) != 2:
        raise WireError(f"{where}: expected [shape, dtype]")
    shape, dtype = meta
    if type(shape) is not list or len(shape) > MAX_DIMS or not all(type(n) is int and n >= 0 for n in shape):
        raise WireError(f"{where}: a shape is a list of at most {MAX_DIMS} non-negative integers")
    if dtype not in ITEMSIZE:
        raise WireError(f"{where}: unknown dtype {dtype!r}: expected one of {', '.join(ITEMSIZE)}")
    return tuple(shape), dtype


def _check_upload(seq: int, args: list[Any], payload: list[Any]) -> None:
    where = f"op {seq} (__upload__)"
    if len(args) != 3:
        raise WireError(f"{where}: expected [dtype, shape, bytes or PAYLOAD]")
    dtype, shape, data = _dtype_name(args[0], where), _shape(args[1], where), args[2]
    if data is PAYLOAD:
        if payload:
            raise WireError(f"{where}: a second op names the payload; a message has at most one")
        payload[:] = [args, math.prod(shape) * ITEMSIZE[dtype]]
        return
    if not isinstance(data, bytes):
        raise WireError(f"{where}: the array's bytes must be bytes or PAYLOAD")
    check_payload(where, dtype, shape, data)


class PayloadReader:
    """An array's bytes as they come after their header, in one message or in pieces.

    ``nbytes``: the bytes announced (shape times item size, worked out by the receiver). A first
    message that holds them all is kept as it came (no copy); pieces are copied into one buffer
    of ``nbytes``, made when the first piece comes, so that the receiver holds the array and one
    piece at a time. With ``keep=False`` the bytes are counted and dropped (a transfer refused
    after it was sent, whose pieces are still on their way).
    """

    def __init__(self, nbytes: int, where: str, *, keep: bool = True) -> None:
        self.nbytes = nbytes
        self.received = 0
        self._where = where
        self._keep = keep
        self._whole: bytes | None = None
        self._buffer: np.ndarray[Any, np.dtype[np.uint8]] | None = None

    @property
    def done(self) -> bool:
        return self.received == self.nbytes

    def add(self, data: Any) -> None:
        """Take the next message of the bytes; raise WireError if it is not one."""
        if not isinstance(data, bytes):
            raise WireError(
                f"{self._where}: expected the array's bytes as a binary message, got {type(data).__name__}"
            )
        if not data or self.received + len(data) > self.nbytes:
            raise WireError(
                f"{self._where}: a piece of {len(data)} bytes after {self.received} does not fit the "
                f"{self.nbytes} bytes announced"
            )
        if self._keep:
            if self.received == 0 and len(data) == self.nbytes:
                self._whole = data
            else:
                if self._buffer is None:
                    self._buffer = np.empty(self.nbytes, dtype=np.uint8)
                self._buffer[self.received : self.received + len(data)] = np.frombuffer(data, dtype=np.uint8)
        self.received += len(data)

    def result(self) -> bytes | np.ndarray[Any, np.dtype[np.uint8]]:
        """The bytes once all have come: the message itself (read-only), or the buffer the pieces
        were copied into (writable, and no one else's)."""
        if not self._keep:
            raise WireError(f"{self._where}: the bytes were refused, and dropped as they came")
        if not self.done:
            raise WireError(f"{self._where}: {self.received} of {self.nbytes} bytes have come")
        if self._whole is not None:
            return self._whole
        assert self._buffer is not None
        return self._buffer


def attach_payload(batch: Batch, data: Any) -> None:
    """Give the batch's ``__upload__`` op its bytes (:meth:`PayloadReader.result`, or anything
    else the server runs the op with)."""
    if batch.payload_args is None:
        raise WireError("this batch announced no payload")
    batch.payload_args[2] = data
    batch.payload_args = None


def check_payload(where: str, dtype: str, shape: tuple[int, ...], data: bytes | memoryview) -> None:
    """Raise WireError unless ``data`` holds exactly an array of ``shape`` and ``dtype``."""
    expected = math.prod(shape) * ITEMSIZE[dtype]
    if memoryview(data).nbytes != expected:
        raise WireError(
            f"{where}: payload of {memoryview(data).nbytes} bytes does not match shape {shape} and dtype "
            f"{dtype} ({expected} bytes)"
        )


_LEAVES = frozenset({bool, int, float, str, complex, Handle, DType, slice})


def _check_value(value: Any, depth: int, seq: int, name: str) -> None:
    if depth > MAX_DEPTH:
        raise WireError(f"op {seq} ({name}): argument values nested more than {MAX_DEPTH} deep")
    if type(value) in _LEAVES or value is None or value is Ellipsis:
        return  # (a slice's parts were checked when it was decoded)
    if isinstance(value, (list, tuple)):
        for item in value:
            _check_value(item, depth + 1, seq, name)
        return
    if isinstance(value, dict):
        for item in value.values():
            _check_value(item, depth + 1, seq, name)
        return
    raise WireError(f"op {seq} ({name}): a {type(value).__name__} is not a valid argument value")


def _handle_id(value: Any, what: str) -> int:
    if not _is_int(value) or not 1 <= value <= MAX_HANDLE:
        raise WireError(f"{what} must be an integer handle in 1..2**63-1, got {value!r}")
    return int(value)


def _shape(value: Any, where: str) -> tuple[int, ...]:
    if not isinstance(value, list) or len(value) > MAX_DIMS or not all(_is_int(n) and n >= 0 for n in value):
        raise WireError(f"{where}: a shape is a list of at most {MAX_DIMS} non-negative integers")
    return tuple(value)


def _dtype_name(value: Any, where: str) -> str:
    if not isinstance(value, str) or value not in ITEMSIZE:
        raise WireError(f"{where}: unknown dtype {value!r}: expected one of {', '.join(ITEMSIZE)}")
    return value


def _expect_len(message: list[Any], n: int, kind: str) -> None:
    if len(message) != n:
        raise WireError(f"a {kind!r} message has {n} items, got {len(message)}")


def _is_int(value: Any) -> bool:
    return type(value) is int  # msgpack gives plain ints; bool is not one


# -- messages from the server, decoded by the client -----------------------------------------------


def decode_server_message(data: Any) -> list[Any]:
    """Decode and check a message sent by a server; raise :class:`WireError` if it is malformed.

    Returns the message as a list with shapes as tuples: ``["meta", seq, [(shape, dtype), ...]]``,
    ``["data", seq, dtype, shape, bytes | PAYLOAD]`` (PAYLOAD: the next message; check it with
    :func:`check_payload`), ``["error", seq, op, kind, text]``, ...
    """
    message = _decode_frame(data, 2**31 - 1)
    kind = message[0]
    sizes = {"challenge": 3, "welcome": 4, "error": 5, "meta": 3, "data": 5, "stats": 3}
    if kind not in sizes:
        raise WireError(f"unknown message kind {kind!r} from the server")
    _expect_len(message, sizes[kind], kind)
    if kind in ("error", "meta", "data", "stats") and not _is_int(message[1]):
        raise WireError(f"{kind}: seq must be an integer")
    if kind == "meta":
        if not isinstance(message[2], list):
            raise WireError("meta: expected a list of [shape, dtype]")
        message[2] = [_decode_meta(m, "meta") for m in message[2]]
    elif kind == "data":
        dtype, shape = _dtype_name(message[2], "data"), _shape(message[3], "data")
        if isinstance(message[4], bytes):
            check_payload("data", dtype, shape, message[4])
        elif message[4] is not PAYLOAD:
            raise WireError("data: the array's bytes are inline or follow as the next message")
        message[2], message[3] = dtype, shape
    elif kind == "error" and not all(isinstance(v, str) for v in message[2:]):
        raise WireError("error: op, kind and message must be strings")
    elif kind == "stats" and not isinstance(message[2], dict):
        raise WireError(f"{kind}: expected a map")
    elif kind == "welcome" and not (
        _is_int(message[1])
        and (message[2] is None or isinstance(message[2], bytes))
        and isinstance(message[3], dict)
    ):
        raise WireError('welcome: expected ["welcome", version, proof or nil, info]')
    elif kind == "challenge" and not (_is_int(message[1]) and isinstance(message[2], bytes)):
        raise WireError('challenge: expected ["challenge", version, nonce]')
    return message
