"""The engine: pool reuse, flat memory over a long loop, batching, pipeline cache, devices."""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pytest
from ruda import spec
from ruda.testing import assert_matches_numpy, parametrize_backends

from tests.wgpu.counting import calls_of

pytestmark = parametrize_backends("wgpu")


def test_size_classes_are_monotonic_and_bounded(xp):
    from ruda_wgpu._buffers import size_class

    sizes = [size_class(n) for n in range(1, 1 << 16, 37)]
    assert sizes == sorted(sizes)
    assert all(s >= n for s, n in zip(sizes, range(1, 1 << 16, 37), strict=True))
    assert all(s <= max(256, n) * 1.25 + 4 for s, n in zip(sizes, range(1, 1 << 16, 37), strict=True))


def test_steady_state_work_creates_no_buffers(xp):
    x = xp.ones((1000,))
    y = xp.ones((1000,))

    def work() -> None:
        for _ in range(5):
            z = xp.sum(xp.exp(x + y) * 2.0)
            float(z)

    work()  # warm-up: the same work creates its buffers once
    before = xp.memory_stats()["buffers_created"]
    for _ in range(10):
        work()
    assert xp.memory_stats()["buffers_created"] == before


def test_memory_is_flat_after_10000_mixed_ops(xp):
    """Burn's users' top complaint is GPU memory growth: 10,000 ops must leave allocated bytes flat."""
    rng = np.random.default_rng(0)
    a = xp.asarray(rng.standard_normal((64, 64)).astype(np.float32))
    b = xp.asarray(rng.standard_normal((64,)).astype(np.float32))
    i = xp.asarray(rng.integers(-100, 100, (64, 64)).astype(np.int8))

    def step(k: int) -> None:
        m = k % 10
        if m == 0:
            r = a + b
        elif m == 1:
            r = xp.exp(a) * 0.5
        elif m == 2:
            r = xp.sum(a, axis=1)
        elif m == 3:
            r = a @ a
        elif m == 4:
            r = xp.where(a > 0, a, b)
        elif m == 5:
            r = i * i + 3
        elif m == 6:
            r = xp.reshape(a.T, (-1,))
        elif m == 7:
            r = xp.concat([a, a], axis=0)
        elif m == 8:
            r = xp.max(xp.abs(a - 1.0))
        else:
            r = xp.astype(i, xp.float32)[::2, 1:]
            float(xp.sum(r))
        del r

    for k in range(200):  # warm-up: every size class and pipeline exists
        step(k)
    xp.synchronize()
    gc.collect()
    before = xp.memory_stats()
    for k in range(10_000):
        step(k)
    xp.synchronize()
    gc.collect()
    after = xp.memory_stats()
    print(
        f"\nallocated bytes before {before['allocated_bytes']}, after {after['allocated_bytes']}; "
        f"in use before {before['in_use_bytes']}, after {after['in_use_bytes']}; "
        f"{after['dispatches'] - before['dispatches']} dispatches"
    )
    # elementwise results dropped unread never run; the other kinds launch 10 kernels every ten
    # steps on a CPU adapter, 8 on a GPU, whose row kernel sums the last kind's view in place and
    # the 4096 magnitudes of max(abs(a - 1)) in one pass
    assert after["dispatches"] - before["dispatches"] >= 8_000
    assert abs(after["allocated_bytes"] - before["allocated_bytes"]) <= 0.01 * before["allocated_bytes"], (
        before,
        after,
    )
    assert after["in_use_bytes"] <= before["in_use_bytes"]


def test_buffers_return_to_the_pool_when_arrays_are_collected(xp):
    xp.synchronize()
    gc.collect()
    base = xp.memory_stats()["in_use_bytes"]
    arrays = [xp.ones((10_000,)) for _ in range(10)]
    assert xp.memory_stats()["in_use_bytes"] >= base + 10 * 40_000
    view = arrays[0][::2]
    del arrays
    gc.collect()
    # the view keeps its buffer alive; the other nine went back to the pool
    assert base + 40_000 <= xp.memory_stats()["in_use_bytes"] < base + 2 * 40_000 + 1024
    assert_matches_numpy(view, np.ones(5000, np.float32))


