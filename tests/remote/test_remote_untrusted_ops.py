"""Ops a client may craft by hand: their arguments reach the backend only as the standard's
signatures take them (a backend's extra keywords, NumPy's ``out=``, ``where=``, ``casting=``,
dtypes that are not the Array API's, ``"O"``, and lists where the standard takes an array are
refused before anything runs, and the session goes on); ``empty`` shows no other session's
data; a read that makes a view whole counts against the session's limit."""

from __future__ import annotations

import re
import time
from typing import Any

import numpy as np
import pytest
import ruda
from ruda_remote import wire
from ruda_remote._session import Session
from ruda_remote._table import OpTable


def _recording_session(monkeypatch: pytest.MonkeyPatch, limits: wire.Limits) -> tuple[Session, list[str]]:
    """A session on the host backend, and the list of the ops its backend runs."""
    table = OpTable(ruda.host, "cpu")
    run = table.call
    calls: list[str] = []

    def call(code: int, args: list[Any], kwargs: dict[str, Any]) -> Any:
        calls.append(wire.OPS[code])
        return run(code, args, kwargs)

    monkeypatch.setattr(table, "call", call)
    return Session(table, limits), calls


@pytest.fixture()
def session(monkeypatch: pytest.MonkeyPatch) -> Session:
    """A session on the host backend; ``session.calls`` lists the ops its backend ran."""
    made, calls = _recording_session(monkeypatch, wire.Limits())
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
    # broadcast_to of a 0-d array costs 8 bytes, but its read makes all its elements (1 MiB
    # here, as large as an array may be, which does not fit beside the 640 KB held)
    session = Session(OpTable(ruda.host, "cpu"), wire.Limits(max_session_bytes=2**20))
    float64 = {"dtype": wire.DType("float64")}
    assert _run(session, "full", [[], 1.0], float64, 1)[0] == "meta"
    assert _run(session, "broadcast_to", [wire.Handle(1), [128, 1024]], {}, 2)[0] == "meta"
    assert _run(session, "broadcast_to", [wire.Handle(1), [100, 100]], {}, 3)[0] == "meta"
    assert _run(session, "zeros", [[80_000]], float64, 4)[0] == "meta"  # 640 KB of the 1 MiB

    def read(*handles: int) -> list:
        ops = [wire.Op(10 + h, wire.OP_CODES["__read__"], (), [wire.Handle(h)], {}, 0, None) for h in handles]
        replies = session.run(wire.Batch(ops, []))
        return [wire.decode_server_message(r if isinstance(r, bytes) else r[0]) for r in replies]

    [refused] = read(2)
    assert refused[:4] == ["error", 12, "__read__", "MemoryError"], refused
    assert "needs 1048568 bytes" in refused[4]  # (1 MiB the read would make, less the 8 held)
    assert [r[0] for r in read(3, 3, 4, 4)] == ["data"] * 4  # small views, and arrays it holds
    assert session._reading == 2 * (100 * 100 * 8 - 8)  # (the copies of the two reads of 3)
    session.sent()  # (the server's, once it has handed the replies to the connection)
    assert session._reading == 0


def test_an_op_announced_by_no_size_is_sized_by_the_server_before_it_runs(monkeypatch):
    # a raw client sends no expected result: x[:, None] + y[None, :] of 2000-element arrays
    # would make 32 MB under a 1 MiB limit before the limit was checked
    session, ran = _recording_session(monkeypatch, wire.Limits(max_session_bytes=2**20))
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


