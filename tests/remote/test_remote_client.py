"""The remote namespace against a real loopback server: results equal NumPy's, ops are pipelined,
errors surface at the next wait naming the op, and dropped arrays are released."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import ruda
import ruda_remote
from ruda.testing import (
    assert_exports_host_copies,
    assert_matches_numpy,
    assert_numpy_ufuncs_run_in_namespace,
    assert_python_scalar_conversions,
)
from ruda_remote import wire


def test_arithmetic_and_reductions_match_numpy(xp):
    host = np.linspace(-2, 2, 24).reshape(4, 6)
    x = xp.asarray(host)
    assert_matches_numpy(x * 2 + 1, host * 2 + 1)
    assert_matches_numpy(xp.exp(x) - x**2, np.exp(host) - host**2)
    assert_matches_numpy(xp.sum(x, axis=1), host.sum(axis=1))
    assert_matches_numpy(xp.mean(x), np.mean(host))
    assert_matches_numpy(x @ x.mT, host @ host.T)
    assert_matches_numpy(xp.argmax(x, axis=0), np.argmax(host, axis=0))
    assert float(xp.max(x)) == 2.0


def test_indexing_views_and_setitem(xp):
    host = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    x = xp.asarray(host)
    assert_matches_numpy(x[1, :, ::2], host[1, :, ::2])
    assert_matches_numpy(x[..., None, 0], host[..., None, 0])
    assert_matches_numpy(xp.permute_dims(x, (2, 0, 1)), host.transpose(2, 0, 1))
    assert_matches_numpy(xp.reshape(x, (6, -1)), host.reshape(6, -1))
    x[0, 1] = 100
    host[0, 1] = 100
    x[1] = xp.asarray(host[0])
    host[1] = host[0]
    assert_matches_numpy(x, host)


@pytest.mark.parametrize(
    ("dtype", "value", "error"),
    [
        ("uint8", -1, OverflowError),
        ("int16", 2**40, OverflowError),
        ("float64", 1j, TypeError),
        ("int64", float("nan"), ValueError),
    ],
)
def test_a_scalar_the_target_cannot_hold_is_refused_at_the_assignment(xp, dtype, value, error):
    # it had been sent, failed on the server at the next wait (of any array), and failed the
    # target for good; the reference (NumPy) raises at the assignment and keeps the array
    x = xp.asarray(np.array([1, 2, 3]), dtype=getattr(xp, dtype))
    before = xp.exp(xp.asarray([0.0]))  # queued with what comes after it
    with pytest.raises(error):
        x[0] = value
    with pytest.raises(error):
        x[xp.asarray([1])] = value
    assert_matches_numpy(x, np.array([1, 2, 3], dtype=dtype))
    assert_matches_numpy(before, np.array([1.0]))


def test_a_result_of_a_dtype_the_wire_does_not_carry_is_refused_at_the_call(xp):
    # the host backend gives sqrt of uint8 float16 (the dtype is the backend's choice, so the
    # call asks the server): the op had been queued and the server refused the whole batch, ops
    # queued before it included, and the call raised a KeyError
    a = xp.asarray([1.0, 4.0])
    b = xp.exp(a)
    small = xp.asarray([4], dtype=xp.uint8)
    for _ in range(2):  # (a refused result is not kept: the second call asks again)
        with pytest.raises(TypeError, match="float16, which is not one of the Array API's dtypes"):
            xp.sqrt(small)
    assert_matches_numpy(b, np.exp([1.0, 4.0]))
    assert_matches_numpy(xp.sqrt(xp.astype(small, xp.float32)), np.array([2.0], np.float32))


def test_unstack_refuses_what_it_cannot_take_as_the_reference_does(xp):
    x = xp.asarray(np.ones((2, 3)))
    with pytest.raises(TypeError, match="axis must be an integer"):
        xp.unstack(x, axis=(0, 1))
    with pytest.raises(ValueError, match="0-d"):
        xp.unstack(xp.asarray(1.0))
    with pytest.raises(IndexError):
        xp.unstack(x, axis=2)
    assert [a.shape for a in xp.unstack(x, axis=-1)] == [(2,)] * 3


def test_numpy_index_arrays_are_sent_to_the_server(xp):
    # as CuPy and PyTorch take them (scikit-learn's cross-validation indexes by NumPy's)
    host = np.arange(20.0).reshape(10, 2)
    x = xp.asarray(host)
    rows, even = np.array([1, 3, 3]), np.arange(10) % 2 == 0
    assert_matches_numpy(x[rows, ...], host[rows, ...])
    assert_matches_numpy(x[even, 1], host[even, 1])
    x[np.array([0, 9])] = -1.0
    host[np.array([0, 9])] = -1.0
    assert_matches_numpy(x, host)
    with pytest.raises(IndexError, match="integer or boolean"):
        x[np.array([0.5])]


def test_numpy_ufuncs_run_on_the_server(xp):
    # np.isfinite(x) (matplotlib's) as the namespace's isfinite: sent, not read back
    assert_numpy_ufuncs_run_in_namespace(xp)


def test_in_place_operators_change_the_array(xp):
    host = np.arange(6, dtype=np.float32)
    x = xp.asarray(host)
    alias = x
    x += 2
    x *= xp.asarray(np.full(6, 3, dtype=np.float32))
    assert alias is x
    assert_matches_numpy(x, (host + 2) * 3)
    with pytest.raises(TypeError):  # float64 result cannot go into float32 ... of int: refused at once
        y = xp.asarray(np.arange(3, dtype=np.int32))
        y += 1.5


def test_a_failed_in_place_operation_keeps_the_target(xp):
    # the server had dropped the target, so that every later use of it failed: a program that
    # caught the error, as it would catch NumPy's, had lost the array
    x = xp.asarray(np.arange(4.0))
    x[xp.asarray(np.array([7]))] = 1.0  # (out of bounds: the client cannot know the index)
    with pytest.raises(IndexError):
        np.asarray(x)
    assert_matches_numpy(x, np.arange(4.0))
    x += 1
    assert_matches_numpy(x, np.arange(4.0) + 1)
    base = xp.asarray(np.array(5.0))
    view = xp.broadcast_to(base, (2,))
    view += 1  # (read-only on the server)
    with pytest.raises(ValueError):
        np.asarray(view)
    assert_matches_numpy(view, np.array([5.0, 5.0]))
    assert_matches_numpy(base + view, np.array([10.0, 10.0]))


def test_reading_a_failed_array_on_the_host_raises_its_error(xp):
    # ruda.to_numpy had raised a TypeError that it could not read the type at all
    bad = xp.asarray(np.array([1, 2])) ** xp.asarray(np.array([-1, 1]))  # (fails on the server)
    for read in (ruda.to_numpy, np.asarray):
        with pytest.raises(ValueError, match="negative integer powers"):
            read(bad)


def test_multiplying_by_a_sequence_names_both_types(xp):
    # without the check Python repeats the sequence x.__index__() times: an index error
    x = xp.ones(2)
    for multiply in (lambda: x * "ab", lambda: [1, 2] * x):
        with pytest.raises(TypeError, match=r"for \*: 'Array' and '(str|list)'"):
            multiply()
    with pytest.raises(TypeError, match=r"for \*: 'Array' and 'tuple'"):
        x *= (1, 2)


def test_data_dependent_shapes_wait_for_the_server(xp):
    host = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3])
    x = xp.asarray(host)
    assert_matches_numpy(x[x > 3], host[host > 3])
    u = xp.unique_counts(x)
    assert_matches_numpy(u.values, np.unique(host))
    assert_matches_numpy(u.counts, np.unique(host, return_counts=True)[1])
    assert tuple(a.shape for a in xp.nonzero(x > 4)) == ((4,),)


def test_linalg_and_fft(xp):
    rng = np.random.default_rng(0)
    host = rng.standard_normal((5, 5)) + 5 * np.eye(5)
    a = xp.asarray(host)
    assert_matches_numpy(xp.linalg.inv(a), np.linalg.inv(host), rtol=1e-9, atol=1e-12)
    q, r = xp.linalg.qr(a)
    assert_matches_numpy(q @ r, host, rtol=1e-9, atol=1e-12)
    assert_matches_numpy(xp.fft.fft(a[0]), np.fft.fft(host[0]))
    assert_matches_numpy(xp.fft.fftfreq(8, device=xp.default_device()), np.fft.fftfreq(8))


def test_creation_uses_the_server_defaults(xp):
    info = xp.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == xp.float64
    assert_matches_numpy(xp.zeros((2, 3)), np.zeros((2, 3)))
    assert_matches_numpy(xp.full((2,), 7), np.full((2,), 7))
    assert_matches_numpy(xp.zeros((np.int64(2), np.int32(1))), np.zeros((2, 1)))  # NumPy ints
    with pytest.raises(ValueError, match="non-negative integers"):
        xp.ones((True, 2))
    assert_matches_numpy(xp.eye(3, 4, k=1), np.eye(3, 4, k=1))
    assert_matches_numpy(xp.arange(0, 5, 2), np.arange(0, 5, 2))
    # 0-D arrays as bounds, as NumPy takes them (SciPy's Cramer-von Mises test passes a count)
    n, half = xp.sum(xp.ones(4, dtype=xp.int32)), xp.asarray(0.5)
    assert_matches_numpy(xp.arange(1, n, 1), np.arange(1, 4, 1, dtype=np.int64))
    assert_matches_numpy(xp.arange(half, n), np.arange(0.5, 4))
    with pytest.raises(TypeError, match="0-D real arrays"):
        xp.arange(xp.ones(2))
    assert_matches_numpy(xp.asarray([[1, 2], [3, 4]]), np.array([[1, 2], [3, 4]]))
    assert xp.asarray(True).shape == ()


def test_elementwise_ops_do_not_wait(xp, monkeypatch):
    waits = []
    device = xp.default_device()
    original = device._wait
    monkeypatch.setattr(device, "_wait", lambda seq: waits.append(seq) or original(seq))
    x = xp.ones((8,), dtype=xp.float32)
    for _ in range(300):  # more than one batch
        x = xp.sqrt(x * 4.0) - 1.0
    y = x[2:5]
    total = xp.sum(x, keepdims=True)
    product = xp.ones((2, 8), dtype=xp.float32) @ x
    assert y.shape == (3,) and y.dtype == xp.float32
    assert total.shape == (1,) and product.shape == (2,) and product.dtype == xp.float32
    assert waits == [], "elementwise ops, slicing, reductions, matmul and creation must not wait"
    assert float(y[0]) == pytest.approx(1.0)
    assert len(waits) == 1
    assert float(total[0]) == pytest.approx(8.0)


def test_stack_concat_and_cross_do_not_wait(xp, monkeypatch):
    # the official suite's linalg tests call them once per stack of a batch: a round trip each
    # made test_cross pass its deadline on a loaded machine
    waits = []
    device = xp.default_device()
    host = np.reshape(np.arange(30, dtype=np.int16), (2, 5, 3))
    a = xp.asarray(host)
    b = xp.ones((5, 3), dtype=xp.int8)
    c = xp.ones((5, 1), dtype=xp.float32)
    # (a join or cross product of integers with floats has the backend's dtype: the first of a
    # signature asks)
    xp.stack([b, xp.ones((5, 3))], axis=1), xp.concat([b, c], axis=1)
    xp.linalg.cross(xp.ones((3, 2), dtype=xp.int16), xp.ones((3, 1)), axis=0)
    original = device._wait
    monkeypatch.setattr(device, "_wait", lambda seq: waits.append(seq) or original(seq))
    results = {
        "stack": xp.stack([b, b, b], axis=-1),
        "stack of two dtypes": xp.stack([b, xp.ones((5, 3))], axis=1),
        "concat": xp.concat([b, c], axis=1),
        "concat flat": xp.concat([a, b], axis=None),
        "cross": xp.linalg.cross(a, b),
        "cross on axis 0": xp.linalg.cross(xp.ones((3, 2), dtype=xp.int16), xp.ones((3, 1)), axis=0),
    }
    assert waits == [], "stack, concat and linalg.cross must not wait for their result's shape"
    expected = {
        "stack": np.stack([np.ones((5, 3), np.int8)] * 3, axis=-1),
        "stack of two dtypes": np.stack([np.ones((5, 3), np.int8), np.ones((5, 3))], axis=1),
        "concat": np.concatenate([np.ones((5, 3), np.int8), np.ones((5, 1), np.float32)], axis=1),
        "concat flat": np.concatenate([host.ravel(), np.ones(15, np.int8)]),
        "cross": np.cross(host, np.ones((5, 3), np.int8)),
        "cross on axis 0": np.cross(np.ones((3, 2), np.int16), np.ones((3, 1)), axis=0),
    }
    for name, result in results.items():
        assert_matches_numpy(result, expected[name])


def test_stack_concat_and_cross_of_wrong_shapes_raise_at_the_call(xp):
    x, y = xp.ones((2, 3)), xp.ones((2, 4))
    with pytest.raises(ValueError):
        xp.stack([x, y])
    with pytest.raises(ValueError):
        xp.concat([x, y], axis=0)
    with pytest.raises((ValueError, IndexError)):
        xp.concat([x, x], axis=2)
    with pytest.raises(ValueError):
        xp.linalg.cross(xp.ones((3, 4)), xp.ones((3, 4)))  # the axis has 4 elements, not 3
    with pytest.raises(ValueError):
        xp.linalg.cross(xp.ones((2, 3)), xp.ones((4, 3)))  # shapes that do not broadcast
    assert float(xp.sum(xp.linalg.cross(xp.ones((2, 3)), xp.ones(3)))) == 0.0  # the session goes on


def test_server_error_is_raised_at_the_next_wait_naming_the_op(xp):
    x = xp.reshape(xp.arange(6.0), (2, 3))
    # Valid by shape, so it is sent without waiting; NumPy cannot do it without a copy.
    flat = xp.reshape(x.mT, (-1,), copy=False)
    doubled = flat * 2  # uses the failed result: fails too, without a second report
    with pytest.raises(ValueError, match=r"op \d+ \(reshape\) failed") as info:
        float(doubled[0])
    assert isinstance(info.value, ruda_remote.RemoteError)
    assert float(xp.sum(x)) == 15.0  # the session goes on


def test_ops_that_wait_raise_at_the_call(xp):
    with pytest.raises(ValueError, match=r"op \d+ \(linalg.inv\) failed: LinAlgError"):
        xp.linalg.inv(xp.zeros((3, 3)))  # its result's shape is the server's to tell, so it waits


def test_invalid_arguments_raise_at_the_call(xp):
    x = xp.ones((2, 3))
    with pytest.raises(ValueError):
        x + xp.ones((4,))
    with pytest.raises(IndexError):
        x[5]
    with pytest.raises(IndexError):
        xp.expand_dims(x, axis=7)
    with pytest.raises(ValueError):
        xp.reshape(x, (4, 2))
    with pytest.raises(TypeError, match=r"a ruda_remote array with a numpy.ndarray.*ruda_remote.asarray"):
        x + np.ones(3)
    foreign = r"^concat\(\) cannot combine a ruda_remote array with a numpy.ndarray"
    with pytest.raises(TypeError, match=foreign):
        xp.concat([x, np.ones((2, 3))])  # through a function: the same words, naming it
    with pytest.raises(TypeError, match=r"^reshape\(\) cannot take a builtins.object"):
        xp.reshape(x, object())


def test_arrays_of_two_sessions_do_not_mix(xp, server):
    other = ruda_remote.RemoteDevice(server.url)
    try:
        a = xp.ones(3)
        b = xp.ones(3, device=other)
        with pytest.raises(ValueError, match="two devices"):
            a + b
        moved = b.to_device(a.device)
        assert_matches_numpy(a + moved, np.full(3, 2.0))
    finally:
        other.close()


def test_asarray_moves_and_converts_a_remote_array_in_one_call(xp, server):
    x = xp.asarray([0, 1, 2], dtype=xp.int32)
    assert xp.asarray(x) is x and xp.asarray(x, dtype=xp.int32, copy=False) is x
    assert xp.asarray(x, copy=True) is not x
    with pytest.raises(ValueError, match="converting int32 to float32 needs a copy"):
        xp.asarray(x, dtype=xp.float32, copy=False)
    with ruda_remote.RemoteDevice(server.url) as other:
        for copy in (None, True):
            moved = xp.asarray(x, dtype=xp.float64, device=other, copy=copy)
            assert moved.device is other and moved.dtype == xp.float64
            np.testing.assert_array_equal(ruda.to_numpy(moved), [0.0, 1.0, 2.0])
        with pytest.raises(ValueError, match="moving the array .* needs a copy"):
            xp.asarray(x, device=other, copy=False)


def test_dropped_arrays_are_released_in_batches(xp):
    device = xp.default_device()
    base = device.stats()["arrays"]
    arrays = [xp.full((100,), i) for i in range(50)]
    assert device.stats()["arrays"] == base + 50
    del arrays
    gc.collect()
    assert device.stats() == {"arrays": base, "bytes": device.stats()["bytes"]}
    assert device.stats()["arrays"] == base


def test_to_numpy_and_to_device_through_the_core(xp):
    host = np.arange(5.0)
    x = xp.asarray(host)
    assert_matches_numpy(ruda.to_numpy(x), host)
    back = ruda.to_device(x, "cpu")
    assert isinstance(back, np.ndarray)
    assert_matches_numpy(back, host)
    assert str(x.device).startswith("remote:ws://127.0.0.1:")


def test_functions_carry_the_spec_signatures():
    import inspect

    assert inspect.signature(ruda_remote.sum) == inspect.signature(ruda.host.sum)
    assert inspect.signature(ruda_remote.linalg.svd) == inspect.signature(ruda.host.linalg.svd)
    assert set(wire.OPS) >= {"add", "linalg.solve", "fft.rfft", "__getitem__"}


def test_environment_variable_sets_the_default_device(server, monkeypatch):
    import ruda._registry as registry

    monkeypatch.delenv("RUDA_REMOTE_URL", raising=False)
    ruda_remote.set_default_device(None)
    registry.clear_cache()
    status = next(b for b in ruda.backends() if b.name == "remote")
    assert not status.available and "RUDA_REMOTE_URL is not set" in status.reason
    with pytest.raises(RuntimeError, match="set RUDA_REMOTE_URL"):
        ruda_remote.zeros(3)
    monkeypatch.setenv("RUDA_REMOTE_URL", server.url)
    registry.clear_cache()
    try:
        status = next(b for b in ruda.backends() if b.name == "remote")
        assert status.available and status.details["server backend"] == "host"
        assert ruda_remote.default_device().url == server.url
        assert_matches_numpy(ruda.namespace("remote").arange(3), np.arange(3))
    finally:
        ruda_remote.default_device().close()
        ruda_remote.set_default_device(None)
        registry.clear_cache()


def test_serve_is_a_ruda_subcommand():
    from importlib.metadata import entry_points

    (serve,) = [ep for ep in entry_points(group="ruda.commands") if ep.name == "serve"]
    assert serve.value == "ruda_remote.cli:add_parser"


def test_nested_sequences_of_remote_arrays_are_assembled_on_the_server(xp, monkeypatch):
    x = xp.asarray(np.arange(6.0))
    device = xp.default_device()
    reads = []
    monkeypatch.setattr(device, "read", lambda handle: reads.append(handle))
    nested = xp.asarray([[x[0] * 2, x[1]], [x[4], x[5]]], dtype=xp.float32)
    monkeypatch.undo()
    assert reads == [], "the values must stay on the server"
    assert nested.shape == (2, 2) and nested.dtype == xp.float32
    assert_matches_numpy(nested, np.array([[0.0, 1.0], [4.0, 5.0]], dtype=np.float32))


def test_start_websocket_async_serves_a_namespace_in_an_existing_loop():
    import asyncio
    import contextlib
    import socket
    import threading

    import ruda.host
    from ruda_remote.server import start_websocket_async

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    loop = asyncio.new_event_loop()
    task = loop.create_task(start_websocket_async(ruda.host, "cpu", port))

    def run() -> None:
        with contextlib.suppress(asyncio.CancelledError):
            loop.run_until_complete(task)
        loop.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        for _ in range(100):  # until it listens
            try:
                device = ruda_remote.RemoteDevice(f"ws://127.0.0.1:{port}", connect_timeout=1)
                break
            except ruda_remote.RemoteConnectionError:
                threading.Event().wait(0.05)
        assert device.info["backend"] == "ruda.host" and device.info["device"] == "cpu"
        assert float(ruda_remote.sum(ruda_remote.arange(5, device=device))) == 10.0
        device.close()
    finally:
        loop.call_soon_threadsafe(task.cancel)
        thread.join(10)


def test_numpy_scalars_travel_as_python_scalars(xp):
    x = xp.asarray([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(ruda.to_numpy(x + np.float64(1.5)), [2.5, 3.5, 4.5])
    np.testing.assert_array_equal(ruda.to_numpy(xp.multiply(x, np.int64(2))), [2.0, 4.0, 6.0])
    y = xp.asarray([1, 2], dtype=xp.int16)
    assert ruda.to_numpy(y * np.int8(3)).dtype == np.int16  # a scalar, not an int8 array
    # reflected too, and the client's expected dtype agrees with the server's result
    z = xp.asarray([1, 2], dtype=xp.int32)
    assert ruda.to_numpy(np.int64(3) + z).tolist() == [4, 5]
    assert (np.int64(3) + z).dtype == np.int32
    assert ruda.to_numpy(np.float64(0.5) * xp.asarray([2.0], dtype=xp.float32)).dtype == np.float32


def test_full_takes_a_0d_array_or_a_numpy_scalar_as_its_fill_value(xp):
    # SciPy's elementwise solvers write xp.full(shape, xp.asarray(value))
    got = xp.full((2, 2), xp.asarray(2.5, dtype=xp.float32))
    assert got.dtype == np.float32  # the 0-d array's dtype, as NumPy's full keeps it
    np.testing.assert_array_equal(ruda.to_numpy(got), np.full((2, 2), 2.5, dtype=np.float32))
    assert xp.full(3, xp.asarray(7), dtype=xp.float64).dtype == np.float64
    assert ruda.to_numpy(xp.full(2, np.int64(4))).tolist() == [4, 4]
    assert ruda.to_numpy(xp.full(2, xp.asarray(True))).dtype == np.bool_
    with pytest.raises(ValueError, match="scalar fill_value, not a 1-d array"):
        xp.full(2, xp.asarray([1.0]))


def test_numpy_asarray_gives_a_host_copy(xp):
    x = xp.asarray([[1.0, 2.0], [3.0, 4.0]])
    host = np.asarray(x)
    np.testing.assert_array_equal(host, [[1.0, 2.0], [3.0, 4.0]])
    host[0, 0] = 9.0  # a copy: the server's array is unchanged
    assert float(x[0, 0]) == 1.0
    assert np.asarray(x, dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="copy"):
        np.asarray(x, copy=False)


def test_dlpack_and_numpy_exports_are_host_copies(xp):
    x = xp.asarray([[1, 2], [3, 4]], dtype=xp.int16)
    assert_exports_host_copies(x, np.array([[1, 2], [3, 4]], dtype=np.int16))


def test_scalar_conversions(xp):
    assert_python_scalar_conversions(xp)


def test_a_list_where_the_standard_takes_an_array_is_refused_at_the_call(xp):
    """The server refuses such an op; the client had sent it, and the error came only at the
    next wait, far from the call that made it."""
    x = xp.ones((2,))
    for call in (
        lambda: xp.add(x, [1.0, 2.0]),
        lambda: xp.matmul(x, [[1.0], [2.0]]),
        lambda: xp.where(x > 0, x, [0.0, 1.0]),
    ):
        with pytest.raises(TypeError, match="where the standard takes an array or a scalar"):
            call()
    with pytest.raises(TypeError):  # (the operators take arrays and scalars alone)
        x += [1.0, 2.0]
    with pytest.raises(TypeError, match="cannot assign a list"):
        x[...] = [3.0, 4.0]
    # nothing was sent: the next wait finds no error waiting for it
    assert np.asarray(xp.concat([x, xp.reshape(x, [2])])).tolist() == [1.0, 1.0, 1.0, 1.0]


def test_an_element_changed_in_place_reads_what_the_server_holds(xp):
    """An element ``x[i, j]`` was read from the client's copy of ``x`` even after an in-place
    operator changed it: NumPy's element is a copy, so ``y += 1`` changed only ``y`` on the
    server, and ``float(y)`` read the old value from ``x``'s copy."""
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    y = x[0, 0]
    y += 1
    assert float(y) == float(y + 0) == 1.0 and np.asarray(x)[0, 0] == 0.0
    z = x[0, 1]
    doubled = z * 2  # (z is made on the server: from here it is the backend's copy)
    x[0, 1] = 9.0
    assert float(z) == 1.0 and float(doubled) == 2.0
    w = x[1, 2]  # not made yet: read from x as it is now
    assert float(w) == 5.0
