"""Integer-array and boolean-mask indexing, take, take_along_axis, repeat, unique_* and isin,
against NumPy on every dtype the device has."""

from __future__ import annotations

import numpy as np
import pytest
import ruda_wgpu
from ruda.testing import assert_matches_numpy, parametrize_backends
from ruda_wgpu._engine import CHECK_WORDS, GpuDevice, default_device

from tests.wgpu.dtype_support import indices

pytestmark = parametrize_backends("wgpu")

DTYPES = list(ruda_wgpu.__array_namespace_info__().dtypes(kind=("bool", "integral", "real floating")))
COMPLEX = list(ruda_wgpu.__array_namespace_info__().dtypes(kind="complex floating"))
HOST = np.arange(3 * 4 * 5, dtype=np.int32).reshape(3, 4, 5)
IDX = np.array([2, 0, -1, 1])
J = np.array([[0, 2], [-3, 1]])
MASK = HOST % 3 == 0

KEYS = [
    (IDX,),
    (slice(None), IDX),
    (0, IDX),
    (IDX, slice(None), 1),  # separated by a slice: the index dimensions go first
    (IDX, 2),
    (J, slice(1, 3)),
    (slice(None), J, 1),
    (IDX[:3], IDX[:3] + 1, slice(None)),
    (Ellipsis, IDX),
    (slice(None), IDX[:2], Ellipsis, IDX[1:3]),  # an ... of no axis separates them too, as in NumPy
    (0, Ellipsis, IDX[:3]),
    (None, IDX, None),
    (MASK,),
    (slice(None), MASK[0]),
    (1, MASK[0]),
    (MASK[:, :, 0], slice(None, None, -2)),
    (Ellipsis, MASK[0, 0]),
    (np.array(True),),
    (np.array(False),),
    (slice(None, None, -1), np.array([], dtype=np.int64)),
]


def _device_key(xp, key):
    return tuple(
        (indices(k) if k.dtype.kind in "iu" else xp.asarray(k)) if isinstance(k, np.ndarray) else k
        for k in key
    )


@pytest.mark.parametrize("key", KEYS, ids=lambda k: repr(k)[:60])
def test_getitem_and_setitem_follow_numpy(xp, key):
    x = xp.asarray(HOST)
    dkey = _device_key(xp, key)
    assert_matches_numpy(x[dkey], HOST[key])
    want = HOST.copy()
    want[key] = -7
    x[dkey] = -7
    assert_matches_numpy(x, want)
    positions = np.arange(HOST.size).reshape(HOST.shape)[key]
    if len(np.unique(positions)) < positions.size:
        return  # which of several values written to one element wins is unspecified, as in the standard
    values = np.arange(HOST[key].size, dtype=np.int32).reshape(HOST[key].shape) * 10
    want[key] = values
    x[dkey] = xp.asarray(values)
    assert_matches_numpy(x, want)


def test_host_index_arrays_and_lists_are_uploaded(xp):
    x = xp.asarray(HOST)
    assert_matches_numpy(x[[2, 0]], HOST[[2, 0]])
    assert_matches_numpy(x[np.array([1, 1])], HOST[np.array([1, 1])])
    assert_matches_numpy(x[np.array([True, False, True])], HOST[np.array([True, False, True])])
    assert_matches_numpy(x[True], HOST[True])


@pytest.mark.parametrize("dtype", DTYPES)
def test_mask_selection_and_assignment_on_every_dtype(xp, dtype):
    rng = np.random.default_rng(0)
    host = rng.integers(0, 50, (5, 700)).astype(dtype)
    mask = rng.integers(0, 2, (5, 700)).astype(bool)
    x = xp.asarray(host)
    m = xp.asarray(mask)
    assert_matches_numpy(x[m], host[mask])
    assert_matches_numpy(x[m[:, 0]], host[mask[:, 0]])
    fill = True if np.dtype(dtype).kind == "b" else 3
    x[m] = fill  # one elementwise kernel: no positions needed
    host[mask] = fill
    assert_matches_numpy(x, host)
    row = rng.integers(0, 2, 700).astype(dtype)
    x[m[:, 0]] = xp.asarray(row)  # a value broadcast along the masked rows
    host[mask[:, 0]] = row
    assert_matches_numpy(x, host)


