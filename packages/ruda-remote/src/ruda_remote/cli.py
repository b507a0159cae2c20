"""``ruda serve``: run a remote server from the command line.

    ruda serve --backend host --port 3000
    ruda serve --backend cuda --device cuda:0 --host 0.0.0.0 --port 3000 \\
        --token-file token.txt --cert cert.pem --key key.pem

Binding anything but a loopback address without a token is refused unless ``--insecure``
is given, and then it warns (the rule of :class:`ruda_remote.server.RemoteServer`, which
every entry point goes through). The token is read from a file so that it never appears in
the process list or in shell history; on POSIX that file must be private (``chmod 600``).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import ssl
import stat
import sys
from pathlib import Path
from typing import Any

from ruda import BackendNotFoundError, BackendUnavailableError

from ruda_remote.server import start_websocket
from ruda_remote.wire import HANDLE_BYTES, SERVER_SESSIONS, Limits

log = logging.getLogger("ruda_remote.cli")


def add_parser(subparsers: Any) -> None:
    """Add the ``serve`` subcommand to the ``ruda`` command line."""
    parser = subparsers.add_parser(
        "serve",
        help="serve a backend to ruda_remote clients over WebSocket",
        description="Run a ruda remote server: clients connect with ruda_remote.RemoteDevice(url).",
    )
    parser.add_argument(
        "--backend", required=True, help="backend that computes (e.g. host, cuda, wgpu, torch)"
    )
    parser.add_argument("--device", default=None, help="device of that backend (default: its default device)")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, loopback only)"
    )
    parser.add_argument("--port", type=int, required=True, help="TCP port (0 picks a free one)")
    parser.add_argument(
        "--token-file",
        type=Path,
        default=None,
        help="file holding the token clients must know (private: chmod 600)",
    )
    parser.add_argument("--cert", type=Path, default=None, help="TLS certificate (PEM); serves wss://")
    parser.add_argument("--key", type=Path, default=None, help="TLS private key (PEM) for --cert")
    parser.add_argument(
        "--insecure",
        action="store_true",
        help="allow a non-loopback bind without a token (anyone who can reach it can run ops)",
    )
    parser.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a browser origin (scheme://host[:port]) allowed to connect; repeat for more "
        "(default: none, browsers are refused)",
    )
    parser.add_argument(
        "--address",
        action="append",
        default=[],
        metavar="URL",
        help="a URL clients dial to reach this server besides its own address (a tunnel, a proxy, a "
        "DNS name), e.g. wss://gpu.example.org:443; repeat for more. With a token, proofs made for "
        "any other address are refused",
    )
    parser.add_argument(
        "--max-message-mb",
        type=int,
        default=Limits.max_message_bytes // 2**20,
        help="largest message accepted, in MiB",
    )
    parser.add_argument(
        "--max-session-mb",
        type=int,
        default=Limits.max_session_bytes // 2**20,
        help="memory each session's arrays may hold, in MiB "
        f"(each array counts {HANDLE_BYTES} bytes besides its data)",
    )
    parser.add_argument(
        "--max-header-mb",
        type=int,
        default=Limits.max_header_bytes // 2**20,
        help="largest message header (operations and their arguments; arrays travel after it), in MiB",
    )
    parser.add_argument(
        "--max-sessions",
        type=int,
        default=Limits.max_sessions,
        help="connections served at once (handshakes included); more are refused",
    )
    parser.add_argument(
        "--max-sessions-per-address",
        type=int,
        default=Limits.max_sessions_per_address,
        help="connections served at once from one client IP address; more are refused",
    )
    parser.add_argument(
        "--max-server-mb",
        type=int,
        default=None,
        help="memory the arrays of all sessions together may hold, in MiB "
        f"(default: {SERVER_SESSIONS} times --max-session-mb)",
    )
    parser.set_defaults(func=serve_command)


def read_token_file(path: Path) -> str:
    """The token in ``path``, stripped of surrounding whitespace.

    On POSIX a file that group or others may read or write is refused: they could learn
    the token, or replace it with one of their own, and so use the server.
    """
    try:
        mode = path.stat().st_mode
        if os.name == "posix" and mode & 0o077:
            raise ValueError(
                f"the token file {path} is open to other users (mode {stat.filemode(mode)}): whoever can "
                f"read or change it can use the server; make it private with: chmod 600 {path}"
            )
        token = path.read_text().strip()
    except OSError as err:
        raise OSError(f"cannot read the token file {path}: {err.strerror or err}") from None
    if not token:
        raise ValueError(f"the token file {path} is empty: write the token into it")
    return token


def serve_command(args: argparse.Namespace) -> int:
    """Check the security options, then serve until interrupted."""
    token = None
    if args.token_file is not None:
        try:
            token = read_token_file(args.token_file)
        except (OSError, ValueError) as err:
            print(f"ruda serve: {err}", file=sys.stderr)
            return 2
    if (args.cert is None) != (args.key is None):
        print("ruda serve: --cert and --key go together", file=sys.stderr)
        return 2
    context = None
    if args.cert is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
    try:
        limits = Limits(
            max_message_bytes=args.max_message_mb * 2**20,
            max_header_bytes=args.max_header_mb * 2**20,
            max_session_bytes=args.max_session_mb * 2**20,
            max_sessions=args.max_sessions,
            max_sessions_per_address=args.max_sessions_per_address,
            max_server_bytes=None if args.max_server_mb is None else args.max_server_mb * 2**20,
        )
    except ValueError as err:
        print(f"ruda serve: {err}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a foreground server stops
            start_websocket(
                args.backend,
                args.device,
                args.port,
                host=args.host,
                token=token,
                ssl=context,
                limits=limits,
                insecure=args.insecure,
                allowed_origins=args.allowed_origin,
                addresses=args.address,
            )
    except (ValueError, BackendNotFoundError, BackendUnavailableError) as err:
        # a refused bind, an unknown device, a backend not installed or unable to run here: what
        # to change, not a traceback
        print(f"ruda serve: {err}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m ruda_remote serve ...``: the same as ``ruda serve ...``."""
    parser = argparse.ArgumentParser(prog="python -m ruda_remote")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))
