"""The remote server: runs the operations clients send on one backend namespace and device.

    from ruda_remote.server import start_websocket
    start_websocket("host", None, 3000)                       # blocks; ws://127.0.0.1:3000
    start_websocket(ruda.cuda, "cuda:0", 3000, token=secret)  # a namespace works as well as a name

Secure by default: it binds 127.0.0.1 unless told otherwise, and refuses any other address
without a token unless ``insecure=True`` (every entry point goes through :class:`RemoteServer`,
so the rule is the same from Python and from ``ruda serve``). It checks a token when given one:
client and server each prove they know it with an HMAC over both sides' fresh nonces and the
server's address as the client dialled it (:mod:`ruda_remote._auth`), so the token never
crosses the network or reaches a log, and a proof cannot be replayed or relayed to another
server. It speaks TLS when given an ``ssl.SSLContext``, and limits message size and each
session's memory and all sessions' together (:class:`ruda_remote.wire.Limits`).
A handshake that carries an ``Origin`` header (sent by browsers, never by ``RemoteDevice``)
is refused unless that origin is in ``allowed_origins``: a web page must not reach a
token-less server on the user's own machine.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import ipaddress
import logging
import math
import secrets
import socket
import ssl as ssl_module
import time
import warnings
from asyncio import sslproto
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType
from typing import Any, cast

import ruda
import websockets
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.protocol import State
from websockets.typing import Origin

from ruda_remote import _auth, wire
from ruda_remote._session import MemoryBudget, Session
from ruda_remote._table import OpTable
from ruda_remote.wire import Limits

log = logging.getLogger("ruda_remote.server")

HELLO_TIMEOUT = 10.0
#: largest message accepted before the peer is authenticated (a hello is under 100 bytes), so
#: that a peer without the token cannot make the server read or decode much on its behalf
HELLO_MAX_BYTES = 4096
#: messages of a session read ahead of its worker: with pieces of an array this many times the
#: piece size is what a fast sender can keep in flight (the socket's buffers hold the rest)
MAX_QUEUE = 4
#: seconds a session's client may read none of the replies waiting for it before its connection
#: is closed: what waits (a piece of an array, and its read's copy) is held for it meanwhile.
#: The public client reads whatever comes as it comes, so only a client that stopped reading
#: waits this long
OUTPUT_STALL_S = 30.0
#: bytes of answers websockets writes on its own (pongs, a close frame) that a peer may leave
#: unread while the server's writes already wait for it to read; past them it is closed
MAX_UNREAD_ANSWERS = 64 * 1024
#: connections past a cap that are kept until their upgrade, to be told the cap in a message
#: (RemoteDevice shows it); any more past a cap are closed at once, so that a flood of TCP
#: connections costs the server no more file descriptors than the caps and these
REFUSALS_TOLD = 16
#: seconds a connection closed to make room is given to read why before it is cut off
EVICTION_WAIT_S = 1.0
#: seconds a connection's TLS handshake may take, and its TLS shutdown: websockets' own timeouts
#: for opening and closing a connection, which it gave asyncio's TLS layer when that ran it
TLS_HANDSHAKE_TIMEOUT = 10
TLS_SHUTDOWN_TIMEOUT = 10
#: the message of the event loop's error when a connection cannot be accepted (asyncio's)
_ACCEPT_ERROR = "socket.accept() out of system resource"

__all__ = ["Limits", "RemoteServer", "is_loopback", "start_websocket", "start_websocket_async"]


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address or ``localhost``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_bind(host: Any, token: str | None, ssl: ssl_module.SSLContext | None, insecure: bool) -> None:
    """Refuse a bind that would expose an unauthenticated server; warn about a risky one.

    ``host`` must be one address or host name: asyncio reads None or "" as every interface.
    Anything but loopback needs a token unless ``insecure`` (then it warns), and warns without TLS.
    """
    if not isinstance(host, str) or not host:
        raise ValueError(
            f"host must be an address or host name to bind, got {host!r}: None or '' would bind every "
            "interface; pass host='0.0.0.0' (with a token) to serve the network on purpose"
        )
    if is_loopback(host):
        return
    if token is None:
        if not insecure:
            raise ValueError(
                f"refusing to bind {host} without a token: anyone who can reach it could run operations "
                "and read data. Pass token=... (ruda serve --token-file FILE), and ssl=... (--cert/--key) "
                "for TLS, or insecure=True (--insecure) if this network is trusted"
            )
        warnings.warn(
            f"serving on {host} WITHOUT authentication (insecure): anyone who can reach this port can run "
            "operations and read data",
            stacklevel=3,
        )
    if ssl is None:
        warnings.warn(
            f"serving on {host} without TLS: data travels unencrypted (pass ssl=..., or --cert and --key)",
            stacklevel=3,
        )


def _check_ssl(ssl: ssl_module.SSLContext | None) -> None:
    """Refuse a TLS context that cannot serve (one made for clients, as
    ``ssl.create_default_context()`` makes it): each connection's TLS layer is made from it once
    the connection is counted, and would fail there, every time."""
    if ssl is None:
        return
    if not isinstance(ssl, ssl_module.SSLContext):
        raise TypeError(
            f"ssl must be an ssl.SSLContext (or None for no TLS), got {type(ssl).__name__}: make one with "
            "ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER) and load_cert_chain(cert, key)"
        )
    try:
        ssl.wrap_bio(ssl_module.MemoryBIO(), ssl_module.MemoryBIO(), server_side=True)
    except ssl_module.SSLError as err:
        raise ValueError(
            f"ssl must be a context for a server, e.g. ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER) with "
            f"load_cert_chain(cert, key): {err}"
        ) from None


def _check_origins(origins: Sequence[str]) -> tuple[str, ...]:
    """The allowed ``Origin`` values, each as a browser sends it (``https://host[:port]``)."""
    if isinstance(origins, str):
        raise TypeError(
            f"allowed_origins is a list of origins, got the string {origins!r}; write [{origins!r}]"
        )
    checked = tuple(origins)
    for origin in checked:
        if not isinstance(origin, str) or not origin or origin.endswith("/"):
            raise ValueError(
                f"allowed origin {origin!r} is not an origin: write it as a browser sends it, "
                "scheme://host[:port] with no path, e.g. 'https://app.example:8443'"
            )
    return checked


def _check_addresses(addresses: Sequence[str]) -> tuple[str, ...]:
    """The extra addresses a server answers to, each in the canonical form clients prove."""
    if isinstance(addresses, str):
        raise TypeError(f"addresses is a list of URLs, got the string {addresses!r}; write [{addresses!r}]")
    checked = []
    for address in addresses:
        try:
            checked.append(_auth.dialled_address(address))
        except ValueError as err:
            raise ValueError(
                f"server address {address!r}: {err}; write it as clients dial it, e.g. 'wss://gpu.example.org:443'"
            ) from None
    return tuple(checked)


def _is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


class RemoteServer:
    """A WebSocket server for one backend namespace on one device.

    ``host`` other than loopback needs a ``token``, or ``insecure=True`` on a trusted network.
    ``allowed_origins``: the ``Origin`` headers accepted (exact match); a handshake with any
    other Origin gets HTTP 403, one without (every non-browser client) is accepted.
    ``addresses``: URLs clients dial to reach this server besides its own (a tunnel, a proxy, a
    DNS name, a NAT): with a token, a client's proof is accepted only for one of these, or for
    this server's scheme and port at its bound host, its host name, or the IP address the
    connection arrived at (and ``localhost`` on loopback), so a proof relayed from another
    server is refused.
    ``await server.start()`` binds (``port=0`` picks a free port, then read
    :attr:`port`); ``await server.serve_forever()`` runs until :meth:`close`.
    """

    def __init__(
        self,
        backend: ModuleType | str,
        device: Any = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        ssl: ssl_module.SSLContext | None = None,
        limits: Limits | None = None,
        insecure: bool = False,
        allowed_origins: Sequence[str] = (),
        addresses: Sequence[str] = (),
    ) -> None:
        if token is not None and not token:
            raise ValueError(
                "the token is empty: pass a non-empty token, or token=None for no authentication"
            )
        _check_bind(host, token, ssl, insecure)
        _check_ssl(ssl)
        self.allowed_origins = _check_origins(allowed_origins)
        self.addresses = _check_addresses(addresses)
        self._hostname = _auth.canonical_host(socket.gethostname())
        self.namespace = ruda.namespace(backend) if isinstance(backend, str) else backend
        self.backend_name = backend if isinstance(backend, str) else getattr(backend, "__name__", "?")
        self.host, self.port = host, port
        self._token = token
        self._ssl = ssl
        self.limits = limits or Limits()
        #: memory all sessions' arrays may hold together (Limits.server_bytes), shared by them
        self.memory = MemoryBudget(self.limits.server_bytes)
        self.device = _resolve_device(self.namespace, device)
        self.table = OpTable(self.namespace, self.device)
        self._info = self._describe()
        self._sessions: set[Session] = set()
        #: open connections (sessions and handshakes, from their TCP start) per client address
        self._connections: collections.Counter[str] = collections.Counter()
        #: connections whose hello has not come yet, oldest first, and their addresses
        self._handshakes: dict[_Connection, str] = {}
        #: connections refused at their start that wait for their upgrade to be told why
        self._refusals_told = 0
        #: connections whose TLS handshake runs (over ``wss://``): websockets does not have them
        #: yet, so :meth:`close` drops them itself
        self._tls_handshakes: set[_Connection] = set()
        self._last_refusal_log = self._last_accept_error_log = -math.inf
        #: what close() gives the event loop back: its exception handler before this server's
        self._restore_handler: Callable[[], None] | None = None
        self._server: Server | None = None

    @property
    def scheme(self) -> str:
        return "wss" if self._ssl is not None else "ws"

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    def array_count(self) -> int:
        """Live arrays across all sessions, until each is freed (for monitoring and tests)."""
        return sum(len(s.arrays) for s in list(self._sessions))

    def session_count(self) -> int:
        return len(self._sessions)

    def connection_count(self) -> int:
        """Open connections counted against the caps: sessions, and handshakes from their TCP
        start (for monitoring and tests)."""
        return sum(self._connections.values())

    def held_bytes(self) -> int:
        """Bytes all sessions' arrays hold or have reserved, out of :attr:`Limits.server_bytes`
        (for monitoring and tests)."""
        return self.memory.used

    async def start(self) -> None:
        """Bind and start accepting connections; if starting fails, nothing stays bound."""
        # (websockets makes each connection by calling the class it is given, as this does)
        connection = cast("type[ServerConnection]", functools.partial(_Connection, remote=self))
        self._server = await serve(
            self._handle,
            self.host,
            self.port,
            # no ssl: each connection runs its own TLS handshake once counted (_Connection)
            origins=[None, *map(Origin, self.allowed_origins)],  # None: no Origin header, not a browser
            max_size=HELLO_MAX_BYTES,  # raised to limits.max_message_bytes once authenticated
            compression=None,
            max_queue=MAX_QUEUE,  # messages read ahead of the session's worker: bounds their memory
            logger=log,
            create_connection=connection,
        )
        try:
            sockets = list(self._server.sockets)
            if sockets and self.port == 0:
                self.port = sockets[0].getsockname()[1]
            device, url = self._info["device"], self.url
            log.info("ruda remote server: backend %s on %s at %s", self.backend_name, device, url)
            self._quiet_accept_errors(asyncio.get_running_loop())
        except BaseException:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
            raise

    async def serve_forever(self) -> None:
        """Start if not started yet, then serve until :meth:`close` or cancellation."""
        try:
            if self._server is None:
                await self.start()
            assert self._server is not None
            await self._server.serve_forever()
        finally:  # failed, cancelled or closed: stop listening and drop every connection
            self.close()

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for connection in self._tls_handshakes:
            connection.tcp_transport.abort()
        if self._restore_handler is not None:
            self._restore_handler()
            self._restore_handler = None

    async def wait_closed(self) -> None:
        if self._server is not None:
            await self._server.wait_closed()

    # -- one connection ----------------------------------------------------------------------------
    def _connected(self, connection: _Connection) -> None:
        """Count a connection from its TCP start, or refuse it: before, connections were counted
        from their WebSocket upgrade, so one address held 1024 TCP connections that never sent a
        byte (each for the 10 s the upgrade may take, then again), past its cap of 64, until the
        server ran out of file descriptors and no client got in. Over ``wss://`` too, from before
        its TLS handshake (see :meth:`_Connection.connection_made`)."""
        peer = connection.tcp_transport.get_extra_info("peername")
        address = _auth.canonical_host(str(peer[0])) if peer else "unknown"
        refusal = self._admit(address)
        if refusal is None:
            connection.address = address
            self._handshakes[connection] = address
            return
        self._log_refusal(address, refusal)
        if self._refusals_told < REFUSALS_TOLD:  # told why once upgraded (see _handle)
            self._refusals_told += 1
            connection.refusal = refusal
        else:
            connection.tcp_transport.abort()

    def _disconnected(self, connection: _Connection) -> None:
        """Give back what :meth:`_connected` counted, when the TCP connection ends (or its TLS
        handshake fails)."""
        if connection.refusal is not None:
            self._refusals_told -= 1
        elif connection.address is not None:  # (not closed to make room: still counted)
            self._handshakes.pop(connection, None)
            if connection.running:  # counted until its op ends (see _serve_session)
                connection.counted_until_op_ends = True
            else:
                self._uncount(connection.address)

    async def _handle(self, ws: ServerConnection) -> None:
        assert isinstance(ws, _Connection)
        if ws.refusal is not None:
            await _refuse(ws, 1013, ws.refusal)  # 1013: try again later
            return
        await self._serve_session(ws)

    def _uncount(self, address: str) -> None:
        self._connections[address] -= 1
        if not self._connections[address]:
            del self._connections[address]

    def _admit(self, address: str) -> str | None:
        """Count a new connection from ``address``, or say why it is refused: past the server's
        or the address's cap on connections (a handshake counts as one from its TCP start)."""
        total, mine = sum(self._connections.values()), self._connections[address]
        if total >= self.limits.max_sessions and mine < self.limits.max_sessions_per_address:
            total -= self._make_room()
        if total >= self.limits.max_sessions:
            return (
                f"too many sessions: this server holds {total}, its limit (ruda serve --max-sessions); "
                "try again when one has ended"
            )
        if mine >= self.limits.max_sessions_per_address:
            return (
                f"too many sessions from {address}: it holds {mine}, the limit for one address "
                "(ruda serve --max-sessions-per-address); close sessions you no longer use "
                "(RemoteDevice.close) or try again when one has ended"
            )
        self._connections[address] += 1
        return None

    def _make_room(self) -> int:
        """Close the oldest connection that has not said hello yet, if there is one, to make room
        for a new one; how many places that frees (0 or 1).

        A client's hello follows the challenge within one round trip, so a handshake that has
        waited longest is the likeliest to be a peer holding a place without a token: peers at
        a few addresses that opened a server's whole cap of handshakes and never said hello had
        kept every client out, reconnecting as each timed out (:data:`HELLO_TIMEOUT`). Sessions
        are never closed for room."""
        if not self._handshakes:
            return 0
        oldest, address = next(iter(self._handshakes.items()))
        del self._handshakes[oldest]
        oldest.address = None  # (no longer counted)
        self._uncount(address)
        if oldest.state is not State.OPEN:  # not upgraded yet (or in its TLS handshake): nothing
            oldest.tcp_transport.abort()  # can be told to it
            return 1
        text = "closed to make room: no hello came, and the server is at its cap on connections"
        asyncio.get_running_loop().create_task(_evict(oldest, text))
        return 1

    def _log_refusal(self, address: str, refusal: str) -> None:
        """Log refused connections at most once a minute: a flood must not fill the log."""
        now = time.monotonic()
        if now - self._last_refusal_log >= 60.0:
            self._last_refusal_log = now
            log.warning(
                "refused a connection from %s: %s (further refusals for a minute are not logged)",
                address,
                refusal,
            )

    def _quiet_accept_errors(self, loop: asyncio.AbstractEventLoop) -> None:
        """Log the event loop's failures to accept a connection on this server's sockets at most
        once a minute (asyncio logs each with its traceback, and retries every second: a flood
        that ran the server out of file descriptors had filled its log with thousands); others
        go on to the loop's handler as before."""
        previous = loop.get_exception_handler()
        assert self._server is not None
        own = {sock.fileno() for sock in self._server.sockets}

        def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
            sock = context.get("socket")
            if context.get("message") == _ACCEPT_ERROR and sock is not None and sock.fileno() in own:
                now = time.monotonic()
                if now - self._last_accept_error_log >= 60.0:
                    self._last_accept_error_log = now
                    log.error(
                        "cannot accept connections: %s; raise the process's limit on open files "
                        "(ulimit -n) or lower --max-sessions (further such errors for a minute are not "
                        "logged)",
                        context.get("exception"),
                    )
            elif previous is not None:
                previous(loop, context)
            else:
                loop.default_exception_handler(context)

        loop.set_exception_handler(handle)

        def restore() -> None:
            own.clear()  # (a handler installed over this one since keeps it: it passes all on)
            if loop.get_exception_handler() is handle:
                loop.set_exception_handler(previous)

        self._restore_handler = restore

    async def _serve_session(self, ws: _Connection) -> None:
        peer = ws.remote_address
        session = await self._greet(ws)
        if session is None:
            return
        # The session's own worker: every message of the session is decoded and run there, one
        # at a time and in order, so the event loop only moves bytes, and one session's long
        # operation holds up that session alone (no pool shared by sessions to run out of).
        worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ruda-remote-session")
        self._sessions.add(session)
        log.debug("session opened for %s", peer)
        loop = asyncio.get_running_loop()
        closed = asyncio.ensure_future(ws.wait_closed())
        sent = _Sent()
        watch = asyncio.ensure_future(self._close_if_stalled(ws, sent))
        left_running = False
        try:
            async for raw in ws:
                job = loop.run_in_executor(worker, session.receive, raw)
                ws.running = True
                await asyncio.wait((job, closed), return_when=asyncio.FIRST_COMPLETED)
                if not job.done():
                    # A NumPy call cannot be interrupted in its thread: the op runs on, but the
                    # connection is over (a long op had held it for as long as it ran). Its place
                    # against the caps is kept until the op ends, so that an address cannot run
                    # more ops at once than its cap by leaving them.
                    left_running = True
                    log.info(
                        "the client %s left while its session ran an op: its connection is closed, and "
                        "its session is freed when that op ends",
                        peer,
                    )
                    return
                ws.running = False
                try:
                    for reply in job.result():
                        for part in wire.messages(reply):
                            await ws.send(part)
                            sent.messages += 1
                    await _taken_by_socket(ws)
                finally:
                    session.sent()
        except websockets.ConnectionClosed:
            pass
        finally:
            closed.cancel()
            watch.cancel()
            if not left_running:
                ws.running = False
            # Freed on the worker, after any op still running there (this task may have been
            # cancelled while it ran): the session's tables change on that thread only, and it
            # counts as open until its arrays are gone.
            try:
                worker.submit(self._end_session, session, peer, ws, loop)
            except RuntimeError:  # the interpreter is exiting: no new work on any thread
                self._end_session(session, peer, ws, loop)
            worker.shutdown(wait=False)

    async def _close_if_stalled(self, ws: _Connection, sent: _Sent) -> None:
        """Close ``ws`` once its client has read none of what waits for it for
        :data:`OUTPUT_STALL_S`: no message sent, and the bytes its socket has not taken yet not
        fewer. A reply waits in ``ws.send`` for the client to read (websockets' flow control),
        holding a piece of its array and its read's copy, which count against the server's
        budget until they are sent; a client that stopped reading had held them for good."""
        loop = asyncio.get_running_loop()
        messages, unsent, since = sent.messages, _unsent_bytes(ws), loop.time()
        while True:
            await asyncio.sleep(min(1.0, OUTPUT_STALL_S / 4))
            now = _unsent_bytes(ws)
            if not now or now < unsent or sent.messages != messages:
                since = loop.time()
            messages, unsent = sent.messages, now
            if loop.time() - since >= OUTPUT_STALL_S:
                log.warning(
                    "closed the connection of %s: its client has read none of the %d bytes waiting for "
                    "it for %.0f s",
                    ws.remote_address,
                    now,
                    OUTPUT_STALL_S,
                )
                ws.transport.abort()  # (a close frame would wait behind what it does not read)
                return

    def _end_session(
        self, session: Session, peer: Any, ws: _Connection, loop: asyncio.AbstractEventLoop
    ) -> None:
        freed, held = len(session.arrays), session.used_bytes
        session.close()
        self._sessions.discard(session)  # (one call under the GIL: safe from this thread)
        left_running = ws.counted_until_op_ends and ws.address is not None
        if left_running:
            assert ws.address is not None
            with contextlib.suppress(RuntimeError):  # (the loop is closed: the server is gone)
                loop.call_soon_threadsafe(self._uncount, ws.address)
            log.info(
                "session of %s freed after the op its client left running ended: %d arrays, %d bytes",
                peer,
                freed,
                held,
            )
        else:
            log.debug("session of %s closed; %d arrays freed", peer, freed)

    async def _greet(self, ws: _Connection) -> Session | None:
        nonce = secrets.token_bytes(_auth.NONCE_BYTES)
        try:
            await ws.send(wire.encode(["challenge", wire.PROTOCOL_VERSION, nonce]))
            raw = await asyncio.wait_for(ws.recv(), HELLO_TIMEOUT)
            hello = wire.decode_client_message(raw, self.limits)
        except (websockets.ConnectionClosed, TimeoutError):
            return None
        except wire.WireError as err:
            await _refuse(ws, 1002, f"malformed hello: {err}")
            return None
        if ws.address is None:
            # Closed to make room (see _make_room) after its hello had come but before it was
            # read here: it no longer counts against the caps, so it must not become a session
            # (it had been welcomed, and its ops ran uncounted); _evict tells it why.
            await ws.wait_closed()
            return None
        if not isinstance(hello, wire.Hello):
            await _refuse(ws, 1002, "the first message must be a hello")
            return None
        if hello.version != wire.PROTOCOL_VERSION:
            await _refuse(
                ws,
                1002,
                f"protocol version mismatch: the client speaks version {hello.version}, "
                f"this server speaks version {wire.PROTOCOL_VERSION}; install matching "
                "ruda-remote versions",
            )
            return None
        proof = None
        if self._token is not None:
            refusal = self._check_proof(hello, nonce, ws)
            if refusal is not None:
                log.warning("authentication failed for %s: %s", ws.remote_address, refusal)
                await _refuse(ws, 1008, f"authentication failed: {refusal}", kind="AuthenticationError")
                return None
            # Only now, to a peer that has proved it knows the token, does the server prove it.
            proof = _auth.server_proof(self._token, wire.PROTOCOL_VERSION, nonce, hello.nonce, hello.address)
        # Authenticated: from the next message on, the peer may send up to the session's limit
        # (websockets reads this before each frame; a client sends nothing until the welcome).
        ws.protocol.max_message_size = self.limits.max_message_bytes
        self._handshakes.pop(ws, None)  # (a session now: never closed to make room)
        await ws.send(wire.encode(["welcome", wire.PROTOCOL_VERSION, proof, self._info]))
        return Session(self.table, self.limits, self.memory)

    def _check_proof(self, hello: wire.Hello, nonce: bytes, ws: ServerConnection) -> str | None:
        """Why ``hello`` does not prove the token for this connection, or None when it does."""
        assert self._token is not None
        if hello.proof is None:
            return (
                "this server needs a token, and the client sent no proof of one (pass token=... to "
                "RemoteDevice, or set RUDA_REMOTE_TOKEN and RUDA_REMOTE_URL)"
            )
        if not self._answers_to(hello.address, ws):
            return (
                f"the client dialled {hello.address!r}, which is not an address of this server, so its "
                "proof is refused (a proof made for one server is not accepted by another); if that "
                "address is a tunnel or proxy to this server, start the server with --address naming it "
                "(addresses=[...] from Python)"
            )
        expected = _auth.client_proof(self._token, wire.PROTOCOL_VERSION, nonce, hello.nonce, hello.address)
        if not _auth.proofs_match(hello.proof, expected):
            return "wrong token (the client's proof does not match this server's token)"
        return None

    def _answers_to(self, address: str, ws: ServerConnection) -> bool:
        """Whether a client that dialled ``address`` (canonical, as it proved it) reached this
        server: one of :attr:`addresses`, or this server's scheme and port at a host of its own."""
        if address in self.addresses:
            return True
        try:
            scheme, host, port = _auth.split_address(address)
        except ValueError:
            return False
        if _auth.join_address(scheme, host, port) != address:
            return False  # not in the form a client proves
        return scheme == self.scheme and port == self.port and host in self._own_hosts(ws)

    def _own_hosts(self, ws: ServerConnection) -> set[str]:
        """The host names and addresses of this server that a client may have dialled: its bound
        host (unless it binds every interface), its host name, and the address this connection
        arrived at (no relay can make that another server's address)."""
        hosts = {self._hostname}
        if not _is_wildcard(self.host):
            hosts.add(_auth.canonical_host(self.host))
        local = ws.local_address
        if local:
            arrived = _auth.canonical_host(str(local[0]))
            hosts.add(arrived)
            if is_loopback(arrived):
                hosts.update({"localhost", "127.0.0.1", "::1"})
        return hosts

    def _describe(self) -> dict[str, Any]:
        info = self.namespace.__array_namespace_info__()
        caps = dict(info.capabilities())
        return {
            "backend": self.backend_name,
            "device": str(self.device),
            "ops_digest": wire.OPS_DIGEST,
            "api_version": str(getattr(self.namespace, "__array_api_version__", "")),
            "default_dtypes": self._carried(info.default_dtypes(device=self.device)),
            "dtypes": list(self._carried(info.dtypes(device=self.device)).values()),
            "max_dimensions": caps.get("max dimensions"),
            "limits": {
                "max_message_bytes": self.limits.max_message_bytes,
                "max_header_bytes": self.limits.header_bytes,
                "max_session_bytes": self.limits.max_session_bytes,
                "max_arrays": self.limits.max_arrays,
            },
        }

    def _carried(self, dtypes: dict[str, Any]) -> dict[str, str]:
        """The Array API names of the dtypes in ``dtypes`` (keyed by kind or name) that the wire
        carries. A backend's others (ruda_wgpu's float16) are left out, so that describing any
        backend succeeds; an op that returns one is refused then, naming the dtype."""
        carried: dict[str, str] = {}
        for key, dtype in dtypes.items():
            with contextlib.suppress(TypeError):
                carried[key] = self.table.dtype_name(dtype)
        return carried


class _Connection(ServerConnection):
    """A connection that is counted against the server's caps from its TCP start, over ``wss://``
    as over ``ws://``, and that closes a peer that makes it write answers the peer does not read.

    Over ``wss://`` the server listens on plain TCP and each connection runs its own TLS
    handshake once counted: asyncio's TLS servers hand a connection to its protocol only once
    the handshake is done, and until then it was not counted at all, so one address held as
    many connections as it liked in handshakes that never finished, each a file descriptor for
    the 10 s the handshake may take, past the caps that bound them over ``ws://``.

    websockets answers each ping with a pong as it reads it, whether or not the peer reads, and
    asyncio's write buffer has no bound: a peer that sent nothing but pings and read nothing
    grew the server by about 27 MB/s before it had said hello (and a session, for as long as
    it lasted). Once the server's writes wait for the peer to read (asyncio's flow control has
    paused them), the answers written on top are counted, and past
    :data:`MAX_UNREAD_ANSWERS` the connection is closed.
    """

    #: the connection's TCP transport, from its start: over ``wss://`` the one beneath TLS
    tcp_transport: asyncio.Transport

    def __init__(self, *args: Any, remote: RemoteServer, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._remote = remote
        #: whether a TLS handshake was started beneath the connection (over ``wss://``)
        self._tls = False
        #: whether websockets has the connection: from its TCP start over ``ws://``, once its
        #: TLS handshake is done over ``wss://``; never for one refused and closed at once
        self._handed_over = False
        #: the client's address while the connection is counted against the caps
        self.address: str | None = None
        #: why the connection is refused, when it was refused at its start
        self.refusal: str | None = None
        #: whether its session's worker runs an op now, and whether the connection ended while
        #: one ran: then it stays counted against the caps until that op ends
        self.running = self.counted_until_op_ends = False
        self._unread_answers = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Count the connection at its TCP start, then hand it to websockets, over ``wss://``
        once the TLS handshake is done (the TLS layer calls this again with its transport)."""
        if self._tls:
            self._hand_over(transport)
            return
        self.tcp_transport = cast(asyncio.Transport, transport)
        self._remote._connected(self)
        if self.tcp_transport.is_closing():  # refused and closed at once
            return
        if self._remote._ssl is None:
            self._hand_over(transport)
        else:
            self._start_tls(self._remote._ssl)

    def _hand_over(self, transport: asyncio.BaseTransport) -> None:
        self._handed_over = True
        super().connection_made(transport)  # (websockets starts its handler)

    def _start_tls(self, context: ssl_module.SSLContext) -> None:
        """Run the TLS handshake beneath this connection, which is counted already.

        asyncio's public ``loop.start_tls`` cannot do it: it hands the TLS transport over from
        a task that runs only after its TLS layer may have passed the client's first bytes on
        (the upgrade request comes with the handshake's last message), before websockets has a
        transport to answer on. So the TLS layer is made as asyncio's own TLS servers make it,
        with its private class (the same arguments since Python 3.11): it calls
        :meth:`connection_made` with its transport once the handshake is done."""
        loop = asyncio.get_running_loop()
        handshake: asyncio.Future[None] = loop.create_future()
        handshake.add_done_callback(self._handshake_ended)
        tls = sslproto.SSLProtocol(
            loop,
            self,
            context,
            handshake,
            server_side=True,
            ssl_handshake_timeout=TLS_HANDSHAKE_TIMEOUT,
            ssl_shutdown_timeout=TLS_SHUTDOWN_TIMEOUT,
        )
        self._tls = True
        self._remote._tls_handshakes.add(self)
        self.tcp_transport.set_protocol(tls)
        tls.connection_made(self.tcp_transport)

    def _handshake_ended(self, handshake: asyncio.Future[None]) -> None:
        """Give back the place of a connection whose TLS handshake failed, timed out or was cut
        off: the TLS layer tells only a protocol it has handed its transport that it is lost."""
        handshake.exception()  # (retrieved: a failed handshake is the client's doing, not logged)
        self._remote._tls_handshakes.discard(self)
        if not self._handed_over:
            self._remote._disconnected(self)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._handed_over:
            super().connection_lost(exc)
        self._remote._disconnected(self)

    def data_received(self, data: bytes) -> None:
        before = self.transport.get_write_buffer_size()
        super().data_received(data)
        if not self.paused or self.transport.is_closing():
            return
        self._unread_answers += self.transport.get_write_buffer_size() - before
        if self._unread_answers > MAX_UNREAD_ANSWERS:
            log.warning(
                "closed the connection of %s: it sent pings and read none of their answers (%d bytes "
                "of them waiting)",
                self.remote_address,
                self._unread_answers,
            )
            self.transport.abort()

    def resume_writing(self) -> None:
        super().resume_writing()
        self._unread_answers = 0  # the peer reads again


class _Sent:
    """How many messages a session's connection has handed to its socket, for
    :meth:`RemoteServer._close_if_stalled`."""

    __slots__ = ("messages",)

    def __init__(self) -> None:
        self.messages = 0


def _unsent_bytes(ws: _Connection) -> int:
    """Bytes written to ``ws`` that its socket has not taken yet, over ``wss://`` those the TCP
    transport beneath TLS holds included.

    asyncio's TLS layer encrypts a message whole and hands it on to the TCP transport at once,
    however little the peer reads, and holds back only what comes after it; its own
    ``get_write_buffer_size`` counts only what it holds back. So over ``wss://`` a reply's last
    message left ``ws.send`` at once and was not counted as waiting: a client that read nothing
    had 12 MiB wait uncharged and unseen by :meth:`RemoteServer._close_if_stalled`, until
    websockets' keepalive gave up on it 50 s later."""
    unsent = ws.transport.get_write_buffer_size()
    if ws.tcp_transport is not ws.transport:
        unsent += ws.tcp_transport.get_write_buffer_size()
    return unsent


async def _taken_by_socket(ws: _Connection) -> None:
    """Wait until the socket has taken what was written to ``ws``, but for what its flow control
    leaves buffered: ``ws.send`` waits for that itself, except for what asyncio's TLS layer has
    handed on to the TCP transport beneath it (see :func:`_unsent_bytes`). A reply counts
    against the budget until then, over ``wss://`` as over ``ws://``."""
    tcp = ws.tcp_transport
    if tcp is ws.transport:
        return
    low = tcp.get_write_buffer_limits()[0]
    while tcp.get_write_buffer_size() > low and not tcp.is_closing():
        await asyncio.sleep(0.005)  # (no event tells when the TCP transport drains)


async def _evict(ws: ServerConnection, text: str) -> None:
    """Tell a connection closed to make room why, and close it without waiting long for the
    peer's close frame: it no longer counts against the caps, and a peer that never answered
    had kept it open for the 10 s of websockets' close timeout, so that connections rotated
    through many addresses held far more descriptors than the caps."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(_refuse(ws, 1013, text), EVICTION_WAIT_S)
    ws.transport.abort()


async def _refuse(ws: ServerConnection, code: int, text: str, kind: str = "ConnectionRefusedError") -> None:
    try:
        await ws.send(wire.encode(["error", wire.NO_SEQ, "hello", kind, text]))
        await ws.close(code, text[:120])
    except websockets.ConnectionClosed:
        pass


def _resolve_device(namespace: ModuleType, device: Any) -> Any:
    info = namespace.__array_namespace_info__()
    if device is None:
        return info.default_device()
    if not isinstance(device, str):
        return device
    devices = list(info.devices())
    for candidate in devices:
        if str(candidate) == device:
            return candidate
    wanted = ruda.Device.parse(device)
    for candidate in devices:
        try:
            if ruda.Device.parse(str(candidate)) == wanted:
                return candidate
        except ValueError:
            continue
    raise ValueError(f"device {device!r} is not one of the backend's devices: {', '.join(map(str, devices))}")


async def start_websocket_async(
    backend: ModuleType | str,
    device: Any,
    port: int,
    host: str = "127.0.0.1",
    token: str | None = None,
    ssl: ssl_module.SSLContext | None = None,
    limits: Limits | None = None,
    insecure: bool = False,
    allowed_origins: Sequence[str] = (),
    addresses: Sequence[str] = (),
) -> None:
    """Serve ``backend`` on ``device`` at ``host:port`` within the running event loop, until cancelled.

    The rules of :class:`RemoteServer` apply: a non-loopback ``host`` needs a ``token`` or
    ``insecure=True``, browsers are refused unless their origin is in ``allowed_origins``, and
    clients prove the token only for this server's own addresses and ``addresses``."""
    server = RemoteServer(
        backend,
        device,
        host=host,
        port=port,
        token=token,
        ssl=ssl,
        limits=limits,
        insecure=insecure,
        allowed_origins=allowed_origins,
        addresses=addresses,
    )
    await server.serve_forever()


def start_websocket(
    backend: ModuleType | str,
    device: Any,
    port: int,
    host: str = "127.0.0.1",
    token: str | None = None,
    ssl: ssl_module.SSLContext | None = None,
    limits: Limits | None = None,
    insecure: bool = False,
    allowed_origins: Sequence[str] = (),
    addresses: Sequence[str] = (),
) -> None:
    """Serve ``backend`` on ``device`` at ``host:port``; blocks, running its own event loop.

    The rules of :class:`RemoteServer` apply: a non-loopback ``host`` needs a ``token`` or
    ``insecure=True``, browsers are refused unless their origin is in ``allowed_origins``, and
    clients prove the token only for this server's own addresses and ``addresses``."""
    asyncio.run(
        start_websocket_async(
            backend,
            device,
            port,
            host=host,
            token=token,
            ssl=ssl,
            limits=limits,
            insecure=insecure,
            allowed_origins=allowed_origins,
            addresses=addresses,
        )
    )
