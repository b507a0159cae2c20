"""All sessions together hold at most the server's memory budget (``Limits.max_server_bytes``).

Sessions each within their own limit are refused past it, before anything is allocated or kept,
with an error that says so; the other sessions lose nothing; and whatever a session held or had
reserved returns to the budget when it releases its arrays, ends, or its client dies, even in
the middle of an upload.
"""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import ruda_remote
from remote_handshake import SocketPeer, tls_contexts
from ruda_remote import server as server_module
from ruda_remote import wire

MIB = 2**20
#: what each live array is charged besides its data
HANDLE = wire.HANDLE_BYTES
#: each session may hold 4 MiB, all of them together 6 MiB: two sessions within their own
#: limits pass the server's
SESSION = 4 * MIB
BUDGET = 6 * MIB
BUDGET_ERROR = "server memory budget exhausted"


def _budget_server(make_server: Any, **limits: Any) -> Any:
    return make_server(limits=wire.Limits(max_session_bytes=SESSION, max_server_bytes=BUDGET, **limits))


def _ones(n: int) -> int:
    """The float32 ones of an array that costs n MiB in all: its data and its handle."""
    return (n * MIB - HANDLE) // 4


def _mib(n: int, dev: ruda_remote.RemoteDevice) -> ruda_remote.Array:
    """An array of float32 ones made on the server that costs n MiB with its handle, waited for
    (a refusal is raised here)."""
    x = ruda_remote.ones(_ones(n), dtype=ruda_remote.float32, device=dev)
    dev.sync()
    return x


def _released(dev: ruda_remote.RemoteDevice) -> int:
    """The session's bytes once the arrays dropped so far are released on the server."""
    gc.collect()
    dev.stats()  # sends the releases queued so far; they run after this batch's ops
    return int(dev.stats()["bytes"])


def _held_becomes(srv: Any, expected: int, timeout: float = 10.0) -> int:
    """The server's held bytes, once they are ``expected`` or ``timeout`` has passed."""
    deadline = time.monotonic() + timeout
    while srv.server.held_bytes() != expected and time.monotonic() < deadline:
        time.sleep(0.02)
    return int(srv.server.held_bytes())


def test_limits_default_the_budget_to_four_full_sessions():
    assert wire.Limits().server_bytes == 16 * 2**30
    assert wire.Limits(max_session_bytes=MIB).server_bytes == 4 * MIB
    assert wire.Limits(8 * MIB, 2 * MIB).max_server_bytes is None  # positional arguments as before
    assert wire.Limits(max_server_bytes=3 * MIB).server_bytes == 3 * MIB
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="max_server_bytes must be a positive integer or None"):
            wire.Limits(max_server_bytes=bad)


def test_a_second_session_within_its_limit_is_refused_past_the_servers_budget(make_server):
    srv = _budget_server(make_server)
    with (
        ruda_remote.RemoteDevice(srv.url, timeout=30) as first,
        ruda_remote.RemoteDevice(srv.url, timeout=30) as second,
    ):
        held = _mib(4, first)  # the first session's whole limit
        needs = rf"ones needs 3145728 bytes \(3141632 of data and 1 x {HANDLE} for its arrays' handles\)"
        with pytest.raises(MemoryError, match=f"{BUDGET_ERROR}: {needs}") as info:
            _mib(3, second)  # within its own 4 MiB, but 7 MiB for the server
        assert "ruda serve --max-server-mb" in str(info.value)
        assert srv.server.held_bytes() == 4 * MIB  # refused before the backend allocated it
        # the refused session goes on within what is left, and the first lost nothing
        small = _mib(1, second)
        assert np.asarray(held).sum() == _ones(4)  # (a read charges nothing: the session is full)
        assert srv.server.held_bytes() == 5 * MIB
        del held
        assert _released(first) == 0
        assert srv.server.held_bytes() == MIB
        big = _mib(3, second)  # refused before, fits now that the first has released its array
        assert np.asarray(big).sum() + np.asarray(small).sum() == _ones(3) + _ones(1)
        assert _released(second) == 4 * MIB
    assert _held_becomes(srv, 0) == 0  # both sessions ended: everything returned


