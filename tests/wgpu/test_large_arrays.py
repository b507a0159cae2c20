"""Arrays larger than one storage binding (``_parts``, and the elementwise launches' halves).

A device's binding limit is lowered to 4 KiB for these tests, so that arrays of a few thousand
elements take the paths that arrays of more than 128 MiB (lavapipe) or 2 GiB (an H200) take;
every result is compared with NumPy's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import ruda_wgpu as xp

from tests.wgpu.dtype_support import accumulated, indexed, indices

#: bytes a storage binding holds in these tests: 960 float32 elements from any offset
BINDING = 4096


@pytest.fixture
def small_bindings() -> Iterator[Any]:
    """The default device with :data:`BINDING`-byte storage bindings (its plans, which hold
    windows of the real limit, dropped before and after)."""
    xp.asarray([0.0]) + 1  # (opens the device)
    dev = xp.__array_namespace_info__().default_device()
    xp.empty_cache()
    previous, dev.max_binding = dev.max_binding, BINDING
    try:
        yield dev
        xp.synchronize()
    finally:
        xp.empty_cache()
        dev.max_binding = previous


def _values(n: int, seed: int = 0) -> np.ndarray[Any, Any]:
    """float32 values with repeats, NaN, both zeros and infinities among them."""
    rng = np.random.default_rng(seed)
    h = rng.integers(-50, 50, n).astype(np.float32) / 4
    h[rng.integers(0, n, n // 50)] = np.nan
    h[rng.integers(0, n, n // 50)] = -0.0
    h[rng.integers(0, n, 5)] = np.inf
    h[rng.integers(0, n, 5)] = -np.inf
    return h


def _same(got: Any, want: Any) -> None:
    """``got`` equals ``want`` in shape, dtype and values: NaN in the same places (whatever their
    bits: drivers differ there), -0 apart from +0."""
    got, want = np.atleast_1d(np.asarray(got)), np.atleast_1d(np.asarray(want))
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    if got.dtype.kind == "f":
        zeros = want == 0
        np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))


def test_elementwise_operands_wider_than_a_binding(small_bindings: Any) -> None:
    h = _values(5000)
    x = xp.asarray(h)
    _same(x + xp.flip(x), h + h[::-1])
    m = h.reshape(50, 100)
    _same(xp.matrix_transpose(xp.asarray(m)) * 2, m.T * 2)
    _same(xp.sum(xp.asarray(m), axis=0), m.sum(axis=0, dtype=np.float32))
    col, row = h[:3000].reshape(3000, 1), h[:7].reshape(1, 7)
    _same(xp.asarray(col) - xp.asarray(row), col - row)
    y, g = xp.asarray(h), h.copy()
    y[::3] = 5.0
    g[::3] = 5.0
    y[1::2] += xp.asarray(h[: len(h[1::2])])
    g[1::2] += h[: len(h[1::2])]
    _same(y, g)


def test_long_rows_with_broadcast_leaves_beyond_a_binding_on_a_gpu(
    small_bindings: Any, monkeypatch: Any
) -> None:
    # a GPU's row kernel binds contiguous rows in windows and a leaf of an element a row whole;
    # a view whose rows do not fit one binding is copied first
    from ruda_wgpu import _fusion

    monkeypatch.setattr(small_bindings, "cpu", False)
    h = np.random.default_rng(4).standard_normal((30, 2000)).astype(np.float32)
    x = xp.asarray(h)
    mean, total = xp.mean(x, axis=1, keepdims=True), xp.sum(x, keepdims=True)
    results = []
    for enabled in (True, False):
        previous = _fusion.set_enabled(enabled)
        try:
            got = [xp.sum((x - mean) * (x - mean), axis=1), xp.sum(x - total), xp.sum(x[:, 5:-9], axis=1)]
            results.append([np.asarray(r) for r in got])
        finally:
            _fusion.set_enabled(previous)
    for fused, unfused in zip(*results, strict=True):
        assert fused.tobytes() == unfused.tobytes()
    s = h.sum(dtype=np.float64)
    wants = [((h - h.mean(axis=1, keepdims=True)) ** 2).sum(axis=1), (h - s).sum(), h[:, 5:-9].sum(axis=1)]
    for got_one, want in zip(results[0], wants, strict=True):
        np.testing.assert_allclose(got_one, want, rtol=1e-4, atol=1e-2)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_argmax_and_argmin_beyond_a_binding(small_bindings: Any, axis: int | None) -> None:
    h = _values(6000, seed=1).reshape(3, 2000) if axis == 1 else _values(6000, seed=1).reshape(2000, 3)
    x = xp.asarray(h)
    clean = np.nan_to_num(h, nan=0.0)
    for name in ("argmax", "argmin"):
        _same(getattr(xp, name)(x, axis=axis), indexed(getattr(np, name)(h, axis=axis)))  # NaN first
        want = indexed(getattr(np, name)(clean, axis=axis, keepdims=True))
        _same(getattr(xp, name)(xp.asarray(clean), axis=axis, keepdims=True), want)
    line = np.zeros(5000, np.float32)
    line[[1200, 4000]] = 7.0  # ties: the first
    _same(xp.argmax(xp.asarray(line)), indexed(np.argmax(line)))


def test_cumulative_sums_and_products_beyond_a_binding(small_bindings: Any) -> None:
    rng = np.random.default_rng(2)
    ints = rng.integers(-(2**30), 2**30, 5000).astype(np.int32)
    _same(xp.cumulative_sum(xp.asarray(ints), dtype=xp.int32), np.cumsum(ints, dtype=np.int32))  # wrapping
    small = rng.integers(-3, 4, 4000).astype(np.float32)
    want = np.concatenate([[0], np.cumsum(small)]).astype(np.float32)
    _same(xp.cumulative_sum(xp.asarray(small), include_initial=True), want)
    signs = np.where(rng.random(3000) < 0.5, -1, 1).astype(np.int32)
    _same(xp.cumulative_prod(xp.asarray(signs)), accumulated(np.cumprod(signs)))
    m = small.reshape(40, 100)
    for axis in (0, 1):
        _same(xp.cumulative_sum(xp.asarray(m), axis=axis), np.cumsum(m, axis=axis, dtype=np.float32))


def test_cumulative_results_beyond_the_largest_buffer_raise_before_scanning(
    small_bindings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A result too large for any buffer was found only when the scanned parts were joined, after
    scanning every one: minutes for a broadcast view of 2**33 elements on lavapipe."""
    from ruda_wgpu import _statistical

    scans = []
    scan = _statistical._scan
    monkeypatch.setattr(_statistical, "_scan", lambda *args: scans.append(1) or scan(*args))
    monkeypatch.setattr(small_bindings.pool, "largest", 16 * BINDING)
    line = xp.broadcast_to(xp.ones(1), (5 * BINDING,))
    with pytest.raises(MemoryError, match=r"cumulative_sum\(\): the result of 81920 bytes exceeds"):
        xp.cumulative_sum(line)
    with pytest.raises(MemoryError, match=r"cumulative_prod\(\): the result"):
        xp.cumulative_prod(xp.reshape(line, (64, -1)), axis=1, include_initial=True)
    assert not scans
    _same(xp.cumulative_sum(xp.ones(2000)), np.arange(1, 2001, dtype=np.float32))  # (in parts)


