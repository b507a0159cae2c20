"""Secure by default: tokens (never on the wire or in logs), TLS with a certificate made here,
and the command line's refusal to expose an unauthenticated server."""

from __future__ import annotations

import datetime
import ipaddress
import logging
import ssl
import subprocess
import sys

import numpy as np
import pytest
import ruda_remote
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from ruda_remote import cli

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


def _self_signed(tmp_path):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


def test_tls_with_a_self_signed_certificate(make_server, tmp_path):
    cert, key = _self_signed(tmp_path)
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert, key)
    srv = make_server(ssl=server_ctx, token=TOKEN)
    assert srv.url.startswith("wss://")
    client_ctx = ssl.create_default_context(cafile=str(cert))
    with ruda_remote.RemoteDevice(srv.url, token=TOKEN, ssl=client_ctx) as dev:
        x = ruda_remote.asarray(np.arange(10.0), device=dev)
        assert float(ruda_remote.sum(x * x)) == 285.0
    # A client that does not trust the certificate cannot connect.
    with pytest.raises(ruda_remote.RemoteConnectionError, match="cannot connect"):
        ruda_remote.RemoteDevice(srv.url, token=TOKEN, ssl=ssl.create_default_context())


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


def test_cli_insecure_warns(server_process):
    proc, url = server_process("--host", "0.0.0.0", "--insecure")
    assert url.startswith("ws://0.0.0.0:")
    assert "WITHOUT authentication" in proc.startup_output


def test_cli_reads_the_token_from_a_file(server_process, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    _, url = server_process("--token-file", str(token_file))
    with ruda_remote.RemoteDevice(url, token=TOKEN) as dev:
        assert float(ruda_remote.sum(ruda_remote.ones(3, device=dev))) == 3.0
    with pytest.raises(ruda_remote.RemoteConnectionError, match="authentication failed"):
        ruda_remote.RemoteDevice(url)


def test_loopback_detection():
    assert cli.is_loopback("127.0.0.1") and cli.is_loopback("::1") and cli.is_loopback("localhost")
    assert not cli.is_loopback("0.0.0.0") and not cli.is_loopback("192.168.1.4")