class _RefusingDevice:
    """A stand-in for a wgpu device whose driver fails the next ``refusals`` allocations the
    way OpenGL's does (a validation error saying it has no memory left)."""

    def __init__(self, refusals: int) -> None:
        self.refusals = refusals
        self.limits = {"max-buffer-size": 1 << 30}

    def create_buffer(self, size: int, usage: int) -> Any:
        import wgpu

        if self.refusals:
            self.refusals -= 1
            raise wgpu.GPUValidationError("Validation Error\n\nCaused by:\n  Not enough memory left.")
        return _FakeBuffer(size)


class _FakeBuffer:
    """What the pool asks of a buffer: its size, and destroy()."""

    def __init__(self, size: int) -> None:
        self.size, self.destroyed = size, False

    def destroy(self) -> None:
        self.destroyed = True


def test_a_driver_out_of_memory_frees_the_pool_retries_then_raises_memory_error(xp):
    from ruda_wgpu._buffers import BufferPool, size_class

    device = _RefusingDevice(refusals=0)
    pool = BufferPool(device, usage=0)
    spare = pool.acquire(1000)
    pool.release(spare)
    device.refusals = 1  # one refusal: the free buffer goes back, the second try succeeds
    got = pool.acquire(5000)
    assert spare.destroyed and got.size == size_class(5000)
    assert pool.in_use_bytes == got.size and pool.allocated_bytes == got.size

    device.refusals = 2  # refused twice: MemoryError, and the books stay as they were
    with pytest.raises(MemoryError, match="could not allocate a buffer of"):
        pool.acquire(7000)
    assert pool.in_use_bytes == got.size and pool.allocated_bytes == got.size


def test_the_pool_hands_out_the_earliest_made_free_buffer_first(xp):
    from ruda_wgpu._buffers import BufferPool

    pool = BufferPool(_RefusingDevice(refusals=0), usage=0)
    first, second, third = (pool.acquire(1000) for _ in range(3))
    for buf in (second, third, first):  # returned in another order than they were made
        pool.release(buf)
    assert [pool.acquire(1000) for _ in range(3)] == [first, second, third]


def test_a_loop_of_new_arrays_binds_the_same_buffers_every_round(xp, monkeypatch):
    """A power iteration makes its arrays anew each round and drops them in another order than
    it made them; its bind groups (and prepared dispatches, which hold buffers) are made in its
    first rounds only (as the pool grows: three with fusion off), as every round then gets the
    same buffers."""
    from ruda_wgpu._engine import GpuDevice

    made = calls_of(monkeypatch, GpuDevice, "_bind_group")
    rng = np.random.default_rng(0)
    host = rng.standard_normal((64, 64)).astype(np.float32)
    start = rng.standard_normal(64).astype(np.float32)

    def power(ns: Any, m: Any, v: Any) -> Any:
        for _ in range(20):
            w = m @ v
            v = w / ns.linalg.vector_norm(w)
        return v

    m, v = xp.asarray(host), xp.asarray(start)
    made_per_round = []
    for _ in range(6):
        made.clear()
        got = power(xp, m, v)
        xp.synchronize()
        made_per_round.append(len(made))
    assert made_per_round[0] > 0 and made_per_round[3:] == [0, 0, 0], made_per_round
    np.testing.assert_allclose(np.asarray(got), power(np, host, start), atol=1e-5)


def test_batches_are_submitted_on_read_and_at_the_bound(xp, monkeypatch):
    from ruda_wgpu import _fusion
    from ruda_wgpu._engine import BATCH_DISPATCHES

    monkeypatch.setattr(_fusion, "_enabled", False)  # one dispatch per operation

    x = xp.zeros((10,))
    float(xp.sum(x))
    submits = xp.memory_stats()["submits"]
    for _ in range(BATCH_DISPATCHES * 2 + 10):
        x = x + 1.0
    mid = xp.memory_stats()["submits"]
    assert 2 <= mid - submits <= 3  # flushed at the bound, not per dispatch
    assert_matches_numpy(x, np.full(10, BATCH_DISPATCHES * 2 + 10, np.float32))