def test_reductions_of_more_elements_than_their_kernels_count_raise_naming_the_function() -> None:
    """A broadcast view has any number of elements without memory; reducing more than 2**32 - 1
    of them raised struct.error from the packing of the kernels' parameters."""
    huge = xp.broadcast_to(xp.ones(1), (2**33,))
    calls = {
        "sum": xp.sum,
        "max": xp.max,
        "any": lambda x: xp.any(x > 0),  # (a pending chain, read as it is reduced)
        "count_nonzero": xp.count_nonzero,
        "vector_norm": xp.linalg.vector_norm,
    }
    for name, call in calls.items():
        with pytest.raises(NotImplementedError, match=rf"{name}\(\): cannot reduce an array of 8589934592"):
            call(huge)
    square = xp.broadcast_to(xp.ones((1, 1)), (2**17, 2**17))
    with pytest.raises(NotImplementedError, match=r"sum\(\): cannot reduce an array of 17179869184"):
        xp.sum(square, axis=0)
    assert float(xp.sum(xp.ones(10))) == 10.0


def test_masks_and_nonzero_beyond_a_binding(small_bindings: Any) -> None:
    h = _values(5000, seed=3)
    x = xp.asarray(h)
    mask = h > 2
    _same(x[xp.asarray(mask)], h[mask])
    for got, want in zip(xp.nonzero(xp.asarray(mask)), np.nonzero(mask), strict=True):
        _same(got, indexed(want))
    m = h.reshape(1000, 5)
    rows = m[:, 0] > 0
    _same(xp.asarray(m)[xp.asarray(rows)], m[rows])


