"""Handshakes made by hand, as an attacker's client would make them: raw WebSockets that say
exactly what a test wants, whatever the public client would send."""

from __future__ import annotations

import base64
import datetime
import ipaddress
import os
import secrets
import socket
import ssl
import struct
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
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


def self_signed_certificate(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by its own key, and that key: the files of each."""
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
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


def tls_contexts(directory: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server's TLS context with a self-signed certificate (its files in ``directory``), and a
    client's that trusts it."""
    cert, key = self_signed_certificate(directory)
    server_ssl = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ssl.load_cert_chain(cert, key)
    return server_ssl, ssl.create_default_context(cafile=str(cert))


class SocketPeer:
    """A WebSocket client written on a bare socket with a small receive buffer, so that it can
    stop reading whenever a test likes, as a client that wants the server to hold its replies
    would: websockets' own clients read whatever comes. With ``ssl_context``, over TLS."""

    def __init__(self, url: str, ssl_context: ssl.SSLContext | None = None) -> None:
        self.url = url
        host, port = url.split("//")[1].rsplit(":", 1)
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.settimeout(10)
        self.sock.connect((host, int(port)))
        if ssl_context is not None:
            self.sock = ssl_context.wrap_socket(self.sock, server_hostname=host)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        response = b""
        while b"\r\n\r\n" not in response:
            response += self._read(1)
        assert b" 101 " in response.split(b"\r\n")[0], response

    def hello(self) -> list:
        """Read the challenge and say hello (no token); the server's answer."""
        challenge = wire.decode_server_message(self.recv())
        nonce = secrets.token_bytes(_auth.NONCE_BYTES)
        address = _auth.dialled_address(self.url)
        self.send(wire.encode(["hello", challenge[1], nonce, address, None]))
        return wire.decode_server_message(self.recv())

    def send(self, data: bytes, opcode: int = 2) -> None:
        """One frame, masked as a client's must be (with a zero mask: the bytes as they are)."""
        n = len(data)
        if n < 126:
            length = bytes([0x80 | n])
        elif n < 2**16:
            length = bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            length = bytes([0x80 | 127]) + struct.pack(">Q", n)
        self.sock.sendall(bytes([0x80 | opcode]) + length + b"\0\0\0\0" + data)

    def recv(self) -> bytes:
        """The payload of the next frame (the server sends unfragmented frames)."""
        head = self._read(2)
        n = head[1] & 0x7F
        if n == 126:
            n = struct.unpack(">H", self._read(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self._read(8))[0]
        return self._read(n)

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            more = self.sock.recv(n - len(data))
            if not more:
                raise EOFError("the server closed the connection")
            data += more
        return data

    def close(self) -> None:
        self.sock.close()
