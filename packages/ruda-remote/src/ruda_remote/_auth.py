"""The handshake's proofs: client and server each show that they know the token, bound to
this one connection, without the token crossing the network.

Both proofs are HMAC-SHA256 keyed by the token over the same transcript: the protocol
version, the server's nonce, the client's nonce, and the server's address as the client
dialled it (:func:`dialled_address`). Each side's fresh nonce makes a recorded proof useless
on a later connection; the address makes a proof useless at any other server, so a server
the client was lured to cannot relay the client's proof to the real one (the real one
refuses an address it does not answer to, and the proof cannot be moved to another address
without the token). The two proofs differ in their first field (``client`` or ``server``),
so neither can be reflected as the other.

The client proves first, and the server proves only to a client that has proved: an
unauthenticated peer never gets an HMAC of the server's token. A server the client dials
does get the client's proof before it proves anything, so the token must be a random secret
(``secrets.token_urlsafe(32)``), not a password that could be guessed from one HMAC offline.

This module imports no backend and nothing of ruda: it can be tested and fuzzed alone.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import urllib.parse

#: bytes of each side's nonce, and of a proof (an HMAC-SHA256)
NONCE_BYTES = 32
PROOF_BYTES = 32
#: longest address a hello may carry (a host name is at most 253 characters)
MAX_ADDRESS_CHARS = 300

_DEFAULT_PORTS = {"ws": 80, "wss": 443}


def canonical_host(host: str) -> str:
    """``host`` as addresses compare it: names in lower case, IP addresses in their compressed
    form (an IPv4-mapped IPv6 address as the IPv4 address it maps)."""
    host = host.lower()
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped.compressed
    return ip.compressed


def split_address(url: str) -> tuple[str, str, int]:
    """Scheme, canonical host and port of a ``ws://`` or ``wss://`` URL (the path is not part
    of the address). Raises ValueError naming what is wrong."""
    if not isinstance(url, str):
        raise ValueError(f"a server address is a ws:// or wss:// URL, got {type(url).__name__}")
    try:
        parts = urllib.parse.urlsplit(url)
        scheme, host, port = parts.scheme.lower(), parts.hostname, parts.port
    except ValueError as err:
        raise ValueError(f"{url!r} is not a valid ws:// or wss:// URL: {err}") from None
    if scheme not in _DEFAULT_PORTS or not host:
        raise ValueError(f"{url!r} is not a ws:// or wss:// URL with a host")
    return scheme, canonical_host(host), _DEFAULT_PORTS[scheme] if port is None else port


def join_address(scheme: str, host: str, port: int) -> str:
    """The canonical address text of :func:`split_address`'s parts."""
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}"


def dialled_address(url: str) -> str:
    """The server's address as a client dialling ``url`` reaches it: ``scheme://host:port``,
    with the host canonical and the default port filled in."""
    return join_address(*split_address(url))


def _transcript(role: bytes, version: int, server_nonce: bytes, client_nonce: bytes, address: str) -> bytes:
    fields = [role, str(version).encode(), server_nonce, client_nonce, address.encode()]
    # each field with its length first: no two transcripts read alike
    return b"ruda-remote handshake" + b"".join(len(f).to_bytes(4, "big") + f for f in fields)


def client_proof(token: str, version: int, server_nonce: bytes, client_nonce: bytes, address: str) -> bytes:
    """What the client sends to show it knows ``token``, for this connection only."""
    transcript = _transcript(b"client", version, server_nonce, client_nonce, address)
    return hmac.new(token.encode(), transcript, hashlib.sha256).digest()


def server_proof(token: str, version: int, server_nonce: bytes, client_nonce: bytes, address: str) -> bytes:
    """What the server sends to show it knows ``token``, for this connection only."""
    transcript = _transcript(b"server", version, server_nonce, client_nonce, address)
    return hmac.new(token.encode(), transcript, hashlib.sha256).digest()


def proofs_match(received: bytes | None, expected: bytes) -> bool:
    """Whether a received proof is the expected one (compared in constant time)."""
    return received is not None and hmac.compare_digest(received, expected)


def env_token(url: str) -> str | None:
    """``RUDA_REMOTE_TOKEN``, if ``url`` names the server ``RUDA_REMOTE_URL`` names, else None.

    The token in the environment is meant for that one server: a program that opens another
    ``remote:`` URL (from a config file, a pickled device name, a user's input) must not prove
    it to a server the token was never given for."""
    token = os.environ.get("RUDA_REMOTE_TOKEN") or None
    home = os.environ.get("RUDA_REMOTE_URL")
    if token is None or not home:
        return None
    try:
        return token if dialled_address(url) == dialled_address(home) else None
    except ValueError:
        return None
