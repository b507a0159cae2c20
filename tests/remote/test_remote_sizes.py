"""The server works out the size of an op's result itself (a creation function's from its
arguments) and reserves it before the backend allocates: a missing or false size hint from a
client changes nothing but the error."""

from __future__ import annotations

import re
from typing import Any

import pytest
import ruda_remote
from remote_handshake import open_raw_session
from ruda_remote import wire

LIMIT = 4 * 2**20
#: 256 MiB of float64: far past LIMIT, and cheap to describe in a few bytes
HUGE = [2**25]
#: what the server says such a creation needs: its data, and its array's handle
NEEDS = f"needs {2**28 + wire.HANDLE_BYTES} bytes (268435456 of data and 1 x {wire.HANDLE_BYTES}"


@pytest.fixture()
def small_server(make_server, monkeypatch):
    """A server whose sessions may hold LIMIT bytes; ``calls`` lists the ops its backend ran."""
    srv = make_server(limits=wire.Limits(max_session_bytes=LIMIT))
    table = srv.server.table
    run = table.call
    srv.calls = []

    def call(code: int, args: list[Any], kwargs: dict[str, Any]) -> Any:
        srv.calls.append(wire.OPS[code])
        return run(code, args, kwargs)

    monkeypatch.setattr(table, "call", call)
    return srv


def _op(name: str, args: list, kwargs: dict, expect: list | None, seq: int = 1, out: int = 1) -> list:
    return [seq, wire.OP_CODES[name], [out], args, kwargs, wire.FLAG_META, expect]


def _send(url: str, *ops: list) -> list:
    """Send one batch of ``ops`` on a fresh raw session; the server's answer to each."""
    with open_raw_session(url) as ws:
        ws.send(wire.encode(["batch", list(ops), []]))
        return [wire.decode_server_message(ws.recv(timeout=10)) for _ in ops]


FLOAT64 = {"dtype": wire.DType("float64")}
CREATIONS = [
    ("ones", [HUGE], FLOAT64),
    ("zeros", [HUGE], {}),
    ("empty", [[2**13, 2**12]], FLOAT64),
    ("full", [HUGE, 2.5], {}),
    ("arange", [2**25], {}),
    ("arange", [0.0, 2**25, 1.0], {}),
    ("linspace", [0.0, 1.0, 2**25], FLOAT64),
    ("eye", [2**12, 2**13], FLOAT64),
]


@pytest.mark.parametrize(("name", "args", "kwargs"), CREATIONS)
def test_a_creation_without_a_size_hint_is_refused_before_it_allocates(small_server, name, args, kwargs):
    (reply,) = _send(small_server.url, _op(name, args, kwargs, None))
    assert reply[:4] == ["error", 1, name, "MemoryError"], reply
    assert "session memory limit exceeded" in reply[4] and NEEDS in reply[4]
    assert small_server.calls == []  # the backend never ran it


@pytest.mark.parametrize(("name", "args", "kwargs"), CREATIONS)
def test_a_false_size_hint_is_refused_before_the_op_runs(small_server, name, args, kwargs):
    claim = [[[1], "float64"]]  # 8 bytes, for a result of 256 MiB
    true, false = _send(
        small_server.url,
        _op("zeros", [[2]], FLOAT64, [[[2], "float64"]]),
        _op(name, args, kwargs, claim, seq=2, out=2),
    )
    assert true[:2] == ["meta", 1], true  # a true hint is accepted as before
    assert false[:4] == ["error", 2, name, "ValueError"], false
    assert "expected a result of float64[1] (8 bytes)" in false[4] and "nothing was run" in false[4]
    assert small_server.calls == ["zeros"]


def test_the_public_client_is_refused_before_the_backend_runs(small_server):
    with ruda_remote.RemoteDevice(small_server.url, timeout=30) as dev:
        with pytest.raises(MemoryError, match=re.escape(f"arange {NEEDS}")):
            ruda_remote.arange(2**25, dtype=ruda_remote.int64, device=dev)
        assert int(ruda_remote.sum(ruda_remote.arange(10, device=dev))) == 45  # the session goes on
    assert small_server.calls.count("arange") == 1  # only the small one ran


@pytest.mark.parametrize(
    ("args", "kind", "match"),
    [
        ([0.0, float("inf")], "ValueError", "unbounded number of elements"),
        ([0, 10, 0], "ValueError", "step must not be zero"),
        (["a"], "TypeError", "takes no string"),
        ([[1.5]], "TypeError", "argument 1 is a list, where the standard takes an array or a scalar"),
        ([1j], "TypeError", "int or float"),
    ],
)
def test_arange_arguments_without_a_size_are_refused_naming_why(small_server, args, kind, match):
    (reply,) = _send(small_server.url, _op("arange", args, {}, None))
    assert reply[:4] == ["error", 1, "arange", kind], reply
    assert match in reply[4]
    assert small_server.calls == []


H1, H2 = wire.Handle(1), wire.Handle(2)
#: ops whose true result (8 MiB, past LIMIT) a raw client announces as one element
OUTGROWN = [
    ("tile", [H1, [1024]], [2**10]),  # 8 KiB tiled 1024 times
    ("add", [H1, H2], [2**10, 1]),  # (1024, 1) + (1, 1024): broadcast
    ("__mul__", [H1, H2], [2**10, 1]),
    ("matmul", [H1, H2], [2**10, 1]),  # an outer product
]


