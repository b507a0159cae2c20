"""A real server on loopback under abuse: malformed frames, wrong versions, oversized messages,
unknown ops, foreign handles, memory limits, killed servers and clients, many clients at once."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import numpy as np
import pytest
import ruda_remote
import websockets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from remote_handshake import SocketPeer, raw_hello
from ruda.testing import assert_matches_numpy
from ruda_remote import server as server_module
from ruda_remote import wire
from websockets.sync.client import connect


def _raw(url: str, version: int = wire.PROTOCOL_VERSION):
    """A bare WebSocket session: the challenge, our hello (another version's is ``["hello",
    version, nil]``, as version 1's was), and the server's answer."""
    if version == wire.PROTOCOL_VERSION:
        return raw_hello(url)
    ws = connect(url, compression=None, max_size=None, proxy=None, legacy=True)
    challenge = wire.decode_server_message(ws.recv(timeout=10))
    assert challenge[0] == "challenge" and challenge[1] == wire.PROTOCOL_VERSION
    ws.send(wire.encode(["hello", version, None]))
    return ws, wire.decode_server_message(ws.recv(timeout=10))


def _stats(ws) -> dict:
    ws.send(wire.encode(["batch", [[99, wire.OP_CODES["__stats__"], [], [], {}, 0, None]], []]))
    reply = wire.decode_server_message(ws.recv(timeout=10))
    assert reply[0] == "stats", reply
    return reply[2]


def test_malformed_frames_get_an_error_and_the_connection_stays(server):
    ws, welcome = _raw(server.url)
    assert welcome[0] == "welcome"
    for junk in (b"\xc1\xff garbage", b"", wire.encode(["batch", "not a list", []]), "a text frame"):
        ws.send(junk)
        reply = wire.decode_server_message(ws.recv(timeout=10))
        assert reply[0] == "error" and reply[1] == -1, reply
        assert reply[4]  # says what was wrong
    assert _stats(ws) == {"arrays": 0, "bytes": 0}  # still served
    ws.close()


def test_wrong_protocol_version_is_refused_naming_both(server):
    ws, reply = _raw(server.url, version=wire.PROTOCOL_VERSION + 41)
    assert reply[0] == "error"
    assert (
        f"version {wire.PROTOCOL_VERSION + 41}" in reply[4] and f"version {wire.PROTOCOL_VERSION}" in reply[4]
    )
    with pytest.raises(websockets.ConnectionClosed) as info:
        ws.recv(timeout=10)
    assert info.value.rcvd is not None and info.value.rcvd.code == 1002


def test_unknown_operation_code_is_an_error(server):
    ws, _ = _raw(server.url)
    ws.send(wire.encode(["batch", [[0, len(wire.OPS) + 3, [1], [], {}, 0, None]], []]))
    reply = wire.decode_server_message(ws.recv(timeout=10))
    assert reply[0] == "error" and "unknown operation code" in reply[4]
    assert _stats(ws)["arrays"] == 0
    ws.close()


def test_handles_of_another_session_are_unknown(server):
    a, b = ruda_remote.RemoteDevice(server.url), ruda_remote.RemoteDevice(server.url)
    try:
        x = ruda_remote.asarray(np.arange(4.0), device=a)
        # Forge an op in session b that names x's handle number from session a.
        forged = ruda_remote._dispatch.wrap(b, x._handle, (x.shape, x.dtype.name))
        with pytest.raises(KeyError, match=f"unknown handle {x._handle}: not created in this session"):
            float(ruda_remote.sum(forged))
        assert float(ruda_remote.sum(x)) == 6.0  # a's array is untouched
        forged._device = None  # never release a handle b does not own
    finally:
        a.close()
        b.close()


def test_oversized_messages(make_server):
    srv = make_server(limits=wire.Limits(max_message_bytes=64 * 1024))
    dev = ruda_remote.RemoteDevice(srv.url)
    # An array larger than a message travels in pieces; an operation whose header would pass the
    # limit is refused by the client before it is sent, and the session goes on.
    big = ruda_remote.asarray(np.arange(20_000.0), device=dev)
    one = ruda_remote.ones(1, device=dev)
    with pytest.raises(
        ValueError, match="larger than the server's limit of 65536 bytes for a message's header"
    ):
        ruda_remote.stack([one] * 10_000)
    assert float(ruda_remote.sum(big)) == sum(range(20_000))
    dev.close()
    # A raw client that sends one anyway is disconnected with 1009 (message too big).
    ws, _ = _raw(srv.url)
    ws.send(b"\x00" * 100_000)
    with pytest.raises(websockets.ConnectionClosed) as info:
        ws.recv(timeout=10)
    assert info.value.rcvd is not None and info.value.rcvd.code == 1009


def test_session_memory_limit_is_a_clear_error_and_the_connection_stays(make_server):
    srv = make_server(limits=wire.Limits(max_session_bytes=100_000))
    dev = ruda_remote.RemoteDevice(srv.url)
    small = ruda_remote.ones(1000, device=dev)
    with pytest.raises(MemoryError, match="session memory limit exceeded"):
        big = ruda_remote.zeros((100, 1000), device=dev)
        float(big[0, 0])
    assert float(ruda_remote.sum(small)) == 1000.0
    assert dev.stats()["bytes"] == 8000 + wire.HANDLE_BYTES  # small's data and its handle
    dev.close()


def test_server_killed_mid_stream_raises_within_a_timeout(server_process):
    proc, url = server_process()
    dev = ruda_remote.RemoteDevice(url, timeout=20)
    x = ruda_remote.ones(1000, device=dev)
    assert float(ruda_remote.sum(x)) == 1000.0
    for _ in range(500):
        x = x + 1  # queued and streaming
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    start = time.monotonic()
    with pytest.raises(ruda_remote.RemoteConnectionError, match="lost|closed"):
        for _ in range(100_000):
            x = x + 1
        float(ruda_remote.sum(x))
    assert time.monotonic() - start < 10


def test_killed_client_frees_its_arrays(server):
    code = textwrap.dedent(f"""
        import sys, time, numpy as np, ruda_remote
        dev = ruda_remote.RemoteDevice({server.url!r})
        arrays = [ruda_remote.asarray(np.arange(100.0), device=dev) + i for i in range(40)]
        dev.sync()
        print("ready", flush=True)
        time.sleep(60)
    """)
    before = server.array_count()
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        assert server.array_count() >= before + 40
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 10
        while server.array_count() > before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.array_count() == before
    finally:
        proc.kill()
        proc.wait(10)


def test_fifty_concurrent_clients(server):
    clients, ops = 50, 1000
    errors: list[BaseException] = []
    results: dict[int, np.ndarray] = {}

    def client(i: int) -> None:
        try:
            with ruda_remote.RemoteDevice(server.url, timeout=60) as dev:
                x = ruda_remote.asarray(np.full(8, float(i)), device=dev)
                for k in range(ops // 2):
                    x = x * 1.0 + (k % 3)  # two ops per step
                results[i] = np.from_dlpack(x)
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:3]
    added = sum(k % 3 for k in range(ops // 2))
    for i in range(clients):
        assert_matches_numpy(results[i], np.full(8, float(i) + added))
    deadline = time.monotonic() + 10
    while server.server.session_count() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.server.session_count() == 0  # every session closed, its arrays freed


def test_a_hung_server_raises_a_timeout_not_a_hang(server_process):
    proc, url = server_process()
    dev = ruda_remote.RemoteDevice(url, timeout=2)
    x = ruda_remote.ones(10, device=dev)
    assert float(ruda_remote.sum(x)) == 10.0
    proc.send_signal(signal.SIGSTOP)
    try:
        start = time.monotonic()
        with pytest.raises(ruda_remote.RemoteTimeoutError, match="no answer"):
            float(ruda_remote.sum(x + 1))
        assert time.monotonic() - start < 10
    finally:
        proc.send_signal(signal.SIGCONT)


def test_a_wait_ends_at_its_timeout_even_while_other_answers_come(make_server, monkeypatch):
    # each message within the timeout, none of them the answer: the timeout bounds the whole wait
    srv = make_server()
    dev = ruda_remote.RemoteDevice(srv.url, timeout=0.5)
    waits: list[float | None] = []

    def receive(timeout: float | None, what: str) -> list:
        waits.append(timeout)
        if timeout is not None and timeout < 0.05:
            raise ruda_remote.RemoteTimeoutError(f"no answer within {timeout} s while waiting for {what}")
        time.sleep(0.05)
        return ["meta", 10**9, []]  # the answer to an op nobody waits for

    monkeypatch.setattr(dev, "_receive", receive)
    outcome: list[BaseException] = []
    waiter = threading.Thread(target=lambda: outcome.append(_raised(lambda: dev._wait(1))), daemon=True)
    waiter.start()
    waiter.join(5)
    assert not waiter.is_alive(), "the wait did not end"
    assert isinstance(outcome[0], ruda_remote.RemoteTimeoutError), outcome
    assert "0.5 s allowed" in str(outcome[0]) and 5 < len(waits) < 20


def test_data_of_another_shape_or_dtype_than_the_arrays_is_refused(make_server, monkeypatch):
    # a server that answers a read with other data: a clear error, not NumPy's reshape error later
    dev = ruda_remote.RemoteDevice(make_server().url, timeout=10)
    x = ruda_remote.ones((), device=dev)
    assert float(x) == 1.0
    for sent in (np.arange(3.0), np.ones((), np.int8)):
        monkeypatch.setattr(dev, "read", lambda handle, sent=sent: sent)
        with pytest.raises(ruda_remote.RemoteConnectionError, match=r"sent .* for an array of float64\[\]"):
            float(x * 2)


def _raised(call: Any) -> BaseException | None:
    try:
        call()
    except BaseException as err:
        return err
    return None


@st.composite
def _frames(draw: st.DrawFn) -> bytes:
    """Frames near the format: a valid batch with a few bytes changed, or arbitrary bytes."""
    x = wire.Handle(1)
    ops = [
        [0, wire.OP_CODES["__upload__"], [1], ["float64", [4], b"\x00" * 32], {}, 0, [[[4], "float64"]]],
        [1, wire.OP_CODES["add"], [2], [x, 2.0], {}, wire.FLAG_META, None],
        [2, wire.OP_CODES["__getitem__"], [3], [x, (slice(1, None, None),)], {}, 0, None],
        [3, wire.OP_CODES["sum"], [4], [x], {"axis": 0}, 0, None],
    ]
    base = wire.encode(["batch", ops, [draw(st.integers(1, 5))]])
    if draw(st.booleans()):
        return draw(st.binary(max_size=300))
    data = bytearray(base)
    for _ in range(draw(st.integers(0, 4))):
        data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    return bytes(data)


def test_fuzzed_frames_against_the_real_server(server):
    ws, _ = _raw(server.url)
    before = server.array_count()

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(frame=_frames())
    def check(frame: bytes) -> None:
        ws.send(frame)
        # The server answers each frame with zero or more replies; a stats request marks the end
        # (sent twice when the frame announced a payload and the first request was taken as it).
        ws.send(wire.encode(["batch", [[10**9, wire.OP_CODES["__stats__"], [], [], {}, 0, None]], []]))
        while True:
            reply = wire.decode_server_message(ws.recv(timeout=10))
            if reply[0] == "stats":
                return
            assert reply[0] in ("error", "meta", "data"), reply
            if reply[0] == "data" and reply[4] is wire.PAYLOAD:
                ws.recv(timeout=10)
            if reply[0] == "error" and "payload" in reply[4]:
                ws.send(
                    wire.encode(["batch", [[10**9, wire.OP_CODES["__stats__"], [], [], {}, 0, None]], []])
                )

    check()
    ws.close()
    deadline = time.monotonic() + 10
    while server.array_count() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.array_count() == before  # the session's arrays went with it


def test_more_outputs_than_the_wire_allows_raise_at_the_call(server):
    dev = ruda_remote.RemoteDevice(server.url, timeout=10)  # a regression times out, never hangs
    x = ruda_remote.asarray(np.arange(wire.MAX_OUTPUTS + 904.0), device=dev)
    start = time.monotonic()
    with pytest.raises(ValueError, match=f"unstack would make 5000 arrays.*at most {wire.MAX_OUTPUTS}"):
        ruda_remote.unstack(x)
    with pytest.raises(ValueError, match="broadcast_arrays would make"):
        ruda_remote.broadcast_arrays(*[x] * (wire.MAX_OUTPUTS + 1))
    assert time.monotonic() - start < 5
    parts = ruda_remote.unstack(x[: wire.MAX_OUTPUTS])  # at the limit: served
    assert len(parts) == wire.MAX_OUTPUTS and float(parts[-1]) == wire.MAX_OUTPUTS - 1
    assert float(ruda_remote.sum(x)) == sum(range(wire.MAX_OUTPUTS + 904))
    dev.close()


def test_a_batch_the_server_refuses_fails_the_waiting_call(server):
    dev = ruda_remote.RemoteDevice(server.url, timeout=10)  # a regression times out, never hangs
    x = ruda_remote.ones(4, device=dev)
    dev.sync()
    y = x + 1  # queued in the batch the server will refuse
    stats = wire.OP_CODES["__stats__"]
    start = time.monotonic()
    # A string argument past the decoder's bound: the client packs it, the server refuses it.
    with pytest.raises(ValueError, match="refused a batch, none of its operations ran"):
        dev.request(stats, [], ["x" * (2**20 + 1)], {})
    assert time.monotonic() - start < 5
    dev.sync()  # the refusal was reported once: the next wait is not failed by it
    with pytest.raises(KeyError, match=f"unknown handle {y._handle}"):
        float(ruda_remote.sum(y))  # y's op was in the refused batch: it never ran
    assert float(ruda_remote.sum(x)) == 4.0
    dev.close()


def test_a_raw_batch_over_the_output_limit_is_refused_whole(server):
    ws, _ = _raw(server.url)
    code = wire.OP_CODES["unstack"]
    x = [0, wire.OP_CODES["__upload__"], [1], ["float64", [1], b"\x00" * 8], {}, 0, [[[1], "float64"]]]
    too_many = [1, code, list(range(2, wire.MAX_OUTPUTS + 3)), [wire.Handle(1)], {}, 0, None]
    ws.send(wire.encode(["batch", [x, too_many], []]))
    reply = wire.decode_server_message(ws.recv(timeout=10))
    assert reply[:4] == ["error", wire.NO_SEQ, "batch", "ValueError"], reply
    assert f"at most {wire.MAX_OUTPUTS} handles" in reply[4] and "none of its operations ran" in reply[4]
    assert _stats(ws) == {"arrays": 0, "bytes": 0}  # the upload before it did not run either
    ws.close()


def _peak_rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc status")


def _empty_arrays_frame(n: int) -> bytes:
    """A frame of ``n`` empty msgpack arrays: cheap to send, about 64 bytes each once decoded."""
    body = b"\xdd" + n.to_bytes(4, "big") + b"\x90" * n
    return len(body).to_bytes(4, "big") + body


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads peak memory from /proc")
def test_an_oversized_hello_is_cut_off_before_it_is_read(server_process):
    proc, url = server_process()
    with ruda_remote.RemoteDevice(url, timeout=10) as dev:  # warm: the backend and a session
        assert float(ruda_remote.sum(ruda_remote.ones(4, device=dev))) == 4.0
    before = _peak_rss_mib(proc.pid)
    ws = connect(url, compression=None, max_size=None, proxy=None, open_timeout=10, legacy=True)
    assert wire.decode_server_message(ws.recv(timeout=10))[0] == "challenge"
    start = time.monotonic()
    # (the server may hang up while the frame is still going out)
    with contextlib.suppress(websockets.ConnectionClosed, OSError):
        ws.send(_empty_arrays_frame(8 * 2**20))  # 8 MiB instead of a hello
    with pytest.raises(websockets.ConnectionClosed) as info:
        ws.recv(timeout=10)
    closed_after = time.monotonic() - start
    assert info.value.rcvd is not None and info.value.rcvd.code == 1009  # message too big
    assert closed_after < 5
    # The server is still there for everyone else, and barely grew.
    with ruda_remote.RemoteDevice(url, timeout=10) as dev:
        assert float(ruda_remote.sum(ruda_remote.ones(4, device=dev))) == 4.0
    assert _peak_rss_mib(proc.pid) - before < 32


@pytest.mark.parametrize("size", [server_module.HELLO_MAX_BYTES + 1, 64 * 1024])
def test_a_hello_past_the_small_limit_closes_only_that_connection(server, size):
    ws = connect(server.url, compression=None, max_size=None, proxy=None, open_timeout=10, legacy=True)
    ws.recv(timeout=10)
    ws.send(wire.encode(["hello", wire.PROTOCOL_VERSION, b"\x00" * size]))
    with pytest.raises(websockets.ConnectionClosed) as info:
        ws.recv(timeout=10)
    assert info.value.rcvd is not None and info.value.rcvd.code == 1009
    with ruda_remote.RemoteDevice(server.url, timeout=10) as dev:
        # Once authenticated, a session sends messages up to the full limit.
        big = ruda_remote.asarray(np.arange(2**20, dtype=np.float64), device=dev)  # 8 MiB
        small = ruda_remote.asarray(np.arange(1000.0), device=dev)  # inline, a 8 KiB batch
        assert float(ruda_remote.sum(big)) == float(np.arange(2**20, dtype=np.float64).sum())
        assert float(ruda_remote.sum(small)) == 499500.0


def test_a_tiny_frame_announcing_a_huge_array_is_refused_without_allocating(server):
    ws = connect(server.url, compression=None, max_size=None, proxy=None, open_timeout=10, legacy=True)
    ws.recv(timeout=10)
    ws.send(b"\x00\x00\x00\x05\xdd\x7f\xff\xff\xff")  # an array of 2**31-1 items, in 5 bytes
    reply = wire.decode_server_message(ws.recv(timeout=10))
    assert reply[0] == "error" and "malformed hello" in reply[4], reply
    ws.close()


@pytest.mark.parametrize("greeted", [False, True], ids=["before its hello", "in a session"])
def test_a_peer_that_sends_pings_and_reads_nothing_is_closed(server, caplog, greeted):
    """websockets answers every ping with a pong whether or not the peer reads them: a peer that
    sent only pings (before its hello, so without a token) grew the server by about 27 MB/s. The
    pongs it leaves unread are bounded now, and past them its connection is closed."""
    caplog.set_level("WARNING", logger="ruda_remote.server")
    peer = SocketPeer(server.url)
    if greeted:
        assert peer.hello()[0] == "welcome"
    ping = bytes([0x89, 0x80 | 125]) + b"\0\0\0\0" + b"x" * 125  # a masked ping, 125 bytes
    sent, deadline = 0, time.monotonic() + 3  # (it takes a fraction of a second)
    try:
        with pytest.raises(OSError):  # (the server reset the connection)
            while time.monotonic() < deadline:
                peer.sock.sendall(ping * 8192)
                sent += 8192 * len(ping)
    finally:
        peer.close()
    assert sent < 32 * 2**20  # (the socket's buffers hold a few MiB: before, the server read on)
    assert any("read none of their answers" in r.getMessage() for r in caplog.records)
