"""Arrays larger than one message travel in pieces, both ways, and neither side holds more than
the array and a few pieces while they do; the server charges the whole array to the session
before it keeps any of it."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import ruda_remote
from remote_handshake import open_raw_session
from ruda_remote import wire

MIB = 2**20


@pytest.fixture()
def traced() -> Iterator[None]:
    """tracemalloc on for the test: NumPy reports its buffers to it, and websockets' messages are
    bytes objects, so its peak covers every copy either side makes (both run in this process)."""
    tracemalloc.start()
    yield
    tracemalloc.stop()


def _peak_since_reset() -> int:
    return tracemalloc.get_traced_memory()[1]


class _Recorder:
    """The sizes of the messages a device sends and receives."""

    def __init__(self, dev: ruda_remote.RemoteDevice, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sent: list[int] = []
        self.received: list[int] = []
        ws = dev._ws
        send, recv = ws.send, ws.recv

        def recording_send(message: Any, *args: Any, **kwargs: Any) -> None:
            self.sent.append(memoryview(message).nbytes if not isinstance(message, str) else len(message))
            send(message, *args, **kwargs)

        def recording_recv(*args: Any, **kwargs: Any) -> Any:
            message = recv(*args, **kwargs)
            self.received.append(len(message))
            return message

        monkeypatch.setattr(ws, "send", recording_send)
        monkeypatch.setattr(ws, "recv", recording_recv)


def test_an_array_larger_than_a_message_makes_the_round_trip_in_pieces(make_server, monkeypatch):
    srv = make_server(limits=wire.Limits(max_message_bytes=MIB))
    host = np.random.default_rng(1).standard_normal((1000, 1100))  # 8.8 MB: 9 pieces, the last short
    with ruda_remote.RemoteDevice(srv.url, timeout=60) as dev:
        assert dev.chunk_bytes == MIB
        messages = _Recorder(dev, monkeypatch)
        x = ruda_remote.asarray(host, device=dev)
        dev.sync()
        pieces = [MIB] * 8 + [host.nbytes - 8 * MIB]
        assert messages.sent[1:-1] == pieces  # after the batch's header, before sync's batch
        messages.received.clear()
        back = np.asarray(x * 2.0)
        assert messages.received[1:] == pieces
        np.testing.assert_array_equal(back, host * 2.0)
        assert back.flags.writeable and back.flags.c_contiguous
        # other dtypes and shapes come back as they went
        for values in (np.arange(300_000, dtype=np.int16) % 7 == 0, np.full((3, 70_000), 1 - 2j)):
            np.testing.assert_array_equal(np.asarray(ruda_remote.asarray(values, device=dev)), values)
        # to_device and DLPack go through the same transfers
        with ruda_remote.RemoteDevice(srv.url, timeout=60) as other:
            moved = x.to_device(other)
            np.testing.assert_array_equal(np.from_dlpack(moved), host)


def test_pieces_keep_the_memory_of_a_transfer_to_the_array_and_a_few_pieces(make_server, traced):
    srv = make_server(limits=wire.Limits(max_message_bytes=MIB))
    host = np.arange(4 * 2**20, dtype=np.float64)  # 32 MiB, in 32 pieces
    with ruda_remote.RemoteDevice(srv.url, timeout=60) as dev:
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        x = ruda_remote.asarray(host, device=dev)
        dev.sync()
        up = _peak_since_reset() - start
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        back = np.asarray(x)
        down = _peak_since_reset() - start
        np.testing.assert_array_equal(back, host)
    # Up: the server's array (the buffer the pieces were copied into) and pieces in flight, 37 to
    # 41 MiB when measured; a joined message and a copy of it would be two arrays more, 96 MiB.
    # Down: the client's array, likewise.
    assert up < host.nbytes + 16 * MIB, f"an upload of {host.nbytes >> 20} MiB took {up >> 20} MiB"
    assert down < host.nbytes + 16 * MIB, f"a download of {host.nbytes >> 20} MiB took {down >> 20} MiB"


class _SpyReader(wire.PayloadReader):
    made: list[_SpyReader] = []  # noqa: RUF012 (the test's record of readers)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _SpyReader.made.append(self)


def test_an_upload_past_the_session_limit_is_refused_before_any_of_it_is_kept(make_server, monkeypatch):
    srv = make_server(limits=wire.Limits(max_message_bytes=MIB, max_session_bytes=4 * MIB))
    monkeypatch.setattr(wire, "PayloadReader", _SpyReader)
    _SpyReader.made.clear()
    with ruda_remote.RemoteDevice(srv.url, timeout=60) as dev:
        held = ruda_remote.asarray(np.ones(3 * MIB // 8), device=dev)  # 3 MiB, in 3 pieces
        dev.sync()
        needs = rf"__upload__ needs 2101248 bytes \(2097152 of data and 1 x {wire.HANDLE_BYTES} for its"
        with pytest.raises(MemoryError, match=f"{needs} arrays' handles\\) and the session already holds"):
            ruda_remote.asarray(np.ones(2 * MIB // 8), device=dev)  # 2 MiB more: past 4 MiB
            dev.sync()  # (an upload does not wait: its error comes at the next wait)
        refused = _SpyReader.made[-1]
        assert refused.nbytes == 2 * MIB and refused.done and refused._buffer is None
        # the pieces that were on their way were dropped as pieces, and the session goes on
        assert float(ruda_remote.sum(held)) == 3 * MIB // 8
        assert dev.stats()["bytes"] == 3 * MIB + wire.HANDLE_BYTES  # its data and its handle
        # An array larger than the whole session limit is refused by the client: nothing is sent.
        with pytest.raises(MemoryError, match="larger than the server's session memory limit"):
            ruda_remote.asarray(np.ones(5 * MIB // 8), device=dev)


def test_a_malformed_piece_refuses_the_batch_and_the_session_goes_on(make_server):
    srv = make_server(limits=wire.Limits(max_message_bytes=64 * 1024))
    op = [1, wire.OP_CODES["__upload__"], [1], ["float64", [20_000], wire.PAYLOAD], {}, wire.FLAG_META, None]
    with open_raw_session(srv.url) as ws:
        ws.send(wire.encode(["batch", [op], []]))
        ws.send(b"\x00" * 60_000)  # a first piece
        ws.send("not bytes")  # then a text message
        reply = wire.decode_server_message(ws.recv(timeout=10))
        assert reply[:2] == ["error", wire.NO_SEQ] and "binary message, got str" in reply[4], reply
        ws.send(wire.encode(["batch", [[2, wire.OP_CODES["__stats__"], [], [], {}, 0, None]], []]))
        assert wire.decode_server_message(ws.recv(timeout=10))[:3] == ["stats", 2, {"arrays": 0, "bytes": 0}]


def test_a_1_gib_round_trip(make_server, traced):
    srv = make_server()  # the default limits: 256 MiB messages, pieces of 64 MiB
    host = np.arange(2**28, dtype=np.uint32)  # 1 GiB
    with ruda_remote.RemoteDevice(srv.url, timeout=300) as dev:
        tracemalloc.reset_peak()
        start_bytes, start = tracemalloc.get_traced_memory()[0], time.perf_counter()
        x = ruda_remote.asarray(host, device=dev)
        back = np.asarray(x)
        elapsed = time.perf_counter() - start
        extra = _peak_since_reset() - start_bytes
        assert back.shape == host.shape and np.array_equal(back, host)
        print(f"1 GiB up and down in {elapsed:.1f} s; peak memory beyond the array {extra / 2**30:.2f} GiB")
    # the server's array and the copy read back, and pieces of 64 MiB in flight and in the copies
    # websockets makes of each (2.38 to 2.44 GiB when measured; a transfer in one message,
    # joined and copied, takes a GiB more)
    assert extra < 2 * 2**30 + 12 * wire.CHUNK_BYTES
