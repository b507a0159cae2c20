"""sort, argsort, argmax, argmin, nonzero, searchsorted, cumulative sums and count_nonzero,
on every dtype the device has, against NumPy, with the edge cases GPU kernels get wrong."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import ruda_wgpu
from ruda.testing import assert_matches_numpy, parametrize_backends

from tests.wgpu.counting import count_calls
from tests.wgpu.dtype_support import indices

pytestmark = parametrize_backends("wgpu")

REAL = [d for d in ruda_wgpu.__array_namespace_info__().dtypes(kind=("bool", "integral", "real floating"))]
NUMERIC = [d for d in REAL if d != "bool"]
FLOAT_EDGES = [np.nan, -np.inf, np.inf, -0.0, 0.0, 1.0, -1.0, np.nan, 0.0, -0.0]


def _values(dtype: str, n: int, seed: int = 0, spread: int = 20) -> np.ndarray:
    """n values with many duplicates; floats begin with NaN, infinities and both zeros."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind == "f":
        out = rng.integers(-spread, spread, n).astype(dt) / 4
        out[: min(n, len(FLOAT_EDGES))] = FLOAT_EDGES[: min(n, len(FLOAT_EDGES))]
        return out
    info = np.iinfo(dt)
    out = rng.integers(max(info.min, -spread), min(info.max, spread), n).astype(dt)
    if n >= 2:
        out[:2] = [info.min, info.max]
    return out


def _stable_order(host: np.ndarray, descending: bool) -> np.ndarray:
    """The stable order the standard asks for, NaN last in both directions (as ruda_wgpu sorts)."""
    sign = -1 if descending else 1
    values = host.tolist()

    def key(i: int) -> tuple[bool, float | int]:
        v = values[i]
        return (True, 0) if v != v else (False, sign * v)

    return np.array(sorted(range(len(values)), key=key), dtype=np.int64)


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("n", [0, 1, 2, 33, 2048, 2049, 5000])
@pytest.mark.parametrize("descending", [False, True])
def test_argsort_is_stable_with_nan_last(xp, dtype, n, descending):
    host = _values(dtype, n)
    got = xp.argsort(xp.asarray(host), descending=descending)
    assert got.dtype == xp.__array_namespace_info__().default_dtypes()["indexing"]
    assert_matches_numpy(got, _stable_order(host, descending), check_dtype=False)


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_values(xp, dtype, descending):
    host = _values(dtype, 3001, seed=1)
    got = np.asarray(xp.sort(xp.asarray(host), descending=descending))
    want = host[_stable_order(host, descending)]
    assert got.dtype == host.dtype
    if host.dtype.kind == "f":  # -0 and +0 are equal; sort puts -0 first
        np.testing.assert_array_equal(np.where(got == 0, 0, got), np.where(want == 0, 0, want))
        zeros = got[got == 0]
        assert list(np.signbit(zeros)) == sorted(np.signbit(zeros), reverse=not descending)
    else:
        np.testing.assert_array_equal(got, want)


def _check_rows(xp, host: np.ndarray, descending: bool) -> None:
    """sort and argsort of the rows of ``host`` against the stable order, -0 before +0."""
    got = xp.sort(xp.asarray(host), descending=descending)
    order = np.stack([_stable_order(row, descending) for row in host])
    want = np.take_along_axis(host, order, axis=1)
    if host.dtype.kind == "f":  # -0 and +0 are equal; sort puts -0 first
        np.testing.assert_array_equal(np.where(want == 0, 0, np.asarray(got)), np.where(want == 0, 0, want))
        for row in np.asarray(got):
            signs = list(np.signbit(row[row == 0]))
            assert signs == sorted(signs, reverse=not descending)
    else:
        assert_matches_numpy(got, want)
    assert_matches_numpy(xp.argsort(xp.asarray(host), descending=descending), order, check_dtype=False)


def _no_radix(*args):
    raise AssertionError("rows went to the radix sort")


def _no_tile(*args):
    raise AssertionError("rows went to the sort a workgroup a row")