def test_a_batch_is_submitted_once_it_binds_enough_bytes(xp, monkeypatch):
    """A long stream of large operations starts on the GPU before it is read: a batch goes once
    its dispatches have bound BATCH_BYTES, here two additions of 10^4 float32 (in and out)."""
    from ruda_wgpu import _engine, _fusion

    monkeypatch.setattr(_fusion, "_enabled", False)  # one dispatch per operation
    monkeypatch.setattr(_engine, "BATCH_BYTES", 4 * 40_000)
    x = xp.zeros((10_000,))
    float(xp.sum(x))
    submits = xp.memory_stats()["submits"]
    for _ in range(20):
        x = x + 1.0
    assert 9 <= xp.memory_stats()["submits"] - submits <= 11
    assert_matches_numpy(x, np.full(10_000, 20, np.float32))


def test_replayed_steps_are_submitted_at_the_bounds_and_compute_the_same(xp, monkeypatch):
    """Prepared dispatches (GpuDevice.step) replayed sweep after sweep, as the Jacobi rounds do,
    go to the GPU at the dispatch and parameter-arena bounds like any others, with the same
    results: eigh by blocks over the whole GPU (forced from 8 columns) is unchanged when batches
    hold 5 dispatches and the arena 4 parameter blocks."""
    from ruda_wgpu import _decompositions, _engine

    monkeypatch.setattr(_decompositions, "JACOBI_BLOCKS_MIN", 8)
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 70, 70)).astype(np.float32)
    spd = a @ np.swapaxes(a, -1, -2) + 70 * np.eye(70, dtype=np.float32)
    want = [np.asarray(t) for t in xp.linalg.eigh(xp.asarray(spd))]
    dev = _engine.default_device()
    monkeypatch.setattr(_engine, "BATCH_DISPATCHES", 5)
    monkeypatch.setattr(_engine, "PARAM_ARENA_BYTES", 4 * dev.uniform_align)
    submits = xp.memory_stats()["submits"]
    got = [np.asarray(t) for t in xp.linalg.eigh(xp.asarray(spd))]
    assert xp.memory_stats()["submits"] - submits > 2 * 5 * 2 // 5  # a sweep: 5 rounds of two
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_a_step_log_holds_the_dispatches_and_tells_what_else_was_recorded(xp, monkeypatch):
    """GpuDevice.logging_steps: the dispatches recorded meanwhile, in order, as steps that
    record the same work again; a copy, an upload or an inner log makes it not whole; the
    buffers they bind are known."""
    from ruda_wgpu import _engine, _fusion

    monkeypatch.setattr(_fusion, "_enabled", True)  # (the chain is one dispatch)
    dev = _engine.default_device()
    x = xp.asarray(np.arange(4, dtype=np.float32))
    with dev.logging_steps() as chain:
        y = x * 2 + 1
        y._storage  # noqa: B018  (runs the chain: one dispatch)
    assert len(chain.steps) == 1 and chain.whole
    assert chain.binds_only([x._storage.buffer, y._storage.buffer])
    assert not chain.binds_only([y._storage.buffer])
    with dev.logging_steps() as upload:
        dev.write(y._storage.buffer, 0, bytes(16))
        y._storage.host = None
    assert not upload.whole and not upload.steps
    index = xp.asarray(np.int32([3, 0]))
    x[index]._storage  # noqa: B018  (the first makes the check words, an upload)
    with dev.logging_steps() as checked:
        x[index]._storage  # noqa: B018  (a checked gather)
    assert checked.steps and not checked.whole
    np.testing.assert_array_equal(np.asarray(y), [0, 0, 0, 0])
    dev.replay(chain.steps)
    y._storage.host = None
    np.testing.assert_array_equal(np.asarray(y), [1, 3, 5, 7])
    with dev.logging_steps() as outer, dev.logging_steps() as inner:
        (x + 1)._storage  # noqa: B018
    assert not outer.whole and len(inner.steps) == 1 and not outer.steps
    assert dev._step_log is None