ALL_DTYPES = list(ruda_wgpu.__array_namespace_info__().dtypes())


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize(
    "view",
    [
        lambda a: a,
        lambda a: a.T,  # not contiguous: copied first
        lambda a: a[::-2, 1:],  # an offset and negative strides
        lambda a: a[:, :0],  # rows of no elements
        lambda a: a[:0],  # no rows
    ],
    ids=["contiguous", "transposed", "strided", "empty rows", "no rows"],
)
def test_a_lone_mask_selects_rows_of_any_view_and_dtype(xp, dtype, view):
    # x[mask] over leading dimensions copies the selected rows in one kernel (masked_rows)
    base = np.random.default_rng(2).integers(-50, 50, (9, 6)).astype(dtype)
    host, x = view(base), view(xp.asarray(base))
    for mask in (host.real > 0, np.ones(host.shape, bool), np.zeros(host.shape, bool)):
        assert_matches_numpy(x[xp.asarray(mask)], host[mask])
        rows = mask.any(axis=1) if mask.shape[1] else np.ones(mask.shape[0], bool)
        rows[::3] = False
        assert_matches_numpy(x[xp.asarray(rows), ...], host[rows, ...])


def test_a_lone_mask_selects_from_a_pending_result(xp):
    host = np.linspace(-1, 1, 40, dtype=np.float32).reshape(8, 5)
    x = xp.asarray(host)
    assert_matches_numpy((x * 2 + 1)[xp.asarray(host > 0)], (host * 2 + 1)[host > 0])


def test_indices_that_view_the_array_written_are_those_before_the_write(xp):
    """b[b] = False, x[x] = 5: the mask or indices are the target's own buffer, which a dispatch
    cannot bind for reading as well: the batch had failed validation at the next read, of any
    array, and the work recorded with it (here a *= 2) was lost."""
    a = xp.ones(3)
    xp.synchronize()
    cases = [
        (np.array([True, False, True]), lambda t: t),
        (np.array([[True, False], [True, True]]), lambda t: t.T),
        (np.array([0, 2, 1, 3], np.int32), lambda t: t),  # (every device holds int32)
        (np.array([0, 2, 1, 3], np.int32), lambda t: t[::-1]),
    ]
    for host, index in cases:
        x = xp.asarray(host)
        x[index(x)] = 5 if host.dtype.kind == "i" else False
        a *= 2
        want = host.copy()
        want[index(host.copy())] = 5 if host.dtype.kind == "i" else False
        assert_matches_numpy(x, want)
    assert_matches_numpy(a, np.full(3, 16, np.float32))


def test_mask_setitem_with_a_value_per_element(xp):
    host = np.arange(20, dtype=np.float32).reshape(4, 5)
    mask = host % 3 == 1
    x = xp.asarray(host)
    x[xp.asarray(mask)] = xp.asarray(-np.arange(mask.sum(), dtype=np.float32))
    host[mask] = -np.arange(mask.sum())
    assert_matches_numpy(x, host)
    x[xp.asarray(mask)] = x[xp.asarray(mask)] * 2  # the value reads the array it is written into
    host[mask] = host[mask] * 2
    assert_matches_numpy(x, host)


def test_bad_keys_raise_clear_errors(xp):
    x = xp.asarray(HOST)
    with pytest.raises(IndexError, match="out of bounds"):
        np.asarray(x[xp.asarray([0, 3])])
    with pytest.raises(IndexError, match="out of bounds"):
        x[xp.asarray([-4])] = 1
        np.asarray(x)  # (a scatter's check raises at the next read, as a gather's does)
    with pytest.raises(IndexError, match="out of bounds"):
        x[0, 9]
    with pytest.raises(IndexError, match="boolean index of shape"):
        x[xp.asarray([True, False])]
    with pytest.raises(IndexError, match="integer or boolean"):
        x[xp.asarray([1.0])]
    with pytest.raises(IndexError, match="too many indices"):
        x[xp.asarray(MASK), 0]
    with pytest.raises(TypeError, match="cannot assign"):
        x[xp.asarray([0])] = xp.asarray([1.5])


