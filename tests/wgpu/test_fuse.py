"""``ruda_wgpu.fuse``: a traced elementwise function replays its one kernel on new arguments, with
the bits of the function called as written, and runs as written whatever it cannot replay."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from ruda.testing import assert_same_bits, edge_operands, parametrize_backends, switched
from ruda_wgpu import _fusion, _replay

from tests.wgpu.counting import count_calls, dispatch_count, reduction_scratch_made_anew

pytestmark = parametrize_backends("wgpu")


@pytest.fixture(autouse=True)
def fused(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(_fusion, "_enabled", True)
    yield


def _polynomial(xp: Any, x: Any, y: Any) -> Any:
    t = x * y + x
    return xp.where(t > y, t - y * 3, xp.abs(t) + 1)


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8", "int16"])
def test_a_replay_gives_the_bits_of_the_function_itself_on_new_arguments(xp, dtype):
    f = xp.fuse(lambda x, y: _polynomial(xp, x, y))
    a, b = edge_operands("multiply", dtype)
    for k in range(3):  # the first call traces, the others replay on other data
        x, y = xp.asarray(np.roll(a, k)), xp.asarray(np.roll(b, 2 * k))
        assert_same_bits(np.asarray(f(x, y)), np.asarray(_polynomial(xp, x, y)))
    assert len(f.traces) == 1 and None not in f.traces.values()


def test_a_replay_is_one_dispatch_and_records_no_operation(xp, monkeypatch):
    f = xp.fuse(lambda x, y: xp.sqrt((x * y + x) * 0.5 + 1.0))
    x, y = xp.asarray(np.linspace(0, 1, 1000, dtype=np.float32)), xp.ones(1000)
    f(x, y)
    before = dispatch_count(xp)
    made = []
    monkeypatch.setattr(_fusion, "Node", lambda *a: made.append(a))  # recording would fail
    result = f(x, y)
    assert dispatch_count(xp) - before == 1 and not made
    np.testing.assert_allclose(np.asarray(result), np.sqrt(np.linspace(0, 1, 1000) + 1), rtol=1e-6)


def test_broadcasting_and_strided_views_replay_with_their_own_offsets(xp):
    f = xp.fuse(lambda x, y: x * 2 - y)
    host = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = xp.asarray(host)
    col = xp.asarray(np.arange(4, dtype=np.float32).reshape(4, 1))
    for start in (0, 1, 2):
        got = f(x[:, start::3], col)
        np.testing.assert_array_equal(np.asarray(got), host[:, start::3] * 2 - np.arange(4).reshape(4, 1))
    assert len(f.traces) == 1 and None not in f.traces.values()  # (slices of a live array replay)


def test_scalar_arguments_are_part_of_the_signature_signed_zeros_and_nan_included(xp):
    f = xp.fuse(lambda x, s: x * s)
    x = xp.asarray(np.float32([1.0, -2.0]))
    for s in (2.0, 3.0, 0.0, -0.0, float("nan"), 2.0):
        assert_same_bits(np.asarray(f(x, s)), np.float32([1.0, -2.0]) * np.float32(s))
    assert len(f.traces) == 5  # nan equals nan here, so its signature is found again


def test_a_tuple_of_results_replays_each_as_a_kernel_of_its_own(xp):
    f = xp.fuse(lambda x, y: (x * y + x, xp.sqrt(x * y + x) - y))
    a, b = edge_operands("multiply", "float32")
    for k in range(3):
        x, y = xp.asarray(np.roll(a, k)), xp.asarray(np.roll(b, k))
        before = dispatch_count(xp)
        got = f(x, y)
        if k:
            assert dispatch_count(xp) - before == 2
        want = (x * y + x, xp.sqrt(x * y + x) - y)
        assert type(got) is tuple and len(got) == 2
        for g, w in zip(got, want, strict=True):
            assert_same_bits(np.asarray(g), np.asarray(w))
    assert len(f.traces) == 1 and None not in f.traces.values()


def test_a_function_whose_signatures_keep_changing_stops_tracing_them(xp, monkeypatch):
    """A Python float that differs every call made every call a trace, 7 times the cost of
    calling the function as written."""
    f = xp.fuse(lambda x, rate: x * rate + 1)
    traced = count_calls(monkeypatch, _replay, "_traced")
    x = xp.asarray(np.float32([1.0, 2.0]))
    for k in range(3 * _replay.TRACES):
        rate = 0.5 + k
        np.testing.assert_array_equal(np.asarray(f(x, rate)), np.float32([1.0, 2.0]) * np.float32(rate) + 1)
    assert len(traced) == _replay.TRACES and f.untraced
    g = xp.fuse(lambda x, rate: x * rate + 1)  # the same signatures again and again: traced
    for k in range(3 * _replay.TRACES):
        g(x, 0.5 + k % _replay.TRACES)
    assert not g.untraced and len(g.traces) == _replay.TRACES


def test_a_branch_on_a_scalar_argument_is_traced_per_value(xp):
    f = xp.fuse(lambda x, square: x * x if square else x + x)
    x = xp.asarray(np.float32([3.0]))
    assert [float(f(x, s)[0]) for s in (True, False, True, False)] == [9.0, 6.0, 9.0, 6.0]


def test_a_pending_argument_is_computed_first(xp):
    f = xp.fuse(lambda x: x + 1)
    x = xp.asarray(np.float32([1.0, 2.0]))
    f(x * 2)
    np.testing.assert_array_equal(np.asarray(f(x * 3)), [4.0, 7.0])


def _writes_into_its_argument(xp: Any, x: Any) -> Any:
    x[0] = 7.0
    return x + 1


def _branches_on_data(xp: Any, x: Any) -> Any:
    return x + 1 if float(x[0]) > 0 else x - 1


def _sorts(xp: Any, x: Any) -> Any:
    return xp.sort(x) + 1


def _solves(xp: Any, x: Any) -> Any:
    return xp.linalg.solve(xp.eye(3) * 4 + x[:, None], x)


def _returns_an_array_and_a_number(xp: Any, x: Any) -> Any:
    return x + 1, 3


def _returns_its_argument(xp: Any, x: Any) -> Any:
    return x


_CAPTURED: list[Any] = []


def _reads_a_captured_array(xp: Any, x: Any) -> Any:
    return x + _CAPTURED[0]


@pytest.mark.parametrize(
    "fn",
    [
        _writes_into_its_argument,
        _branches_on_data,
        _sorts,
        _solves,
        _returns_an_array_and_a_number,
        _returns_its_argument,
        _reads_a_captured_array,
    ],
)
def test_what_cannot_be_replayed_runs_as_written_on_every_call(xp, fn):
    _CAPTURED[:] = [xp.asarray(np.float32([10.0, 20.0, 30.0]))]
    f = xp.fuse(lambda x: fn(xp, x))
    for host in (np.float32([1.0, 2.0, 3.0]), np.float32([-4.0, 5.0, 6.0])):
        got, want = f(xp.asarray(host)), fn(xp, xp.asarray(host))
        if isinstance(got, tuple):
            assert got[1] == want[1]
            got, want = got[0], want[0]
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert list(f.traces.values()) == [None]
    _CAPTURED.clear()


def _centred(xp: Any, x: Any, y: Any) -> Any:
    return x - xp.sum(x * y) / 3


def _standardised(xp: Any, x: Any, y: Any) -> Any:
    return (x - xp.mean(x, axis=-1, keepdims=True)) / xp.std(x, axis=-1, keepdims=True) + y


def _dot_and_norm(xp: Any, x: Any, y: Any) -> Any:
    return xp.sum(x * y), xp.sqrt(xp.sum(x * x, axis=0))


def _joins(xp: Any, x: Any, y: Any) -> Any:
    return xp.concat([x * 2, y, x - y], axis=-1)


def _writes_into_a_result(xp: Any, x: Any, y: Any) -> Any:
    z = x * 2
    z[..., 0] = 7.0
    z[:, 1:] += y[:, 1:]
    return z


def _column_statistics(xp: Any, x: Any, y: Any) -> Any:
    return xp.var(x, axis=0), xp.mean(x * y, axis=1), xp.sum(y[:, ::3], axis=0)


def _layer(xp: Any, x: Any, y: Any) -> Any:
    return xp.maximum(x @ xp.matrix_transpose(y) + y[0, 0], 0) - x[:, :3]


@pytest.mark.parametrize(
    "fn", [_centred, _standardised, _dot_and_norm, _column_statistics, _joins, _writes_into_a_result, _layer]
)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_reductions_products_and_the_work_around_them_replay_with_the_same_bits(xp, fn, dtype, monkeypatch):
    rng = np.random.default_rng(0)
    f = xp.fuse(lambda x, y: fn(xp, x, y))
    launched = count_calls(monkeypatch, _replay._Trace, "_each")
    for _ in range(3):  # the first call traces, the others replay on other data
        a, b = rng.standard_normal((2, 3, 40)).astype(dtype)
        x, y = xp.asarray(a), xp.asarray(b)
        _same_results(xp, f(x, y), fn(xp, x, y))
    assert len(f.traces) == 1 and None not in f.traces.values()
    # on the same arguments, a trace of several launches records what a replay logged
    for _ in range(2):
        _same_results(xp, f(x, y), fn(xp, x, y))
    before = len(launched)
    for _ in range(2):
        _same_results(xp, f(x, y), fn(xp, x, y))
    assert len(next(iter(f.traces.values())).launches) > 1 and len(launched) == before


def _same_results(xp: Any, got: Any, want: Any) -> None:
    for g, w in zip(*((r if isinstance(r, tuple) else (r,)) for r in (got, want)), strict=True):
        assert_same_bits(np.asarray(g), np.asarray(w))


def _conjugate_gradient_step(xp: Any, a: Any, x: Any, r: Any, p: Any, rs: Any) -> Any:
    ap = a @ p
    alpha = rs / (p @ ap)
    r = r - alpha * ap
    rs_new = r @ r
    return x + alpha * p, r, r + (rs_new / rs) * p, rs_new


def _solve(xp: Any, step: Any, a: Any, b: Any, iterations: int) -> list[np.ndarray]:
    x, r, p, rs = xp.zeros_like(b), b, b, b @ b
    solutions = []
    for _ in range(iterations):
        x, r, p, rs = step(a, x, r, p, rs)
        solutions.append(np.asarray(x))
    return solutions


def test_a_loop_replays_a_step_of_several_launches_from_its_prepared_dispatches(xp, monkeypatch):
    # A solver's step of products, reductions and updates: once a replay on the loop's buffers
    # has run, the next ones on the same buffers record its dispatches again, nothing else
    rng = np.random.default_rng(0)
    m = rng.standard_normal((48, 48)).astype(np.float32)
    a = xp.asarray(m @ m.T / 48 + np.eye(48, dtype=np.float32))
    b = xp.asarray(rng.standard_normal(48).astype(np.float32))
    f = xp.fuse(lambda *args: _conjugate_gradient_step(xp, *args))
    want = _solve(xp, lambda *args: _conjugate_gradient_step(xp, *args), a, b, 12)
    launches = count_calls(monkeypatch, _replay._Reduction, "run")
    dispatches: list[int] = []
    launched: list[int] = []  # reductions launched by each call
    solutions = _solve(xp, _recorded(xp, f, dispatches, launched, launches), a, b, 12)
    for got, expected in zip(solutions, want, strict=True):
        assert_same_bits(got, expected)
    assert len(f.traces) == 1 and None not in f.traces.values()
    assert len(set(dispatches[1:])) == 1  # every replay dispatches what the traced call did
    # (the first call's arguments share a buffer, r = p = b, and run as written; the second
    # traces) the first three replays launch their 3 reductions (the first unlogged, then one
    # on each set of the loop's buffers, which come round every other call), the others none
    assert launched[2:5] == [3, 3, 3] and launched[5:] == [0] * 7


def _recorded(xp: Any, f: Any, dispatches: list[int], launched: list[int], launches: list[Any]) -> Any:
    """``f``, noting the dispatches of each call and how many ``launches`` it added."""

    def call(*args: Any) -> Any:
        before, known = dispatch_count(xp), len(launches)
        out = f(*args)
        dispatches.append(dispatch_count(xp) - before)
        launched.append(len(launches) - known)
        return out

    return call


def test_a_prepared_replay_is_not_taken_once_a_scratch_buffer_is_made_anew(xp, monkeypatch):
    # the partial sums of a long reduction go through the device's scratch buffers: one made
    # anew (for a longer reduction elsewhere) puts the old one back in the pool, where a result
    # may take it, so the dispatches prepared before must not be recorded again
    dev = xp.__array_namespace_info__().default_device()
    f = xp.fuse(lambda x, y: xp.sum(x * y) + x)
    host = np.linspace(-1, 1, 300_000, dtype=np.float32)
    x, y = xp.asarray(host), xp.asarray(host[::-1].copy())
    want = np.asarray(xp.sum(x * y) + x)
    for _ in range(3):
        assert_same_bits(np.asarray(f(x, y)), want)
    version = dev.scratch_version
    reduction_scratch_made_anew(dev)
    assert dev.scratch_version > version
    launches = count_calls(monkeypatch, _replay._Reduction, "run")
    assert_same_bits(np.asarray(f(x, y)), want)
    assert launches  # launched again, its dispatches prepared anew


def test_a_pending_argument_runs_outside_the_replay(xp):
    # computed inside the launches a replay keeps, the argument's kernel (which reads only the
    # other argument, and writes the argument's buffer) would be recorded again by every later
    # replay, with its scalar of then
    f = xp.fuse(lambda x, y: (x * 2 + y, xp.sum(y)))
    base = xp.asarray(np.float32([1.0, 2.0, 3.0]))
    for k in range(6):
        before = dispatch_count(xp)
        out, total = f(base, base + k)
        assert dispatch_count(xp) - before == 3  # the argument's kernel, the trace's two
        np.testing.assert_array_equal(np.asarray(out), 3 * np.float32([1, 2, 3]) + k)
        assert float(total) == 6 + 3 * k
    recorded = [trace.recorded for trace in f.traces.values()]
    kept = [steps for key, steps in base._device.recorded.items() if key[0] in recorded]
    assert kept and all(len(steps) == 2 for steps in kept)


def test_arguments_sharing_a_buffer_run_as_written_until_a_call_can_tell(xp):
    f = xp.fuse(lambda x, y: x - y * 2)
    x = xp.asarray(np.float32([1.0, 2.0]))
    np.testing.assert_array_equal(np.asarray(f(x, x)), [-1.0, -2.0])
    assert not f.traces
    y = xp.asarray(np.float32([5.0, 6.0]))
    np.testing.assert_array_equal(np.asarray(f(x, y)), [-9.0, -10.0])
    np.testing.assert_array_equal(np.asarray(f(y, y)), [-5.0, -6.0])  # a replay may share one
    assert len(f.traces) == 1 and None not in f.traces.values()


def test_arrays_the_function_closes_over_are_not_taken_for_its_arguments(xp):
    """A capture tells an argument's operands by their buffer: a view the function closes over
    of an argument's buffer (a point of the data it measures distances to), or a pending result
    computed from it, had been read from the next call's arguments; such a signature runs as
    written."""
    host = np.arange(12, dtype=np.float32).reshape(4, 3)
    data, other = xp.asarray(host), xp.asarray(host[::-1].copy())
    origin = data[0]
    dist = xp.fuse(lambda p: xp.sum((p - origin) ** 2, axis=-1))
    for points in (host, host[::-1], host[::-1]):
        got = dist(data if points is host else other)
        np.testing.assert_array_equal(np.asarray(got), ((points - host[0]) ** 2).sum(axis=-1))
    a, b = xp.asarray(np.float32([1.0, 2.0])), xp.asarray(np.float32([10.0, 20.0]))
    doubled = a * 2  # (pending: its graph reads a's buffer)
    shifted = xp.fuse(lambda x: x + doubled)
    for x, want in ((a, [3.0, 6.0]), (b, [12.0, 24.0]), (b, [12.0, 24.0])):
        np.testing.assert_array_equal(np.asarray(shifted(x)), want)


_ORIGIN: list[Any] = []


def _minus_the_global_origin(p: Any) -> Any:
    return p - _ORIGIN[0]


class _Shifter:
    def __init__(self, origin: Any) -> None:
        self.origin = origin

    def shift(self, p: Any) -> Any:
        return p - self.origin

    __call__ = shift


def test_an_argument_the_function_also_reads_by_name_is_not_taken_for_the_argument(xp):
    """A function that closes over an array (or reads a global one, or its instance's) and was
    first called on that very array had its operands taken for the argument's: later calls
    computed ``p - p``."""
    origin = xp.asarray(np.float32([10.0, 20.0, 30.0]))
    _ORIGIN[:] = [origin]
    for fn in (lambda p: p - origin, _minus_the_global_origin, _Shifter(origin).shift, _Shifter(origin)):
        f = xp.fuse(fn)
        np.testing.assert_array_equal(np.asarray(f(origin)), [0.0, 0.0, 0.0])
        for _ in range(2):
            got = f(xp.asarray(np.float32([11.0, 22.0, 33.0])))
            np.testing.assert_array_equal(np.asarray(got), [1.0, 2.0, 3.0])
        assert list(f.traces.values()) == [None]  # (reading an array it was not given)
    _ORIGIN.clear()


def test_an_array_the_function_uploads_and_then_writes_is_not_replayed_unfilled(xp):
    """An array uploaded from the host inside the function and then written by a kernel had
    been replayed as a new buffer from the pool, holding whatever an earlier array left there."""

    def total(x: Any) -> Any:
        acc = xp.asarray(np.ones(4, np.float32))
        acc += x
        return acc

    f = xp.fuse(total)
    x = xp.asarray(np.arange(4, dtype=np.float32))
    for _ in range(3):
        junk = xp.asarray(np.full(4, 100.0, np.float32)) * 1  # a used buffer back in the pool
        del junk
        np.testing.assert_array_equal(np.asarray(f(x)), [1.0, 2.0, 3.0, 4.0])
    assert list(f.traces.values()) == [None]


def test_another_threads_work_during_a_trace_does_not_spoil_it(xp):
    """A trace told what it captured from the device's counts of dispatches and reads, so
    another thread's work meanwhile kept its signature from ever replaying."""
    asked, done = threading.Event(), threading.Event()

    def traced(x: Any, y: Any) -> Any:
        out = xp.sqrt(xp.abs(x * y)) + x
        asked.set()  # (Python code runs while tracing only)
        assert done.wait(60)
        return out

    def other() -> None:
        assert asked.wait(60)
        float(xp.sum(xp.ones(64) * 2))  # a dispatch and a read on this device meanwhile
        done.set()

    worker = threading.Thread(target=other)
    worker.start()
    f = xp.fuse(traced)
    for k in range(3):
        x, y = xp.full(8, float(k)), xp.full(8, -float(k))
        np.testing.assert_array_equal(np.asarray(f(x, y)), np.full(8, 2.0 * k, np.float32))
    worker.join()
    assert len(f.traces) == 1 and None not in f.traces.values()


def test_writes_into_arrays_made_before_the_call_are_not_dropped(xp):
    """A write into an array the function did not make (a global accumulator) had been captured
    as a buffer the launch made: replays wrote into a new one, and the accumulator kept the
    first call's sum."""
    acc = xp.zeros(4)

    def accumulate(x: Any) -> Any:
        acc[...] += x
        return x * 1

    f = xp.fuse(accumulate)
    for _ in range(3):
        f(xp.full(4, 1.0))
    np.testing.assert_array_equal(np.asarray(acc), [3.0] * 4)
    assert list(f.traces.values()) == [None]


def test_with_fusion_off_every_call_runs_as_written(xp):
    f = xp.fuse(lambda x: x * 2 + 1)
    x = xp.asarray(np.float32([1.0, 2.0]))
    got = switched(_fusion.set_enabled, False, lambda: [np.asarray(f(x)) for _ in range(2)])
    np.testing.assert_array_equal(got, [[3.0, 5.0], [3.0, 5.0]])
    assert not f.traces


def test_keyword_arguments_and_other_objects_pass_through_untraced(xp):
    f = xp.fuse(lambda x, scale=2: x * scale)
    x = xp.asarray(np.float32([1.0, 2.0]))
    np.testing.assert_array_equal(np.asarray(f(x, scale=3)), [3.0, 6.0])
    np.testing.assert_array_equal(np.asarray(f(x, np.float32(4))), [4.0, 8.0])
    assert not f.traces


def test_a_trace_keeps_no_buffer_of_the_call_it_was_made_from(xp):
    f = xp.fuse(lambda x, y: x * y + 1)
    x, y = xp.ones(1000), xp.ones(1000)
    f(x, y)
    storage = weakref.ref(x._storage)
    del x
    gc.collect()
    assert storage() is None and len(f.traces) == 1
    np.testing.assert_array_equal(np.asarray(f(xp.ones(1000), y)), np.full(1000, 2.0, np.float32))


def test_a_trace_keeps_no_buffer_of_the_launches_it_captured(xp):
    f = xp.fuse(lambda x: x * 2 - xp.sum(x))
    x = xp.ones(1000)
    f(x)
    xp.synchronize()
    before = xp.memory_stats()["in_use_bytes"]
    results = [f(xp.ones(1000)) for _ in range(50)]
    del results
    xp.synchronize()
    assert xp.memory_stats()["in_use_bytes"] == before
    np.testing.assert_array_equal(np.asarray(f(x)), np.full(1000, -998.0, np.float32))


def test_a_fused_function_may_call_another(xp):
    inner = xp.fuse(lambda x: x * 2 + 1)
    outer = xp.fuse(lambda x, y: xp.sum(inner(x) * y))
    for k in range(3):
        x, y = xp.asarray(np.float32([1.0, 2.0, k])), xp.asarray(np.float32([3.0, 4.0, 5.0]))
        assert float(outer(x, y)) == 3 * 3 + 5 * 4 + (2 * k + 1) * 5
    assert None not in outer.traces.values() and not inner.traces  # the outer trace took it all
    np.testing.assert_array_equal(np.asarray(inner(x)), [3.0, 5.0, 5.0])
    assert None not in inner.traces.values()


def test_an_error_in_a_replay_names_the_function(xp, monkeypatch):
    def twice_plus_one(x: Any) -> Any:
        return x * 2 + 1

    f = xp.fuse(twice_plus_one)
    f(xp.ones(4))
    monkeypatch.setattr(_replay, "launch_elementwise", _fails)
    monkeypatch.setattr(xp.__array_namespace_info__().default_device(), "prepared_alone", {})
    with pytest.raises(RuntimeError, match="out of memory") as raised:
        f(xp.ones(4))
    assert "twice_plus_one()" in raised.value.__notes__[-1]


def _fails(*args: Any, **kwargs: Any) -> None:
    raise RuntimeError("out of memory")


def test_fuse_takes_a_function(xp):
    with pytest.raises(TypeError, match="fuse\\(\\) takes a function, not int"):
        xp.fuse(3)


def test_the_wrapper_looks_like_the_function(xp):
    def scaled(x: Any) -> Any:
        """Twice x."""
        return x * 2

    f = xp.fuse(scaled)
    assert f.__name__ == "scaled" and f.__doc__ == "Twice x." and f.__wrapped__ is scaled
