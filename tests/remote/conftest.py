"""Fixtures: a real ruda remote server on loopback, backed by ruda.host, run by the tests themselves."""

from __future__ import annotations

import asyncio
import contextlib
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import ruda_remote
from remote_handshake import open_raw_session
from ruda_remote.server import RemoteServer
from websockets.sync.client import ClientConnection


class ServerThread:
    """A RemoteServer running its own event loop in a daemon thread."""

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = {"backend": "host", **kwargs}
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._error: BaseException | None = None
        self.server: RemoteServer | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the test server did not start within 30 s")
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        async def main() -> None:
            try:
                self.server = RemoteServer(**self._kwargs)
                await self.server.start()
            except BaseException as err:
                self._error = err
                self._ready.set()
                return
            self._loop = asyncio.get_running_loop()
            self._ready.set()
            await self.server.serve_forever()

        with contextlib.suppress(asyncio.CancelledError):
            asyncio.run(main())

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url

    def array_count(self) -> int:
        assert self.server is not None
        return self.server.array_count()

    def hold_up(self, seconds: float) -> None:
        """Block the server's event loop for ``seconds`` from now, so that what arrives meanwhile
        is handled in one pass of the loop, as on a busy server."""
        assert self._loop is not None
        started = threading.Event()

        def hold() -> None:
            started.set()
            time.sleep(seconds)

        self._loop.call_soon_threadsafe(hold)
        assert started.wait(10), "the server's event loop did not run the hold-up"

    def stop(self) -> None:
        if self._loop is not None and self.server is not None:
            self._loop.call_soon_threadsafe(self.server.close)
        self._thread.join(10)


@pytest.fixture(scope="session")
def server() -> Iterator[ServerThread]:
    srv = ServerThread()
    yield srv
    srv.stop()


@pytest.fixture()
def device(server: ServerThread) -> Iterator[ruda_remote.RemoteDevice]:
    """A fresh session on the shared server, closed after the test."""
    dev = ruda_remote.RemoteDevice(server.url, timeout=30)
    yield dev
    dev.close()


@pytest.fixture()
def xp(device: ruda_remote.RemoteDevice) -> Iterator[Any]:
    """ruda_remote with a fresh session as its default device."""
    ruda_remote.set_default_device(device)
    yield ruda_remote
    ruda_remote.set_default_device(None)


def start_server_process(*args: str) -> tuple[subprocess.Popen[str], str]:
    """``python -m ruda_remote serve --backend host --port 0 ...`` in a child process: it and its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "ruda_remote", "serve", "--backend", "host", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        found = re.search(r"at (wss?://\S+)", line)
        if found:
            proc.startup_output = "".join(lines)  # type: ignore[attr-defined]
            return proc, found.group(1)
    proc.kill()
    raise RuntimeError("the server process did not start:\n" + "".join(lines))


@pytest.fixture()
def make_server() -> Iterator[Any]:
    """A factory of extra servers (own limits, token, TLS), stopped after the test."""
    started: list[ServerThread] = []

    def make(**kwargs: Any) -> ServerThread:
        srv = ServerThread(**kwargs)
        started.append(srv)
        return srv

    yield make
    for srv in started:
        srv.stop()


@pytest.fixture()
def server_process() -> Iterator[Any]:
    """A factory of server child processes (``python -m ruda_remote serve``), killed after the test."""
    procs: list[subprocess.Popen[str]] = []

    def start(*args: str) -> tuple[subprocess.Popen[str], str]:
        proc, url = start_server_process(*args)
        procs.append(proc)
        return proc, url

    yield start
    for proc in procs:
        proc.kill()
        proc.wait(10)


@pytest.fixture()
def raw_session() -> Iterator[Any]:
    """A factory of raw sessions (:func:`open_raw_session`), closed after the test."""
    opened: list[ClientConnection] = []

    def open_session(url: str) -> ClientConnection:
        ws = open_raw_session(url)
        opened.append(ws)
        return ws

    yield open_session
    for ws in opened:
        ws.close()