def test_take_beyond_a_binding(small_bindings: Any) -> None:
    h = _values(5000, seed=4)
    rng = np.random.default_rng(4)
    picks = rng.integers(-5000, 5000, 3000)
    _same(xp.take(xp.asarray(h), indices(picks)), h[picks])
    m = h.reshape(50, 100)
    cols = rng.integers(0, 100, 70)
    _same(xp.take(xp.asarray(m), indices(cols), axis=1), m[:, cols])
    with pytest.raises(IndexError, match="out of bounds"):
        np.asarray(xp.take(xp.asarray(h), indices([3, 5000])))


@pytest.mark.parametrize(
    ("a_shape", "b_shape"),
    [
        ((300, 40), (40, 5)),
        ((4, 2000), (2000, 3)),
        ((30, 40), (40, 400)),
        ((3, 40, 50), (3, 50, 30)),
        ((600, 40), (40,)),
        ((3000,), (3000, 4)),
        ((20000,), (20000,)),
    ],  # (and with vectors)
)
def test_matmul_beyond_a_binding(
    small_bindings: Any, a_shape: tuple[int, ...], b_shape: tuple[int, ...]
) -> None:
    rng = np.random.default_rng(5)
    a = rng.integers(-8, 8, a_shape).astype(np.float32)
    b = rng.integers(-8, 8, b_shape).astype(np.float32)
    _same(xp.asarray(a) @ xp.asarray(b), a @ b)  # small integers: exact in any order
    ints = rng.integers(-8, 8, a_shape).astype(np.int32)
    _same(xp.asarray(ints) @ xp.asarray(b.astype(np.int32)), ints @ b.astype(np.int32))


@pytest.mark.parametrize("descending", [False, True])
def test_sort_and_argsort_beyond_a_binding(small_bindings: Any, descending: bool) -> None:
    h = _values(6000, seed=6)
    x = xp.asarray(h)
    nan = np.isnan(h)
    numbers = np.flatnonzero(~nan)
    order = numbers[np.argsort(-h[numbers] if descending else h[numbers], kind="stable")]
    order = np.concatenate([order, np.flatnonzero(nan)])  # NaN last both ways, in their order
    _same(xp.argsort(x, descending=descending), indexed(order))  # stable, -0 == +0
    got = np.asarray(xp.sort(x, descending=descending))
    np.testing.assert_array_equal(got, h[order])  # (-0 == +0 and NaN == NaN here)
    zeros = np.signbit(got[got == 0])
    assert zeros.tolist() == sorted(zeros.tolist(), reverse=not descending)  # -0 before +0