def test_more_arguments_by_position_than_the_standard_takes_are_refused(session):
    # NumPy's take(a, indices, axis, out) would write into another of the session's arrays
    int64 = {"dtype": wire.DType("int64")}
    assert _run(session, "zeros", [[3]], int64, 1)[0] == "meta"
    assert _run(session, "ones", [[1]], int64, 2)[0] == "meta"
    reply = _run(session, "take", [wire.Handle(1), wire.Handle(2), 0, wire.Handle(2)], {}, 3)
    assert reply[:4] == ["error", 3, "take", "TypeError"], reply
    assert "take() takes at most 2 positional arguments (4 given)" in reply[4]
    assert "take" not in session.calls
    op = wire.Op(4, wire.OP_CODES["__read__"], (), [wire.Handle(2)], {}, 0, None)
    [data] = session.run(wire.Batch([op], []))
    assert wire.decode_server_message(data)[3:] == [(1,), (1).to_bytes(8, "little")]  # (unchanged)
    # reflected and in-place operators and the array's attributes take as their base
    assert _run(session, "__radd__", [wire.Handle(1), 1], {}, 5)[0] == "meta"
    assert _run(session, "__radd__", [wire.Handle(1), 1, 2], {}, 6)[3] == "TypeError"
    assert _run(session, "mT", [wire.Handle(1), 1], {}, 7)[3] == "TypeError"


def _bounded_session(monkeypatch: pytest.MonkeyPatch) -> tuple[Session, list[str]]:
    """A session under a 1 MiB limit holding: 1, 2000 float64 zeros; 2, 2000 int64 zeros; 3, the
    float64 zeros of shape (1, 2000); 4, four int64 counts of a million; 5, four float64 zeros;
    6, the float64 zeros of shape (2000, 1). The list names the ops its backend ran."""
    session, ran = _recording_session(monkeypatch, wire.Limits(max_session_bytes=2**20))
    f64, i64 = {"dtype": wire.DType("float64")}, {"dtype": wire.DType("int64")}
    made = [
        ("zeros", [[2000]], f64),
        ("zeros", [[2000]], i64),
        ("zeros", [[1, 2000]], f64),
        ("full", [[4], 10**6], i64),
        ("zeros", [[4]], f64),
        ("zeros", [[2000, 1]], f64),
    ]
    for handle, (name, args, kwargs) in enumerate(made, 1):
        assert _run(session, name, args, kwargs, handle)[0] == "meta"
    ran.clear()
    return session, ran


H = wire.Handle


@pytest.mark.parametrize(
    ("name", "args", "kwargs", "needs"),
    [
        ("tile", [H(1), [1000]], {}, 16_000_000),
        ("repeat", [H(1), 1000], {}, 16_000_000),
        ("repeat", [H(5), H(4)], {}, 32_000_000),  # (the counts' sum, read on the server)
        ("meshgrid", [H(1), H(1)], {}, 64_000_000),
        ("take", [H(3), H(2)], {"axis": 0}, 32_000_000),
        ("linalg.outer", [H(1), H(1)], {}, 32_000_000),
        ("fft.fft", [H(5)], {"n": 10**6}, 16_000_000),
        ("fft.irfft", [H(5)], {"n": 10**6}, 16_000_000),  # (bounded as complex)
        ("fft.fftn", [H(3)], {"s": [1000, 2000]}, 32_000_000),
        ("fft.fftfreq", [10**6], {}, 8_000_000),
        ("linalg.svd", [H(6)], {}, 32_000_000 + 8 + 8),
        ("linalg.qr", [H(6)], {"mode": "complete"}, 32_000_000 + 16_000),
        ("__getitem__", [H(3), (H(2),)], {}, 32_000_000),
    ],
)
def test_ops_that_make_more_than_their_operands_are_sized_first(monkeypatch, name, args, kwargs, needs):
    # a raw client announces no result: each would have been made whole before the limit was
    # checked (a tile of 16 MB under a 1 MiB limit)
    session, ran = _bounded_session(monkeypatch)
    op = wire.Op(9, wire.OP_CODES[name], (9,), args, kwargs, 0, None)
    [refused] = [wire.decode_server_message(r) for r in session.run(wire.Batch([op], []))]
    assert refused[:4] == ["error", 9, name, "MemoryError"], refused
    assert f"({needs} of data" in refused[4], refused[4]
    assert ran == []
    assert _run(session, "tile", [H(5), [2]], {}, 10)[0] == "meta"  # (the session goes on)


