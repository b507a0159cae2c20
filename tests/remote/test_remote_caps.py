"""Caps on connections: per server and per client address, handshakes included, each refused with
an error that names the limit; the sessions already open are not affected."""

from __future__ import annotations

import asyncio
import contextlib
import re
import resource
import secrets
import select
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
import ruda_remote
import websockets
from remote_handshake import tls_contexts
from ruda_remote import _auth, wire
from ruda_remote import server as server_module
from websockets.sync.client import ClientConnection, connect


@pytest.fixture()
def raw_connect() -> Iterator[Any]:
    """Bare WebSockets from a chosen loopback address (over TLS with ``ssl_context``), closed
    after the test."""
    opened: list[ClientConnection] = []

    def open_from(
        url: str, source: str = "127.0.0.1", ssl_context: ssl.SSLContext | None = None
    ) -> ClientConnection:
        ws = connect(
            url,
            compression=None,
            proxy=None,
            open_timeout=10,
            source_address=(source, 0),
            ssl=ssl_context,
            legacy=True,
        )
        opened.append(ws)
        return ws

    yield open_from
    for ws in opened:
        ws.close()


def _first_message(ws: ClientConnection) -> list[Any]:
    return wire.decode_server_message(ws.recv(timeout=10))


def _assert_refused(ws: ClientConnection, match: str) -> None:
    reply = _first_message(ws)
    assert reply[:4] == ["error", wire.NO_SEQ, "hello", "ConnectionRefusedError"], reply
    assert match in reply[4], reply
    with pytest.raises(websockets.ConnectionClosed) as info:
        ws.recv(timeout=10)
    assert info.value.rcvd is not None and info.value.rcvd.code == 1013  # try again later


def test_connections_past_the_cap_for_one_address_are_refused_naming_it(make_server, raw_connect):
    srv = make_server(limits=wire.Limits(max_sessions=8, max_sessions_per_address=3))
    # Three handshakes that never send a hello hold the address's three places.
    held = [raw_connect(srv.url) for _ in range(3)]
    assert all(_first_message(ws)[0] == "challenge" for ws in held)
    _assert_refused(
        raw_connect(srv.url), "too many sessions from 127.0.0.1: it holds 3, the limit for one address"
    )
    with pytest.raises(
        ruda_remote.RemoteConnectionError, match="refused the session: too many sessions from"
    ):
        ruda_remote.RemoteDevice(srv.url, timeout=10)
    # another address is not affected
    assert _first_message(raw_connect(srv.url, source="127.0.0.2"))[0] == "challenge"
    # and a place that frees up can be taken again
    held[0].close()
    deadline = time.monotonic() + 10
    while True:
        try:
            with ruda_remote.RemoteDevice(srv.url, timeout=10) as dev:
                assert float(ruda_remote.sum(ruda_remote.ones(3, device=dev))) == 3.0
            break
        except ruda_remote.RemoteConnectionError:
            assert time.monotonic() < deadline, "the freed place was not given back"
            time.sleep(0.05)


def test_connections_past_the_servers_cap_are_refused_from_any_address(make_server, raw_connect):
    srv = make_server(limits=wire.Limits(max_sessions=2, max_sessions_per_address=2))
    sessions = [ruda_remote.RemoteDevice(srv.url, timeout=10) for _ in range(2)]
    _assert_refused(raw_connect(srv.url, source="127.0.0.9"), "too many sessions: this server holds 2")
    for dev in sessions:  # (sessions are never closed to make room)
        assert float(ruda_remote.sum(ruda_remote.ones(3, device=dev))) == 3.0
        dev.close()


def test_handshakes_without_a_hello_make_room_for_new_connections(make_server, raw_connect):
    # peers that open the server's whole cap and never say hello do not keep a client out:
    # the oldest of them is closed to make room
    srv = make_server(limits=wire.Limits(max_sessions=4, max_sessions_per_address=2))
    held = [raw_connect(srv.url, source=f"127.0.0.{2 + i // 2}") for i in range(4)]
    assert all(_first_message(ws)[0] == "challenge" for ws in held)
    with ruda_remote.RemoteDevice(srv.url, timeout=10) as dev:
        assert float(ruda_remote.sum(ruda_remote.ones(3, device=dev))) == 3.0
        _assert_refused(held[0], "closed to make room: no hello came")
        assert _first_message(raw_connect(srv.url, source="127.0.0.9"))[0] == "challenge"
        _assert_refused(held[1], "closed to make room")