def test_sort_keeps_zeros_signs_and_repeats_beyond_a_binding(small_bindings: Any) -> None:
    zeros = np.where(np.random.default_rng(7).random(4000) < 0.5, -0.0, 0.0).astype(np.float32)
    got = np.asarray(xp.sort(xp.asarray(zeros)))
    assert np.signbit(got).tolist() == sorted(np.signbit(zeros).tolist(), reverse=True)  # -0 first
    _same(xp.argsort(xp.asarray(zeros)), indexed(np.arange(4000)))  # -0 == +0: stable
    few = np.random.default_rng(7).integers(0, 3, 5000).astype(np.int8)
    _same(xp.argsort(xp.asarray(few)), indexed(np.argsort(few, kind="stable")))
    _same(xp.sort(xp.asarray(few.astype(bool))), np.sort(few.astype(bool)))
    m = _values(6000, seed=8).reshape(3000, 2)
    np.testing.assert_array_equal(np.asarray(xp.sort(xp.asarray(m), axis=0)), np.sort(m, axis=0))


def test_searches_and_sets_beyond_a_binding(small_bindings: Any) -> None:
    rng = np.random.default_rng(9)
    table = np.sort(rng.integers(0, 400, 3000)).astype(np.float32)
    queries = rng.integers(-5, 405, 2500).astype(np.float32)
    for side in ("left", "right"):
        want = indexed(np.searchsorted(table, queries, side=side))
        _same(xp.searchsorted(xp.asarray(table), xp.asarray(queries), side=side), want)
    _same(xp.isin(xp.asarray(queries), xp.asarray(table)), np.isin(queries, table))
    values, inverse = np.unique(queries, return_inverse=True)
    got = xp.unique_inverse(xp.asarray(queries))
    _same(got.values, values)
    _same(got.inverse_indices, indexed(inverse.reshape(queries.shape)))


def test_advanced_indexing_beyond_a_binding(small_bindings: Any) -> None:
    rng = np.random.default_rng(10)
    h = _values(5000, seed=10)
    picks = rng.integers(-5000, 5000, 3000)
    _same(xp.asarray(h)[indices(picks)], h[picks])
    m = h.reshape(50, 100)
    rows = rng.integers(0, 50, 40)
    _same(xp.asarray(m)[indices(rows)], m[rows])
    order = np.argsort(m, axis=1, kind="stable")
    _same(xp.take_along_axis(xp.asarray(m), indices(order), axis=1), np.take_along_axis(m, order, axis=1))
    places = rng.permutation(5000)[:3000] - 5000 * (rng.random(3000) < 0.5)  # (no repeats)
    x, want = xp.asarray(h), h.copy()
    x[indices(places)] = xp.asarray(np.arange(3000, dtype=np.float32))
    want[places] = np.arange(3000, dtype=np.float32)
    _same(x, want)
    with pytest.raises(IndexError, match="out of bounds"):
        np.asarray(xp.asarray(h)[indices([1, 5000])])