def _cases() -> list[tuple[str, Any, dict[str, Any], float]]:
    """(op, args, kwargs, slack): ops of the standard on small NumPy arrays; slack, how many
    times what the op makes its bound may be (a boolean mask's selection is bounded by all)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    m = rng.standard_normal((2, 5, 3)).astype(np.float32)
    ints = np.array([2, 0, 1])
    c = (x + 1j).astype(np.complex64)
    return [
        ("tile", (x, (2,)), {}, 1),
        ("tile", (x, (2, 1, 3)), {}, 1),
        ("repeat", (x, 3), {}, 1),
        ("repeat", (x, 2), {"axis": -1}, 1),
        ("repeat", (x, ints), {"axis": 0}, 1),
        ("repeat", (x, np.array([4])), {"axis": 1}, 1),
        ("meshgrid", (ints, x[0], m[0, 0]), {"indexing": "ij"}, 1),
        ("meshgrid", (ints, x[0]), {}, 1),
        ("take", (x, ints), {"axis": 1}, 1),
        ("take", (x[0], np.zeros((2, 3), np.int64)), {}, 1),
        ("take_along_axis", (x, np.zeros((3, 6), np.int64)), {"axis": 1}, 1),
        ("linalg.outer", (ints.astype(np.int8), x[0].astype(np.float32)), {}, 1),
        ("vecdot", (m, m[0]), {}, 1),
        ("linalg.solve", (np.eye(3) + m[:, :3, :3], m[:1, :3, :2]), {}, 2),
        ("fft.fft", (x,), {"n": 9, "axis": 0}, 1),
        ("fft.ifft", (c,), {}, 1),
        ("fft.rfft", (m,), {"n": 6}, 2),
        ("fft.irfft", (c,), {}, 3),
        ("fft.hfft", (c,), {"n": 5}, 2),
        ("fft.ihfft", (x,), {}, 2),
        ("fft.fftn", (m,), {"s": (3, 2), "axes": (0, 2)}, 1),
        ("fft.ifftn", (x,), {}, 1),
        ("fft.rfftn", (m,), {}, 2),
        ("fft.irfftn", (c,), {"s": (2, -1)}, 3),
        ("fft.fftfreq", (7,), {}, 1),
        ("fft.rfftfreq", (7,), {"dtype": np.dtype("float32")}, 4),
        ("linalg.svd", (m,), {}, 1),
        ("linalg.svd", (m,), {"full_matrices": False}, 1),
        ("linalg.qr", (m,), {"mode": "complete"}, 1),
        ("linalg.qr", (m,), {}, 1),
        ("__getitem__", (x, (ints, slice(None))), {}, 1),
        ("__getitem__", (m, (None, ints[1:], ..., np.zeros((3, 1), np.int64))), {}, 1),
        ("__getitem__", (m, (True, 1, ints[1:])), {}, 1),
        ("__getitem__", (x, x > 0), {}, 100),
        ("__getitem__", (x, ([0, 0, 0, 0, 0, 0, 0], slice(None))), {}, 1),
        ("__getitem__", (x, [True, False, True]), {}, 2),
    ]


@pytest.mark.parametrize(("name", "args", "kwargs", "slack"), _cases())
def test_a_bound_holds_what_the_op_makes(name, args, kwargs, slack):
    # a bound smaller than the result would let a raw client pass the limit; one much larger
    # would refuse what the limit allows
    from ruda_remote._bounds import result_bound

    bound = result_bound(name, args, kwargs)
    if name == "__getitem__":
        result = np.asarray(args[0])[args[1]]
    else:
        fn = ruda.host
        for part in name.split("."):
            fn = getattr(fn, part)
        result = fn(*[ruda.host.asarray(a) if isinstance(a, np.ndarray) else a for a in args], **kwargs)
    made = sum(np.asarray(r).nbytes for r in (result if isinstance(result, tuple | list) else [result]))
    assert bound is not None and made <= bound <= slack * max(made, 1), (made, bound)


def test_counts_too_large_to_read_refuse_the_repeat(monkeypatch):
    # repeat's bound reads its counts: counts that are a view of 128,000 elements (1,024,000
    # bytes, within the limit) of 4 charged elements cannot be read beside what the session
    # holds, so the repeat is refused, not run unbounded
    session, ran = _bounded_session(monkeypatch)
    assert _run(session, "broadcast_to", [H(5), [32_000, 4]], {}, 7)[0] == "meta"
    assert _run(session, "broadcast_to", [H(4), [32_000, 4]], {}, 8)[0] == "meta"
    ran.clear()
    op = wire.Op(9, wire.OP_CODES["repeat"], (9,), [H(7), H(8)], {}, 0, None)
    [refused] = [wire.decode_server_message(r) for r in session.run(wire.Batch([op], []))]
    assert refused[:4] == ["error", 9, "repeat", "MemoryError"], refused
    assert ran == []


ROW = [1.5] * 256


@pytest.mark.parametrize(
    ("name", "args", "kwargs", "where"),
    [
        ("add", [H(1), ROW], {}, "argument 2 is a list"),  # NumPy broadcasts it: (256, 256)
        ("__mul__", [H(1), ROW], {}, "argument 2 is a list"),
        ("__radd__", [H(1), tuple(ROW)], {}, "argument 2 is a tuple"),
        ("matmul", [H(1), [ROW]], {}, "argument 2 is a list"),  # an outer product
        ("linspace", [ROW, 1.0, 256], {}, "argument 1 is a list"),  # NumPy: (256, 256)
        ("concat", [[H(1), [ROW]]], {"axis": 1}, "an item of argument 1 is a list"),
        ("take", [H(1), [0, 1]], {"axis": 0}, "argument 2 is a list"),
        ("clip", [H(1)], {"max": {"a": 1}}, "max= is a dict"),
        ("__setitem__", [H(1), (slice(None), 0), ROW], {}, "argument 3 is a list"),
    ],
)
def test_a_list_where_the_standard_takes_an_array_is_refused_before_it_runs(
    monkeypatch, name, args, kwargs, where
):
    session, ran = _recording_session(monkeypatch, wire.Limits(max_session_bytes=2**20))
    assert _run(session, "zeros", [[256, 1]], {"dtype": wire.DType("float64")}, 1)[0] == "meta"
    ran.clear()
    op = wire.Op(2, wire.OP_CODES[name], () if name == "__setitem__" else (2,), args, kwargs, 0, None)
    [refused] = [wire.decode_server_message(r) for r in session.run(wire.Batch([op], []))]
    assert refused[:4] == ["error", 2, name, "TypeError"], refused
    assert f"{where}, where the standard takes an array or a scalar" in refused[4]
    assert ran == []


def test_lists_where_the_standard_takes_sequences_still_run(session):
    _made(session)
    for name, args, kwargs in [
        ("asarray", [[1.0, 2.0]], {}),
        ("ones", [[2, 3]], {}),
        ("concat", [[H(1), H(2)]], {"axis": 0}),
        ("stack", [(H(1), H(2))], {}),
        ("reshape", [H(1), [1, 1]], {}),
        ("broadcast_to", [H(1), (2, 1)], {}),
        ("tile", [H(1), [3]], {}),
        ("sum", [H(1)], {"axis": (0,)}),
        ("permute_dims", [H(1), [0]], {}),
        ("__getitem__", [H(1), [0, 0]], {}),
    ]:
        assert _run(session, name, args, kwargs, 3)[0] == "meta", name
        session.run(wire.Batch([], [3]))


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("__pow__", [127, 3 * 10**7]),  # sized on the operands as they came: a Python int power
        ("__rpow__", [3 * 10**7, 127]),
        ("__lshift__", [1, 2**33]),  # a 1 GiB Python int
        ("add", [1, 2]),
        ("sqrt", [2.0]),
    ],
)
def test_an_op_without_an_array_operand_is_refused_before_it_is_sized(monkeypatch, name, args):
    session, ran = _recording_session(monkeypatch, wire.Limits(max_session_bytes=2**20))
    op = wire.Op(1, wire.OP_CODES[name], (1,), args, {}, 0, [((), "int64")])
    started = time.monotonic()
    [refused] = [wire.decode_server_message(r) for r in session.run(wire.Batch([op], []))]
    assert time.monotonic() - started < 1.0
    assert refused[:4] == ["error", 1, name, "TypeError"], refused
    assert ran == []
