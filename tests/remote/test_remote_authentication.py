"""Mutual authentication bound to the connection, tried as an attacker would: a server that
relays a client's proof to the real one, a recorded hello replayed, a server that does not
know the token, peers of the old protocol, and a token from the environment offered to a
server it was not meant for. Every attacker here is a raw WebSocket peer written in the test."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import ruda
import ruda_remote
import websockets
from remote_handshake import raw_hello
from ruda_remote import _auth, wire
from websockets.sync.client import connect
from websockets.sync.server import Server, ServerConnection, serve

TOKEN = "7d1b2c9e0a4f4e8b9d3c1a2b3c4d5e6f"
#: array data a client must never send to a server that has not proved it knows the token
SECRET = np.frombuffer(b"the payroll of every employee!!!", dtype=np.uint8)


class PeerServer:
    """A WebSocket server written by hand, in a thread: ``handler(ws, self)`` plays the server's
    part; every message it receives is kept in :attr:`received`."""

    def __init__(self, handler: Callable[[ServerConnection, PeerServer], None]) -> None:
        self.received: list[bytes] = []
        self.answers: list[list[Any]] = []  # what a relayed server answered
        self.done = threading.Event()
        self._handler = handler
        self._server: Server = serve(self._handle, "127.0.0.1", 0, compression=None, max_size=None)
        self.url = f"ws://127.0.0.1:{self._server.socket.getsockname()[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def _handle(self, ws: ServerConnection) -> None:
        try:
            self._handler(ws, self)
        except websockets.ConnectionClosed:
            pass
        finally:
            self.done.set()

    def recv(self, ws: Any, timeout: float = 10) -> bytes:
        raw = ws.recv(timeout=timeout)
        assert isinstance(raw, bytes)
        self.received.append(raw)
        return raw

    def record_until_closed(self, ws: Any) -> None:
        """Keep whatever the client still sends, until it hangs up (at most 5 s)."""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                self.recv(ws, timeout=deadline - time.monotonic())
            except TimeoutError:
                return

    def stop(self) -> None:
        self._server.shutdown()
        self._thread.join(10)


@pytest.fixture()
def peer() -> Iterator[Callable[..., PeerServer]]:
    made: list[PeerServer] = []

    def make(handler: Callable[[ServerConnection, PeerServer], None]) -> PeerServer:
        made.append(PeerServer(handler))
        return made[-1]

    yield make
    for server in made:
        server.stop()


def _impostor(proof: str, version: int = wire.PROTOCOL_VERSION) -> Callable[[Any, PeerServer], None]:
    """A server that does not know the token: it welcomes any hello, with no proof or a made-up
    one (``proof``), or refuses it as a server that wants a token (``"refuse"``)."""

    def handle(ws: Any, me: PeerServer) -> None:
        ws.send(wire.encode(["challenge", version, secrets.token_bytes(32)]))
        try:
            me.recv(ws)
        except TimeoutError:
            return  # the client sent no hello
        if proof == "refuse":
            text = "authentication failed: this server needs a token, and the client sent no proof of one"
            ws.send(wire.encode(["error", wire.NO_SEQ, "hello", "AuthenticationError", text]))
            return
        made_up = None if proof == "none" else secrets.token_bytes(32)
        info = {"backend": "host", "device": "cpu", "ops_digest": wire.OPS_DIGEST, "limits": {}}
        ws.send(wire.encode(["welcome", wire.PROTOCOL_VERSION, made_up, info]))
        me.record_until_closed(ws)

    return handle


def _relay(target: Callable[[], str], rewrite: bool = False) -> Callable[[Any, PeerServer], None]:
    """A man in the middle: passes the real server's challenge to the client and the client's
    hello to the real server (``rewrite``: with the real server's address put in its place),
    then everything both ways, as a lured client's traffic would be passed on."""

    def handle(ws: Any, me: PeerServer) -> None:
        url = target()
        with connect(url, compression=None, max_size=None, proxy=None, open_timeout=10) as upstream:
            ws.send(upstream.recv(timeout=10))
            hello = me.recv(ws)
            if rewrite:
                message = wire.decode_client_message(hello, wire.Limits())
                assert isinstance(message, wire.Hello)
                address = _auth.dialled_address(url)
                hello = wire.encode(["hello", message.version, message.nonce, address, message.proof])
            upstream.send(hello)
            answer = upstream.recv(timeout=10)
            me.answers.append(wire.decode_server_message(answer))
            ws.send(answer)
            if me.answers[-1][0] != "welcome":
                return

            def back() -> None:
                try:
                    for message in upstream:
                        ws.send(message)
                except websockets.ConnectionClosed:
                    pass

            thread = threading.Thread(target=back, daemon=True)
            thread.start()
            try:
                for message in ws:
                    upstream.send(message)
            except websockets.ConnectionClosed:
                pass
            upstream.close()
            thread.join(10)

    return handle


# -- a proof is bound to one connection and one server ---------------------------------------------


@pytest.mark.parametrize("rewrite", [False, True], ids=["as-is", "address-rewritten"])
def test_a_relayed_proof_is_refused(make_server, peer, rewrite):
    srv = make_server(token=TOKEN)
    relay = peer(_relay(lambda: srv.url, rewrite))
    with pytest.raises(
        ruda_remote.RemoteAuthenticationError, match="refused the session: authentication failed"
    ):
        ruda_remote.RemoteDevice(relay.url, token=TOKEN, timeout=10)
    (answer,) = relay.answers
    assert answer[0] == "error" and answer[3] == "AuthenticationError", answer
    if rewrite:  # the proof was made for the relay's address: it does not match the server's
        assert "wrong token" in answer[4]
    else:  # the server does not answer to the relay's address
        assert f"dialled {_auth.dialled_address(relay.url)!r}" in answer[4]
        assert "not an address of this server" in answer[4] and "--address" in answer[4]
    assert srv.server.session_count() == 0


def test_a_relay_the_server_was_told_about_is_a_tunnel(make_server, peer):
    box: dict[str, str] = {}
    relay = peer(_relay(lambda: box["url"]))
    srv = make_server(token=TOKEN, addresses=[relay.url])
    box["url"] = srv.url
    with ruda_remote.RemoteDevice(relay.url, token=TOKEN, timeout=10) as dev:
        assert float(ruda_remote.sum(ruda_remote.ones(5, device=dev))) == 5.0


def test_a_replayed_hello_is_refused(make_server):
    srv = make_server(token=TOKEN)
    address = _auth.dialled_address(srv.url)
    with connect(srv.url, compression=None, max_size=None, proxy=None, open_timeout=10) as ws:
        challenge = wire.decode_server_message(ws.recv(timeout=10))
        nonce = secrets.token_bytes(_auth.NONCE_BYTES)
        proof = _auth.client_proof(TOKEN, wire.PROTOCOL_VERSION, challenge[2], nonce, address)
        hello = wire.encode(["hello", wire.PROTOCOL_VERSION, nonce, address, proof])
        ws.send(hello)  # a genuine hello, as an eavesdropper records it
        assert wire.decode_server_message(ws.recv(timeout=10))[0] == "welcome"
    with connect(srv.url, compression=None, max_size=None, proxy=None, open_timeout=10) as again:
        again.recv(timeout=10)  # a fresh challenge: the recorded proof was for the old one
        again.send(hello)
        reply = wire.decode_server_message(again.recv(timeout=10))
    assert reply[0] == "error" and reply[3] == "AuthenticationError" and "wrong token" in reply[4], reply


@pytest.mark.parametrize("address", ["ws://127.0.0.1:1", "ws://192.0.2.7:{port}", "wss://127.0.0.1:{port}"])
def test_a_proof_for_another_address_is_refused(make_server, address):
    srv = make_server(token=TOKEN)
    address = address.format(port=srv.server.port)
    ws, reply = raw_hello(srv.url, TOKEN, address=address)  # a true proof, for that address
    ws.close()
    assert reply[0] == "error" and f"dialled {address!r}, which is not an address" in reply[4], reply


@pytest.mark.parametrize(
    "spelling", ["ws://localhost:{port}", "ws://127.0.0.1:{port}/", "ws://[::ffff:127.0.0.1]:{port}"]
)
def test_the_servers_own_address_spelled_otherwise_is_accepted(make_server, spelling):
    srv = make_server(token=TOKEN)
    with ruda_remote.RemoteDevice(spelling.format(port=srv.server.port), token=TOKEN, timeout=10) as dev:
        assert float(ruda_remote.sum(ruda_remote.ones(3, device=dev))) == 3.0


def test_cli_address_names_a_tunnel(server_process, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)
    _, url = server_process("--token-file", str(token_file), "--address", "wss://tunnel.example:8443")
    ws, reply = raw_hello(url, TOKEN, address="wss://tunnel.example:8443")  # as through that tunnel
    ws.close()
    assert reply[0] == "welcome", reply
    ws, reply = raw_hello(url, TOKEN, address="wss://other.example:8443")
    ws.close()
    assert reply[0] == "error" and "not an address of this server" in reply[4], reply


def test_server_addresses_must_be_urls():
    with pytest.raises(ValueError, match="server address 'gpu-box:3000'.*ws:// or wss://"):
        ruda_remote.server.RemoteServer("host", token=TOKEN, addresses=["gpu-box:3000"])
    with pytest.raises(TypeError, match="list of URLs"):
        ruda_remote.server.RemoteServer("host", token=TOKEN, addresses="ws://gpu-box:3000")


def test_dialled_addresses_are_canonical():
    assert _auth.dialled_address("WSS://GPU-Box.Example/ruda") == "wss://gpu-box.example:443"
    assert _auth.dialled_address("ws://[::ffff:127.0.0.1]:3000") == "ws://127.0.0.1:3000"
    assert _auth.dialled_address("ws://[0:0::1]:3000/") == "ws://[::1]:3000"
    for bad in ("http://gpu:1", "ws://:3000", "ws://gpu:99999", "gpu:3000"):
        with pytest.raises(ValueError):
            _auth.dialled_address(bad)


# -- the server proves it knows the token, before the client sends anything ------------------------


@pytest.mark.parametrize("proof", ["none", "made-up"])
def test_a_server_that_does_not_know_the_token_gets_no_data(peer, proof):
    impostor = peer(_impostor(proof))
    with pytest.raises(ruda_remote.RemoteAuthenticationError, match="did not prove that it knows the token"):
        dev = ruda_remote.RemoteDevice(impostor.url, token=TOKEN, timeout=10)
        ruda_remote.asarray(SECRET, device=dev)  # never reached
    assert impostor.done.wait(10)
    (hello,) = impostor.received  # the hello, and nothing after it
    message = wire.decode_client_message(hello, wire.Limits())
    assert isinstance(message, wire.Hello) and message.address == _auth.dialled_address(impostor.url)
    assert TOKEN.encode() not in hello and SECRET.tobytes() not in hello


def test_a_real_server_without_the_token_is_not_trusted_with_it(make_server):
    srv = make_server()  # no token: it welcomes anyone, and proves nothing
    with pytest.raises(ruda_remote.RemoteAuthenticationError, match="it sent no proof"):
        ruda_remote.RemoteDevice(srv.url, token=TOKEN, timeout=10)
    assert srv.array_count() == 0


def test_a_server_with_another_token_refuses_the_client(make_server):
    srv = make_server(token="another-" + TOKEN)
    with pytest.raises(ruda_remote.RemoteAuthenticationError, match="wrong token"):
        ruda_remote.RemoteDevice(srv.url, token=TOKEN, timeout=10)


# -- the protocol version --------------------------------------------------------------------------


def test_a_client_of_protocol_1_is_refused_naming_both_versions(server):
    with connect(server.url, compression=None, max_size=None, proxy=None, open_timeout=10) as ws:
        assert wire.decode_server_message(ws.recv(timeout=10))[:2] == ["challenge", wire.PROTOCOL_VERSION]
        ws.send(wire.encode(["hello", 1, b"\x01" * 32]))  # version 1's hello: [hello, 1, proof]
        reply = wire.decode_server_message(ws.recv(timeout=10))
        with pytest.raises(websockets.ConnectionClosed) as info:
            ws.recv(timeout=10)
    assert reply[0] == "error" and "the client speaks version 1" in reply[4], reply
    assert f"this server speaks version {wire.PROTOCOL_VERSION}" in reply[4]
    assert info.value.rcvd is not None and info.value.rcvd.code == 1002


def test_a_server_of_protocol_1_gets_nothing_from_the_client(peer):
    old = peer(_impostor("none", version=1))
    with pytest.raises(
        ruda_remote.RemoteConnectionError, match="speaks ruda-remote protocol version 1"
    ) as info:
        ruda_remote.RemoteDevice(old.url, token=TOKEN, timeout=10)
    assert f"this client speaks version {wire.PROTOCOL_VERSION}" in str(info.value)
    assert "nothing was sent" in str(info.value)
    assert old.done.wait(15)
    assert old.received == []  # not even a hello


# -- the token in the environment goes to the server it names, and no other -------------------------


@pytest.fixture()
def home(make_server, monkeypatch):
    """RUDA_REMOTE_URL names a server with TOKEN, and RUDA_REMOTE_TOKEN holds TOKEN."""
    srv = make_server(token=TOKEN)
    monkeypatch.setenv("RUDA_REMOTE_URL", srv.url)
    monkeypatch.setenv("RUDA_REMOTE_TOKEN", TOKEN)
    return srv


def _remote(url: str) -> Any:
    """An array on the device named ``remote:<url>``, as any program could ask for one."""
    return ruda.to_device(np.arange(3.0), f"remote:{url}")


def test_the_env_token_goes_to_the_server_it_names(home):
    x = _remote(home.url)
    try:
        assert float(ruda_remote.sum(x)) == 3.0
    finally:
        x.device.close()


def test_the_env_token_is_not_offered_to_another_url(home, peer):
    other = peer(_impostor("refuse"))
    with pytest.raises(ruda_remote.RemoteAuthenticationError) as info:
        _remote(other.url)
    assert "RUDA_REMOTE_TOKEN is sent only to the server RUDA_REMOTE_URL names" in str(info.value)
    assert home.url in str(info.value) and "pass token=" in str(info.value)
    (hello,) = other.received
    message = wire.decode_client_message(hello, wire.Limits())
    assert isinstance(message, wire.Hello) and message.proof is None  # no proof of any token


def test_the_env_token_is_not_offered_to_another_server_that_has_the_same_token(home, make_server):
    twin = make_server(token=TOKEN)
    with pytest.raises(ruda_remote.RemoteAuthenticationError, match="needs a token.*sent only to the server"):
        _remote(twin.url)


def test_env_token_matches_the_server_not_the_spelling(home):
    port = home.server.port
    assert _auth.env_token(f"ws://127.0.0.1:{port}/") == TOKEN
    assert _auth.env_token(f"WS://127.0.0.1:{port}") == TOKEN
    for other in (f"ws://localhost:{port}", f"wss://127.0.0.1:{port}", f"ws://127.0.0.1:{port + 1}", "junk"):
        assert _auth.env_token(other) is None, other