def test_dispatches_record_the_same_through_wgpu_pys_public_methods(xp, monkeypatch):
    """Dispatches go straight to wgpu-native where wgpu-py's native backend is in use (on every
    adapter these tests run on); the public methods it falls back to otherwise record the same."""
    from ruda_wgpu import _encoding, _engine

    dev = _engine.default_device()
    xp.synchronize()
    assert isinstance(dev._encode, _encoding.PassEncoding)
    monkeypatch.setattr(dev, "_encode", _encoding.PublicPassEncoding())
    dev._groups.clear()  # nothing is recorded: the groups below are made the public way
    host = np.arange(3000, dtype=np.float32)
    x = xp.asarray(host)
    assert_matches_numpy(xp.exp(x / 1000.0) + x, np.exp(host / np.float32(1000)) + host, rtol=1e-6)
    assert float(xp.sum(x)) == float(host.sum(dtype=np.float64))
    assert dev._groups


def test_a_batch_of_the_last_batchs_parameters_is_not_uploaded_again(xp, monkeypatch):
    """The parameter arena is written only when a batch's parameters differ from what it holds;
    batches that differ (other offsets, shapes, scalars) still read their own."""
    from ruda_wgpu import _engine, _fusion

    monkeypatch.setattr(_fusion, "_enabled", False)
    host = np.arange(64, dtype=np.float32)
    x = xp.asarray(host)
    xp.synchronize()
    dev = _engine.default_device()
    queue = type(dev._device.queue)
    writes: list[int] = []
    write_buffer = queue.write_buffer

    def counted(self, buffer, offset, data, *args):
        writes.append(len(data) if buffer is dev._arena else -1)
        return write_buffer(self, buffer, offset, data, *args)

    monkeypatch.setattr(queue, "write_buffer", counted)
    results = []
    for step in (1.0, 1.0, 2.0, 2.0):
        writes.clear()
        results.append(np.asarray(x + step))  # one dispatch, then a read: one batch each
        arena_writes = [n for n in writes if n > 0]
        results.append(len(arena_writes))
    results.append(np.asarray(x[3:] + 2.0))  # the same scalar, another offset
    np.testing.assert_array_equal(results[0], host + 1)
    np.testing.assert_array_equal(results[2], host + 1)
    np.testing.assert_array_equal(results[4], host + 2)
    np.testing.assert_array_equal(results[6], host + 2)
    np.testing.assert_array_equal(results[8], host[3:] + 2)
    assert [results[1], results[3], results[5], results[7]] == [1, 0, 1, 0]


def test_pipelines_are_cached_by_op_dtype_and_layout(xp):
    x = xp.ones((7, 3))
    y = xp.ones((3,))
    keep = [x + y]
    xp.synchronize()
    n = xp.memory_stats()["pipelines"]
    for _ in range(5):
        keep += [x + y, x.T + 1.0]
        xp.synchronize()
    assert xp.memory_stats()["pipelines"] == n + 1


def test_parameter_reads_become_uniform_vector_reads_and_other_names_stay(xp):
    from ruda_wgpu._engine import _uniform_params

    code = (
        "@group(0) @binding(0) var<storage, read> P: array<u32>;\n"
        "fn main() { let a = P[5]; let b = TMP[5] + P[0]; let c = my_P[2] + param(a); }\n"
    )
    out = _uniform_params(code)
    assert "var<uniform> P: array<vec4<u32>, 2>;" in out  # words 0..5: two vectors
    assert "let a = P[1].y;" in out and "TMP[5] + P[0].x" in out and "my_P[2]" in out
    assert "fn param(k: u32) -> u32" in out


def test_kernels_with_the_same_bindings_share_one_layout(xp):
    from ruda_wgpu._engine import default_device

    dev = default_device()
    kernel = (
        "@group(0) @binding(0) var<storage, read> P: array<u32>;\n"
        "@group(0) @binding(1) var<storage, read_write> out: array<f32>;\n{}"
        "@compute @workgroup_size(1) fn main() {{ out[0] = f32(P[0]) + {}; }}\n"
    )
    extra = "@group(0) @binding(2) var<storage, read> x: array<f32>;\n"
    one = dev.pipeline(("layout test", 1), lambda: kernel.format("", "1.0"))
    two = dev.pipeline(("layout test", 2), lambda: kernel.format("", "2.0"))
    three = dev.pipeline(("layout test", 3), lambda: kernel.format(extra, "x[0]"))
    assert one is not two and one.ruda_layout is two.ruda_layout
    assert three.ruda_layout is not one.ruda_layout


