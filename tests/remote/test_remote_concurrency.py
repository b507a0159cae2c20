"""Sessions do not wait for each other: each runs its operations on its own worker thread, in
the order it sent them, so one session's long operation costs another session's small read
nothing, and every reply of a session still comes back in order.

Session A below is a raw WebSocket that sends a batch and does not wait, as a client that
wants to hog the server would; session B is the public client doing ordinary small reads."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import pytest
import ruda_remote
import websockets
from ruda_remote import wire

#: how long the sleeping backend's matmul takes (it sleeps: it holds its session's worker,
#: not a CPU, so the figure is exact on a busy machine)
SLOW_S = 2.0
#: B's read must come back well within A's op time
READ_BOUND_S = SLOW_S / 4


@pytest.fixture()
def slow_server(make_server, monkeypatch):
    """A host server whose ``matmul`` takes SLOW_S seconds whatever its size."""
    srv = make_server()
    table = srv.server.table
    run = table.call

    def call(code: int, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if wire.OPS[code] == "matmul":
            time.sleep(SLOW_S)
        return run(code, args, kwargs)

    monkeypatch.setattr(table, "call", call)
    return srv


def _op(seq: int, name: str, out: list[int], args: list, kwargs: dict | None = None, **extra: Any) -> list:
    flags = extra.get("flags", 0)
    return [seq, wire.OP_CODES[name], out, args, kwargs or {}, flags, extra.get("expect")]


def _matmul_batch(n: int, dtype: str = "float32") -> bytes:
    """``ones((n, n)) @ ones((n, n))`` made on the server (nothing to upload); answers op 1."""
    meta = [[[n, n], dtype]]
    return wire.encode(
        [
            "batch",
            [
                _op(0, "ones", [1], [[n, n]], {"dtype": wire.DType(dtype)}, expect=meta),
                _op(1, "matmul", [2], [wire.Handle(1), wire.Handle(1)], flags=wire.FLAG_META, expect=meta),
            ],
            [1, 2],
        ]
    )


def _timed_read(x: Any) -> float:
    start = time.perf_counter()
    assert float(ruda_remote.sum(x)) == 10.0
    return time.perf_counter() - start


def _start_slow_ops(raw_session: Any, url: str, sessions: int, n: int) -> tuple[list[Any], float]:
    """Open ``sessions`` raw sessions, each sending one matmul batch without waiting."""
    hogs = [raw_session(url) for _ in range(sessions)]
    start = time.perf_counter()
    for ws in hogs:
        ws.send(_matmul_batch(n))
    return hogs, start


def _finish_slow_ops(hogs: list[Any], start: float, n: int) -> float:
    """Wait for every hog's answer; the time from sending to the last answer."""
    for ws in hogs:
        reply = wire.decode_server_message(ws.recv(timeout=60))
        assert reply[:2] == ["meta", 1] and reply[2] == [((n, n), "float32")], reply
    elapsed = time.perf_counter() - start
    for ws in hogs:
        ws.close()
    return elapsed


@pytest.mark.parametrize("hogs", [1, 6])
def test_a_long_operation_does_not_hold_up_another_sessions_read(slow_server, raw_session, hogs):
    with ruda_remote.RemoteDevice(slow_server.url, timeout=30) as dev:
        x = ruda_remote.ones(10, device=dev)
        _timed_read(x)  # warm: B's session and its worker exist
        slow, start = _start_slow_ops(raw_session, slow_server.url, hogs, 2)
        time.sleep(0.2)  # A's ops are running now
        reads = [_timed_read(x) for _ in range(5)]
        a_time = _finish_slow_ops(slow, start, 2)
    print(
        f"\n{hogs} session(s) with a {SLOW_S:.1f} s op: it took {a_time:.3f} s; the other session's "
        f"reads took {1000 * max(reads):.1f} ms at most ({', '.join(f'{1000 * r:.1f}' for r in reads)} ms)"
    )
    assert a_time >= SLOW_S
    assert max(reads) < READ_BOUND_S
    # every hog ran alongside the others: no shared pool of a few threads to wait for
    assert a_time < SLOW_S + 1.0 + 0.2


def test_a_large_host_matmul_does_not_hold_up_another_sessions_read(server, raw_session):
    n = 4000  # float32: three 64 MB arrays, about 0.5-2 s of BLAS here
    with ruda_remote.RemoteDevice(server.url, timeout=60) as dev:
        x = ruda_remote.ones(10, device=dev)
        _timed_read(x)
        slow, start = _start_slow_ops(raw_session, server.url, 1, n)
        time.sleep(0.1)
        reads = []
        while not reads or time.perf_counter() - start < 0.3:
            reads.append(_timed_read(x))
        a_time = _finish_slow_ops(slow, start, n)
    print(
        f"\na {n}x{n} float32 host matmul took {a_time:.3f} s; the other session's {len(reads)} reads "
        f"took {1000 * max(reads):.1f} ms at most, {1000 * float(np.median(reads)):.1f} ms median"
    )
    assert max(reads) < max(a_time / 4, 0.05)