def _no_thread(*args):
    raise AssertionError("rows went to the sort a thread a row")


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("descending", [False, True])
def test_short_rows_sort_a_thread_a_row_stably(xp, monkeypatch, dtype, descending):
    from ruda_wgpu import _sorting

    monkeypatch.setattr(_sorting, "radix_sort", _no_radix)
    monkeypatch.setattr(_sorting, "sort_tile_rows", _no_tile)
    monkeypatch.setattr(_sorting, "CPU_FEW_ROWS", 0)
    for n in (1, 3, 4, 5, 17, _sorting.SHORT_SORT):
        host = _values(dtype, 40 * n, seed=n).reshape(40, n)
        host[-1] = host[-1, ::-1]  # the float edge cases, in another row and order
        _check_rows(xp, host, descending)


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("descending", [False, True])
def test_rows_a_workgroup_holds_sort_a_workgroup_a_row_stably(xp, monkeypatch, dtype, descending):
    from ruda_wgpu import _sorting

    monkeypatch.setattr(_sorting, "radix_sort", _no_radix)
    monkeypatch.setattr(_sorting, "sort_short_rows", _no_thread)
    dev = xp.__array_namespace_info__().default_device()
    monkeypatch.setattr(dev, "cpu", True)  # (which also takes a few short rows so)
    most = min(_sorting.CPU_MAX_TILE_SORT, _sorting.tile_capacity(dev, 2, True))
    for n in (5, 16, _sorting.SHORT_SORT + 1, 64, 100, most):  # padded, exact, ..., the largest
        host = _values(dtype, 7 * n, seed=n).reshape(7, n)
        host[-1] = host[-1, ::-1]  # the float edge cases, in another row and order
        _check_rows(xp, host, descending)


@pytest.mark.parametrize("dtype", ["float32", "int64", "float64"])
def test_long_rows_sort_a_workgroup_a_row_on_a_gpu(xp, monkeypatch, dtype):
    # a GPU takes rows up to the workgroup memory's size (32 KiB on lavapipe: 4096 one-word keys,
    # 2048 with their indices or two-word keys)
    from ruda_wgpu import _sorting

    dev = xp.__array_namespace_info__().default_device()
    if dtype not in xp.__array_namespace_info__().dtypes():
        pytest.skip(f"the device has no {dtype}")
    monkeypatch.setattr(dev, "cpu", False)
    words = 2 if np.dtype(dtype).itemsize == 8 else 1
    sort_most = _sorting.tile_capacity(dev, words, False)
    argsort_most = _sorting.tile_capacity(dev, words, True)
    assert sort_most > _sorting.CPU_MAX_TILE_SORT
    monkeypatch.setattr(_sorting, "radix_sort", _no_radix)
    host = _values(dtype, 3 * argsort_most, seed=3).reshape(3, argsort_most)
    _check_rows(xp, host, descending=True)
    host = _values(dtype, 2 * sort_most - 2, seed=4).reshape(2, sort_most - 1)
    got = xp.sort(xp.asarray(host))
    want = np.take_along_axis(host, np.stack([_stable_order(row, False) for row in host]), axis=1)
    np.testing.assert_array_equal(np.where(want == 0, 0, np.asarray(got)), np.where(want == 0, 0, want))


def test_tile_sort_capacity_follows_the_workgroup_memory(xp):
    from types import SimpleNamespace

    from ruda_wgpu import _sorting

    def device(cpu: bool, memory: int) -> SimpleNamespace:
        return SimpleNamespace(cpu=cpu, limits={"max-compute-workgroup-storage-size": memory})

    assert _sorting.tile_capacity(device(False, 49152), 1, False) == 4096
    assert _sorting.tile_capacity(device(False, 32768), 1, True) == 2048  # 4096 needs 32 KiB + 4
    assert _sorting.tile_capacity(device(False, 16384), 2, True) == 1024
    assert _sorting.tile_capacity(device(True, 49152), 1, False) == _sorting.CPU_MAX_TILE_SORT
    assert _sorting.tile_capacity(device(False, 256), 1, True) == 0  # not even 32 keys fit


