"""The wire format alone (no server, no backend): round trips, refusals, and a fuzzed decoder."""

from __future__ import annotations

import msgpack
import numpy as np
import pytest
import ruda.host
from hypothesis import given, settings
from hypothesis import strategies as st
from ruda import spec
from ruda_remote import wire
from ruda_remote._session import Session
from ruda_remote._table import OpTable

LIMITS = wire.Limits(max_message_bytes=1 << 20, max_session_bytes=1 << 20, max_arrays=64)


def _batch(*ops: list, free: list | None = None) -> bytes:
    return wire.encode(["batch", list(ops), free or []])


def test_table_is_built_from_the_spec_names():
    assert wire.OPS[: len(wire.PROTOCOL_OPS)] == wire.PROTOCOL_OPS
    for name in spec.FUNCTIONS:
        assert name in wire.OP_CODES or name in wire.LOCAL_FUNCTIONS
    assert all(f"linalg.{n}" in wire.OP_CODES for n in spec.LINALG)
    assert len(set(wire.OPS)) == len(wire.OPS)


def test_values_round_trip():
    args = [
        wire.Handle(7),
        (1, slice(None, 3, -1), Ellipsis, None),
        wire.DType("float32"),
        2 + 3j,
        [1.5, "x"],
    ]
    raw = _batch([0, wire.OP_CODES["__getitem__"], [1], args, {"k": True}, 0, None])
    batch = wire.decode_client_message(raw, LIMITS)
    assert isinstance(batch, wire.Batch)
    (op,) = batch.ops
    assert op.name == "__getitem__" and op.out == (1,) and op.args == args and op.kwargs == {"k": True}


@pytest.mark.parametrize(
    ("message", "match"),
    [
        (["batch", [[0, 10**6, [1], [], {}, 0, None]], []], "unknown operation code"),
        (["batch", [[0, 1, [1], ["float32", [2], b"\x00" * 7], {}, 0, None]], []], "does not match shape"),
        (["batch", [[0, 1, [1], ["float128", [2], b""], {}, 0, None]], []], "unknown dtype"),
        (["batch", [[0, 5, [1], [], {"device": "cpu"}, 0, None]], []], "server chooses the device"),
        (["batch", [[0, 5, [0], [], {}, 0, None]], []], "integer handle"),
        (["batch", [[0, 5, [1], [b"raw"], {}, 0, None]], []], "not a valid argument"),
        (["hello", "1", None], "protocol version must be an integer"),
        (["launch", 1], "unknown message kind"),
        ([], "first item is its kind"),
    ],
)
def test_malformed_messages_are_refused_with_the_reason(message, match):
    with pytest.raises(wire.WireError, match=match):
        wire.decode_client_message(wire.encode(message), LIMITS)


def test_payload_follows_as_the_next_message_and_is_length_checked():
    data = bytes(range(16))
    head, payload = wire.encode(
        ["batch", [[0, 1, [1], ["float64", [2], wire.PAYLOAD], {}, 0, None]], []], data
    )
    batch = wire.decode_client_message(head, LIMITS)
    assert batch.payload_bytes == 16
    reader = wire.PayloadReader(batch.payload_bytes, "upload")
    with pytest.raises(wire.WireError, match="does not fit the 16 bytes announced"):
        reader.add(payload + b"!")
    with pytest.raises(wire.WireError, match="binary message, got str"):
        reader.add("text")
    reader.add(payload)
    assert reader.done and reader.result() is payload  # one message: kept as it came, no copy
    wire.attach_payload(batch, reader.result())
    assert batch.ops[0].args[2] == data
    with pytest.raises(wire.WireError, match="header length"):
        wire.decode_client_message(head + b"stray", LIMITS)
    two = ["batch", [[i, 1, [i + 1], ["float64", [2], wire.PAYLOAD], {}, 0, None] for i in range(2)], []]
    with pytest.raises(wire.WireError, match="at most one"):
        wire.decode_client_message(wire.encode(two), LIMITS)