def test_large_grid_beyond_65535_workgroups(xp):
    n = 65535 * 256 + 1000  # more groups than one grid dimension allows
    x = xp.ones((n,), dtype=xp.float32)
    y = x * 2.0
    assert float(y[-1]) == 2.0 and float(y[0]) == 2.0
    assert float(xp.sum(y[-2000:])) == 4000.0


@pytest.mark.slow
def test_arrays_beyond_the_binding_limit(xp):
    """Arrays larger than one storage binding are processed in windows."""
    dev = xp.__array_namespace_info__().default_device()
    n = dev.max_binding // 4 + 4096
    x = xp.arange(n, dtype=xp.int32)
    y = x + 1
    assert int(y[-1]) == n and int(y[0]) == 1
    z = y[1:] - y[:-1]
    assert int(xp.min(z[-100:])) == 1
    assert int(xp.max(x)) == n - 1  # a reduction over windows of the buffer
    assert int(xp.sum(xp.astype(z == 1, xp.int32))) == n - 1


def test_devices_and_info_tell_the_truth(xp):
    info = xp.__array_namespace_info__()
    devs = info.devices()
    assert isinstance(devs, tuple) and devs and str(devs[0]) == "wgpu:0"
    for dev in devs:
        dtypes = info.dtypes(device=dev)
        assert ("float64" in dtypes) == ({"shader-f64", "shader-int64"} <= dev.features)
        assert "complex64" in dtypes  # pairs of float32: every device
        assert ("complex128" in dtypes) == ("float64" in dtypes)
        assert ("int64" in dtypes) == ("shader-int64" in dev.features)
        assert "float16" not in dtypes  # not a standard dtype, though every device computes it
        defaults = info.default_dtypes(device=dev)
        assert defaults["real floating"] == xp.float32
        assert defaults["indexing"] == (xp.int64 if "int64" in dtypes else xp.int32)
    for name in (*spec.DTYPES, "float16"):
        assert hasattr(xp, name)


def test_an_empty_window_past_the_end_of_its_buffer_binds_a_valid_range(xp):
    # an empty view's offset may lie past its buffer's end (x[8:][...]); kernels never read it,
    # but its binding must still be a valid range of the buffer
    from ruda_wgpu._kernels import window

    x = xp.zeros(64, dtype=xp.float32)
    storage, dev = x._storage, x.device
    end = storage.buffer.size // 4
    for lo, hi in ((end + 8, end + 8), (end + 64, end + 65)):  # (a kernel counts one element)
        (buffer, offset, size), _ = window(dev, storage, lo, hi, 4, "test")
        assert buffer is storage.buffer and offset >= 0 and size > 0 and offset + size <= buffer.size


@pytest.mark.parametrize("reduction", ["sum", "prod", "max", "any", "mean"])
def test_reductions_of_an_empty_view_far_into_its_buffer(xp, reduction):
    # the reduction bound one element of the empty (1, 64, 0) view, 256 bytes into an empty
    # buffer: wgpu-native aborted the process (a binding of size 0) or the size came out negative
    y = xp.zeros((2, 64, 0), dtype=xp.float32)[1:]
    assert np.asarray(getattr(xp, reduction)(y, axis=1)).shape == (1, 0)
    assert np.asarray(getattr(xp, reduction)(y, axis=0)).shape == (64, 0)


def test_a_wait_spins_until_its_own_ticket_is_answered(xp, monkeypatch):
    """A wait on a GPU spins until the queue's work-done callback returns the wait's ticket; one
    that spins past its bound blocks instead, and its late answer cannot end the next wait
    early. (lavapipe does not spin by default: here the bound is set by hand.)"""
    from ruda_wgpu._engine import resolve_device

    dev = resolve_device(None)
    waiter = dev._waiter
    assert waiter is not None, "wgpu-native devices wait on the calling thread"
    x = xp.asarray(np.linspace(-3, 3, 1 << 20, dtype=np.float32))

    def waited(spin_seconds: float) -> tuple[int, int]:
        monkeypatch.setattr(waiter, "spin_seconds", spin_seconds)
        before = xp.memory_stats()
        y = xp.exp(x) * 2.0
        xp.synchronize()
        after = xp.memory_stats()
        assert waiter._answered <= waiter._asked
        assert_matches_numpy(y, np.exp(np.linspace(-3, 3, 1 << 20, dtype=np.float32)) * 2, rtol=1e-6)
        return after["waits_spun"] - before["waits_spun"], after["waits_blocked"] - before["waits_blocked"]

    assert waited(60.0) == (1, 0)
    assert waiter._answered == waiter._asked
    assert waited(1e-9) == (0, 1)  # past its bound at the first check
    assert waited(60.0) == (1, 0)
    assert waiter._answered == waiter._asked
    assert waited(0.0) == (0, 1)


