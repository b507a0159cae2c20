"""Secure by default: tokens (never on the wire or in logs), TLS with a certificate made here,
and the command line's refusal to expose an unauthenticated server."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import ssl
import subprocess
import sys
import threading

import numpy as np
import pytest
import ruda
import ruda_remote
from remote_handshake import tls_contexts
from ruda_remote import cli, wire
from ruda_remote import server as server_module
from ruda_remote.server import RemoteServer, start_websocket, start_websocket_async
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

TOKEN = "s3cret-token-4f1d8b"


def test_token_authentication(make_server):
    srv = make_server(token=TOKEN)
    with ruda_remote.RemoteDevice(srv.url, token=TOKEN) as dev:
        assert float(ruda_remote.sum(ruda_remote.ones(4, device=dev))) == 4.0
    with pytest.raises(ruda_remote.RemoteConnectionError, match="authentication failed"):
        ruda_remote.RemoteDevice(srv.url, token="wrong")
    with pytest.raises(ruda_remote.RemoteConnectionError, match="authentication failed"):
        ruda_remote.RemoteDevice(srv.url)


def test_the_token_never_reaches_a_log(make_server, caplog):
    caplog.set_level(logging.DEBUG)  # websockets logs every frame at this level
    srv = make_server(token=TOKEN)
    with ruda_remote.RemoteDevice(srv.url, token=TOKEN) as dev:
        float(ruda_remote.sum(ruda_remote.ones(4, device=dev)))
    with pytest.raises(ruda_remote.RemoteConnectionError):
        ruda_remote.RemoteDevice(srv.url, token=TOKEN + "x")
    assert caplog.records, "expected the frames to be logged at DEBUG"
    assert TOKEN not in caplog.text


def test_tls_with_a_self_signed_certificate(make_server, tmp_path):
    server_ctx, client_ctx = tls_contexts(tmp_path)
    srv = make_server(ssl=server_ctx, token=TOKEN)
    assert srv.url.startswith("wss://")
    # a longer wait than the 10 s default: the server's thread shares this process's GIL, and a
    # loaded 2-core CI machine once took longer than that over the handshake
    with ruda_remote.RemoteDevice(srv.url, token=TOKEN, ssl=client_ctx, connect_timeout=30) as dev:
        x = ruda_remote.asarray(np.arange(10.0), device=dev)
        assert float(ruda_remote.sum(x * x)) == 285.0
    # A client that does not trust the certificate cannot connect.
    with pytest.raises(ruda_remote.RemoteConnectionError, match="cannot connect"):
        ruda_remote.RemoteDevice(srv.url, token=TOKEN, ssl=ssl.create_default_context())


def test_a_tls_context_made_for_clients_is_refused():
    """Given a client's context, the server had started and failed every TLS handshake."""
    with pytest.raises(ValueError, match="ssl must be a context for a server.*PROTOCOL_TLS_CLIENT"):
        RemoteServer("host", ssl=ssl.create_default_context())
    with pytest.raises(TypeError, match="ssl must be an ssl.SSLContext .* got str"):
        RemoteServer("host", ssl="cert.pem")


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruda_remote", "serve", "--backend", "host", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_refuses_a_public_bind_without_a_token():
    done = _serve("--host", "0.0.0.0", "--port", "0")
    assert done.returncode == 2
    assert "refusing to bind 0.0.0.0 without a token" in done.stderr