def test_a_handshake_closed_to_make_room_as_its_hello_comes_is_not_welcomed(make_server, raw_connect):
    """At the cap, a new connection takes the place of the oldest handshake; when that one's
    hello had come but not been read yet, it was closed and uncounted, and welcomed all the
    same: a session the caps did not count, whose ops ran on (a second of matrix products here,
    while the server counted only the newcomer against its cap of 1)."""
    srv = make_server(limits=wire.Limits(max_sessions=1, max_sessions_per_address=2))
    oldest = raw_connect(srv.url)
    challenge = _first_message(oldest)
    assert challenge[0] == "challenge"
    nonce = secrets.token_bytes(_auth.NONCE_BYTES)
    hello = ["hello", wire.PROTOCOL_VERSION, nonce, _auth.dialled_address(srv.url), None]
    # The hello and a new connection come while the server is busy: it reads both in one pass,
    # the new connection's start first.
    srv.hold_up(0.3)
    oldest.send(wire.encode(hello))
    host, port = srv.url.split("//")[1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10, source_address=("127.0.0.2", 0)):
        _assert_refused(oldest, "closed to make room")
        assert srv.server is not None
        assert srv.server.session_count() == 0
        assert srv.server.connection_count() == 1  # the newcomer


def test_limits_refuse_caps_that_are_not_positive():
    with pytest.raises(ValueError, match="max_sessions_per_address must be a positive integer"):
        wire.Limits(max_sessions_per_address=0)
    with pytest.raises(ValueError, match="max_sessions must be a positive integer"):
        wire.Limits(max_sessions=-1)


def test_ruda_serve_takes_the_caps(server_process, raw_connect):
    _, url = server_process("--max-sessions", "5", "--max-sessions-per-address", "1")
    assert _first_message(raw_connect(url))[0] == "challenge"
    _assert_refused(raw_connect(url), "too many sessions from 127.0.0.1: it holds 1")


def test_tcp_connections_count_from_their_start(make_server, raw_connect):
    """A TCP connection that never sends a byte holds one of its address's places: before, only
    upgraded connections were counted, and one address held 1024 of them, past its cap of 64,
    until the server ran out of file descriptors. Past the caps, a few connections wait for
    their upgrade to be told why (``REFUSALS_TOLD``); the rest are closed at once."""
    srv = make_server(limits=wire.Limits(max_sessions=8, max_sessions_per_address=3))
    host, port = srv.url.split("//")[1].rsplit(":", 1)
    idle = [socket.create_connection((host, int(port))) for _ in range(3)]
    flood: list[socket.socket] = []
    try:
        # (accepted in the order they came: the idle ones are counted before the device's)
        with pytest.raises(ruda_remote.RemoteConnectionError, match="from 127.0.0.1: it holds 3"):
            ruda_remote.RemoteDevice(srv.url, timeout=10)
        assert _flood(host, port, flood) >= 20
        assert srv.server.connection_count() == 3
        assert _first_message(raw_connect(srv.url, source="127.0.0.2"))[0] == "challenge"  # another address
    finally:
        for sock in idle + flood:
            sock.close()


def _flood(host: str, port: str, flood: list[socket.socket]) -> int:
    """Open ``REFUSALS_TOLD + 20`` TCP connections past the caps into ``flood``; how many of them
    the server closed at once (within 5 s)."""
    flood += [socket.create_connection((host, int(port))) for _ in range(server_module.REFUSALS_TOLD + 20)]
    deadline, closed = time.monotonic() + 5, []
    while len(closed) < 20 and time.monotonic() < deadline:
        time.sleep(0.05)
        closed, _, _ = select.select(flood, [], [], 0)  # (one its peer closed reads as ready)
    return len(closed)


def _halfway_through_tls(url: str, source: str = "127.0.0.1") -> socket.socket:
    """A TCP connection from ``source`` that begins a TLS handshake (its first message) and
    sends nothing more: a handshake that never finishes."""
    host, port = url.split("//")[1].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=10, source_address=(source, 0))
    outgoing = ssl.MemoryBIO()
    tls = ssl.create_default_context().wrap_bio(ssl.MemoryBIO(), outgoing, server_hostname=host)
    with contextlib.suppress(ssl.SSLWantReadError):
        tls.do_handshake()
    sock.sendall(outgoing.read())
    return sock