def test_radix_shape_follows_the_workgroup_memory(xp):
    from ruda_wgpu import _sorting

    assert _sorting.radix_shape(1, False, 49152) == (256, 16)
    assert _sorting.radix_shape(1, True, 49152) == (256, 12)
    assert _sorting.radix_shape(2, True, 49152) == (256, 8)  # 256 x 12 of 64-bit keys: 58 KiB
    assert _sorting.radix_shape(1, False, 32768) == _sorting.radix_shape(1, True, 32768) == (128, 16)
    assert _sorting.radix_shape(2, True, 16384) == (128, 2)  # the counters alone take 8 KiB


def test_subgroups_are_found_in_order(xp):
    # lavapipe and NVIDIA's driver lay a workgroup's subgroups out as runs of consecutive
    # threads: the check finds it wherever the device has subgroups
    from ruda_wgpu import _kernels

    dev = xp.__array_namespace_info__().default_device()
    xp.asarray([1])  # (the device opened)
    dev.subgroups_in_order = None  # looked at again
    assert _kernels.lanes_in_order(dev) == ("subgroup" in dev.features)


@pytest.mark.parametrize("lanes", [True, False])  # scans with subgroup operations, or without
@pytest.mark.parametrize("shape", [(256, 4), (128, 12)])  # GPUs' 256 threads; 12 keys a thread
@pytest.mark.parametrize("dtype", [d for d in ("float32", "int64") if d in REAL])
@pytest.mark.parametrize("name", ["sort", "argsort"])
def test_radix_sort_in_other_workgroup_shapes(xp, monkeypatch, name, dtype, shape, lanes):
    # the shapes a GPU's 48 KiB take (256 x 16 for sort, 256 x 12 for argsort), with fewer
    # keys a thread so that any adapter's memory holds them: a digit a thread, tiles of a size
    # not a power of two, the last one part full
    from ruda_wgpu import _kernels, _sorting

    monkeypatch.setattr(_sorting, "RADIX_SHAPES", {False: [shape], True: [shape]})
    monkeypatch.setattr(_sorting, "tile_capacity", lambda dev, words, indices: 0)  # no tile sort
    host = _values(dtype, 2 * 5000, seed=31, spread=5000).reshape(2, 5000)
    x = xp.asarray(host)
    if lanes and not _kernels.lanes_in_order(x.device):
        pytest.skip(f"{x.device.description} has no subgroups in order")
    monkeypatch.setattr(x.device, "subgroups_in_order", lanes)
    x.device.plans.clear()  # (a sort of this signature logged in another shape would replay)
    want = np.stack([_stable_order(row, False) for row in host])
    if name == "sort":
        want = np.take_along_axis(host, want, axis=1)
    assert_matches_numpy(getattr(xp, name)(x, axis=1), want, check_dtype=False)


@pytest.mark.parametrize("index", ["default", "int32"])
def test_short_rows_argsort_writes_the_index_dtype_of_the_device(xp, monkeypatch, index):
    # no conversion pass: the kernel writes int64, or int32 where a device has no int64
    from ruda_wgpu import _dtypes, _sorting

    def no_conversion(*args):
        raise AssertionError("short rows' indices were converted by a pass of their own")

    monkeypatch.setattr(_sorting, "astype", no_conversion)
    want_dtype = xp.__array_namespace_info__().default_dtypes()["indexing"]
    if index == "int32":
        real = _sorting.default_dtypes_of

        def int32_index(dev):
            return {**real(dev), "indexing": _dtypes.int32}

        monkeypatch.setattr(_sorting, "default_dtypes_of", int32_index)
        want_dtype = xp.int32
    host = _values("float32", 3 * 7001, seed=21).reshape(7001, 3)
    got = xp.argsort(xp.asarray(host), axis=1, descending=True)
    assert got.dtype == want_dtype
    want = np.stack([_stable_order(row, True) for row in host])
    assert_matches_numpy(got, want, check_dtype=False)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_sort_along_any_axis(xp, axis):
    host = np.random.default_rng(2).integers(-3, 3, (7, 300, 5)).astype(np.int32)
    assert_matches_numpy(xp.sort(xp.asarray(host), axis=axis), np.sort(host, axis=axis))
    assert_matches_numpy(
        xp.argsort(xp.asarray(host), axis=axis), np.argsort(host, axis=axis, kind="stable"), check_dtype=False
    )
    view = xp.asarray(host)[::-2, 1:, ::3]  # a strided view sorts like its copy
    assert_matches_numpy(xp.sort(view, axis=axis), np.sort(host[::-2, 1:, ::3], axis=axis))