def test_many_ops_of_one_session_reply_in_order(slow_server, raw_session):
    """Batches sent back to back, without waiting, behind a slow one: every answer (metadata,
    data, errors, stats) comes back in the order of the ops, and releases happen in order."""
    ws = raw_session(slow_server.url)
    try:
        expected: list[tuple[int, str]] = []
        ws.send(_matmul_batch(2))  # op 1 answers after SLOW_S; everything below queues behind it
        expected.append((1, "meta"))
        seq, batches = 10, 40
        for b in range(batches):
            h = 1000 + 10 * b
            ops = [
                _op(seq, "full", [h], [[3], float(b)], expect=[[[3], "float64"]]),
                _op(seq + 1, "add", [h + 1], [wire.Handle(h), 1.0], flags=wire.FLAG_META),
                _op(seq + 2, "__read__", [], [wire.Handle(h + 1)]),
                _op(seq + 3, "negative", [h + 2], [wire.Handle(7)]),  # unknown handle: an error
                _op(seq + 4, "__stats__", [], []),
            ]
            expected += [(seq + 1, "meta"), (seq + 2, "data"), (seq + 3, "error"), (seq + 4, "stats")]
            ws.send(wire.encode(["batch", ops, [h]]))  # h is released after the batch's ops
            seq += 10
        got: list[tuple[int, str]] = []
        for _ in expected:
            reply = wire.decode_server_message(ws.recv(timeout=SLOW_S + 30))
            got.append((reply[1], reply[0]))
            if reply[0] == "data":
                assert list(np.frombuffer(reply[4], "float64")) == [(reply[1] - 12) // 10 + 1.0] * 3
            if reply[0] == "stats":
                # this batch's three arrays were made; each earlier batch left h + 1 behind
                made_before = (reply[1] - 14) // 10
                assert reply[2]["arrays"] == made_before + 2, (reply, made_before)
        assert got == expected
    finally:
        ws.close()


def test_a_client_gone_during_a_long_operation_frees_its_session_after_it(slow_server, raw_session):
    before = slow_server.array_count()
    ws = raw_session(slow_server.url)
    ws.send(_matmul_batch(2))
    time.sleep(0.2)
    ws.close()  # mid-op: the op finishes on the session's worker, then the session is freed
    with ruda_remote.RemoteDevice(slow_server.url, timeout=30) as dev:
        assert _timed_read(ruda_remote.ones(10, device=dev)) < READ_BOUND_S
    deadline = time.monotonic() + SLOW_S + 10
    while (slow_server.array_count() > before or slow_server.server.session_count()) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.05)
    assert slow_server.array_count() == before and slow_server.server.session_count() == 0


def test_a_client_gone_during_a_long_operation_keeps_its_place_until_the_op_ends(
    make_server, monkeypatch, raw_session, caplog
):
    """The op runs on (a NumPy call cannot be interrupted) and the connection closes, but the
    place against its address's cap stays taken until the op ends: given back at once, an
    address with a cap of 1 could start any number of ops at once by leaving each; then the
    place and the session's memory return."""
    srv = make_server(limits=wire.Limits(max_sessions_per_address=1))
    table, run = srv.server.table, srv.server.table.call
    started, finish = threading.Event(), threading.Event()

    def call(code: int, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if wire.OPS[code] == "matmul":
            started.set()
            finish.wait(30)
        return run(code, args, kwargs)

    monkeypatch.setattr(table, "call", call)
    caplog.set_level("INFO", logger="ruda_remote.server")
    try:
        ws = raw_session(srv.url)
        ws.send(_matmul_batch(64))
        assert started.wait(10)
        ws.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(  # (the server has seen the client leave)
            "left while its session ran an op" in r.getMessage() for r in caplog.records
        ):
            time.sleep(0.05)
        with pytest.raises(ruda_remote.RemoteConnectionError, match="too many sessions"):
            ruda_remote.RemoteDevice(srv.url, timeout=10)
        assert srv.server.held_bytes() >= 64 * 64 * 4  # the op's operand, until the op ends
    finally:
        finish.set()
    deadline = time.monotonic() + 10
    while (srv.server.held_bytes() or srv.server.session_count()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert srv.server.held_bytes() == 0 and srv.server.session_count() == 0
    with ruda_remote.RemoteDevice(srv.url, timeout=10) as dev:  # the place is free again
        assert float(ruda_remote.sum(ruda_remote.ones(10, device=dev))) == 10.0
    messages = [r.getMessage() for r in caplog.records]
    assert any("left while its session ran an op" in m for m in messages), messages
    assert any("freed after the op its client left running ended" in m for m in messages), messages


def test_a_hog_sending_batches_as_fast_as_it_can_leaves_others_served(slow_server, raw_session):
    """A session that floods small batches without reading a reply shares the server fairly."""
    ws = raw_session(slow_server.url)
    stop = threading.Event()
    sent = [0]

    def flood() -> None:
        op = wire.encode(["batch", [_op(0, "__stats__", [], [])], []])
        try:
            while not stop.is_set():
                ws.send(op)
                sent[0] += 1
        except (websockets.ConnectionClosed, OSError):
            pass

    thread = threading.Thread(target=flood, daemon=True)
    thread.start()
    try:
        time.sleep(0.3)
        with ruda_remote.RemoteDevice(slow_server.url, timeout=30) as dev:
            x = ruda_remote.ones(10, device=dev)
            reads = [_timed_read(x) for _ in range(5)]
    finally:
        stop.set()
        ws.close()
        thread.join(10)
    print(f"\nwhile another session flooded {sent[0]} batches, reads took {1000 * max(reads):.1f} ms at most")
    assert max(reads) < READ_BOUND_S