def test_reads_map_on_the_calling_thread_and_the_fallback_reads_the_same(xp, monkeypatch):
    """Reads map the staging buffer with wgpu-native and poll on the calling thread, never
    through wgpu-py's map promise; without native handles wgpu-py's map_sync reads the same."""
    from ruda_wgpu._engine import resolve_device
    from wgpu.backends.wgpu_native import _api

    dev = resolve_device(None)
    assert dev._reader is not None, "wgpu-native devices read on the calling thread"
    host = np.linspace(-5, 5, 3001, dtype=np.float32)
    x = xp.asarray(host)
    monkeypatch.setattr(_api.GPUBuffer, "map_async", None)  # any use of wgpu-py's map fails
    for k in range(3):  # the same staging buffer, mapped and unmapped again
        np.testing.assert_array_equal(np.asarray(x * float(k)), host * np.float32(k))
        assert float(xp.sum(x[k : k + 7])) == pytest.approx(float(host[k : k + 7].sum()), abs=1e-5)
    monkeypatch.undo()
    monkeypatch.setattr(dev, "_reader", None)
    np.testing.assert_array_equal(np.asarray(x * 2.0), host * np.float32(2))


def test_a_buffer_that_cannot_be_mapped_raises_and_the_device_reads_on(xp):
    from ruda_wgpu._engine import resolve_device

    dev = resolve_device(None)
    x = xp.asarray(np.arange(4, dtype=np.float32))
    xp.synchronize()
    with pytest.raises(RuntimeError, match="could not map a buffer to read it back"):
        dev._reader.read(x._storage.buffer, 16)  # a storage buffer: not mappable
    np.testing.assert_array_equal(np.asarray(x + 1), [1, 2, 3, 4])


def test_cpu_adapters_do_not_spin(xp):
    from ruda_wgpu._engine import resolve_device

    dev = resolve_device(None)
    assert dev.cpu == (dev.adapter.info["adapter_type"] == "CPU")
    assert (dev._waiter.spin_seconds == 0.0) == dev.cpu


def test_prepared_launches_follow_buffers_offsets_and_scalars(xp):
    """An elementwise launch's dispatch is prepared once per buffers, offsets and scalar words,
    for graphs and for single operations alike: the same kernel (one plan) on views at other
    offsets of one buffer, with other scalars and -0.0 against 0.0, into results alive
    together, on a new buffer each round, or after empty_cache(), computes what it should."""
    base = np.arange(3 * 64, dtype=np.float32) - 50
    x = xp.asarray(base)
    for _ in range(2):
        for k in range(3):  # offsets of whole 256-byte steps: one launch plan, three launches
            assert_matches_numpy(x[64 * k : 64 * k + 64] * 2.0, base[64 * k : 64 * k + 64] * 2)
    for _ in range(2):
        results = [x * scale for scale in (2.0, 3.0, 2.0, 0.0, -0.0)]
        for got, scale in zip(results, (2.0, 3.0, 2.0, 0.0, -0.0), strict=True):
            assert_matches_numpy(got, base * np.float32(scale))
        assert np.signbit(np.asarray(results[4])).sum() == np.count_nonzero(base >= 0)
    plus, minus = np.asarray(xp.abs(x) * 0.0), np.asarray(xp.abs(x) * -0.0)
    assert not np.signbit(plus).any() and np.signbit(minus).all()
    y = x
    for k in range(5):  # pooled buffers come round again
        y = y + 1.0
        assert_matches_numpy(y, base + k + 1)
    xp.empty_cache()
    assert_matches_numpy(x * 3.0, base * 3)