@pytest.mark.parametrize("dtype", [d for d in ("float32", "int8", "int64", "float64") if d in REAL])
@pytest.mark.parametrize("name", ["sort", "argsort"])
def test_a_repeated_radix_sort_records_the_passes_it_logged(xp, name, dtype, monkeypatch):
    # a radix sort of one shape and dtype logs its passes from its second call on, and records
    # them again on the same buffers without making them: the same result, read from the input
    # as it is when the sort runs
    from ruda_wgpu import _sorting

    made = count_calls(monkeypatch, _sorting, "_radix_passes")
    host = _values(dtype, 3 * 5000, seed=23).reshape(3, 5000)  # rows past a workgroup's sort
    x = xp.asarray(host)
    sort = getattr(xp, name)
    want = np.stack([_stable_order(row, False) for row in host])
    if name == "sort":
        want = np.take_along_axis(host, want, axis=1)
    for _ in range(5):
        assert_matches_numpy(sort(x, axis=1), want, check_dtype=False)
    assert made and len(made) < 5, f"its passes were made {len(made)} times in 5 sorts"
    x[...] = xp.asarray(host[:, ::-1].copy())  # the same buffer, new values
    again = np.stack([_stable_order(row, False) for row in host[:, ::-1]])
    if name == "sort":
        again = np.take_along_axis(host[:, ::-1], again, axis=1)
    assert_matches_numpy(sort(x, axis=1), again, check_dtype=False)


@pytest.mark.parametrize("include_initial", [False, True])
@pytest.mark.parametrize("shape", [(50, 300), (3, 70_000)])  # one kernel; tiles, totals, carries
def test_a_repeated_cumulative_sum_records_the_scans_it_logged(xp, shape, include_initial, monkeypatch):
    # a scan of one shape and dtype logs its kernels from its second call on, and records them
    # again on the same buffers without making them: the same result, read from the input as
    # it is when the scan runs
    from ruda_wgpu import _statistical

    made = count_calls(monkeypatch, _statistical, "scan_rows")
    host = np.random.default_rng(29).integers(-50, 50, shape).astype(np.int32)
    x = xp.asarray(host)
    want = np.cumsum(host, axis=1)
    if include_initial:
        want = np.concatenate([np.zeros((shape[0], 1), want.dtype), want], axis=1)
    for _ in range(5):
        got = xp.cumulative_sum(x, axis=1, include_initial=include_initial)
        assert_matches_numpy(got, want, check_dtype=False)
    assert made and len(made) < 5, f"its scan was made {len(made)} times in 5 calls"
    x[...] = -x  # the same buffer, new values
    got = xp.cumulative_sum(x, axis=1, include_initial=include_initial)
    assert_matches_numpy(got, -want, check_dtype=False)
    for _ in range(3):  # rows of none: nothing to scan, again and again
        empty = xp.cumulative_sum(xp.zeros((3, 0), dtype=xp.int32), axis=1, include_initial=include_initial)
        assert_matches_numpy(empty, np.zeros((3, int(include_initial)), np.int32), check_dtype=False)