def _counted_becomes(srv: Any, count: int) -> int:
    """The server's count of connections once it is ``count``, or after 5 s."""
    deadline = time.monotonic() + 5
    while srv.server.connection_count() != count and time.monotonic() < deadline:
        time.sleep(0.02)
    return int(srv.server.connection_count())


def test_tls_connections_count_from_their_tcp_start(make_server, raw_connect, tmp_path):
    """Over ``wss://``, asyncio handed a connection to the server only once its TLS handshake
    was done, so one that never began it, or stopped halfway, was not counted: one address held
    as many TCP connections as it liked, each for the 10 s the handshake may take, and the caps
    that bound its file descriptors over ``ws://`` did not hold."""
    server_ssl, client_ssl = tls_contexts(tmp_path)
    srv = make_server(limits=wire.Limits(max_sessions=8, max_sessions_per_address=3), ssl=server_ssl)
    host, port = srv.url.split("//")[1].rsplit(":", 1)
    idle = [socket.create_connection((host, int(port))) for _ in range(2)] + [_halfway_through_tls(srv.url)]
    flood: list[socket.socket] = []
    try:
        assert _counted_becomes(srv, 3) == 3
        with pytest.raises(ruda_remote.RemoteConnectionError, match="from 127.0.0.1: it holds 3"):
            ruda_remote.RemoteDevice(srv.url, ssl=client_ssl, timeout=10)
        assert _flood(host, port, flood) >= 20
        assert srv.server.connection_count() == 3
        another = raw_connect(srv.url, source="127.0.0.2", ssl_context=client_ssl)
        assert _first_message(another)[0] == "challenge"
    finally:
        for sock in idle + flood:
            sock.close()
    assert _counted_becomes(srv, 1) == 1  # the others' places are given back as they end


def test_tls_handshakes_that_never_finish_make_room_for_new_connections(make_server, tmp_path):
    """At the caps, a new connection takes the place of the oldest that has not said hello, one
    whose TLS handshake has not finished as well."""
    server_ssl, client_ssl = tls_contexts(tmp_path)
    srv = make_server(limits=wire.Limits(max_sessions=4, max_sessions_per_address=2), ssl=server_ssl)
    halfway = [_halfway_through_tls(srv.url, source=f"127.0.0.{2 + i // 2}") for i in range(4)]
    try:
        assert _counted_becomes(srv, 4) == 4
        with ruda_remote.RemoteDevice(srv.url, ssl=client_ssl, timeout=10) as dev:
            assert float(ruda_remote.sum(ruda_remote.ones(3, device=dev))) == 3.0
            waited = _seconds_until_closed(halfway[0], within=3)
            assert waited is not None  # closed to make room, not after the handshake's 10 s
            assert srv.server.connection_count() == 4
    finally:
        for sock in halfway:
            sock.close()


def test_a_tls_handshake_that_never_finishes_gives_its_place_back_when_cut_off(
    make_server, tmp_path, monkeypatch
):
    monkeypatch.setattr(server_module, "TLS_HANDSHAKE_TIMEOUT", 1)
    server_ssl, _ = tls_contexts(tmp_path)
    srv = make_server(ssl=server_ssl)
    halfway = _halfway_through_tls(srv.url)
    try:
        assert _counted_becomes(srv, 1) == 1
        waited = _seconds_until_closed(halfway, within=3)
        assert waited is not None
        assert _counted_becomes(srv, 0) == 0
    finally:
        halfway.close()


def _received(sock: socket.socket) -> bytes:
    data = sock.recv(65536)
    assert data, "the server closed the connection"
    return data