def test_cli_says_why_it_cannot_serve_a_backend_without_a_traceback():
    # a backend installed but unable to run here (or not installed) had ended in a traceback
    rows = {row.name: row for row in ruda.backends()}
    if "cuda" in rows and rows["cuda"].available:
        pytest.skip("the CUDA backend can run here: serving it would not fail")
    done = subprocess.run(
        [sys.executable, "-m", "ruda_remote", "serve", "--backend", "cuda", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("ruda serve: backend 'cuda' is ")
    assert "Traceback" not in done.stderr


def test_cli_insecure_warns(server_process):
    proc, url = server_process("--host", "0.0.0.0", "--insecure")
    assert url.startswith("ws://0.0.0.0:")
    assert "WITHOUT authentication" in proc.startup_output


def test_cli_reads_the_token_from_a_file(server_process, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    _, url = server_process("--token-file", str(token_file))
    with ruda_remote.RemoteDevice(url, token=TOKEN) as dev:
        assert float(ruda_remote.sum(ruda_remote.ones(3, device=dev))) == 3.0
    with pytest.raises(ruda_remote.RemoteConnectionError, match="authentication failed"):
        ruda_remote.RemoteDevice(url)


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620, 0o602, 0o666, 0o700 | 0o044])
def test_a_token_file_open_to_other_users_is_refused(tmp_path, mode):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(mode)
    with pytest.raises(ValueError, match="open to other users") as info:
        cli.read_token_file(token_file)
    assert str(token_file) in str(info.value) and f"chmod 600 {token_file}" in str(info.value)
    assert TOKEN not in str(info.value)


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_cli_refuses_a_world_readable_token_file_and_serves_nothing(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o644)
    done = _serve("--host", "0.0.0.0", "--port", "0", "--token-file", str(token_file))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"chmod 600 {token_file}" in done.stderr
    assert "ws://" not in done.stdout + done.stderr  # refused before binding
    assert TOKEN not in done.stdout + done.stderr


def test_a_private_token_file_is_read(tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(f"  {TOKEN}\n")
    token_file.chmod(0o600)
    assert cli.read_token_file(token_file) == TOKEN
    token_file.write_text("\n")
    with pytest.raises(ValueError, match=f"the token file {token_file} is empty"):
        cli.read_token_file(token_file)
    with pytest.raises(OSError, match=f"cannot read the token file {tmp_path / 'missing'}"):
        cli.read_token_file(tmp_path / "missing")


def test_loopback_detection():
    is_loopback = server_module.is_loopback
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4") and not is_loopback("::")


PUBLIC_HOSTS = ["0.0.0.0", "::", "192.0.2.7", "gpu-box.example"]


@pytest.mark.parametrize("host", PUBLIC_HOSTS)
def test_remote_server_refuses_a_public_bind_without_a_token(host):
    with pytest.raises(ValueError, match=f"refusing to bind {host} without a token.*insecure=True"):
        RemoteServer("host", host=host)


@pytest.mark.parametrize("host", PUBLIC_HOSTS)
def test_start_websocket_refuses_a_public_bind_without_a_token(host):
    errors: list[BaseException] = []

    def serve() -> None:
        try:
            start_websocket("host", None, 0, host=host)
        except BaseException as err:
            errors.append(err)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    thread.join(20)
    assert not thread.is_alive(), f"start_websocket(host={host!r}) served without a token"
    assert len(errors) == 1 and isinstance(errors[0], ValueError), errors
    assert "without a token" in str(errors[0])


@pytest.mark.parametrize("host", PUBLIC_HOSTS)
def test_start_websocket_async_refuses_a_public_bind_without_a_token(host):
    async def serve() -> None:
        await asyncio.wait_for(start_websocket_async("host", None, 0, host=host), 20)

    with pytest.raises(ValueError, match="without a token"):
        asyncio.run(serve())


@pytest.mark.parametrize("host", [None, "", ["127.0.0.1", "0.0.0.0"]])
def test_a_host_that_means_every_interface_is_refused_before_binding(host, monkeypatch):
    bound = []
    monkeypatch.setattr(server_module, "serve", lambda *a, **k: bound.append(a))
    with pytest.raises(ValueError, match="host must be an address or host name"):
        RemoteServer("host", host=host, token=TOKEN)
    with pytest.raises(ValueError, match="host must be an address or host name"):
        asyncio.run(asyncio.wait_for(start_websocket_async("host", None, 0, host=host, token=TOKEN), 20))
    assert bound == []


def test_insecure_opts_in_with_a_warning():
    with pytest.warns(UserWarning) as record:
        srv = RemoteServer("host", host="0.0.0.0", insecure=True)
    assert srv.host == "0.0.0.0"
    texts = [str(w.message) for w in record]
    assert any("serving on 0.0.0.0 WITHOUT authentication" in t for t in texts), texts
    assert any("serving on 0.0.0.0 without TLS" in t for t in texts), texts
    with pytest.warns(UserWarning, match="serving on 0.0.0.0 without TLS"):
        RemoteServer("host", host="0.0.0.0", token=TOKEN)


def test_a_failed_start_leaves_nothing_bound(monkeypatch):
    log_info = server_module.log.info

    def fail_after_binding(text: str, *args: object, **kwargs: object) -> None:
        if text.startswith("ruda remote server"):  # the line start() logs once it listens
            raise RuntimeError("the log is broken")
        log_info(text, *args, **kwargs)

    monkeypatch.setattr(server_module.log, "info", fail_after_binding)
    srv = RemoteServer("host", port=0)

    async def start() -> None:
        await asyncio.wait_for(srv.start(), 20)

    with pytest.raises(RuntimeError, match="the log is broken"):
        asyncio.run(start())
    assert srv.port != 0
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", srv.port), 5):
        pass


def _handshake(url: str, origin: str | None) -> list:
    """A raw WebSocket handshake, as a browser page would make it: the server's first message."""
    with connect(url, origin=origin, compression=None, proxy=None, open_timeout=10) as ws:
        return wire.decode_server_message(ws.recv(timeout=10))


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:8000"])
def test_a_browser_origin_is_refused_by_default(server, origin):
    with pytest.raises(InvalidStatus) as info:
        _handshake(server.url, origin)
    assert info.value.response.status_code == 403
    assert _handshake(server.url, None)[0] == "challenge"  # a client without Origin is served


def test_an_allowed_origin_is_served_and_only_that_one(make_server):
    srv = make_server(allowed_origins=["https://app.example", "http://localhost:8080"])
    assert _handshake(srv.url, "https://app.example")[0] == "challenge"
    assert _handshake(srv.url, "http://localhost:8080")[0] == "challenge"
    assert _handshake(srv.url, None)[0] == "challenge"
    for near_miss in ("https://app.example.evil", "http://app.example", "https://APP.example:443"):
        with pytest.raises(InvalidStatus) as info:
            _handshake(srv.url, near_miss)
        assert info.value.response.status_code == 403, near_miss
    with ruda_remote.RemoteDevice(srv.url) as dev:  # the public client sends no Origin
        assert float(ruda_remote.sum(ruda_remote.ones(3, device=dev))) == 3.0


@pytest.mark.parametrize("origins", ["https://app.example", ["https://app.example/"], [""], [None]])
def test_allowed_origins_must_be_origins(origins):
    with pytest.raises((TypeError, ValueError), match="origin"):
        RemoteServer("host", allowed_origins=origins)


def test_cli_allowed_origin(server_process):
    _, url = server_process("--allowed-origin", "https://app.example")
    assert _handshake(url, "https://app.example")[0] == "challenge"
    with pytest.raises(InvalidStatus):
        _handshake(url, "https://other.example")