def test_values_assigned_follow_promotion_whatever_the_key(xp):
    # a float into an integer array is refused alike through a slice, an integer array and a mask
    x = xp.asarray([1, 2, 3], dtype=xp.int32)
    for key in (slice(0, 2), 0, ..., xp.asarray([0, 1]), xp.asarray([True, False, True])):
        with pytest.raises(TypeError, match="cannot assign float32 values into an array of int32"):
            x[key] = xp.asarray([1.5], dtype=xp.float32)
    x[0:2] = xp.asarray([7, 8], dtype=xp.int8)  # (int8 promotes to int32)
    assert_matches_numpy(x, np.array([7, 8, 3], np.int32))


def test_a_key_that_fails_leaves_no_error_for_a_later_read(xp):
    # the index arrays' bounds checks of a call that raises must not surface at an unrelated read
    x = xp.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    other = xp.asarray(np.array([1, 2, 3], np.int32))
    with pytest.raises(ValueError, match="broadcast"):
        x[indices([7, 0]), indices([0, 1, 2])]
    assert_matches_numpy(other, np.array([1, 2, 3], np.int32))
    with pytest.raises(ValueError, match="broadcast"):
        x[indices([7, 0]), indices([0, 1])] = xp.asarray([1.0, 2.0, 3.0])
    assert_matches_numpy(other, np.array([1, 2, 3], np.int32))
    y = xp.asarray(np.arange(5, dtype=np.int32))
    with pytest.raises(ValueError, match="broadcast"):
        y[indices([-7, 1])] = xp.asarray(np.array([1, 2, 3], np.int32))
    assert_matches_numpy(y, np.arange(5, dtype=np.int32))
    with pytest.raises(IndexError, match="out of bounds"):  # and a call that does run still raises
        x[indices([7, 0]), indices([0, 1])] = 1.0
        np.asarray(other)


INDEX_DTYPES = [d for d in DTYPES if np.dtype(d).kind in "iu"]


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_out_of_bounds_indices_raise_in_every_index_dtype(xp, index_dtype):
    # a gather with one index array checks its indices in the kernel; each call below must raise
    # (when its result is read) whichever element is out of bounds, compared in the index's own width
    x = xp.asarray(np.arange(10, dtype=np.float32))
    info = np.iinfo(index_dtype)
    bad = [10, info.max] + ([-11, info.min] if info.min < 0 else [])
    if info.bits == 64:
        bad.append(2**32 + 1)  # 1 in its low 32 bits: in bounds if the check narrowed it
    grid = xp.reshape(xp.arange(100, dtype=xp.float32), (10, 10))
    zero = xp.asarray(np.zeros(3, dtype=index_dtype))
    for value in bad:
        index = xp.asarray(np.array([0, value, 3], dtype=index_dtype))
        strided = xp.asarray(np.array([0, 7, value, 7, 3, 7], dtype=index_dtype))[::2]
        for call in (
            lambda i: x[i],
            lambda i: xp.take(x, i),
            lambda i: xp.take_along_axis(x, i),
            lambda i: grid[zero, i],  # two index arrays: checked before they are combined
            lambda i: grid[i, zero],
        ):
            for i in (index, strided):
                with pytest.raises(IndexError, match="index out of bounds for an axis of length 10"):
                    np.asarray(call(i))
        with pytest.raises(IndexError, match="out of bounds"):
            x[index] = 1.0
            np.asarray(x)
        with pytest.raises(IndexError, match="out of bounds"):
            grid[zero, strided] = 1.0
            np.asarray(grid)
    good = np.array([9, 0] + ([-10, -1] if info.min < 0 else []), dtype=index_dtype)
    assert_matches_numpy(x[xp.asarray(good)], np.arange(10, dtype=np.float32)[good])
    assert_matches_numpy(x, np.arange(10, dtype=np.float32))  # the refused writes wrote nothing
    assert_matches_numpy(grid, np.arange(100, dtype=np.float32).reshape(10, 10))