def test_prepared_reductions_follow_buffers_offsets_and_scalars(xp):
    """A reduction's dispatches are prepared once per input and output buffers, offsets and
    scalar words: sums of views at other offsets of one buffer (one pass, and two passes whose
    partial results land in the device's scratch buffer), of a fused product with other scalars,
    and after empty_cache(), are what they should be."""
    base = np.arange(3 * 4096, dtype=np.float32) % 97 - 40
    x = xp.asarray(base)
    for n in (64, 4096):  # one pass; two passes (partial sums, then their sum)
        for _ in range(2):
            for k in range(3):
                part = base[n * k : n * k + n]
                assert float(xp.sum(x[n * k : n * k + n])) == float(part.sum(dtype=np.float64))
    for scale in (2.0, -3.0, 2.0):
        assert float(xp.sum(x * scale)) == float((base * np.float32(scale)).sum(dtype=np.float64))
    xp.empty_cache()
    assert float(xp.sum(x[:64])) == float(base[:64].sum(dtype=np.float64))


@pytest.mark.parametrize("shape, axis", [((10_000,), None), ((2500, 4), 0)])
def test_many_small_reductions_find_their_prepared_dispatches_again(xp, monkeypatch, shape, axis):
    """A loop that keeps many reductions' results alive prepares their dispatches in its first
    rounds only: partial sums go to a buffer the device keeps, not to pooled buffers of the
    results' size class, which came back in another order each round. Both kernels: a row a
    workgroup (the flat sum on a GPU) and a result a thread (a leading axis; every sum on a CPU
    adapter)."""
    from ruda_wgpu._engine import GpuDevice

    prepared = calls_of(monkeypatch, GpuDevice, "step")
    host = (np.arange(10_000, dtype=np.float32) % 7).reshape(shape)  # sums exact in float32
    x = xp.asarray(host)
    want = host.sum(axis=axis)
    for round_ in range(4):
        prepared.clear()
        sums = [xp.sum(x, axis=axis) for _ in range(20)]
        for s in sums:
            assert_matches_numpy(s, want)
        del sums
        # (the second round may find one buffer of the results' size class another use returned)
        if round_ != 1:
            assert prepared if not round_ else not prepared, f"round {round_} prepared {len(prepared)}"


def test_many_ffts_find_their_prepared_passes_again(xp, monkeypatch):
    """The same for FFTs: a loop keeping 20 results alive prepares their passes in its first
    round only (a plan kept 16 prepared runs, and started over at the 17th)."""
    from ruda_wgpu._engine import GpuDevice

    prepared = calls_of(monkeypatch, GpuDevice, "step")
    host = (np.arange(4096) % 5 + 1j).astype(np.complex64)
    z = xp.asarray(host)
    for round_ in range(3):
        prepared.clear()
        results = [xp.fft.fft(z) for _ in range(20)]
        assert_matches_numpy(results[-1], np.fft.fft(host), rtol=1e-4, atol=1e-2)
        del results
        if round_:
            assert not prepared, f"round {round_} prepared {len(prepared)} passes again"
        else:
            assert prepared


def test_waits_open_the_next_batch_and_an_invalid_batch_raises_once(xp):
    """While a wait lets the device work, the next batch's encoder and pass are opened, and a
    synchronize with nothing recorded submits nothing. A batch whose commands the driver
    rejects raises when it is submitted; the batches after it run."""
    from ruda_wgpu import _engine, _kernels

    dev = _engine.default_device()
    x = xp.asarray(np.arange(8, dtype=np.float32))
    y = x + 1.0
    xp.synchronize()
    assert dev._pass is not None
    submits = xp.memory_stats()["submits"]
    xp.synchronize()
    assert xp.memory_stats()["submits"] == submits
    plans = [plan for plan in dev.plans.values() if isinstance(plan, _kernels.ElementwisePlan)]
    step = next(s for plan in plans for s in plan.steps.values())
    too_many = dev.limits["max-compute-workgroups-per-dimension"] + 1
    dev.replay([step._replace(groups=(too_many, 1, 1))])
    with pytest.raises(Exception, match="(?i)dispatch|workgroup"):
        xp.synchronize()
    assert_matches_numpy(y * 2.0, (np.arange(8, dtype=np.float32) + 1) * 2)