def test_an_upload_past_the_servers_budget_is_refused_before_any_of_it_is_kept(make_server):
    srv = _budget_server(make_server, max_message_bytes=MIB)  # uploads of 3 MiB come in 3 pieces
    values = np.arange(3 * MIB // 8, dtype=np.float64)
    with (
        ruda_remote.RemoteDevice(srv.url, timeout=30) as first,
        ruda_remote.RemoteDevice(srv.url, timeout=30) as second,
    ):
        held = _mib(4, first)
        needs = f"__upload__ needs {3 * MIB + HANDLE} bytes"
        with pytest.raises(MemoryError, match=f"{BUDGET_ERROR}: {needs}"):
            ruda_remote.asarray(values, device=second)
            second.sync()  # (an upload does not wait: its error comes at the next wait)
        assert second.stats()["bytes"] == 0 and srv.server.held_bytes() == 4 * MIB
        del held
        assert _released(first) == 0
        x = ruda_remote.asarray(values, device=second)
        np.testing.assert_array_equal(np.asarray(x), values)
        assert srv.server.held_bytes() == 3 * MIB + HANDLE


def test_sessions_racing_for_the_last_of_the_budget_never_pass_it(make_server):
    srv = _budget_server(make_server)
    sessions = 6  # each may hold 4 MiB: 24 MiB asked of a 6 MiB budget, all at once
    devices = [ruda_remote.RemoteDevice(srv.url, timeout=60) for _ in range(sessions)]
    kept: list[list[ruda_remote.Array]] = [[] for _ in range(sessions)]
    refusals: list[str] = []
    errors: list[BaseException] = []
    start = threading.Barrier(sessions)

    def greedy(i: int) -> None:
        try:
            start.wait(10)
            while True:
                kept[i].append(_mib(1, devices[i]))
        except MemoryError as err:
            refusals.append(str(err))
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=greedy, args=(i,)) for i in range(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    try:
        assert not errors, errors[:3]
        assert len(refusals) == sessions
        assert all(BUDGET_ERROR in r or "session memory limit exceeded" in r for r in refusals), refusals
        held = [int(dev.stats()["bytes"]) for dev in devices]
        # every MiB of the budget is taken and no more: no two sessions got the same last MiB
        assert sum(held) == srv.server.held_bytes() == BUDGET, held
        assert [len(k) * MIB for k in kept] == held
    finally:
        for dev in devices:
            dev.close()
    assert _held_becomes(srv, 0) == 0


def test_a_killed_client_returns_what_it_held_and_what_its_upload_had_reserved(make_server):
    srv = _budget_server(make_server)
    upload = wire.OP_CODES["__upload__"]
    # A raw client holds 2 MiB, then announces a 1 MiB upload, sends half of it, and stays.
    code = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from remote_handshake import open_raw_session
        from ruda_remote import wire
        ws = open_raw_session({srv.url!r})
        def upload(seq, handle, nbytes):
            op = [seq, {upload}, [handle], ["float32", [nbytes // 4], wire.PAYLOAD], {{}}, 0, None]
            ws.send(wire.encode(["batch", [op], []]))
        upload(1, 1, {2 * MIB})
        ws.send(bytes({2 * MIB}))
        upload(2, 2, {MIB})
        ws.send(bytes({MIB // 2}))
        ws.send(wire.encode(["batch", [[3, wire.OP_CODES["__stats__"], [], [], {{}}, 0, None]], []]))
        print("ready", flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        # 2 MiB held and 1 MiB reserved for the upload on its way, and the handle of each
        assert _held_becomes(srv, 3 * MIB + 2 * HANDLE) == 3 * MIB + 2 * HANDLE
        with ruda_remote.RemoteDevice(srv.url, timeout=30) as dev:
            with pytest.raises(MemoryError, match=BUDGET_ERROR):
                _mib(3, dev)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
            assert _held_becomes(srv, 0) == 0  # the dead session's array and reservation came back
            x = _mib(3, dev)
            assert float(ruda_remote.sum(x)) == _ones(3)
    finally:
        proc.kill()
        proc.wait(10)


def test_ruda_serve_takes_the_budget(server_process):
    _, url = server_process("--max-session-mb", "4", "--max-server-mb", "6")
    with (
        ruda_remote.RemoteDevice(url, timeout=30) as first,
        ruda_remote.RemoteDevice(url, timeout=30) as second,
    ):
        held = _mib(4, first)
        with pytest.raises(MemoryError, match=f"{BUDGET_ERROR}.* together may hold 6291456 bytes"):
            _mib(3, second)
        del held
        assert _released(first) == 0
        x = _mib(3, second)
        assert float(x[0]) == 1.0
        assert _released(second) == 3 * MIB  # its data and its handle


def test_ruda_serve_refuses_a_budget_that_is_not_positive():
    serve = [sys.executable, "-m", "ruda_remote", "serve", "--backend", "host", "--port", "0"]
    done = subprocess.run(
        [*serve, "--max-server-mb", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "max_server_bytes must be a positive integer or None, got 0" in done.stderr


@pytest.mark.parametrize("tls", [False, True], ids=["ws", "wss"])
def test_a_reply_its_client_does_not_read_stays_charged_until_its_connection_is_closed(
    make_server, monkeypatch, caplog, tmp_path, tls
):
    """A read of a view makes a copy of its elements to send; a client that stops reading
    keeps that copy waiting in the server's buffers. It counts against the budget until the
    server, after ``OUTPUT_STALL_S`` with nothing read, closes the connection (before, its charge
    ended with the batch and the copy stayed for as long as the client stayed).

    The same over TLS, where asyncio's TLS layer hands a whole message on to the TCP transport
    beneath it at once: before, the charge ended as soon as it had, and the stall went unseen
    (the 12 MiB waited uncharged until websockets' keepalive gave up on the client, 50 s later
    with its defaults)."""
    monkeypatch.setattr(server_module, "OUTPUT_STALL_S", 1.0)
    caplog.set_level("WARNING", logger="ruda_remote.server")
    server_ssl, client_ssl = tls_contexts(tmp_path) if tls else (None, None)
    limits = wire.Limits(max_session_bytes=16 * MIB, max_server_bytes=24 * MIB)
    srv = make_server(limits=limits, ssl=server_ssl)
    peer = SocketPeer(srv.url, client_ssl)
    try:
        assert peer.hello()[0] == "welcome"
        f64 = {"dtype": wire.DType("float64")}
        view = [wire.Handle(1), [12 * MIB // 8]]  # 12 MiB of elements, more than the socket takes
        ops = [[1, wire.OP_CODES["zeros"], [1], [[]], f64, 0, None]]
        ops += [[2, wire.OP_CODES["broadcast_to"], [2], view, {}, 0, None]]
        ops += [[3, wire.OP_CODES["__read__"], [], [wire.Handle(2)], {}, 0, None]]
        peer.send(wire.encode(["batch", ops, []]))
        time.sleep(0.5)  # ... and reads nothing
        assert srv.server.held_bytes() >= 12 * MIB  # the read's copy, waiting to be sent
        assert _held_becomes(srv, 0) == 0  # the connection was closed, and the session freed
    finally:
        peer.close()
    assert any("has read none of the" in r.getMessage() for r in caplog.records)
