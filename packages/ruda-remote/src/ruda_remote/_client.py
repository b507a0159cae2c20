"""``RemoteDevice``: one connection to a server, and the session of arrays that lives there.

Operations are queued and sent in batches without waiting for an answer; only reads wait
(:meth:`RemoteDevice.request`). Arrays the program drops are released in the next batch.
The server reports a failed operation when it happens; the client raises it at the next
point that waits, naming the operation.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import math
import os
import secrets
import ssl as ssl_module
import threading
import time
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np
import websockets
from websockets.sync.client import ClientConnection, connect

from ruda_remote import _auth, wire
from ruda_remote.errors import (
    RemoteAuthenticationError,
    RemoteConnectionError,
    RemoteError,
    RemoteTimeoutError,
    remote_error,
)

#: ops queued before a batch is sent without being asked
BATCH_OPS = 256
#: arrays up to this size are read whole when one of their elements is read (see cached_read)
READ_AHEAD_BYTES = 1 << 20
READ_CACHE_ENTRIES = 32
#: pieces of an array the connection may read ahead of the thread that copies them
PIECES_AHEAD = 2

_open_devices: weakref.WeakSet[RemoteDevice] = weakref.WeakSet()


class RemoteDevice:
    """A session on a ruda remote server: ``RemoteDevice("ws://127.0.0.1:3000", token=...)``.

    With a ``token``, the device proves it to the server for this connection and this address
    only, and the server must prove it knows the token too before anything is sent to it
    (else :class:`~ruda_remote.RemoteAuthenticationError`). The token is never read from the
    environment here: ``RUDA_REMOTE_TOKEN`` goes only to the server ``RUDA_REMOTE_URL`` names,
    through the default device or a ``remote:`` device name for that server.

    ``timeout``: seconds a wait for an answer may take, however many other answers come in
    the meantime (None: as long as the connection is alive; WebSocket pings notice a dead
    server within about 40 s). ``ssl``: an ``ssl.SSLContext`` for ``wss://`` URLs with a
    private certificate authority.
    Devices compare by identity: each one is its own session on the server.
    """

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        ssl: ssl_module.SSLContext | None = None,
        timeout: float | None = None,
        connect_timeout: float = 10.0,
    ) -> None:
        if not isinstance(url, str) or not url.startswith(("ws://", "wss://")):
            raise ValueError(f"a remote device URL starts with ws:// or wss://, got {url!r}")
        #: the server's address as dialled: what the handshake's proofs are bound to
        self.address = _auth.dialled_address(url)
        self.url = url
        self.timeout = timeout
        self._lock = threading.RLock()
        self._ops: list[bytes] = []  # packed ops, waiting to be sent
        self._free: collections.deque[int] = collections.deque()
        self._seq = itertools.count()
        self._handles = itertools.count(1)
        self._errors: list[RemoteError] = []
        self._closed = False
        # Host copies of whole arrays, valid until the next op that changes any array of the
        # session (an in-place op on one array may change another that shares its memory).
        self._reads: dict[int, np.ndarray] = {}
        #: ops so far that changed an array of the session (see ``_array.Array._read``)
        self.changes = 0
        #: the result dtypes the server's backend gave ops whose dtype is its own choice
        #: (``sqrt`` of int32, ``sum`` of uint8: see ``_meta.backend_dependent``), by signature
        self.result_dtypes: dict[tuple[Any, ...], str] = {}
        try:
            self._ws: ClientConnection = connect(
                url,
                ssl=ssl,
                max_size=None,
                max_queue=None,
                compression=None,
                proxy=None,
                open_timeout=connect_timeout,
                user_agent_header=None,
                legacy=True,
            )
        except (OSError, websockets.InvalidHandshake, websockets.ConnectionClosed, TimeoutError) as err:
            # (a server past its caps on connections may close one before its upgrade)
            raise RemoteConnectionError(f"cannot connect to ruda server {url}: {err}") from err
        try:
            self.info: dict[str, Any] = self._handshake(token, connect_timeout)
        except BaseException:
            self._ws.close()
            raise
        self.limits: dict[str, int] = dict(self.info.get("limits", {}))
        self._max_message = int(self.limits.get("max_message_bytes", wire.Limits.max_message_bytes))
        self._max_header = min(self._max_message, int(self.limits.get("max_header_bytes", self._max_message)))
        #: arrays larger than this are sent in pieces of this size (each one message)
        self.chunk_bytes = wire.chunk_bytes(self._max_message)
        #: arrays up to this size travel inside a batch's header, larger ones after it
        self.inline_bytes = min(wire.INLINE_BYTES, self._max_header // 4)
        self._queued = 0  # bytes of the queued ops
        _open_devices.add(self)

    def _handshake(self, token: str | None, timeout: float) -> dict[str, Any]:
        """Prove the token (if any) for this connection, and check the server's proof before
        anything else is sent: the hello is all that a server that does not know the token sees."""
        challenge = self._receive(timeout, "the server's challenge")
        if challenge[0] == "error":  # refused before any handshake (too many sessions)
            raise RemoteConnectionError(f"{self.url} refused the session: {challenge[4]}")
        if challenge[0] != "challenge":
            raise RemoteConnectionError(f"{self.url} did not open with a ruda challenge: {challenge[0]!r}")
        version, server_nonce = challenge[1], challenge[2]
        if version != wire.PROTOCOL_VERSION:
            raise RemoteConnectionError(
                f"{self.url} speaks ruda-remote protocol version {version}, this client speaks version "
                f"{wire.PROTOCOL_VERSION}: install the same ruda-remote version on both sides "
                "(nothing was sent)"
            )
        if len(server_nonce) != _auth.NONCE_BYTES:
            raise RemoteConnectionError(f"{self.url} sent a challenge nonce of {len(server_nonce)} bytes")
        nonce = secrets.token_bytes(_auth.NONCE_BYTES)
        transcript = (wire.PROTOCOL_VERSION, server_nonce, nonce, self.address)
        proof = None if token is None else _auth.client_proof(token, *transcript)
        self._ws.send(wire.encode(["hello", wire.PROTOCOL_VERSION, nonce, self.address, proof]))
        welcome = self._receive(timeout, "the server's welcome")
        if welcome[0] == "error":
            if welcome[3] == "AuthenticationError":
                raise RemoteAuthenticationError(f"{self.url} refused the session: {welcome[4]}{_hint(token)}")
            raise RemoteConnectionError(f"{self.url} refused the session: {welcome[4]}")
        if welcome[0] != "welcome":
            raise RemoteConnectionError(f"{self.url} answered the hello with {welcome[0]!r}")
        if token is not None and not _auth.proofs_match(welcome[2], _auth.server_proof(token, *transcript)):
            why = "sent no proof: it has no token, or" if welcome[2] is None else "sent a wrong proof: it"
            raise RemoteAuthenticationError(
                f"{self.url} did not prove that it knows the token (it {why} is not the server the token "
                "is for); nothing was sent to it. Check the URL, and that the server was started with "
                "this token (ruda serve --token-file)"
            )
        info = dict(welcome[3])
        if info.get("ops_digest") != wire.OPS_DIGEST:
            raise RemoteConnectionError(
                f"{self.url} numbers its operations differently (table {info.get('ops_digest')}, this client "
                f"{wire.OPS_DIGEST}): install the same ruda and ruda-remote versions on both sides"
            )
        return info

    # -- the device object -------------------------------------------------------------------------
    def __repr__(self) -> str:
        backend, device = self.info.get("backend"), self.info.get("device")
        return f"RemoteDevice({self.url!r}, backend={backend!r}, device={device!r})"

    def __str__(self) -> str:
        return f"remote:{self.url}"

    def close(self) -> None:
        """End the session: the server frees every array of it."""
        with self._lock:
            self._closed = True
            self._ws.close()

    def __enter__(self) -> RemoteDevice:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- sending -----------------------------------------------------------------------------------
    def new_handle(self) -> int:
        return next(self._handles)

    def release(self, handle: int) -> None:
        """Queue a handle for release (safe from ``__del__``: it sends nothing itself)."""
        self._free.append(handle)
        self._reads.pop(handle, None)

    def submit(
        self,
        code: int,
        out: list[int],
        args: list[Any],
        kwargs: dict[str, Any],
        expect: list[tuple[tuple[int, ...], str]] | None = None,
        flags: int = 0,
        mutates: bool = False,
        payload: Any = None,
    ) -> int:
        """Queue one op; send the queue when it is long. Returns its seq. ``mutates``: the op
        changes an existing array (so cached reads are stale). ``payload``: raw bytes the op
        names with ``wire.PAYLOAD``; the op is then sent at once, straight from that memory, in
        pieces of :attr:`chunk_bytes` when it is larger. Limits of the wire the client can check
        are checked here, so such an op raises at the call and is never sent."""
        if len(out) > wire.MAX_OUTPUTS:
            raise ValueError(
                f"{wire.OPS[code]} would make {len(out)} arrays, and one remote operation makes at most "
                f"{wire.MAX_OUTPUTS}: split its input first (for unstack: slice it into parts of at most "
                f"{wire.MAX_OUTPUTS} along the axis and unstack each)"
            )
        with self._lock:
            self._check_open()
            if mutates:
                self._reads.clear()
                self.changes += 1
            seq = next(self._seq)
            ex = None if expect is None else [[list(s), d] for s, d in expect]
            op = wire.pack_op([seq, code, out, args, kwargs, flags, ex])
            # before anything is queued: a refused op leaves no trace
            self._check_size(len(op), 0 if payload is None else memoryview(payload).nbytes)
            if payload is not None or self._queued + len(op) > self._max_header // 2:
                self.flush()
            if payload is not None:
                self._send([op], payload)
            else:
                self._ops.append(op)
                self._queued += len(op)
                if len(self._ops) >= BATCH_OPS:
                    self.flush()
            return seq

    def _check_size(self, header: int, payload: int) -> None:
        if header > self._max_header - 1024:
            raise ValueError(
                f"an operation of {header} bytes is larger than the server's limit of {self._max_header} "
                "bytes for a message's header; pass large values as arrays, or start the server with a "
                "larger --max-header-mb"
            )
        session = self.limits.get("max_session_bytes")
        if session is not None and payload > session:
            raise MemoryError(
                f"an array of {payload} bytes is larger than the server's session memory limit of {session} "
                "bytes, so it was not sent; send it in parts, or ask the server's operator for a larger "
                "limit (ruda serve --max-session-mb)"
            )

    def flush(self) -> None:
        """Send every queued op and release."""
        with self._lock:
            if self._ops or self._free:
                ops, self._ops, self._queued = self._ops, [], 0
                self._send(ops)

    def _send(self, ops: list[bytes], payload: Any = None) -> None:
        free = []
        while self._free:
            free.append(self._free.popleft())
        frame = wire.messages(wire.encode_batch(ops, free))
        if payload is not None:
            frame = [*frame, *wire.payload_messages(payload, self.chunk_bytes)]
        try:
            for message in frame:
                self._ws.send(message)
        except websockets.ConnectionClosed as err:
            raise self._lost(err) from None

    # -- waiting -----------------------------------------------------------------------------------
    def request(
        self, code: int, out: list[int], args: list[Any], kwargs: dict[str, Any], flags: int = 0
    ) -> list[Any]:
        """Send an op that the server answers, and wait for the answer."""
        with self._lock:
            seq = self.submit(code, out, args, kwargs, flags=flags)
            self.flush()
            return self._wait(seq)

    def sync(self) -> None:
        """Wait until the server has run every op sent so far; raise the first error among them."""
        self.request(wire.OP_CODES["__stats__"], [], [], {})

    def stats(self) -> dict[str, int]:
        """Live arrays of this session on the server, and the bytes it is charged for them: what
        their buffers hold and ``wire.HANDLE_BYTES`` per array (after running everything queued)."""
        with self._lock:
            self.flush()  # releases queued so far are counted
            reply = self.request(wire.OP_CODES["__stats__"], [], [], {})
        return dict(reply[2])

    def read(self, handle: int) -> np.ndarray:
        """The array's values as a NumPy array: read-only when it came in one message, writable
        and owned by the caller (no other reference) when it came in pieces."""
        reply = self.request(wire.OP_CODES["__read__"], [], [wire.Handle(handle)], {})
        _, _, dtype, shape, data = reply
        try:
            if isinstance(data, np.ndarray):
                values: np.ndarray = data.view(dtype).reshape(shape)
                return values
            return np.frombuffer(data, dtype=dtype).reshape(shape)
        except ValueError as err:  # (bytes that do not make the shape and dtype it names)
            raise RemoteConnectionError(f"malformed data from {self.url}: {err}") from None

    def cached_read(self, handle: int, nbytes: int) -> np.ndarray | None:
        """The whole array's values from a read made since the session last changed an array;
        for a small array not read yet, read it whole now (so reading its elements one by one
        costs one round trip, not one each). None for a large array not in the cache."""
        with self._lock:
            host = self._reads.get(handle)
            if host is None and nbytes <= READ_AHEAD_BYTES:
                host = self.read(handle)
                host.flags.writeable = False  # shared by every read it serves
                if len(self._reads) >= READ_CACHE_ENTRIES:
                    self._reads.clear()
                self._reads[handle] = host
            return host

    def _wait(self, seq: int) -> list[Any]:
        """The answer to op ``seq``; raise the first error the server reported since the last wait.

        An error about a whole message (``wire.NO_SEQ``) ends the wait too: the server answers
        in order, so it is about the batch holding ``seq`` or an earlier one whose results
        ``seq`` may use, and if it is the former no answer to ``seq`` will ever come.
        """
        # (the timeout bounds the whole wait: a server that kept sending other answers had held
        # a wait with a 5 s timeout forever)
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            what = f"the answer to op {seq}" + ("" if deadline is None else f" ({self.timeout} s allowed)")
            message = self._receive(left, what)
            if message[0] == "error" and message[1] != seq:
                self._errors.append(remote_error(message[3], f"{message[4]}"))
                if message[1] == wire.NO_SEQ:
                    break
            elif message[1] == seq:
                break
            # else: an answer nobody waits for any longer (its wait was interrupted)
        if self._errors:
            first, rest = self._errors[0], len(self._errors) - 1
            self._errors.clear()
            if rest:
                first.add_note(f"{rest} more operation(s) failed after it")
            raise first
        if message[0] == "error":
            raise remote_error(message[3], message[4])
        return message

    def _receive(self, timeout: float | None, what: str) -> list[Any]:
        try:
            raw = self._ws.recv(timeout=timeout)
        except TimeoutError:
            raise RemoteTimeoutError(
                f"no answer from {self.url} within {timeout} s while waiting for {what}"
            ) from None
        except websockets.ConnectionClosed as err:
            raise self._lost(err) from None
        try:
            message = wire.decode_server_message(raw)
            if message[0] == "data" and message[4] is wire.PAYLOAD:  # the bytes: the next message(s)
                nbytes = math.prod(message[3]) * wire.ITEMSIZE[message[2]]
                reader = wire.PayloadReader(nbytes, "data")
                with self._read_ahead(PIECES_AHEAD if nbytes > self.chunk_bytes else None):
                    while not reader.done:
                        reader.add(self._ws.recv(timeout=timeout))
                message[4] = reader.result()
            return message
        except (wire.WireError, MemoryError, ValueError) as err:  # (a size no array could have)
            raise RemoteConnectionError(f"malformed message from {self.url}: {err}") from None
        except TimeoutError:
            raise RemoteTimeoutError(f"the data of a read from {self.url} stopped coming") from None
        except websockets.ConnectionClosed as err:
            raise self._lost(err) from None

    @contextlib.contextmanager
    def _read_ahead(self, messages: int | None) -> Iterator[None]:
        """While the pieces of an array come, let the connection read at most ``messages``
        messages ahead of this thread, so that the client holds the array and a few pieces.

        Otherwise the connection reads ahead without bound: a client that queues many ops and
        reads their answers only when it waits must never stop the server from sending, or the
        server would stop reading what the client sends. During a read the client is reading,
        so a bound cannot stall anything. (websockets exposes the bound only at connect, as
        ``max_queue``; this sets the same water marks on its receive buffer.)
        """
        buffer: Any = getattr(self._ws, "recv_messages", None)
        needed = ("high", "low", "mutex", "paused", "resume")
        if messages is None or not all(hasattr(buffer, name) for name in needed):
            yield
            return
        with buffer.mutex:
            buffer.high, buffer.low = messages, 0
        try:
            yield
        finally:
            with buffer.mutex:
                buffer.high = buffer.low = None
                if buffer.paused:
                    buffer.paused = False
                    buffer.resume()

    def _lost(self, err: websockets.ConnectionClosed) -> RemoteConnectionError:
        self._closed = True
        reason = f" ({err.rcvd.code}: {err.rcvd.reason})" if err.rcvd is not None and err.rcvd.reason else ""
        return RemoteConnectionError(
            f"connection to ruda server {self.url} lost{reason}; arrays of this session are gone"
        )

    def _check_open(self) -> None:
        if self._closed:
            raise RemoteConnectionError(f"the session with {self.url} is closed; create a new RemoteDevice")


def open_devices() -> list[RemoteDevice]:
    """Every RemoteDevice of this process that is still open."""
    return [d for d in list(_open_devices) if not d._closed]


def device_from_env() -> RemoteDevice | None:
    """A device for ``RUDA_REMOTE_URL`` (token from ``RUDA_REMOTE_TOKEN``), or None when unset."""
    url = os.environ.get("RUDA_REMOTE_URL")
    if not url:
        return None
    return RemoteDevice(url, token=_auth.env_token(url))


def _hint(token: str | None) -> str:
    """What to do when a server wanted a token this client did not give."""
    if token is not None:
        return ""
    home = os.environ.get("RUDA_REMOTE_URL") or "unset"
    if os.environ.get("RUDA_REMOTE_TOKEN"):
        return (
            f". No token was given for this server: RUDA_REMOTE_TOKEN is sent only to the server "
            f"RUDA_REMOTE_URL names ({home}); pass token=... to RemoteDevice for this one"
        )
    return ". No token was given: pass token=... (or set RUDA_REMOTE_TOKEN and RUDA_REMOTE_URL)"
