"""Ops a client may craft by hand: their arguments reach the backend only as the standard's
signatures take them (a backend's extra keywords, NumPy's ``out=``, ``where=``, ``casting=``,
and dtypes that are not the Array API's, ``"O"``, are refused before anything runs, and the
session goes on); ``empty`` shows no other session's data; a read that makes a view whole
counts against the session's limit."""

from __future__ import annotations

import re
from typing import Any

import pytest
import ruda
from ruda_remote import wire
from ruda_remote._session import Session
from ruda_remote._table import OpTable


@pytest.fixture()
def session(monkeypatch: pytest.MonkeyPatch) -> Session:
    """A session on the host backend; ``session.calls`` lists the ops its backend ran."""
    table = OpTable(ruda.host, "cpu")
    run = table.call
    calls: list[str] = []

    def call(code: int, args: list[Any], kwargs: dict[str, Any]) -> Any:
        calls.append(wire.OPS[code])
        return run(code, args, kwargs)

    monkeypatch.setattr(table, "call", call)
    made = Session(table, wire.Limits())
    made.calls = calls  # type: ignore[attr-defined]
    return made


def _run(session: Session, name: str, args: list, kwargs: dict, out: int) -> list:
    op = wire.Op(out, wire.OP_CODES[name], (out,), args, kwargs, wire.FLAG_META, None)
    [reply] = session.run(wire.Batch([op], []))
    return wire.decode_server_message(reply)


def _made(session: Session) -> None:
    """Arrays 1 (3) and 2 (an exponent) of int64, made with the standard's own arguments."""
    int64 = {"dtype": wire.DType("int64")}
    assert _run(session, "full", [[1], 3], int64, 1)[0] == "meta"
    assert _run(session, "full", [[1], 90_000_000], int64, 2)[0] == "meta"


@pytest.mark.parametrize(
    ("name", "args", "kwargs", "match"),
    [
        ("pow", [wire.Handle(1), wire.Handle(2)], {"dtype": "O"}, "unexpected keyword argument 'dtype'"),
        ("sum", [wire.Handle(1)], {"dtype": "O"}, "dtype must be one of the Array API's dtypes"),
        (
            "add",
            [wire.Handle(1), wire.Handle(2)],
            {"out": wire.Handle(1)},
            "unexpected keyword argument 'out'",
        ),
        ("sum", [wire.Handle(1)], {"where": True}, r"unexpected keyword argument 'where' \(it takes: axis"),
        ("astype", [wire.Handle(1), "O"], {}, "takes no string as a positional argument"),
        ("sort", [wire.Handle(1)], {"axis": "O"}, "axis takes no string"),
        ("zeros", [[2]], {"dtype": ["O"]}, "dtype must be one of"),
    ],
)
def test_what_the_standard_does_not_take_is_refused_before_it_runs(session, name, args, kwargs, match):
    _made(session)
    reply = _run(session, name, args, kwargs, 3)
    assert reply[:4] == ["error", 3, name, "TypeError"], reply
    assert re.search(match, reply[4]), reply[4]
    assert session.calls == ["full", "full"]  # (nothing ran for it)
    assert _run(session, "multiply", [wire.Handle(1), 2], {}, 4)[0] == "meta"  # the session goes on


def test_the_standard_string_options_still_pass(session):
    _made(session)
    x = wire.Handle(1)
    assert _run(session, "fft.fft", [x], {"norm": "ortho"}, 3)[0] == "meta"
    assert _run(session, "searchsorted", [x, x], {"side": "right"}, 4)[0] == "meta"
    assert _run(session, "sum", [x], {"dtype": wire.DType("float64"), "keepdims": True}, 5)[0] == "meta"