def test_sorting_refuses_bad_input(xp):
    with pytest.raises(ValueError, match="at least one dimension"):
        xp.sort(xp.asarray(1.0))
    with pytest.raises(IndexError, match="out of range"):
        xp.argsort(xp.ones((2, 3)), axis=2)
    with pytest.raises(TypeError, match="ruda_wgpu array"):
        xp.sort(np.ones(3))
    for fn in (xp.sort, xp.argsort):  # (the shader had failed to compile for complex keys)
        with pytest.raises(TypeError, match="orders real values, not complex64"):
            fn(xp.asarray(np.array([1 + 2j, 3j, -1j], np.complex64)))
        with pytest.raises(TypeError, match="descending must be a bool, not str"):
            fn(xp.ones(3), descending="yes")
        with pytest.raises(TypeError, match="stable must be a bool, not NoneType"):
            fn(xp.ones(3), stable=None)
    np.testing.assert_array_equal(np.asarray(xp.sort(xp.asarray([1, 3, 2]), descending=np.True_)), [3, 2, 1])


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin_first_occurrence_and_nan(xp, name, dtype):
    host = _values(dtype, 3000, seed=3).reshape(30, 100)
    fn = getattr(np, name)
    x = xp.asarray(host)
    for axis in (None, 0, 1):
        for keepdims in (False, True):
            got = getattr(xp, name)(x, axis=axis, keepdims=keepdims)
            assert_matches_numpy(got, fn(host, axis=axis, keepdims=keepdims), check_dtype=False)
    long = _values(dtype, 600_001, seed=4)  # several passes over parts of the row
    assert int(getattr(xp, name)(xp.asarray(long))) == int(fn(long))
    with pytest.raises(ValueError, match="empty"):
        getattr(xp, name)(xp.zeros((0, 3), dtype=x.dtype), axis=0)


@pytest.mark.parametrize("dtype", ["float32", "int8", "float16"])
@pytest.mark.parametrize("cpu", [True, False])
def test_argmax_over_leading_and_middle_axes_in_place(xp, monkeypatch, dtype, cpu):
    # a thread per result and per part of the axis, read where it lies: rows cut into parts
    # (few columns, long axis) and the parts' pairs reduced again; ties and NaN across parts
    # keep the first occurrence
    from ruda_wgpu import _searching

    def no_copy(x):
        raise AssertionError("argmax copied its input")

    host = _values(dtype, 3 * 5000 * 7, seed=13, spread=3).reshape(3, 5000, 7)
    x = xp.asarray(host)
    monkeypatch.setattr(x.device, "cpu", cpu)
    cases = [(x, host, 1), (x, host, 0), (x[:, ::3, 1:], host[:, ::3, 1:], 1), (x[1], host[1], 0)]
    cases.append((xp.permute_dims(x, (2, 0, 1)), host.transpose(2, 0, 1), 1))
    for view, want, axis in cases:  # a GPU copies so few columns, and reduces rows
        assert_matches_numpy(xp.argmax(view, axis=axis), np.argmax(want, axis=axis), check_dtype=False)
    monkeypatch.setattr(_searching, "GPU_THREADS_IN_PLACE", 1)
    monkeypatch.setattr(_searching, "contiguous", no_copy)
    for view, want, axis in cases:
        for name in ("argmax", "argmin"):
            got = getattr(xp, name)(view, axis=axis)
            assert_matches_numpy(got, getattr(np, name)(want, axis=axis), check_dtype=False)


def test_argmax_writes_the_index_dtype_of_the_device(xp, monkeypatch):
    # the last pass writes the device's index dtype itself: int32 where a device has no int64
    from ruda_wgpu import _dtypes, _searching

    real = _searching.default_dtypes_of
    monkeypatch.setattr(_searching, "default_dtypes_of", lambda dev: {**real(dev), "indexing": _dtypes.int32})
    host = _values("float32", 600_200, seed=14)
    for shape, axis in [
        ((600_001,), None),
        ((1, 600_001), 1),
        ((3001, 200), 1),
        ((3001, 200), 0),
        ((7, 3), 1),
    ]:
        want = np.argmax(host[: int(np.prod(shape))].reshape(shape), axis=axis)
        got = xp.argmax(xp.asarray(host[: int(np.prod(shape))].reshape(shape)), axis=axis)
        assert got.dtype == xp.int32
        assert_matches_numpy(got, want, check_dtype=False)