def test_an_upgrade_request_sent_with_the_tls_handshakes_last_message_is_answered(make_server, tmp_path):
    """The server runs each TLS handshake itself (to count it): the request that comes in one
    write with the client's last handshake message reaches websockets all the same, though
    the TLS layer passes it on in the same step as it ends the handshake."""
    server_ssl, client_ssl = tls_contexts(tmp_path)
    srv = make_server(ssl=server_ssl)
    host, port = srv.url.split("//")[1].rsplit(":", 1)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = client_ssl.wrap_bio(incoming, outgoing, server_hostname=host)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        while True:
            try:
                tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                sock.sendall(outgoing.read())
                incoming.write(_received(sock))
        tls.write(
            f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        sock.sendall(outgoing.read())  # the handshake's last message and the request, at once
        head = b""
        while b"\r\n\r\n" not in head:
            incoming.write(_received(sock))
            with contextlib.suppress(ssl.SSLWantReadError):
                head += tls.read(65536)
    assert b" 101 " in head.split(b"\r\n")[0], head


def test_failures_to_accept_a_connection_are_logged_once_a_minute():
    """A server out of file descriptors fails to accept each connection that comes, and asyncio
    logged each failure with its traceback (thousands, in a flood); now once a minute."""
    limit = 48  # open files for the server: its own (about 20) and a few connections

    def few_files() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    proc = subprocess.Popen(
        [sys.executable, "-m", "ruda_remote", "serve", "--backend", "host", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=few_files,
    )
    socks = []
    try:
        assert proc.stdout is not None
        url = next(m.group(1) for line in proc.stdout if (m := re.search(r"at (ws://\S+)", line)))
        host, port = url.split("//")[1].rsplit(":", 1)
        for _ in range(2):  # past the server's open files, twice: asyncio retries each second
            socks += [socket.create_connection((host, int(port))) for _ in range(limit)]
            time.sleep(1.5)
    finally:
        proc.kill()
        output = proc.communicate(timeout=10)[0]
        for sock in socks:
            sock.close()
    assert output.count("cannot accept connections: [Errno 24]") == 1, output[-2000:]
    assert "socket.accept() out of system resource" not in output


def _upgraded(url: str, source: str) -> socket.socket:
    """A TCP connection from ``source`` upgraded to a WebSocket by hand, that then reads and
    answers nothing (a peer that never sends the close frame the server waits for)."""
    host, port = url.split("//")[1].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=10, source_address=(source, 0))
    sock.sendall(
        f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert b" 101 " in head.split(b"\r\n")[0], head
    return sock


def _seconds_until_closed(sock: socket.socket, within: float) -> float | None:
    """Seconds until the server ends ``sock`` (what it sends before is read and dropped)."""
    start = time.monotonic()
    sock.settimeout(0.2)
    while time.monotonic() - start < within:
        try:
            if not sock.recv(4096):
                return time.monotonic() - start
        except TimeoutError:
            continue
        except OSError:  # (reset)
            return time.monotonic() - start
    return None


def test_a_connection_closed_to_make_room_is_cut_off_soon_though_its_peer_never_answers(make_server):
    """Closed to make room, a connection stops counting against the caps, but the server had
    waited the 10 s of websockets' close timeout for the peer's close frame: connections
    rotated through many addresses held far more descriptors than the caps."""
    srv = make_server(limits=wire.Limits(max_sessions=2, max_sessions_per_address=1))
    silent = _upgraded(srv.url, "127.0.0.2")
    held = _upgraded(srv.url, "127.0.0.3")
    newcomer = _upgraded(srv.url, "127.0.0.4")  # takes the place of the oldest handshake
    waited = _seconds_until_closed(silent, within=6)
    assert waited is not None and waited < server_module.EVICTION_WAIT_S + 2
    for sock in (silent, held, newcomer):
        sock.close()


def test_servers_closed_in_the_order_they_started_leave_no_filter_of_accept_errors():
    """Each server filters the event loop's failures to accept on its own sockets; closed
    before a server started after it, the first had left its filter in place for good, still
    taking the errors of sockets that reuse its numbers."""

    async def main() -> list[dict[str, Any]]:
        loop = asyncio.get_running_loop()
        passed_on: list[dict[str, Any]] = []
        loop.set_exception_handler(lambda loop, context: passed_on.append(context))
        first, second = (server_module.RemoteServer("host") for _ in range(2))
        await first.start()
        await second.start()
        assert first._server is not None
        fileno = next(iter(first._server.sockets)).fileno()
        for srv in (first, second):
            srv.close()
            await srv.wait_closed()
        handler = loop.get_exception_handler()
        assert handler is not None
        handler(loop, {"message": server_module._ACCEPT_ERROR, "socket": _WithNumber(fileno)})
        return passed_on

    assert len(asyncio.run(main())) == 1  # the loop's own handler got it, not a closed server's


class _WithNumber:
    def __init__(self, fileno: int) -> None:
        self._fileno = fileno

    def fileno(self) -> int:
        return self._fileno