def test_arrays_beyond_the_largest_buffer_raise_memory_error() -> None:
    dev = xp.__array_namespace_info__().default_device()
    xp.asarray([0.0]) + 1  # (opens the device)
    largest = dev.pool.largest
    with pytest.raises(MemoryError, match="largest buffer"):
        xp.empty((largest // 4 + 1,), dtype=xp.float32)
    before = xp.memory_stats()
    try:
        x = xp.empty(((largest - 1000) // 4,), dtype=xp.float32)  # (its size class is cut to the largest)
    except MemoryError as err:  # a driver that cannot allocate the largest buffer it lists (OpenGL)
        assert "could not allocate" in str(err)
        assert xp.memory_stats()["in_use_bytes"] == before["in_use_bytes"]
        return
    assert xp.memory_stats()["allocated_bytes"] - before["allocated_bytes"] in (0, largest)
    del x


def test_ffts_of_many_rows_beyond_a_binding(small_bindings: Any) -> None:
    rng = np.random.default_rng(11)
    signals = rng.standard_normal((24, 256)).astype(np.float32)
    z = (signals + 1j * signals[::-1]).astype(np.complex64)
    np.testing.assert_allclose(np.asarray(xp.fft.fft(xp.asarray(z))), np.fft.fft(z), rtol=1e-4, atol=1e-3)
    image = z[:, :24]
    np.testing.assert_allclose(np.asarray(xp.fft.fftn(xp.asarray(image))), np.fft.fftn(image), atol=1e-3)
    half = np.fft.rfft(signals)
    np.testing.assert_allclose(np.asarray(xp.fft.rfft(xp.asarray(signals))), half, rtol=1e-4, atol=1e-3)
    back = np.asarray(xp.fft.irfft(xp.asarray(half.astype(np.complex64))))
    np.testing.assert_allclose(back, signals, atol=1e-5)


@pytest.mark.parametrize("n", [4096, 3000])
def test_ffts_of_one_signal_beyond_a_binding(small_bindings: Any, n: int) -> None:
    rng = np.random.default_rng(n)
    signal = rng.standard_normal(n).astype(np.float32)
    z = (signal + 1j * signal[::-1]).astype(np.complex64)
    for ours, theirs in ((xp.fft.fft, np.fft.fft), (xp.fft.ifft, np.fft.ifft)):
        want = theirs(z)
        got = np.asarray(ours(xp.asarray(z)))
        assert np.abs(got - want).max() <= 1e-6 * np.abs(want).max()  # (NumPy's: about 2e-7)
    half = np.fft.rfft(signal)
    got_half = np.asarray(xp.fft.rfft(xp.asarray(signal)))
    assert np.abs(got_half - half).max() <= 1e-6 * np.abs(half).max()
    np.testing.assert_allclose(
        np.asarray(xp.fft.irfft(xp.asarray(half.astype(np.complex64)), n=n)), signal, atol=1e-5
    )
    prime = z[:4093] if n > 4093 else z[:2039]  # (Bluestein's FFTs of powers of two go in parts)
    want = np.fft.fft(prime)
    assert np.abs(np.asarray(xp.fft.fft(xp.asarray(prime))) - want).max() <= 1e-5 * np.abs(want).max()


def test_several_index_arrays_beyond_a_binding(small_bindings: Any) -> None:
    rng = np.random.default_rng(12)
    m = _values(6000, seed=12).reshape(60, 100)
    rows, cols = rng.integers(-60, 60, 700), rng.integers(-100, 100, 700)
    _same(xp.asarray(m)[indices(rows), indices(cols)], m[rows, cols])
    _same(xp.flip(xp.asarray(m))[indices(rows), indices(cols)], np.flip(m)[rows, cols])  # (strides < 0)
    cube = m.reshape(6, 10, 100)
    _same(xp.asarray(cube)[2, indices(rows % 10), indices(cols)], cube[2, rows % 10, cols])
    _same(xp.asarray(cube)[indices(rows % 6), :, 3], cube[rows % 6, :, 3])
    places = rng.permutation(6000)[:700]
    r, c = places // 100, places % 100  # (no repeats)
    x, want = xp.asarray(m), m.copy()
    x[indices(r), indices(c)] = xp.asarray(np.arange(700, dtype=np.float32))
    want[r, c] = np.arange(700, dtype=np.float32)
    _same(x, want)


def test_decompositions_of_a_batch_beyond_a_binding(small_bindings: Any) -> None:
    """A stack of matrices larger than a binding goes in halves of the stack (again where a half
    is still too large), its results joined; solve broadcasts its stack first. A single matrix
    beyond a binding still raises NotImplementedError."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 4, 10, 10)).astype(np.float32)  # 4800 bytes; halves of 3, then 2
    spd = a @ np.swapaxes(a, -1, -2) + 10 * np.eye(10, dtype=np.float32)
    b = rng.standard_normal((4, 10, 3)).astype(np.float32)
    x, s = xp.asarray(a), xp.asarray(spd)
    tol = {"rtol": 2e-4, "atol": 2e-4}
    np.testing.assert_allclose(np.asarray(xp.linalg.solve(x, xp.asarray(b))), np.linalg.solve(a, b), **tol)
    np.testing.assert_allclose(np.asarray(xp.linalg.inv(x)), np.linalg.inv(a), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(np.asarray(xp.linalg.det(x)), np.linalg.det(a), rtol=1e-4)
    sign, logdet = xp.linalg.slogdet(x)
    np.testing.assert_array_equal(np.asarray(sign), np.linalg.slogdet(a)[0])
    np.testing.assert_allclose(np.asarray(logdet), np.linalg.slogdet(a)[1], **tol)
    np.testing.assert_allclose(np.asarray(xp.linalg.cholesky(s)), np.linalg.cholesky(spd), **tol)
    q, r = (np.asarray(t) for t in xp.linalg.qr(x))
    np.testing.assert_allclose(q @ r, a, **tol)
    w, v = (np.asarray(t) for t in xp.linalg.eigh(s))
    np.testing.assert_allclose(w, np.linalg.eigvalsh(spd), rtol=2e-4, atol=2e-3)
    np.testing.assert_allclose(spd @ v, v * w[..., None, :], rtol=2e-4, atol=2e-3)
    u, sv, vh = (np.asarray(t) for t in xp.linalg.svd(x))
    np.testing.assert_allclose(sv, np.linalg.svd(a, compute_uv=False), **tol)
    np.testing.assert_allclose((u * sv[..., None, :]) @ vh, a, **tol)
    np.testing.assert_allclose(np.asarray(xp.linalg.pinv(x)), np.linalg.pinv(a), rtol=1e-3, atol=1e-3)
    np.testing.assert_array_equal(np.asarray(xp.linalg.matrix_rank(x)), np.linalg.matrix_rank(a))
    cube = np.asarray(xp.linalg.matrix_power(x, -3))
    np.testing.assert_allclose(cube, np.linalg.matrix_power(a.astype(np.float64), -3), rtol=2e-2, atol=1e-2)

    def ordered(z: np.ndarray) -> np.ndarray:  # (conjugate pairs' real parts tie up to rounding)
        return np.take_along_axis(z, np.lexsort((z.imag, z.real.round(3)), axis=-1), axis=-1)

    values = ordered(np.asarray(xp.linalg.eigvals(x)))
    np.testing.assert_allclose(values, ordered(np.linalg.eigvals(a)), rtol=1e-3, atol=1e-3)
    with pytest.raises(NotImplementedError, match="storage binding limit"):
        xp.linalg.eigh(xp.asarray(spd[0, 0, :10, :10].repeat(4, 0).repeat(4, 1)))  # one 40 x 40


def test_assignments_that_keep_axes_of_a_view_beyond_a_binding(small_bindings: Any) -> None:
    """``x[i, :] = v`` and its kin, where the view outside the indexed axis is wider than a
    binding: every element written goes through its element offset, in windows of the view."""
    rng = np.random.default_rng(6)
    h = rng.standard_normal((200, 30)).astype(np.float32)  # 24000 bytes
    rows, columns = rng.permutation(200)[:70], rng.permutation(30)[:7]
    for key, shape in (
        ((rows, slice(None)), (70, 30)),
        ((slice(None), columns), (200, 7)),
        ((slice(None, None, -1), columns), (200, 7)),
        ((rows - 200, slice(3, None, 2)), (70, 14)),  # (negative indices)
    ):
        want, x = h.copy(), xp.asarray(h)
        value = rng.standard_normal(shape).astype(np.float32)
        device_key = tuple(indices(k) if isinstance(k, np.ndarray) else k for k in key)
        want[key] = value
        x[device_key] = xp.asarray(value)
        np.testing.assert_array_equal(np.asarray(x), want)
    x = xp.asarray(h)
    x[indices(rows), :] = 2.5  # (a scalar, broadcast)
    want = h.copy()
    want[rows, :] = 2.5
    np.testing.assert_array_equal(np.asarray(x), want)