@pytest.mark.parametrize(
    ("shape", "axis"), [((300, 40), 1), ((40, 5000), 1), ((5000, 3), 0), ((70000,), None)]
)
def test_a_repeated_argmax_reads_its_input_anew(xp, shape, axis):
    # later calls on the same buffers replay prepared dispatches (a thread a row, a workgroup a
    # row, an axis read in place, several passes): each must read what the buffer holds now and
    # write a result of its own, with the passes' pairs in the device's scratch buffers
    host = _values("float32", int(np.prod(shape)), seed=21).reshape(shape)
    x = xp.asarray(host)
    first = [xp.argmax(x, axis=axis) for _ in range(3)]
    x[...] = -x  # the same buffer, new values
    again = xp.argmax(x, axis=axis)
    for got in first:
        assert_matches_numpy(got, np.argmax(host, axis=axis), check_dtype=False)
    assert_matches_numpy(again, np.argmax(-host, axis=axis), check_dtype=False)
    # another input into the result buffer the pool hands back, through the same scratch
    del first, again
    flipped = host[::-1].copy()
    y = xp.asarray(flipped)
    read = [np.asarray(xp.argmax(z, axis=axis)) for z in (x, y)]
    np.testing.assert_array_equal(read[0], np.argmax(-host, axis=axis))
    np.testing.assert_array_equal(read[1], np.argmax(flipped, axis=axis))


@pytest.mark.parametrize("cpu", [True, False])
def test_argmax_takes_the_kernel_each_adapter_kind_wants(xp, monkeypatch, cpu):
    # lavapipe runs both kernels here by posing as a GPU: many short rows go a thread a row there
    from ruda_wgpu import _searching

    host = _values("float32", 300 * 200, seed=12).reshape(300, 200)
    x = xp.asarray(host)
    monkeypatch.setattr(x.device, "cpu", cpu)
    launched = []
    real_step = _searching.kernel_step

    def kernel_step(dev, name, *args):
        launched.append(name)
        return real_step(dev, name, *args)

    monkeypatch.setattr(_searching, "kernel_step", kernel_step)
    for k, thread_a_row in [(_searching.GPU_THREAD_ROW, True), (_searching.GPU_THREAD_ROW + 1, cpu)]:
        launched.clear()
        x.device.plans.clear()  # (prepared dispatches from an earlier test would skip the steps)
        assert_matches_numpy(xp.argmax(x[:, :k], axis=1), np.argmax(host[:, :k], axis=1), check_dtype=False)
        assert ("argreduce_threads" in launched) == thread_a_row, (k, launched)
    launched.clear()
    x.device.plans.clear()
    assert_matches_numpy(xp.argmin(x[:10], axis=1), np.argmin(host[:10], axis=1), check_dtype=False)
    assert "argreduce_threads" not in launched  # few long rows: a workgroup a row on either


@pytest.mark.parametrize("dtype", REAL)
def test_nonzero_and_count_nonzero(xp, dtype):
    host = _values(dtype, 2 * 3 * 701, seed=5).reshape(2, 3, 701)
    got = xp.nonzero(xp.asarray(host))
    for g, w in zip(got, np.nonzero(host), strict=True):
        assert_matches_numpy(g, w, check_dtype=False)
    assert int(xp.count_nonzero(xp.asarray(host))) == int(np.count_nonzero(host))
    assert_matches_numpy(
        xp.count_nonzero(xp.asarray(host), axis=(0, 2)),
        np.count_nonzero(host, axis=(0, 2)),
        check_dtype=False,
    )
    assert [a.shape for a in xp.nonzero(xp.zeros((0, 4), dtype=xp.asarray(host).dtype))] == [(0,), (0,)]
    with pytest.raises(ValueError):
        xp.nonzero(xp.asarray(1))


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(xp, dtype, side):
    sorted_host = np.sort(_values(dtype, 500, seed=6))
    queries = _values(dtype, 300, seed=7).reshape(20, 15)
    got = xp.searchsorted(xp.asarray(sorted_host), xp.asarray(queries), side=side)
    assert_matches_numpy(got, np.searchsorted(sorted_host, queries, side=side), check_dtype=False)
    perm = np.random.default_rng(8).permutation(500)
    shuffled = sorted_host[perm]
    sorter = np.argsort(shuffled, kind="stable")
    got = xp.searchsorted(xp.asarray(shuffled), xp.asarray(queries), side=side, sorter=indices(sorter))
    assert_matches_numpy(got, np.searchsorted(shuffled, queries, side=side, sorter=sorter), check_dtype=False)
    assert int(xp.searchsorted(xp.asarray(sorted_host), 1, side=side)) == int(
        np.searchsorted(sorted_host, 1, side=side)
    )