@pytest.mark.parametrize("index_dtype", [d for d in INDEX_DTYPES if np.iinfo(d).bits >= 32])
def test_bounds_checks_of_an_axis_longer_than_2_to_the_31(xp, index_dtype):
    """A broadcast view (no memory) of 2^31 + 8 rows: every index of the index dtype in [-n, n)
    is in bounds, and the check still refuses n and -n - 1. (The length had been converted to
    a signed index type with its sign bit set, and every index was refused.)"""
    n = 2**31 + 8
    rows = xp.broadcast_to(xp.reshape(xp.asarray([1.0, 2.0]), (1, 2)), (n, 2))
    info = np.iinfo(index_dtype)
    good = [0, 1, min(n - 1, info.max)] + ([-1, max(-n, info.min)] if info.min < 0 else [])
    got = np.asarray(xp.take(rows, xp.asarray(np.array(good, dtype=index_dtype)), axis=0))
    assert got.tolist() == [[1.0, 2.0]] * len(good)
    for bad in [n, -n - 1][: 2 if info.min < 0 else 1] if info.max >= n else []:
        with pytest.raises(IndexError, match=f"index out of bounds for an axis of length {n}"):
            np.asarray(xp.take(rows, xp.asarray(np.array([0, bad], dtype=index_dtype)), axis=0))


def test_a_gather_does_not_wait_for_its_check_and_the_next_read_raises(xp):
    dev = default_device()
    x, i, j = xp.asarray(np.arange(10, dtype=np.float32)), xp.asarray([1, 10]), xp.asarray([2, -1])
    xp.synchronize()
    reads, submits = dev.host_reads, dev.memory_stats()["submits"]
    bad = xp.take(x, i)
    good = xp.take(x, j)
    assert (dev.host_reads, dev.memory_stats()["submits"]) == (reads, submits)
    with pytest.raises(IndexError, match=r"take\(\): index out of bounds for an axis of length 10") as raised:
        float(x[0])  # any read back raises it, not only a read of the gather's result
    assert "an earlier operation" in str(raised.value.__notes__)
    del bad
    assert_matches_numpy(good, np.array([2, 9], dtype=np.float32))  # the error was raised once
    x[xp.asarray([4])]
    x[xp.asarray([-11])]
    with pytest.raises(IndexError, match="out of bounds") as raised:
        xp.synchronize()
    assert "with 0 more" not in str(raised.value.__notes__)
    xp.synchronize()  # the words are clear again


def test_a_repeated_gather_checks_its_indices_every_time(xp):
    # the second and later calls replay a prepared dispatch: its check must still flag, in the
    # word of its own call
    x = xp.asarray(np.arange(10, dtype=np.float32))
    i = xp.asarray(np.array([1, 2], dtype=np.int32))
    for _ in range(3):
        assert_matches_numpy(xp.take(x, i), np.array([1, 2], dtype=np.float32))
    i[1] = 12  # the same buffer, now out of bounds
    with pytest.raises(IndexError, match="out of bounds"):
        np.asarray(xp.take(x, i))
    i[1] = -1
    for _ in range(2):
        assert_matches_numpy(xp.take(x, i), np.array([1, 9], dtype=np.float32))


def test_the_first_of_several_bad_gathers_is_raised(xp):
    x = xp.asarray(np.arange(10, dtype=np.float32))
    grid = xp.reshape(xp.arange(12, dtype=xp.float32), (3, 4))
    x[xp.asarray([0, 1])]
    grid[xp.asarray([0, 1]), xp.asarray([5, 0])]  # two index arrays: checked before combining
    xp.take(x, xp.asarray([20]))
    with pytest.raises(IndexError, match="axis of length 4") as raised:
        np.asarray(x)
    assert "with 1 more" in str(raised.value.__notes__)