def test_a_payload_in_pieces_is_copied_into_one_buffer_and_each_piece_is_checked():
    data = np.arange(1000, dtype=np.float64).tobytes()
    pieces = wire.payload_messages(data, 3000)
    assert [memoryview(p).nbytes for p in pieces] == [3000, 3000, 2000]
    assert all(isinstance(p, memoryview) and p.obj is data for p in pieces)  # views, not copies
    reader = wire.PayloadReader(len(data), "upload")
    for piece in pieces[:2]:
        reader.add(bytes(piece))
        assert not reader.done
    with pytest.raises(wire.WireError, match="after 6000 does not fit the 8000 bytes"):
        reader.add(b"\x00" * 2001)
    with pytest.raises(wire.WireError, match="a piece of 0 bytes"):
        reader.add(b"")
    with pytest.raises(wire.WireError, match="6000 of 8000 bytes have come"):
        reader.result()
    reader.add(bytes(pieces[2]))
    result = reader.result()
    assert isinstance(result, np.ndarray) and result.flags.writeable and result.base is None
    np.testing.assert_array_equal(result.view(np.float64), np.arange(1000.0))
    dropped = wire.PayloadReader(len(data), "upload", keep=False)
    for piece in pieces:
        dropped.add(bytes(piece))
    assert dropped.done
    with pytest.raises(wire.WireError, match="refused, and dropped"):
        dropped.result()  # refused: counted, never kept


def test_deep_nesting_is_refused():
    value: object = 1
    for _ in range(wire.MAX_DEPTH + 5):
        value = (value,)
    with pytest.raises(wire.WireError, match="nested"):
        wire.decode_client_message(_batch([0, 5, [1], [value], {}, 0, None]), LIMITS)


def test_no_pickle_or_code_objects():
    header = msgpack.packb(["batch", [[0, 5, [1], [msgpack.ExtType(99, b"\x80\x04")], {}, 0, None]], []])
    raw = len(header).to_bytes(4, "big") + header
    with pytest.raises(wire.WireError, match="unknown extension type 99"):
        wire.decode_client_message(raw, LIMITS)


# -- fuzzing: arbitrary bytes, and mutations of valid messages, through decoder and session ------

_valid = [
    _batch([0, wire.OP_CODES["__upload__"], [1], ["float64", [2], b"\x00" * 16], {}, 0, None]),
    _batch([1, wire.OP_CODES["add"], [2], [wire.Handle(1), 1.5], {}, wire.FLAG_META, None], free=[1]),
    _batch([2, wire.OP_CODES["__getitem__"], [3], [wire.Handle(2), (slice(0, 1, None), None)], {}, 0, None]),
    wire.encode(["hello", wire.PROTOCOL_VERSION, b"\x02" * 32, "ws://127.0.0.1:3000", b"\x01" * 32]),
]


def _mutate(data: bytes, edits: list[tuple[int, int]]) -> bytes:
    buf = bytearray(data)
    for pos, byte in edits:
        buf[pos % len(buf)] = byte
    return bytes(buf)


@st.composite
def _inputs(draw: st.DrawFn) -> bytes:
    if draw(st.booleans()):
        return draw(st.binary(max_size=256))
    base = draw(st.sampled_from(_valid))
    edits = draw(st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), min_size=1, max_size=6))
    cut = draw(st.integers(1, len(base)))
    return _mutate(base, edits)[:cut] if draw(st.booleans()) else _mutate(base, edits)


@settings(max_examples=400, deadline=None)
@given(data=_inputs())
def test_fuzzed_input_never_crashes_the_decoder_or_leaks_arrays(data):
    session = Session(OpTable(ruda.host, "cpu"), LIMITS)
    try:
        message = wire.decode_client_message(data, LIMITS)
    except wire.WireError:
        return  # refused with a reason: the server answers an error and keeps the connection
    if isinstance(message, wire.Batch):
        replies = session.run(message)  # must not raise, whatever the ops ask for
        for reply in replies:
            assert wire.decode_server_message(reply)[0] in ("error", "meta", "data", "stats")
        session.run(wire.Batch([], list(session.arrays) + list(session.failed)))
        assert session.arrays == {} and session.used_bytes == 0 and session.failed == {}


def test_a_failed_ops_error_keeps_a_bounded_part_of_the_arguments_it_quotes():
    # an error may quote the client's arguments (up to the 16 MiB header limit); the failed array
    # keeps it for later ops until released, so a flood of such ops would hold it all
    from ruda_remote._session import MAX_ERROR_TEXT

    session = Session(OpTable(ruda.host, "cpu"), wire.Limits())
    code = wire.OP_CODES["zeros"]
    [reply] = session.run(wire.Batch([wire.Op(1, code, (1,), [[2]], {"A" * 1_000_000: 1}, 0, None)], []))
    message = wire.decode_server_message(reply)[4]
    assert "A" * 100 in message and len(message) < MAX_ERROR_TEXT + 200
    assert "more characters" in message
    assert len(session.failed[1].message) < MAX_ERROR_TEXT + 200