def test_searchsorted_empty_and_errors(xp):
    assert_matches_numpy(
        xp.searchsorted(xp.zeros((0,)), xp.asarray([1.0, 2.0])), np.zeros(2, np.int64), check_dtype=False
    )
    with pytest.raises(ValueError, match="one-dimensional"):
        xp.searchsorted(xp.ones((2, 2)), xp.ones(2))
    with pytest.raises(ValueError, match="side"):
        xp.searchsorted(xp.ones(2), xp.ones(2), side="middle")
    # (complex values have no order in the standard: the search kernel has no comparison of them)
    with pytest.raises(TypeError, match="orders real values, not complex64"):
        xp.searchsorted(xp.asarray([1, 2j]), xp.asarray([1 + 0j]))
    with pytest.raises(TypeError, match="orders real values, not complex64"):
        xp.searchsorted(xp.ones(2), xp.asarray([1j]))
    # a sorter must order all of x1 (a shorter one searched only what it took)
    with pytest.raises(ValueError, match=r"x1's shape \(3,\), not \(2,\)"):
        xp.searchsorted(xp.asarray([1.0, 2.0, 3.0]), xp.asarray([2.5]), sorter=xp.asarray([1, 2]))
    with pytest.raises(TypeError, match="integer indices, not float32"):
        xp.searchsorted(xp.asarray([1.0, 2.0, 3.0]), xp.asarray([2.5]), sorter=xp.asarray([1.0, 2.0, 0.0]))
    # an index out of range is flagged by the gather's kernel, and its error names searchsorted
    found = xp.searchsorted(xp.asarray([3.0, 1.0, 2.0]), xp.asarray([2.5]), sorter=xp.asarray([1, 2, 7]))
    with pytest.raises(IndexError, match=r"searchsorted\(\): index out of bounds for an axis of length 3"):
        np.asarray(found)


