"""An authenticated session's headers are bounded too: their size (arrays travel after them, not
in them), the lists, maps, tuples and slices one may hold, and their nesting. Frames made by
hand, as a greedy client would send them, against a server in its own process."""

from __future__ import annotations

import os
import struct
import time

import msgpack
import pytest
import ruda_remote
from remote_handshake import open_raw_session
from ruda_remote import wire

pytestmark = pytest.mark.skipif(
    not os.path.exists("/proc/self/status"), reason="reads peak memory from /proc"
)


def _peak_rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc status")


def _batch_with_args(args: bytes) -> bytes:
    """A batch of one ``stack`` op whose argument list is ``args``, already in msgpack."""
    pack = msgpack.Packer()
    op = b"".join(
        [
            pack.pack_array_header(7),
            pack.pack(1),
            pack.pack(wire.OP_CODES["stack"]),
            pack.pack([1]),
            args,
            pack.pack({}),
            pack.pack(wire.FLAG_META),
            pack.pack(None),
        ]
    )
    header = pack.pack_array_header(3) + pack.pack("batch") + pack.pack_array_header(1) + op + pack.pack([])
    return struct.pack(">I", len(header)) + header


def _empty_lists(n: int) -> bytes:
    return b"\xdd" + n.to_bytes(4, "big") + b"\x90" * n


def _refusal(ws) -> str:
    reply = wire.decode_server_message(ws.recv(timeout=30))
    assert reply[:4] == ["error", wire.NO_SEQ, "batch", "ValueError"], reply
    return str(reply[4])


def _still_serves(ws) -> None:
    ws.send(wire.encode(["batch", [[9, wire.OP_CODES["__stats__"], [], [], {}, 0, None]], []]))
    assert wire.decode_server_message(ws.recv(timeout=10))[:2] == ["stats", 9]


def test_a_header_of_many_empty_lists_is_refused_after_a_bounded_count(server_process):
    proc, url = server_process()
    with open_raw_session(url) as ws:
        _still_serves(ws)  # warm: the backend and a session
        before = _peak_rss_mib(proc.pid)
        start = time.monotonic()
        ws.send(_batch_with_args(_empty_lists(12 * 2**20)))  # 12 MiB: about 770 MiB as Python lists
        text = _refusal(ws)
        took = time.monotonic() - start
        assert f"at most {wire.MAX_CONTAINERS} lists, maps, tuples and slices" in text, text
        _still_serves(ws)
    grew = _peak_rss_mib(proc.pid) - before
    # the frame itself (websockets reads it into memory) and a few MiB of lists, not 770 MiB
    assert grew < 64, f"the server grew by {grew:.0f} MiB"
    assert took < 10


def test_a_header_past_its_limit_is_refused_before_it_is_decoded(server_process):
    _, url = server_process("--max-header-mb", "1")
    with open_raw_session(url) as ws:
        _still_serves(ws)
        ws.send(_batch_with_args(_empty_lists(2 * 2**20)))  # 2 MiB: past the header limit, not the message's
        text = _refusal(ws)
        assert "message header of 2097" in text and "longer than the limit of 1048576 bytes" in text, text
        _still_serves(ws)
    # and the public client knows the limit: an op whose header would pass it is not sent
    with ruda_remote.RemoteDevice(url, timeout=30) as dev:
        one = ruda_remote.ones(1, device=dev)
        with pytest.raises(ValueError, match="limit of 1048576 bytes for a message's header"):
            ruda_remote.stack([one] * 120_000)
        assert float(ruda_remote.sum(one)) == 1.0


def test_deeply_nested_lists_are_refused(server):
    with open_raw_session(server.url) as ws:
        ws.send(_batch_with_args(b"\x91" * 100_000 + b"\x90"))  # lists in lists: msgpack's own stack
        assert "malformed message" in _refusal(ws)
        _still_serves(ws)


def test_deeply_nested_tuples_are_refused(server):
    data = msgpack.packb([])
    for _ in range(wire.MAX_DEPTH + 2):  # a tuple holding a tuple holding ...
        data = msgpack.packb([msgpack.ExtType(wire.EXT_TUPLE, data)])
    with open_raw_session(server.url) as ws:
        ws.send(_batch_with_args(data))
        text = _refusal(ws)
        assert f"nested more than {wire.MAX_DEPTH} deep" in text, text
        _still_serves(ws)