def test_empty_never_shows_a_session_what_another_freed():
    # NumPy's allocator hands the next malloc of a size the memory just freed: a server's
    # empty() would give one session another's data
    table = OpTable(ruda.host, "cpu")
    for name, args in (("empty", [[60_000]]), ("empty_like", [wire.Handle(2)])):
        first, second = Session(table, wire.Limits()), Session(table, wire.Limits())
        uint8 = {"dtype": wire.DType("uint8")}
        assert _run(first, "full", [[60_000], 7], uint8, 1)[0] == "meta"
        first.run(wire.Batch([], [1]))  # released: its memory goes back to the allocator
        if name == "empty_like":
            assert _run(second, "ones", [[60_000]], uint8, 2)[0] == "meta"
        assert _run(second, name, args, uint8, 3)[0] == "meta"
        op = wire.Op(4, wire.OP_CODES["__read__"], (), [wire.Handle(3)], {}, 0, None)
        data = b"".join(bytes(m) for m in second.run(wire.Batch([op], [])))
        assert b"\x07" * 64 not in data and b"\x01" * 64 not in data


def test_reading_a_view_larger_than_its_memory_counts_against_the_limit():
    # broadcast_to of a 0-d array costs 8 bytes, but its read makes all its elements
    session = Session(OpTable(ruda.host, "cpu"), wire.Limits(max_session_bytes=2**20))
    float64 = {"dtype": wire.DType("float64")}
    assert _run(session, "full", [[], 1.0], float64, 1)[0] == "meta"
    assert _run(session, "broadcast_to", [wire.Handle(1), [4096, 2048]], {}, 2)[0] == "meta"
    assert _run(session, "broadcast_to", [wire.Handle(1), [100, 100]], {}, 3)[0] == "meta"
    assert _run(session, "zeros", [[80_000]], float64, 4)[0] == "meta"  # 640 KB of the 1 MiB

    def read(*handles: int) -> list:
        ops = [wire.Op(10 + h, wire.OP_CODES["__read__"], (), [wire.Handle(h)], {}, 0, None) for h in handles]
        replies = session.run(wire.Batch(ops, []))
        return [wire.decode_server_message(r if isinstance(r, bytes) else r[0]) for r in replies]

    [refused] = read(2)
    assert refused[:4] == ["error", 12, "__read__", "MemoryError"], refused
    assert "needs 67108856 bytes" in refused[4]  # (64 MiB the read would make, less the 8 held)
    assert [r[0] for r in read(3, 3, 4, 4)] == ["data"] * 4  # small views, and arrays it holds
    assert session._reading == 0  # (given back when the batch ended)


def test_an_op_announced_by_no_size_is_sized_by_the_server_before_it_runs(monkeypatch):
    # a raw client sends no expected result: x[:, None] + y[None, :] of 2000-element arrays
    # would make 32 MB under a 1 MiB limit before the limit was checked
    table = OpTable(ruda.host, "cpu")
    ran: list[str] = []
    run = table.call
    monkeypatch.setattr(
        table, "call", lambda code, args, kwargs: (ran.append(wire.OPS[code]), run(code, args, kwargs))[1]
    )
    session = Session(table, wire.Limits(max_session_bytes=2**20))
    float64 = {"dtype": wire.DType("float64")}
    for handle in (1, 2):
        assert _run(session, "zeros", [[2000]], float64, handle)[0] == "meta"
    column = (slice(None, None, None), None)
    assert _run(session, "__getitem__", [wire.Handle(1), column], {}, 3)[0] == "meta"
    assert _run(session, "__getitem__", [wire.Handle(2), (None, slice(None, None, None))], {}, 4)[0] == "meta"
    op = wire.Op(5, wire.OP_CODES["add"], (5,), [wire.Handle(3), wire.Handle(4)], {}, 0, None)
    [refused] = [wire.decode_server_message(r) for r in session.run(wire.Batch([op], []))]
    assert refused[:4] == ["error", 5, "add", "MemoryError"] and "(32000000 of data" in refused[4], refused
    assert "add" not in ran
    small = wire.Op(6, wire.OP_CODES["add"], (6,), [wire.Handle(1), wire.Handle(2)], {}, wire.FLAG_META, None)
    assert wire.decode_server_message(session.run(wire.Batch([small], []))[0])[0] == "meta"