def _tiled_scans(xp: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scan rows in tiles of 256 (each tile scanned, the tile totals scanned and added back),
    the path of long rows, whatever the row's length."""
    from ruda_wgpu import _scan

    monkeypatch.setattr(_scan, "ONE_WORKGROUP_ROW", 0)
    monkeypatch.setattr(_scan, "IPT", 1)
    monkeypatch.setattr(_scan, "TILE", 256)
    # (scans recorded earlier, of the same shapes, would be recorded again instead of tiled)
    xp.__array_namespace_info__().default_device().plans.clear()


@pytest.mark.parametrize("dtype", [*NUMERIC, "bool"])
@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("tiled", [False, True], ids=["rows", "tiles"])
def test_cumulative(xp, monkeypatch, name, dtype, tiled):
    """Every dtype, both axes, with and without the initial value; ``tiles`` scans the rows of
    2500 in tiles of 256 (each tile scanned, the tile totals scanned and added back), the path
    of long rows."""
    if tiled:
        _tiled_scans(xp, monkeypatch)
    host = _values(dtype, 3 * 2500, seed=9, spread=3).reshape(3, 2500)
    if np.dtype(dtype).kind == "f":
        host = np.where(np.isfinite(host), host, 1).astype(dtype)
    if name == "cumulative_prod":
        host = host[:, :40]
    np_fn = np.cumsum if name == "cumulative_sum" else np.cumprod
    x = xp.asarray(host)
    for axis in (0, 1):
        for include_initial in (False, True):
            got = getattr(xp, name)(x, axis=axis, include_initial=include_initial)
            want = np_fn(host, axis=axis, dtype=np.asarray(got).dtype)
            if include_initial:
                first = np.full_like(want.take([0], axis=axis), 0 if name == "cumulative_sum" else 1)
                want = np.concatenate([first, want], axis=axis)
            assert_matches_numpy(got, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", list(ruda_wgpu.__array_namespace_info__().dtypes(kind="complex floating")))
@pytest.mark.parametrize("tiled", [False, True], ids=["rows", "tiles"])
def test_complex_cumulative_prod_starts_with_the_first_element(xp, monkeypatch, dtype, tiled):
    """The first product is the first element itself, as NumPy's cumprod gives it: multiplied by
    the scan's identity (1 + 0j), an infinite part had made the other part NaN (inf+0j became
    inf+nanj, and every product after it), and a -0 imaginary part +0."""
    if tiled:
        _tiled_scans(xp, monkeypatch)
    rows = [[complex(np.inf, 0), 1 + 1j, 2 - 1j], [complex(2, -0.0), 3, 1j], [complex(1, np.inf), 1, 1]]
    host = np.array(rows, dtype)
    with np.errstate(invalid="ignore"):
        want = np.cumprod(host, axis=1)
    got = np.asarray(xp.cumulative_prod(xp.asarray(host), axis=1))
    assert_matches_numpy(got, want)
    zeros = want.imag == 0  # (their signs; a NaN's is the hardware's: NVIDIA's differ)
    assert np.array_equal(np.signbit(got.imag[zeros]), np.signbit(want.imag[zeros]))


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_cumulative_of_bool_into_bool_with_the_initial_value(xp, name):
    """dtype=bool keeps the logical result, with its initial value False (sum) or True (prod),
    as NumPy's (with include_initial it had raised: a Python int met a bool array)."""
    host = np.array([[True, False, True], [False, False, True]])
    for include_initial in (False, True):
        got = getattr(xp, name)(xp.asarray(host), axis=1, dtype=xp.bool, include_initial=include_initial)
        want = getattr(np, name)(host, axis=1, dtype=bool, include_initial=include_initial)
        assert_matches_numpy(got, want)


def test_cumulative_sum_of_a_long_row_takes_several_levels(xp):
    host = (np.arange(3_000_001) % 5 - 2).astype(np.int32)
    assert_matches_numpy(xp.cumulative_sum(xp.asarray(host)), np.cumsum(host), check_dtype=False)


@pytest.mark.parametrize("dtype", ["uint8", "int16", "float32", "float64"])
def test_cumulative_sum_of_long_rows_with_the_initial_value(xp, dtype):
    """Rows past one workgroup's reach, in tiles, into the rows of a wider result
    (include_initial); narrow integers wrap."""
    if dtype not in REAL:
        pytest.skip(f"the device has no {dtype}")
    host = _values(dtype, 2 * 70_001, seed=3, spread=3).reshape(2, 70_001)
    host[~np.isfinite(host)] = 1
    got = xp.cumulative_sum(xp.asarray(host), axis=1, dtype=getattr(xp, dtype), include_initial=True)
    want = np.concatenate([np.zeros((2, 1), dtype), np.cumsum(host, axis=1, dtype=dtype)], axis=1)
    assert_matches_numpy(got, want, rtol=1e-5, atol=1e-3)


def test_more_workgroups_than_one_grid_dimension(xp, monkeypatch):
    """Kernels launched with more than 65535 workgroups use a second grid dimension."""
    from ruda_wgpu import _sorting

    rows = 70_000
    host = np.random.default_rng(10).integers(-9, 9, (rows, 3)).astype(np.int32)
    x = xp.asarray(host)
    assert_matches_numpy(xp.sort(x, axis=1), np.sort(host, axis=1))  # a thread per row
    with monkeypatch.context() as patch:
        patch.setattr(_sorting, "SHORT_SORT", 0)  # a radix tile per row
        assert_matches_numpy(xp.sort(x, axis=1), np.sort(host, axis=1))
    assert_matches_numpy(xp.cumulative_sum(x, axis=1), np.cumsum(host, axis=1), check_dtype=False)
    assert_matches_numpy(xp.argmax(x, axis=1), np.argmax(host, axis=1), check_dtype=False)
    # a thread a row: more rows than 65535 workgroups of 64 threads hold
    many = np.random.default_rng(11).integers(-9, 9, (4_300_000, 2)).astype(np.int8)
    y = xp.asarray(many)
    assert_matches_numpy(xp.argmin(y, axis=1), np.argmin(many, axis=1), check_dtype=False)
    assert_matches_numpy(xp.sort(y, axis=1, descending=True), -np.sort(-many, axis=1))
    assert_matches_numpy(xp.max(y, axis=1), np.max(many, axis=1))