def test_more_gathers_than_check_words_read_the_words_back_first(xp):
    x = xp.asarray(np.arange(10, dtype=np.float32))
    for k in range(CHECK_WORDS + 10):  # in bounds: the words are read back and reused
        xp.take(x, xp.asarray([k % 10]))
    assert_matches_numpy(xp.take(x, xp.asarray([3])), np.array([3], dtype=np.float32))
    with pytest.raises(IndexError, match="out of bounds"):
        xp.take(x, xp.asarray([10]))
        for _ in range(CHECK_WORDS):
            xp.take(x, xp.asarray([0]))  # one of these reads the words back, and raises
    assert_matches_numpy(xp.take(x, xp.asarray([5])), np.array([5], dtype=np.float32))


def test_a_read_of_a_host_copy_raises_what_a_gather_flagged(xp):
    x = xp.asarray(np.arange(10, dtype=np.float32))
    np.asarray(x)  # a small array's words stay on the host until it is written
    xp.take(x, xp.asarray([-20]))
    with pytest.raises(IndexError, match="out of bounds"):
        np.asarray(x)


def test_a_scatter_out_of_bounds_writes_nothing_and_raises_at_the_next_read(xp):
    host = np.arange(40, dtype=np.float32).reshape(4, 10)
    x = xp.asarray(host)
    waits = _waits(xp)
    for _ in range(3):  # in bounds: no wait for the device
        x[xp.asarray([1, 3])] = 7.0
        x[xp.asarray([0, 2]), xp.asarray([5, 6])] = xp.asarray([-1.0, -2.0])
    assert _waits(xp) == waits
    host[[1, 3]] = 7.0
    host[[0, 2], [5, 6]] = [-1.0, -2.0]
    assert_matches_numpy(x, host)
    for key in [xp.asarray([2, 4]), (xp.asarray([0, 1]), xp.asarray([3, -11]))]:
        x[key] = 100.0  # (one index out of bounds: nothing is written)
        x[xp.asarray([0])] = 5.0  # a later scatter in bounds writes
        host[0] = 5.0
        with pytest.raises(IndexError, match="out of bounds"):
            np.asarray(x)
        assert_matches_numpy(x, host)


@pytest.mark.parametrize("slots", [1, 2, 3])
def test_a_scatter_guards_its_own_checks_when_the_words_are_read_back_between(xp, monkeypatch, slots):
    # with few check words, the scatter's checks are read back (taking the words over) while it is
    # recorded: it still writes nothing past an index out of bounds, and everything in bounds
    host = np.arange(40, dtype=np.float32).reshape(4, 10)
    x = xp.asarray(host)
    monkeypatch.setattr(x.device, "check_slots", lambda: slots)
    for step in range(4):
        xp.take(x, xp.asarray([1]), axis=0)  # a gather's check, in bounds, before each
        x[xp.asarray([1, 2]), xp.asarray([step, step + 1])] = float(step)
        host[[1, 2], [step, step + 1]] = step
        x[xp.asarray([3])] = -float(step)
        host[3] = -step
    assert_matches_numpy(x, host)
    x[xp.asarray([0, 1]), xp.asarray([3, 10])] = 99.0  # out of bounds: nothing written
    with pytest.raises(IndexError, match="out of bounds"):
        np.asarray(x)
    assert_matches_numpy(x, host)


def _waits(xp) -> int:
    stats = xp.memory_stats()
    return stats["waits_spun"] + stats["waits_blocked"]


def test_a_traced_gather_checks_every_call(xp):
    x = xp.asarray(np.arange(10, dtype=np.float32))
    twice = xp.fuse(lambda i: xp.take(x, i) * 2)
    assert_matches_numpy(twice(xp.asarray([1, 2])), np.array([2, 4], dtype=np.float32))
    for _ in range(2):
        with pytest.raises(IndexError, match="out of bounds"):
            np.asarray(twice(xp.asarray([1, 12])))
        assert_matches_numpy(twice(xp.asarray([3])), np.array([6], dtype=np.float32))


