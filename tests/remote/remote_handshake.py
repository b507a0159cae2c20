"""Handshakes made by hand, as an attacker's client would make them: raw WebSockets that say
exactly what a test wants, whatever the public client would send."""

from __future__ import annotations

import secrets

from ruda_remote import _auth, wire
from websockets.sync.client import ClientConnection, connect


def raw_hello(
    url: str, token: str | None = None, address: str | None = None
) -> tuple[ClientConnection, list]:
    """A bare WebSocket: the challenge, a hello made by hand (proving ``token`` for ``address``,
    by default the address dialled), and the server's answer to it."""
    ws = connect(url, compression=None, max_size=None, proxy=None, open_timeout=10, legacy=True)
    challenge = wire.decode_server_message(ws.recv(timeout=10))
    assert challenge[:2] == ["challenge", wire.PROTOCOL_VERSION], challenge
    nonce = secrets.token_bytes(_auth.NONCE_BYTES)
    address = _auth.dialled_address(url) if address is None else address
    proof = None
    if token is not None:
        proof = _auth.client_proof(token, wire.PROTOCOL_VERSION, challenge[2], nonce, address)
    ws.send(wire.encode(["hello", wire.PROTOCOL_VERSION, nonce, address, proof]))
    return ws, wire.decode_server_message(ws.recv(timeout=10))


def open_raw_session(url: str) -> ClientConnection:
    """A bare WebSocket session past the handshake (no token), for sending frames by hand."""
    ws, welcome = raw_hello(url)
    assert welcome[0] == "welcome", welcome
    return ws
