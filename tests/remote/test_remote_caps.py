"""Caps on connections: per server and per client address, handshakes included, each refused with
an error that names the limit; the sessions already open are not affected."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import ruda_remote
import websockets
from ruda_remote import wire
from websockets.sync.client import ClientConnection, connect


@pytest.fixture()
def raw_connect() -> Iterator[Any]:
    """Bare WebSockets from a chosen loopback address, closed after the test."""
    opened: list[ClientConnection] = []

    def open_from(url: str, source: str = "127.0.0.1") -> ClientConnection:
        ws = connect(
            url,
            compression=None,
            proxy=None,
            open_timeout=10,
            source_address=(source, 0),
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


def test_limits_refuse_caps_that_are_not_positive():
    with pytest.raises(ValueError, match="max_sessions_per_address must be a positive integer"):
        wire.Limits(max_sessions_per_address=0)
    with pytest.raises(ValueError, match="max_sessions must be a positive integer"):
        wire.Limits(max_sessions=-1)


def test_ruda_serve_takes_the_caps(server_process, raw_connect):
    _, url = server_process("--max-sessions", "5", "--max-sessions-per-address", "1")
    assert _first_message(raw_connect(url))[0] == "challenge"
    _assert_refused(raw_connect(url), "too many sessions from 127.0.0.1: it holds 1")