@pytest.mark.parametrize(("name", "args", "shape"), OUTGROWN)
def test_a_false_size_hint_does_not_skip_the_servers_own_sizing(small_server, name, args, shape):
    claim = [[[1], "float64"]]  # 8 bytes, for a result of 8 MiB
    make = [_op("ones", [shape], FLOAT64, None), _op("ones", [shape[::-1]], FLOAT64, None, seq=2, out=2)]
    *_, reply = _send(small_server.url, *make, _op(name, args, {}, claim, seq=3, out=3))
    assert reply[:4] == ["error", 3, name, "MemoryError"], reply
    assert "session memory limit exceeded" in reply[4]
    assert f"needs {2**23 + wire.HANDLE_BYTES} bytes" in reply[4]
    assert small_server.calls == ["ones", "ones"]  # refused before the backend ran it


def test_a_view_larger_than_the_limit_is_refused_before_ops_read_it(small_server):
    """A view's elements count, not the memory it keeps: ``sort`` and the like of a 0-d array
    broadcast to a size past the limit would make that size."""
    made, view, sort = _send(
        small_server.url,
        _op("zeros", [[]], FLOAT64, None),
        _op("broadcast_to", [H1, [2**20]], {}, None, seq=2, out=2),  # 8 MiB of elements, 8 bytes
        _op("sort", [H2], {}, None, seq=3, out=3),
    )
    assert made[:2] == ["meta", 1], made
    assert view[:4] == ["error", 2, "broadcast_to", "MemoryError"], view
    assert "float64[1048576], has 8388608 bytes of elements" in view[4]
    assert sort[:4] == ["error", 3, "sort", "MemoryError"], sort  # its operand's error
    assert small_server.calls == ["zeros", "broadcast_to"]  # the sort never ran


def test_views_within_the_limit_stay_free(small_server):
    """Slices, transposes and a ``reshape`` of contiguous elements allocate nothing: with a 3 MiB
    array they fit under a 4 MiB limit."""
    xp = ruda_remote
    with xp.RemoteDevice(small_server.url, timeout=30) as dev:
        a = xp.ones((768, 512), dtype=xp.float64, device=dev)
        views = [a[::2], xp.permute_dims(a, (1, 0)), xp.reshape(a, (-1,)), xp.broadcast_to(a[:1], (768, 512))]
        assert [float(xp.sum(v)) for v in views] == [768 * 256.0, 768 * 512.0, 768 * 512.0, 768 * 512.0]


def test_a_reshape_that_copies_is_sized_before_it_runs(small_server):
    """``reshape`` of a transposed array copies it: 3 MiB more does not fit beside the 3 MiB
    array under a 4 MiB limit, and is refused before the backend makes it."""
    with ruda_remote.RemoteDevice(small_server.url, timeout=30) as dev:
        a = ruda_remote.ones((768, 512), dtype=ruda_remote.float64, device=dev)
        flat = ruda_remote.reshape(ruda_remote.permute_dims(a, (1, 0)), (-1,))
        with pytest.raises(MemoryError, match="session memory limit exceeded: reshape needs"):
            float(flat[0])
    assert "reshape" not in small_server.calls


def test_an_in_place_operator_whose_result_does_not_fit_its_target_is_refused_before_it_runs(small_server):
    """``target += other`` computes ``target + other`` before it writes it into the target: a
    target of (1024, 1) and an operand of (1, 1024) would make the whole 8 MiB sum first."""
    make = [_op("ones", [[2**10, 1]], FLOAT64, None), _op("ones", [[1, 2**10]], FLOAT64, None, seq=2, out=2)]
    iadd = [3, wire.OP_CODES["__iadd__"], [], [H1, H2], {}, 0, None]
    stats = [4, wire.OP_CODES["__stats__"], [4], [], {}, wire.FLAG_META, None]
    *_, refused, held = _send(small_server.url, *make, iadd, stats)
    assert refused[:4] == ["error", 3, "__iadd__", "ValueError"], refused
    assert "non-broadcastable output" in refused[4] and "float64[1024, 1024]" in refused[4]
    assert held[0] == "stats", held
    assert small_server.calls == ["ones", "ones"]  # the sum was never computed


def test_an_in_place_operator_reserves_its_base_operators_result(small_server):
    """``x += 1.0`` makes ``x + 1.0`` before it writes it into ``x``: 3 MiB more beside a 3 MiB
    ``x`` does not fit under a 4 MiB limit, while a sixth of it does."""
    xp = ruda_remote
    with xp.RemoteDevice(small_server.url, timeout=30) as dev:
        x = xp.ones((768, 512), dtype=xp.float64, device=dev)
        part = x[:128]
        part += 1.0
        assert float(xp.sum(x)) == 768 * 512 + 128 * 512
        x += 1.0
        with pytest.raises(MemoryError, match=r"session memory limit exceeded: __iadd__ needs 3145728 bytes"):
            float(x[0, 0])
        assert float(part[0, 0]) == 2.0  # the target keeps its value, and the session goes on
    assert small_server.calls.count("__iadd__") == 1