def test_indices_are_checked_where_the_result_is_empty(xp):
    x = xp.asarray(np.zeros((0, 4), dtype=np.float32))
    with pytest.raises(IndexError, match="out of bounds"):
        np.asarray(xp.take(x, xp.asarray([4]), axis=1))  # nothing gathered, still a bad index
    with pytest.raises(IndexError, match="axis of length 0"):
        xp.take(x, xp.asarray([0]), axis=0)
    assert xp.take(x, xp.asarray([3, -4]), axis=1).shape == (0, 2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_take_and_take_along_axis(xp, dtype):
    rng = np.random.default_rng(1)
    host = rng.integers(0, 100, (4, 6, 3)).astype(dtype)
    x = xp.asarray(host)
    idx = np.array([5, -1, 0, 0, -6])
    for axis in (0, 1, 2):
        n = host.shape[axis]
        i = idx[(idx < n) & (idx >= -n)]
        assert_matches_numpy(xp.take(x, indices(i), axis=axis), np.take(host, i, axis=axis))
    along = rng.integers(-6, 6, (4, 2, 3))
    assert_matches_numpy(
        xp.take_along_axis(x, indices(along), axis=1), np.take_along_axis(host, along, axis=1)
    )
    wide = rng.integers(0, 3, (1, 6, 5))  # broadcasts against x along axis 0
    assert_matches_numpy(
        xp.take_along_axis(x, indices(wide), axis=2),
        np.take_along_axis(np.broadcast_to(host, (4, 6, 3)), wide, axis=2),
    )
    with pytest.raises(IndexError, match="out of bounds"):
        np.asarray(xp.take(x, xp.asarray([6]), axis=1))
    with pytest.raises(ValueError, match="axis="):
        xp.take(x, xp.asarray([0]))
    with pytest.raises(TypeError, match="integer indices"):
        xp.take(x, xp.asarray([0.0]), axis=0)


def test_repeat_with_counts_on_the_device(xp):
    host = np.arange(12, dtype=np.int16).reshape(3, 4)
    counts = np.array([2, 0, 3, 1])
    assert_matches_numpy(
        xp.repeat(xp.asarray(host), indices(counts), axis=1), np.repeat(host, counts, axis=1)
    )
    assert_matches_numpy(xp.repeat(xp.asarray(host), 2), np.repeat(host, 2))
    with pytest.raises(ValueError, match="non-negative"):
        xp.repeat(xp.asarray(host), xp.asarray([1, -1, 0, 0]), axis=1)


def _unique_input(dtype: str, n: int = 2000) -> np.ndarray:
    rng = np.random.default_rng(2)
    host = rng.integers(0, 2 if dtype == "bool" else 40, n).astype(dtype)
    if np.dtype(dtype).kind == "f":
        host[:6] = [np.nan, -0.0, 0.0, np.inf, np.nan, -np.inf]
    return host


@pytest.mark.parametrize("dtype", DTYPES)
def test_unique_family_matches_numpy(xp, dtype):
    host = _unique_input(dtype).reshape(40, 50)
    x = xp.asarray(host)
    values, index, inverse, counts = np.unique(
        host, return_index=True, return_inverse=True, return_counts=True, equal_nan=False
    )
    assert_matches_numpy(xp.unique_values(x), values)
    got = xp.unique_counts(x)
    assert_matches_numpy(got.values, values)
    assert_matches_numpy(got.counts, counts, check_dtype=False)
    got = xp.unique_inverse(x)
    assert_matches_numpy(got.inverse_indices, inverse.reshape(host.shape), check_dtype=False)
    got = xp.unique_all(x)
    for g, w in zip(got, (values, index, inverse.reshape(host.shape), counts), strict=True):
        assert_matches_numpy(g, w, check_dtype=False)
    assert got._fields == ("values", "indices", "inverse_indices", "counts")


def test_unique_of_empty_and_single_element(xp):
    for host in (np.zeros((0, 3), np.float32), np.array([4.0], np.float32), np.array(2.0, np.float32)):
        got = xp.unique_all(xp.asarray(host))
        values, index, inverse, counts = np.unique(host, True, True, True)
        for g, w in zip(got, (values, index, inverse.reshape(host.shape), counts), strict=True):
            assert_matches_numpy(g, w, check_dtype=False)


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "bool"])
def test_isin(xp, dtype):
    rng = np.random.default_rng(3)
    a = _unique_input(dtype, 300).reshape(10, 30)
    b = rng.integers(0, 40, 17).astype(dtype)
    if np.dtype(dtype).kind == "f":
        b[0] = np.nan  # NaN is in nothing, not even beside a NaN
    for invert in (False, True):
        assert_matches_numpy(
            xp.isin(xp.asarray(a), xp.asarray(b), invert=invert), np.isin(a, b, invert=invert)
        )
    assert bool(xp.isin(int(b[1]), xp.asarray(b))) is True
    assert_matches_numpy(xp.isin(xp.asarray(a), xp.asarray(b[:0])), np.zeros(a.shape, bool))


