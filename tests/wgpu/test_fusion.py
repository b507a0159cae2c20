"""Lazy elementwise chains fused into one kernel: when they run, what they read, and that every
function on every dtype gives the bits it gives unfused (NaN, signed zeros, infinities, extremes)."""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from ruda.testing import (
    assert_matches_numpy,
    assert_same_bits,
    edge_operands,
    parametrize_backends,
    python_output,
    switched,
)
from ruda_wgpu import _fusion, _ops
from ruda_wgpu._engine import default_device
from ruda_wgpu._kernels import LANES

from tests.wgpu.dtype_support import accumulated

pytestmark = parametrize_backends("wgpu")


def _dispatches(xp: Any) -> int:
    return int(xp.memory_stats()["dispatches"])


@pytest.fixture
def fused(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(_fusion, "_enabled", True)
    yield


def _unfused(fn: Callable[[], Any]) -> Any:
    return switched(_fusion.set_enabled, False, fn)


def test_a_chain_runs_as_one_kernel_when_read(xp, fused):
    host = np.linspace(-3, 3, 1001, dtype=np.float32)
    x = xp.asarray(host)
    before = _dispatches(xp)
    y = xp.sin(x) * 2.0 + x
    z = xp.exp(-xp.abs(y)) - 0.5 * y
    w = xp.where(z > 0, z, xp.sqrt(xp.abs(z)))
    assert _dispatches(xp) == before  # nothing ran yet
    with np.errstate(all="ignore"):
        yy = np.sin(host) * np.float32(2) + host
        zz = np.exp(-np.abs(yy)) - np.float32(0.5) * yy
        want = np.where(zz > 0, zz, np.sqrt(np.abs(zz)))
    assert_matches_numpy(w, want, rtol=2e-6, atol=1e-6)
    assert _dispatches(xp) == before + 1


def test_intermediates_take_no_memory(xp, fused):
    x = xp.ones((1 << 20,))
    xp.synchronize()
    base = xp.memory_stats()["in_use_bytes"]
    y = x
    for _ in range(8):
        y = y * 1.5 - 0.25
    float(xp.sum(y))  # runs the chain; the reduction's own buffers are freed after
    assert xp.memory_stats()["in_use_bytes"] - base <= 4 * (1 << 20) * 1.25 + 4096  # y alone


def test_long_loops_run_in_bounded_kernels(xp, fused):
    x = xp.zeros((1000,))
    before = _dispatches(xp)
    for _ in range(1000):
        x = x + 1.0
    assert_matches_numpy(x, np.full(1000, 1000, np.float32))
    assert _dispatches(xp) - before == -(-1000 // _fusion.MAX_NODES)


def test_operations_whose_code_keeps_local_arrays_run_alone(xp, fused):
    """float64 sin, cos and tan keep arrays in local variables (their argument reduction): fused,
    NVIDIA's compiler rounded a chain of them otherwise than unfused, and lavapipe's took minutes
    for 30 of them. Each runs alone, as complex operations do; the cheap operations between them
    fuse; float32 ones fuse as before. The results have the bits of unfused ones."""
    assert not _ops._function("sin", np.dtype("float32")).alone
    if "float64" not in xp.__array_namespace_info__().dtypes():
        pytest.skip("the device has no float64")
    assert _ops._function("cos", np.dtype("float64")).alone
    host = np.linspace(-20, 20, 301)

    def steps() -> Any:
        x = xp.asarray(host)
        for fn in (xp.sin, xp.cos, xp.tan, xp.sin, xp.cos):
            x = fn(x) * 1.5 + 0.25
        return x

    before = _dispatches(xp)
    got = np.asarray(steps())
    assert _dispatches(xp) - before == 10  # each function, then its two operations
    np.testing.assert_array_equal(got, np.asarray(_unfused(steps)))


def test_kernels_are_reused_whatever_the_scalars(xp, fused):
    x = xp.ones((100,))
    float(xp.sum(x * 3.0 + 1.0))
    pipelines = xp.memory_stats()["pipelines"]
    for k in range(5):
        assert float(xp.sum(x * float(k) + 2.0)) == 100 * (k + 2)
    assert xp.memory_stats()["pipelines"] == pipelines


def test_scalars_equal_but_for_the_signs_of_zeros_keep_their_bits(xp, fused):
    # 0.0 == -0.0 and complex(-0.0, 0.0) == complex(-0.0, -0.0): a scalar's words and a launch
    # kept for one must not serve the other
    z = xp.asarray(np.array([complex(-0.0, -0.0)], np.complex64))
    for imag in (-0.0, 0.0, -0.0):
        got = np.asarray(xp.add(z, complex(-0.0, imag)))
        assert np.signbit(got.imag[0]) == (imag == 0 and np.signbit(imag))
    x = xp.asarray(np.array([-0.0], np.float32))
    for zero in (-0.0, 0.0, -0.0):
        assert np.signbit(np.asarray(x + zero)[0]) == bool(np.signbit(zero))


def test_a_graph_recorded_again_reuses_its_launch(xp, fused):
    # A graph's prepared dispatch is found by its root's structure id and output buffer; each
    # round here frees its result, so that the next one gets the same pooled buffer.
    x = xp.ones((64,))
    dev = default_device()
    for k in range(4):  # the scalars are part of the structure, signed zeros included
        got = np.asarray(xp.divide(1.0, x * (-0.0 if k % 2 else 0.0)))
        assert np.all(got == (-np.inf if k % 2 else np.inf))
    assert_matches_numpy((x * 2.0 + 5.0) * 3.0, np.full(64, 21, np.float32))
    before = _dispatches(xp), len(dev.prepared_fused)
    for _ in range(3):
        assert_matches_numpy((x * 2.0 + 5.0) * 3.0, np.full(64, 21, np.float32))
    assert _dispatches(xp) == before[0] + 3
    assert len(dev.prepared_fused) == before[1]  # found, not made again


@pytest.mark.parametrize("root_after_the_write", [False, True])
def test_a_graph_recorded_again_after_a_write_into_its_operand(xp, fused, root_after_the_write):
    # The write runs the graph's first operation on the old x; the rest must read its result,
    # not compute it again from the new x as the dispatch prepared for the graph would.
    host = np.arange(8, dtype=np.float32)
    x = xp.asarray(host)
    c0 = (x * 2.0 + 1.0) * 3.0
    assert_matches_numpy(c0, (host * 2 + 1) * 3)  # prepared for its output buffer
    b1 = x * 2.0 + 1.0
    if not root_after_the_write:
        c1 = b1 * 3.0  # the same graph again, pending
    x[0] = 100.0
    if root_after_the_write:
        c1 = b1 * 3.0
    del c0  # c1 gets c0's buffer
    assert_matches_numpy(c1, (host * 2 + 1) * 3)


def test_a_prepared_graph_is_not_replayed_after_its_operand_changed_under_a_computed_step(xp, fused):
    # c's graph equals one launched before, but its first operation has run alone since and x
    # has been written: c must read that operation's result, not compute it again from the new x
    host = np.arange(8, dtype=np.float32)
    x = xp.asarray(host)
    c0 = (x * 2.0 + 1.0) * 3.0
    assert_matches_numpy(c0, (host * 2 + 1) * 3)  # prepared for its output buffer
    a = x * 2.0
    b = a + 1.0
    assert_matches_numpy(a, host * 2)  # runs alone
    c = b * 3.0
    x[...] = 100.0
    del c0  # c gets c0's buffer
    assert_matches_numpy(c, (host * 2 + 1) * 3)
    assert_matches_numpy(b, host * 2 + 1)


def test_graphs_run_by_a_write_find_their_prepared_launch(xp, fused, monkeypatch):
    # a loop whose pending results run because it writes into what they read: from the second
    # round on, each graph's launch is found, not made again from the graph
    host = np.arange(64, dtype=np.float32)
    x = xp.asarray(host)
    walks = []
    real = _fusion.graph_of
    monkeypatch.setattr(_fusion, "graph_of", lambda root: walks.append(root) or real(root))
    for k in range(4):
        y, z = x * 2.0 + 1.0, x * 3.0  # a graph of two operations, and one alone
        x[...] = float(k)  # runs y and z first
        if k == 0:
            walks.clear()
        before = host if k == 0 else np.full(64, k - 1, np.float32)
        assert_matches_numpy(y, before * 2 + 1)
        assert_matches_numpy(z, before * 3)
        del y, z
    assert walks == []


def test_a_graph_whose_operation_ran_alone_is_not_prepared(xp, fused):
    host = np.arange(8, dtype=np.float32)
    x = xp.asarray(host)
    a = x * 2.0
    c = (a + 1.0) * 3.0
    np.asarray(a)  # a runs on its own: c's kernel reads its buffer
    assert_matches_numpy(c, (host * 2 + 1) * 3)
    del a
    w = xp.full((8,), 5.0)  # most likely in a's old buffer
    del c
    assert_matches_numpy((x * 2.0 + 1.0) * 3.0, (host * 2 + 1) * 3)  # likely in c's old buffer
    assert_matches_numpy(w, np.full(8, 5, np.float32))


def test_empty_cache_forgets_the_graphs_prepared_launches(xp, fused):
    # their keys name buffers that empty_cache() destroys
    host = np.arange(64, dtype=np.float32)
    x = xp.asarray(host)
    assert_matches_numpy((x * 2.0 + 1.0) * 3.0, (host * 2 + 1) * 3)
    dev = default_device()
    assert dev.prepared_fused and _fusion._structure_ids
    xp.empty_cache()
    assert not dev.prepared_fused and not _fusion._structure_ids
    assert_matches_numpy((x * 2.0 + 1.0) * 3.0, (host * 2 + 1) * 3)


def test_writes_wait_for_pending_readers(xp, fused):
    x = xp.asarray(np.arange(6, dtype=np.float32))
    y = x * 2.0  # pending: reads x
    z = x[1:] + 1.0
    x[...] = 100.0
    x += 1.0
    x[xp.asarray([True, False, True, False, True, False])] = -5.0
    assert_matches_numpy(y, np.arange(6, dtype=np.float32) * 2)
    assert_matches_numpy(z, np.arange(1, 6, dtype=np.float32) + 1)
    assert_matches_numpy(x, np.array([-5, 101, -5, 101, -5, 101], np.float32))


def test_writes_wait_for_pending_readers_of_every_thread(xp, fused):
    """Threads recording on one device at once, switching every microsecond: each writes into
    its own array after recording readers of it, and the readers still see the old values.
    (Dropping dead references from the pending list, or running it, had lost the references
    another thread appended meanwhile, about 40 readers in 1800 here, which then read the
    written values.)"""
    wrong: list[tuple[int, int]] = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for _ in range(150):
            host = rng.integers(0, 100, 8).astype(np.float32)
            x = xp.asarray(host)
            readers = [x + float(k) for k in range(5)]
            others = [xp.ones(8) * k for k in range(20)]  # (the pending list fills and is trimmed)
            x[...] = -1.0
            for k, y in enumerate(readers):
                if not np.array_equal(np.asarray(y), host + k):
                    wrong.append((seed, k))
            if seed % 2:
                float(xp.sum(others[0]))  # (runs every pending operation)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(seed,)) for seed in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert not wrong


def _meanwhile(action: Callable[[], None], threads: list[threading.Thread]) -> None:
    """Run ``action`` in another thread (appended to ``threads``) and give it half a second: it
    runs now unless it waits for a lock this thread holds (then it goes on once this thread
    lets go)."""
    thread = threading.Thread(target=action, daemon=True)
    threads.append(thread)
    thread.start()
    thread.join(0.5)


@pytest.mark.parametrize("reader", ["sum", "in place"])
def test_another_threads_write_waits_for_a_chain_read_as_it_runs(xp, fused, monkeypatch, reader):
    """A reduction (or ``y += s``) reads the pending graph of ``s`` as it runs it. Another
    thread's write into a buffer that graph reads, landing between the graph's walk and its
    launch, had run ``s`` as a pending reader and then been written before the launch read the
    buffer: the sum of ``x * 2`` came out of the written values (about one call in 60 with a
    writer thread racing it)."""
    x = xp.ones((64,))
    s = x * 2.0
    walk = _fusion.graph_of
    writers: list[threading.Thread] = []

    def walked(root: Any) -> Any:
        graph = walk(root)
        if root is s._node or (reader == "in place" and x._store in _leaf_buffers(graph)):

            def write() -> None:
                x[...] = 5.0

            _meanwhile(write, writers)
        return graph

    monkeypatch.setattr(_fusion, "graph_of", walked)
    if reader == "sum":
        total = float(xp.sum(s))
    else:
        y = xp.zeros((64,))
        y += s
        total = float(np.asarray(y).sum())
    monkeypatch.setattr(_fusion, "graph_of", walk)
    assert total == 128.0
    assert_matches_numpy(s, np.full(64, 2, np.float32))
    writers[0].join()
    assert_matches_numpy(x, np.full(64, 5, np.float32))  # (the write happened, after)


def _leaf_buffers(graph: Any) -> list[Any]:
    return [leaf.storage for leaf in graph[2] if hasattr(leaf, "storage")]


def test_a_second_writer_waits_for_the_readers_the_first_runs(xp, fused, monkeypatch):
    """Two threads writing into one buffer that pending operations read: the first runs the
    readers, and the second waits for them. It had found the buffer unmarked as soon as the
    first started and written before the readers ran (wrong reads in 5 of 300 rounds)."""
    x = xp.ones((8,))
    readers = [x * float(k) for k in range(3)]
    dev = x.device
    run_readers = type(dev).run_readers
    writers: list[threading.Thread] = []

    def second_write(self: Any, storage: Any) -> None:
        monkeypatch.setattr(type(dev), "run_readers", run_readers)

        def write() -> None:
            x[4:] = 7.0

        _meanwhile(write, writers)
        run_readers(self, storage)

    monkeypatch.setattr(type(dev), "run_readers", second_write)
    x[:4] = 5.0
    xp.synchronize()
    for k, y in enumerate(readers):
        assert_matches_numpy(y, np.full(8, k, np.float32))
    writers[0].join()
    assert_matches_numpy(x, np.array([5] * 4 + [7] * 4, np.float32))


def test_a_pending_operation_that_cannot_run_leaves_the_others_guarded(xp, fused):
    """``synchronize()`` runs every pending operation; one whose result the device cannot hold
    raises, named, and stays pending, and the others still run before a write into what they
    read (they had been dropped unrun, and read the written values)."""
    x = xp.ones((3,))
    y = x * 2.0
    side = 1 << 16
    too_large = xp.ones((1, side)) + xp.ones((side, 1))  # (16 GiB of float32)
    with pytest.raises(MemoryError) as info:
        xp.synchronize()
    assert "['add']" in "".join(info.value.__notes__)
    x[...] = 5.0
    assert_matches_numpy(y, np.full(3, 2, np.float32))
    with pytest.raises(MemoryError):
        xp.synchronize()  # (still pending: its error comes again while it is alive)
    del too_large, info
    xp.synchronize()


def _is_pending(x: Any) -> bool:
    return x._node is not None and x._node.storage is None


def test_a_write_runs_only_the_pending_graphs_that_read_its_buffer(xp, fused):
    host = np.arange(6, dtype=np.float32)
    x, v, w = xp.asarray(host), xp.asarray(host), xp.asarray(host)
    y = (x + 1.0) * 2.0  # reads x through its first operation
    u = v * 3.0
    w[...] = 9.0  # nothing pending reads w
    assert _is_pending(y) and _is_pending(u)
    x[...] = 100.0
    assert not _is_pending(y) and _is_pending(u)
    assert_matches_numpy(y, (host + 1) * 2)
    assert_matches_numpy(u, host * 3)


def test_a_write_into_a_result_that_a_pending_operation_reads(xp, fused):
    # q runs alone; p, still pending, reads its buffer, and must see it before the writes
    host = np.arange(4, dtype=np.float32)
    q = xp.asarray(host) + 1.0
    p = q * 2.0
    r = xp.sqrt(q)
    assert_matches_numpy(q, host + 1)
    assert _is_pending(p) and _is_pending(r)
    q[...] = 0.0
    assert not _is_pending(p) and not _is_pending(r)
    q2 = xp.asarray(host) + 1.0
    p2 = q2 * 2.0
    assert_matches_numpy(q2, host + 1)
    q2 += 5.0  # computed into q2's buffer
    assert_matches_numpy(p2, (host + 1) * 2)
    assert_matches_numpy(q2, host + 6)


def test_in_place_operators_on_pending_arrays(xp, fused):
    x = xp.ones((5,)) + 1.0
    y = x * 3.0
    x *= 2.0
    x += y
    assert_matches_numpy(x, np.full(5, 10, np.float32))
    assert_matches_numpy(y, np.full(5, 6, np.float32))


def test_pending_arrays_used_by_other_operations(xp, fused):
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = xp.asarray(host)
    y = x * 2.0 - 1.0
    assert_matches_numpy(y[1:, ::-1], (host * 2 - 1)[1:, ::-1])
    assert_matches_numpy(xp.sum(y, axis=0), (host * 2 - 1).sum(axis=0))
    assert_matches_numpy(xp.reshape(y, (4, 3)).T @ y.T, (host * 2 - 1).reshape(4, 3).T @ (host * 2 - 1).T)
    assert_matches_numpy(xp.sort(-y, axis=1), np.sort(-(host * 2 - 1), axis=1))


def test_broadcast_operands_and_shared_intermediates(xp, fused):
    col = np.arange(3, dtype=np.float32).reshape(3, 1)
    row = np.arange(4, dtype=np.float32).reshape(1, 4)
    a, b = xp.asarray(col), xp.asarray(row)
    t = a * 2.0  # (3, 1), pending: broadcast into the next, which computes it again
    u = t + b  # (3, 4)
    v = u * u + u  # u used three times: computed once in the kernel
    w = xp.exp(-v) + t  # t again, broadcast
    want_u = col * 2 + row
    want = np.exp(-(want_u * want_u + want_u)) + col * 2
    assert_matches_numpy(w, want, rtol=2e-6, atol=0)
    assert_matches_numpy(u, want_u)  # u still pending: runs on its own


def test_a_pending_single_value_is_computed_by_the_graphs_that_broadcast_it(xp, fused):
    """A step size ``alpha = rs / d`` of stored 0-D sums, times vectors: each graph computes
    alpha again at every element (no dispatch for alpha alone), with the bits alpha has when
    run alone, and a write into what alpha reads runs those graphs first. So for a mean of
    shape (1, 1)."""
    rng = np.random.default_rng(3)
    hv, hw = (rng.standard_normal(1000).astype(np.float32) for _ in range(2))

    def step() -> tuple[Any, ...]:
        v, w = xp.asarray(hv), xp.asarray(hw)
        rs, d = xp.sum(v * v), xp.sum(v * w)
        alpha = rs / d
        return v, w, rs, alpha, alpha * v + w, w - alpha * v

    want = _unfused(lambda: [np.asarray(a) for a in step()[-3:]])
    v, _, rs, alpha, y, z = step()
    before = _dispatches(xp)
    assert_same_bits(np.asarray(y), want[1])
    assert _dispatches(xp) == before + 1  # y's kernel alone: alpha computed in it
    assert _is_pending(alpha) and _is_pending(z)
    rs[...] = 0.0  # z reads rs through its copy of alpha: it runs first
    assert not _is_pending(z)
    assert_same_bits(np.asarray(z), want[2])
    assert_same_bits(np.asarray(alpha), want[0])
    # so is a mean kept as (1, 1), broadcast over a matrix's rows and columns (written out:
    # xp.mean of an array is computed, see _statistical.ArrayPlan)
    host = rng.standard_normal((30, 40)).astype(np.float32)
    x = xp.asarray(host)
    mu = xp.sum(x, axis=(0, 1), keepdims=True) / 1200.0
    before = _dispatches(xp)
    centred = np.asarray((x - mu) * 2.0)
    assert _dispatches(xp) == before + 1 and _is_pending(mu)
    alone = _unfused(lambda: np.asarray((x - xp.sum(x, axis=(0, 1), keepdims=True) / 1200.0) * 2.0))
    assert_same_bits(centred, alone)
    # a 0-D graph of more than a few operations runs first, as does one a complex result takes
    big = alpha
    for _ in range(_fusion.SPREAD_NODES):
        big = big * 1.0
    assert_same_bits(np.asarray(big * v), want[0] * hv)
    assert_matches_numpy(alpha * xp.asarray(hv.astype(np.complex64)), want[0] * hv.astype(np.complex64))
    # a graph that reads too many arrays runs its pending operands, copies of alpha among them
    many = [xp.asarray(hv + k) for k in range(_fusion.MAX_LEAVES + 1)]
    total = alpha * many[0]
    for m in many[1:]:
        total = total + m
    expected = want[0] * hv
    for k in range(1, _fusion.MAX_LEAVES + 1):
        expected = expected + (hv + np.float32(k))
    assert_same_bits(np.asarray(total), expected)


def test_a_pending_operand_is_computed_by_the_graphs_that_broadcast_it(xp, fused):
    """A pending mean kept as (1, n) or (n, 1), or a pending vector, broadcast over a matrix:
    the graph that broadcasts it computes it again at every element (no dispatch of its own),
    with the bits it has when run alone; one of more than ``SPREAD_NODES`` operations runs
    first."""
    rng = np.random.default_rng(4)
    host = rng.standard_normal((30, 40)).astype(np.float32)
    x = xp.asarray(host)
    for axis in (0, 1):

        def mean(axis: int = axis) -> Any:  # (pending: xp.mean of an array is computed)
            return xp.sum(x, axis=axis, keepdims=True) / float(host.shape[axis])

        mu = mean()
        before = _dispatches(xp)
        centred = np.asarray((x - mu) / 3.0)
        assert _dispatches(xp) == before + 1 and _is_pending(mu)
        assert_same_bits(centred, _unfused(lambda: np.asarray((x - mean()) / 3.0)))
        assert_same_bits(np.asarray(mu), _unfused(lambda: np.asarray(mean())))
    hv = rng.standard_normal(40).astype(np.float32)
    alone = _unfused(lambda: np.asarray(x * (xp.sin(xp.asarray(hv)) * 2.0)))
    v = xp.sin(xp.asarray(hv)) * 2.0  # (40,), broadcast along a new leading axis
    before = _dispatches(xp)
    assert_same_bits(np.asarray(x * v), alone)
    assert _dispatches(xp) == before + 1 and _is_pending(v)
    big = v
    for _ in range(_fusion.SPREAD_NODES):
        big = big + 0.0
    before = _dispatches(xp)
    assert_matches_numpy(x * big, host * (np.sin(hv) * 2))
    assert _dispatches(xp) == before + 2  # big's graph, then the product reading its result


def test_synchronize_runs_what_is_pending(xp, fused):
    x = xp.ones((10,))
    y = x + 1.0
    before = _dispatches(xp)
    xp.synchronize()
    assert _dispatches(xp) == before + 1
    float(xp.sum(y))
    assert _dispatches(xp) == before + 2  # only the sum: y had run


def test_deferred_errors_name_their_operations(xp, fused, monkeypatch):
    x = xp.ones((10,))
    y = xp.exp(x) + 1.0

    def fails(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the driver refused")

    monkeypatch.setattr(_fusion, "launch_elementwise", fails)
    with pytest.raises(RuntimeError, match="refused") as info:
        np.asarray(y)
    assert "['exp', 'add']" in "".join(info.value.__notes__)


def test_the_switch_and_ruda_info(xp):
    code = (
        "import ruda_wgpu as xp\n"
        "from ruda_wgpu import _fusion\n"
        "x = xp.ones((10,)); n = xp.memory_stats()['dispatches']\n"
        "y = x + 1.0; z = y * 2.0\n"
        "print(_fusion.enabled(), xp.memory_stats()['dispatches'] - n)\n"
    )
    for value, want in (("0", "False 2"), ("1", "True 0")):
        assert python_output(code, **{_fusion.FUSION_ENV: value}) == want
    from ruda_wgpu._plugin import WgpuBackend

    assert WgpuBackend().probe().details["fusion"].startswith("on" if _fusion.enabled() else "off")


# -- every elementwise function and dtype: fused bits == unfused bits ---------------------------


def _cases() -> list[tuple[str, str]]:
    dev = default_device()
    out = []
    for name in _ops.NAMES:
        op = _ops._OPS[name]
        for dt in dev.dtype_names:
            if np.dtype(dt).kind in op.kinds:
                out.append((name, dt))
    return out


def _chain(xp: Any, name: str, a: Any, b: Any) -> Any:
    """``name`` on (a, b), then operations on its result, so that it is a fused intermediate."""
    fn = getattr(xp, name)
    t = fn(a) if _ops._OPS[name].nargs == 1 else fn(a, b)
    if t.dtype == xp.bool:
        return xp.astype(t, xp.int32) * 3 + 1
    return t * t + t


@pytest.mark.parametrize(("name", "dtype"), _cases())
def test_fused_and_unfused_bits_agree(xp, fused, name, dtype):
    dt = np.dtype(dtype)
    host_a, host_b = edge_operands(name, dt)
    a, b = xp.asarray(host_a), xp.asarray(host_b)
    unfused = np.asarray(_unfused(lambda: _chain(xp, name, a, b)))
    before = _dispatches(xp)
    fused_result = np.asarray(_chain(xp, name, a, b))
    # one kernel, but complex operations run alone: the first step on complex input (or of code
    # that keeps local arrays: float64 trig), and the two after it when they are complex too
    first = _ops._function(name, dt).alone if name not in ("where", "astype") else dt.kind == "c"
    kernels = first + (2 if fused_result.dtype.kind == "c" else 1)
    assert _dispatches(xp) - before == kernels
    assert fused_result.dtype == unfused.dtype
    assert_same_bits(fused_result, unfused)


def _lanes_used(xp: Any, run: Callable[[], Any]) -> tuple[np.ndarray, set[int]]:
    """``run()`` as NumPy, and the lanes of the elementwise kernels it planned (from none)."""
    xp.empty_cache()  # no plan and no prepared launch left: every launch plans anew
    result = np.asarray(run())
    return result, {plan.lanes for plan in default_device().plans.values()}


#: the dtypes stored in 32-bit words, whose contiguous operands a kernel reads four at a time
FOUR_LANE_DTYPES = {"bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16", "float32"}


@pytest.mark.parametrize(("name", "dtype"), [c for c in _cases() if c[1] in FOUR_LANE_DTYPES])
def test_four_lane_kernels_give_the_bits_of_one_lane_kernels(xp, fused, name, dtype):
    # 64 elements: each thread does four through vector loads; one more element, one a thread
    host_a, host_b = edge_operands(name, np.dtype(dtype))
    assert host_a.size % LANES == 0
    for alone in (True, False):
        four, lanes_four = _lanes_used(xp, _chain_on(xp, name, host_a, host_b, alone))
        extra_a, extra_b = (np.concatenate([h, h[:1]]) for h in (host_a, host_b))
        one, lanes_one = _lanes_used(xp, _chain_on(xp, name, extra_a, extra_b, alone))
        assert lanes_four == {LANES} and lanes_one == {1}
        assert_same_bits(four, one[: four.size])


def test_four_lane_kernels_over_windows_of_a_buffer(xp, fused, monkeypatch):
    # beyond one storage binding a launch binds window after window: each starts four-aligned
    dev = default_device()
    monkeypatch.setattr(dev, "max_binding", dev.offset_align + 4000)  # windows of 768 elements
    host_x = np.arange(10_000, dtype=np.float32)
    host_y = np.full(10_000, 0.25, np.float32)
    x, y = xp.asarray(host_x), xp.asarray(host_y)
    before = _dispatches(xp)
    got, lanes = _lanes_used(xp, lambda: x * 3.0 + y)
    xp.empty_cache()  # the plans made under the small limit go with it
    assert lanes == {LANES} and _dispatches(xp) - before == 14  # ceil(10000 / 768) windows
    assert_same_bits(got, host_x * np.float32(3) + host_y)


def _chain_on(xp: Any, name: str, host_a: np.ndarray, host_b: np.ndarray, alone: bool) -> Callable[[], Any]:
    """What runs :func:`_chain` on copies of the host operands, fused or each operation alone."""
    a, b = xp.asarray(host_a), xp.asarray(host_b)
    return (lambda: _unfused(lambda: _chain(xp, name, a, b))) if alone else (lambda: _chain(xp, name, a, b))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_products_are_not_contracted_into_fma(xp, fused, dtype):
    if dtype not in default_device().dtype_names:
        pytest.skip(f"{dtype} is not on {default_device()}")
    rng = np.random.default_rng(3)
    host = [(rng.standard_normal(4096) * 3).astype(dtype) for _ in range(3)]
    x, y, z = (xp.asarray(h) for h in host)

    def run() -> np.ndarray:
        return np.asarray((x * y + z) * (y - x * z) - x * x)

    assert_same_bits(run(), _unfused(run))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128"])
def test_an_operation_on_one_value_twice_is_not_folded(xp, fused, dtype):
    """Drivers compile assuming finite floats: ``x - x`` had given 0 where x is inf or NaN, fused
    or not, and so had ``(x*y) - (x*y)`` fused, whose two products the driver took for one, and
    ``(x - x) / 3.0`` fused on lavapipe."""
    if dtype not in default_device().dtype_names:
        pytest.skip(f"{dtype} is not on {default_device()}")
    host = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.5, -2.0, 6e4], dtype)
    x, y = xp.asarray(host), xp.asarray(np.ones_like(host))
    with np.errstate(invalid="ignore"):
        zero = host - host
    cases = [
        (lambda: x - x, zero),
        (lambda: x - x[...], zero),
        (lambda: (x * y) - (x * y), zero),
        (lambda: (x - x) + 1, zero + 1),
        (lambda: (x - x) / 3.0, zero / 3),  # (lavapipe had written the fence's parameter in as 0)
    ]
    for run, want in cases:
        got = np.asarray(run())
        assert_same_bits(got, _unfused(lambda run=run: np.asarray(run())))
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_array_equal(got[~np.isnan(got)], want[~np.isnan(want)])


_SELECTS = {
    "x < y ? x : y": lambda xp, x, y: xp.where(x < y, x, y),
    "x > y ? x : y": lambda xp, x, y: xp.where(x > y, x, y),
    "x <= y ? y : x": lambda xp, x, y: xp.where(x <= y, y, x),
    "y >= x ? x : y": lambda xp, x, y: xp.where(y >= x, x, y),
    "x < y ? x : y, of x * 1": lambda xp, x, y: xp.where(x * 1 < y, x * 1, y),
}


@pytest.mark.parametrize("case", list(_SELECTS))
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_a_select_by_a_comparison_of_its_operands_keeps_nan(xp, fused, dtype, case):
    """``where(x < y, x, y)`` is ``min(x, y)`` only for numbers: a driver that compiles assuming
    finite floats may make it one, which drops a NaN (NVIDIA's did, fused: 0 for x = 0, y = NaN)."""
    if dtype not in default_device().dtype_names:
        pytest.skip(f"{dtype} is not on {default_device()}")
    values = np.array([np.nan, 0.0, -0.0, 1.5, np.inf, -np.inf], dtype)
    hx, hy = (a.reshape(-1) for a in np.meshgrid(values, values))
    x, y = xp.asarray(hx), xp.asarray(hy)
    select = _SELECTS[case]
    got = np.asarray(select(xp, x, y))
    assert_same_bits(got, _unfused(lambda: np.asarray(select(xp, x, y))))
    with np.errstate(invalid="ignore"):
        assert_same_bits(got, select(np, hx, hy))


def test_no_float_value_reaches_two_operations_unfenced(xp, fused):
    """The code of ``where(x < y, x, y)``: x and y are taken unfenced by the comparison only, so
    that no compiler sees the select's operands as the comparison's."""
    x, y = xp.asarray(np.ones(8, np.float32)), xp.asarray(np.zeros(8, np.float32))
    w = xp.where(x < y, x, y)
    order, structure, leaves = _fusion.graph_of(w._node)
    expr, _, lets = _fusion.kernel_code(order, structure, [leaf.dtype for leaf in leaves])
    code = lets + "\n" + expr
    for leaf in ("x0", "x1"):
        assert len(re.findall(rf"(?<!fence_f32\(){leaf}\b", code)) == 1, code
        assert len(re.findall(rf"fence_f32\({leaf}, 1u\)", code)) == 1, code


# -- a trailing reduction reads the chain's operands directly -----------------------------------


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int32", "uint16", "int64"])
@pytest.mark.parametrize("reduction", ["sum", "max", "prod"])
def test_reductions_of_chains_read_the_operands(xp, fused, dtype, reduction):
    if dtype not in default_device().dtype_names:
        pytest.skip(f"{dtype} is not on {default_device()}")
    dt = np.dtype(dtype)
    rng = np.random.default_rng(4)
    host = [(rng.standard_normal((37, 300)) * 3).astype(dt) for _ in range(2)]
    if reduction == "prod":
        host = [np.where(np.abs(h) > 1, np.sign(h), h).astype(dt) for h in host]
    x, y = (xp.asarray(h) for h in host)
    fn = getattr(xp, reduction)

    def run(axis: Any) -> np.ndarray:
        return np.asarray(fn(x * y + x, axis=axis))

    for axis in (None, 1, (0, 1)):
        before = _dispatches(xp)
        want = _unfused(lambda axis=axis: run(axis))
        unfused_kernels = _dispatches(xp) - before
        got = run(axis)
        assert _dispatches(xp) - before - unfused_kernels <= unfused_kernels - 2  # no chain kernels
        assert_same_bits(got, want)
    if dtype != "float16":  # NumPy sums float16 columns in float16 steps, we in float32
        want = getattr(np, reduction)(host[0] * host[1] + host[0], axis=0)
        assert_matches_numpy(fn(x * y + x, axis=0), accumulated(want))


def test_reductions_of_broadcast_chains_run_the_chain_first(xp, fused):
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    x, col = xp.asarray(host), xp.asarray(host[:, :1])
    assert_matches_numpy(xp.sum(x - col, axis=1), (host - host[:, :1]).sum(axis=1))
    assert_matches_numpy(xp.sum(x.T * 2.0), (host.T * 2).sum())


def test_in_place_operators_write_into_the_array(xp, fused):
    host = np.arange(10, dtype=np.float32)
    x, y = xp.asarray(host), xp.asarray(host * 0.5)
    before = _dispatches(xp)
    x += y * 2.0  # y * 2.0 and the sum: one kernel, written into x, no copy
    assert _dispatches(xp) - before == 1
    assert_matches_numpy(x, host * 2)
    view = x[::3]
    view *= -1.0
    assert_matches_numpy(x, np.where(np.arange(10) % 3 == 0, -2, 2).astype(np.float32) * host)
    # overlapping views of one buffer: computed first, then copied in, as NumPy does
    w = xp.asarray(host)
    w[1:] += w[:-1]
    expected = host.copy()
    expected[1:] += host[:-1]
    assert_matches_numpy(w, expected)
    # integers wrap in place too
    i = xp.asarray(np.array([120, -120, 5], np.int8))
    i += xp.asarray(np.array([10, -10, 1], np.int8))
    assert_matches_numpy(i, np.array([120, -120, 5], np.int8) + np.array([10, -10, 1], np.int8))