def test_isin_refuses_another_librarys_arrays(xp):
    """As every other function does: a NumPy array was uploaded quietly, and a torch tensor
    raised from result_type, naming neither isin nor what to do."""
    x = xp.asarray([1, 2, 3])
    for a, b in ((x, np.asarray([2])), (np.asarray([2]), x)):
        with pytest.raises(
            TypeError, match=r"isin\(\) cannot combine a ruda_wgpu array with a numpy.ndarray"
        ):
            xp.isin(a, b)
    with pytest.raises(TypeError, match=r"isin\(\) takes ruda_wgpu arrays or Python scalars, not list"):
        xp.isin(x, [2])
    assert_matches_numpy(xp.isin(x, np.int64(2)), np.array([False, True, False]))  # (a NumPy scalar)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_isin_of_complex_values(xp, dtype):
    """Complex values: equal when both parts are (NaN in either part equals nothing, -0 is +0),
    found through integer keys, in memory of the arrays' size: 210000 values in 100000, whose
    every pair compared would take 21 GB of booleans."""
    rng = np.random.default_rng(4)
    b = (rng.integers(-3, 3, 60) + 1j * rng.integers(-3, 3, 60)).astype(dtype)
    b[:4] = [complex(np.nan, 1), complex(1, np.nan), complex(-0.0, 2), complex(0.5, -0.0)]
    a = (rng.integers(-4, 4, (6, 7)) + 1j * rng.integers(-4, 4, (6, 7))).astype(dtype)
    a[0, :5] = [complex(np.nan, 1), complex(0.0, 2), complex(0.5, 0.0), complex(1, np.nan), complex(2, 0.5)]
    for invert in (False, True):
        assert_matches_numpy(
            xp.isin(xp.asarray(a), xp.asarray(b), invert=invert), np.isin(a, b, invert=invert)
        )
    assert bool(xp.isin(complex(b[5]), xp.asarray(b))) is True
    big_a = (rng.standard_normal((300, 700)) + 1j * rng.integers(0, 50, (300, 700))).astype(dtype)
    big_b = np.concatenate([big_a.ravel()[::3], rng.standard_normal(30000) + 0.5j]).astype(dtype)
    assert_matches_numpy(xp.isin(xp.asarray(big_a), xp.asarray(big_b)), np.isin(big_a, big_b))


def test_gather_and_scatter_with_a_two_dimensional_grid(xp):
    """A device limited to 3 workgroups per grid dimension: every launch needs the second one."""
    dev = GpuDevice(9, default_device().adapter)
    dev.max_groups = 3
    host = np.arange(3000, dtype=np.float32)
    x = xp.asarray(host, device=dev)
    idx = np.arange(2999, -1, -3)
    assert_matches_numpy(x[indices(idx, device=dev)], host[idx])
    x[indices(idx, device=dev)] = 0.0
    host[idx] = 0.0
    assert_matches_numpy(x, host)
    assert_matches_numpy(xp.sort(x), np.sort(host))
    assert_matches_numpy(xp.cumulative_sum(x), np.cumsum(host), rtol=1e-6)
    assert_matches_numpy(xp.unique_values(x), np.unique(host))
