"""Creation, manipulation, reductions and linear algebra against NumPy."""

from __future__ import annotations

import functools
import os
from types import SimpleNamespace

import numpy as np
import pytest
import ruda_wgpu
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruda.testing import assert_matches_numpy, assert_same_bits, parametrize_backends
from ruda_wgpu import _linalg, _matmul_kernels, _reduce_kernels

from tests.wgpu.counting import count_calls, dispatch_count, reduction_scratch_made_anew
from tests.wgpu.dtype_support import indices

pytestmark = parametrize_backends("wgpu")

NUMERIC = [d for d in ruda_wgpu.__array_namespace_info__().dtypes(kind="numeric")]


def _host(dtype: str, shape=(3, 4, 5), seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return rng.standard_normal(shape).astype(dt)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    info = np.iinfo(dt)
    return rng.integers(max(info.min, -20), min(info.max, 20), shape).astype(dt)


def test_creation(xp):
    assert_matches_numpy(xp.zeros((2, 3), dtype=xp.int16), np.zeros((2, 3), np.int16))
    assert_matches_numpy(xp.ones(4, dtype=xp.uint8), np.ones(4, np.uint8))
    assert_matches_numpy(xp.full((2, 2), -3, dtype=xp.int8), np.full((2, 2), -3, np.int8))
    assert_matches_numpy(xp.full((2,), True), np.full((2,), True))
    assert_matches_numpy(xp.arange(2, 20, 3, dtype=xp.int32), np.arange(2, 20, 3, dtype=np.int32))
    assert_matches_numpy(xp.arange(1.0, 0.0, -0.25), np.arange(1.0, 0.0, -0.25, dtype=np.float32))
    # 0-D arrays for the bounds, as NumPy takes them (SciPy passes them)
    assert_matches_numpy(xp.arange(xp.asarray(3), xp.asarray(7.0)), np.arange(3, 7.0, dtype=np.float32))
    with pytest.raises(TypeError, match="int or float"):
        xp.arange(xp.asarray([3]))
    # a complex range as NumPy's: the real values, imaginary parts zero (SciPy asks for it)
    assert_matches_numpy(xp.arange(5, dtype=xp.complex64), np.arange(5, dtype=np.complex64))
    assert_matches_numpy(
        xp.arange(0.5, 2, 0.5, dtype=xp.complex64), np.arange(0.5, 2, 0.5, dtype=np.complex64)
    )
    assert_matches_numpy(xp.linspace(-1, 1, 7), np.linspace(-1, 1, 7, dtype=np.float32))
    assert_matches_numpy(
        xp.linspace(0, 1, 4, endpoint=False), np.linspace(0, 1, 4, endpoint=False, dtype=np.float32)
    )
    for start, stop, num, dtype in [
        (0, 3, 4, "int8"),
        (0, 10, 7, "int32"),
        (-5, 5, 6, "int16"),
        (9, 0, 4, "uint8"),
    ]:
        # NumPy's values (rounded down), which the standard leaves to the library
        for endpoint in (True, False):
            want = np.linspace(start, stop, num, dtype=dtype, endpoint=endpoint)
            assert_matches_numpy(
                xp.linspace(start, stop, num, dtype=getattr(xp, dtype), endpoint=endpoint), want
            )
    assert_matches_numpy(xp.eye(3, 5, k=-1, dtype=xp.int32), np.eye(3, 5, k=-1, dtype=np.int32))
    base = _host("float32", (4, 5))
    assert_matches_numpy(xp.tril(xp.asarray(base), k=1), np.tril(base, k=1))
    assert_matches_numpy(xp.triu(xp.asarray(base), k=-1), np.triu(base, k=-1))
    g = xp.meshgrid(xp.arange(3, dtype=xp.int32), xp.arange(2, dtype=xp.int32))
    for got, want in zip(
        g, np.meshgrid(np.arange(3, dtype=np.int32), np.arange(2, dtype=np.int32)), strict=True
    ):
        assert_matches_numpy(got, want)
    assert_matches_numpy(xp.zeros_like(xp.asarray(base)), np.zeros_like(base))
    assert_matches_numpy(xp.full_like(xp.asarray(base), 2.0), np.full_like(base, 2.0))
    assert xp.asarray([1.5, 2]).dtype == xp.float32
    assert xp.asarray([[1, 2], [3, 4]]).dtype == xp.__array_namespace_info__().default_dtypes()["integral"]


def test_asarray_of_sequences(xp):
    floating = xp.__array_namespace_info__().default_dtypes()["real floating"]
    for empty in ([], [[], []], ()):
        assert xp.asarray(empty).dtype == floating  # as for [1.5]: no value says otherwise
    assert xp.asarray([[], []]).shape == (2, 0)
    for odd, name in (([1, "a"], "str"), ([[1, 2], [3, None]], "NoneType"), ([1, object()], "object")):
        with pytest.raises(TypeError, match=rf"asarray\(\): a sequence holds .* not {name}"):
            xp.asarray(odd)


def test_asarray_of_a_scalar_with_a_dtype_reads_it_as_of_a_list(xp):
    """A Python scalar with ``dtype=`` converts as a list of it does, and as NumPy's: 1.5 as
    int32 is 1 (it had been refused alone and taken in a list), 1j as bool is True; NaN and a
    float beyond the range raise."""
    for value, dtype, want in (
        (1.5, xp.int32, 1),
        (-2.7, xp.int8, -2),
        (1j, xp.bool, True),
        (0j, xp.bool, False),
    ):
        assert np.asarray(xp.asarray(value, dtype=dtype)).tolist() == want
        assert np.asarray(xp.asarray([value], dtype=dtype)).tolist() == [want]
    for value, dtype, error in ((float("nan"), xp.int32, ValueError), (1e10, xp.int32, OverflowError)):
        for obj in (value, [value]):
            with pytest.raises(error):
                xp.asarray(obj, dtype=dtype)
    with pytest.raises(TypeError, match="real or imag"):
        xp.asarray(1j, dtype=xp.float32)


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("name", ["sum", "prod", "min", "max"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), ()])
def test_reductions(xp, name, dtype, axis):
    host = _host(dtype)
    if name in ("min", "max") and np.dtype(dtype).kind == "c":
        with pytest.raises(TypeError, match="real-valued"):
            getattr(xp, name)(xp.asarray(host), axis=axis)
        return
    if name == "prod":
        host = host[:, :2, :3]
    for keepdims in (False, True):
        got = getattr(xp, name)(xp.asarray(host), axis=axis, keepdims=keepdims)
        want = getattr(np, name)(host, axis=axis, keepdims=keepdims)
        if name in ("sum", "prod") and np.dtype(dtype).kind == "u":
            want = want.astype(got.dtype)
        assert_matches_numpy(
            got,
            want,
            rtol=1e-5 if np.dtype(dtype).kind in "fc" else None,
            atol=1e-5,
            check_dtype=name in ("min", "max") or np.dtype(dtype).kind in "fc",
        )


def test_variance_with_no_degrees_of_freedom_is_nan(xp):
    """Where N - correction is 0 or less the variance is NaN, as the standard says (NumPy, and
    this namespace before, gave inf where the deviations are not all zero)."""
    x = xp.asarray(np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 3.0]], np.float32))
    for correction in (3, 4, 3.5):
        assert np.isnan(np.asarray(xp.var(x, axis=1, correction=correction))).all()
        assert np.isnan(np.asarray(xp.std(x, axis=1, correction=correction))).all()
    np.testing.assert_allclose(np.asarray(xp.var(x, axis=1, correction=2)), [14 / 3, 0], rtol=1e-6)


def test_statistics_and_logic(xp):
    host = _host("float32", (6, 7))
    x = xp.asarray(host)
    for axis in (None, 0, 1):
        assert_matches_numpy(xp.mean(x, axis=axis), host.mean(axis=axis), rtol=1e-5, atol=1e-6)
        assert_matches_numpy(xp.var(x, axis=axis, correction=1), host.var(axis=axis, ddof=1), rtol=1e-4)
        assert_matches_numpy(
            xp.std(x, axis=axis, keepdims=True), host.std(axis=axis, keepdims=True), rtol=1e-4
        )
        assert_matches_numpy(xp.all(x > -1, axis=axis), np.all(host > -1, axis=axis))
        assert_matches_numpy(xp.any(x > 1, axis=axis), np.any(host > 1, axis=axis))
    assert_matches_numpy(xp.cumulative_sum(x, axis=1), np.cumsum(host, axis=1), rtol=1e-5, atol=1e-6)
    ints = _host("int32", (3, 4))
    assert_matches_numpy(
        xp.cumulative_prod(xp.asarray(ints), axis=0, include_initial=True),
        np.concatenate([np.ones((1, 4), np.int64), np.cumprod(ints, axis=0)]),
        check_dtype=False,
    )
    with pytest.raises(ValueError):
        xp.max(xp.zeros((0, 3)), axis=0)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda xp, x: xp.std(x, axis=(0, 0)), ValueError, r"std\(\): repeated axis"),
        (lambda xp, x: xp.var(x, axis=2), IndexError, r"var\(\): axis 2 is out of range"),
        (lambda xp, x: xp.sum(x, axis="a"), TypeError, r"sum\(\): an axis must be an integer, not str"),
        (lambda xp, x: xp.max(x, axis=1.5), TypeError, r"max\(\): an axis must be an integer, not float"),
        (lambda xp, x: xp.argmax(x, axis="a"), TypeError, r"argmax\(\): an axis must be an integer"),
        (lambda xp, x: xp.argmin(x, axis=-3), IndexError, r"argmin\(\): axis -3 is out of range"),
        (lambda xp, x: xp.cumulative_sum(x, axis=None), ValueError, r"cumulative_sum\(\) needs axis="),
        (lambda xp, x: xp.std(x, correction="1"), TypeError, r"std\(\): correction must be a real number"),
    ],
)
def test_reduction_errors_name_the_function(xp, call, error, message):
    """A bad axis or correction raises the error NumPy would, naming the function called."""
    with pytest.raises(error, match=message):
        call(xp, xp.ones((3, 4)))


@pytest.mark.parametrize(
    ("shape", "axis"),
    [
        ((20_000, 3), 0),  # a leading axis, few columns: rows cut into parts, then a second pass
        ((257, 70), 0),  # columns not a multiple of a workgroup
        ((5, 6, 7), 1),  # a middle axis
        ((4, 5, 6, 3), (1, 2)),  # a block of middle axes
        ((3, 4, 5), (0, 1)),  # a block of leading axes
        ((50_000, 5), 1),  # short rows, one a thread
        ((6, 0, 4), 1),  # nothing to reduce: the identity
        ((0, 3), 0),
    ],
)
@pytest.mark.parametrize("name", ["sum", "prod", "max", "any"])
def test_reductions_read_adjacent_axes_in_place(xp, shape, axis, name, monkeypatch):
    from ruda_wgpu import _statistical

    dtype = "bool" if name == "any" else "int32" if name == "prod" else "float32"
    host = _host(dtype, shape)
    if name == "prod":
        host = np.where(np.abs(host) > 2, 1, host).astype(np.int32)  # no overflow
    if name == "max" and 0 in shape:
        return  # (no identity: raises, tested elsewhere)
    x = xp.asarray(host)
    # read in place: no copy moving the reduced axes last
    monkeypatch.setattr(_statistical, "permute_dims", lambda *a: pytest.fail("moved the axes"))
    got = getattr(xp, name)(x, axis=axis, keepdims=True)
    want = getattr(np, name)(host, axis=axis, keepdims=True)
    assert_matches_numpy(got, want.astype(got.dtype), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(
    ("shape", "axes", "axis"), [((300, 40), (1, 0), 0), ((30, 4, 50), (1, 2, 0), (0, 1))]
)
def test_reductions_too_long_for_one_binding_move_their_axes_last(xp, shape, axes, axis, monkeypatch):
    # a leading axis read in place binds the whole array: beyond the device's binding limit the
    # reduced axes are moved last instead (here that gives back the contiguous array), and the
    # rows are then all the kept elements
    host = _host("float32", shape)
    x = xp.asarray(host)
    view = xp.permute_dims(x, axes)
    monkeypatch.setattr(x.device, "max_binding", x.device.offset_align + 4000)
    want = np.sum(np.transpose(host, axes), axis=axis)
    assert_matches_numpy(xp.sum(view, axis=axis), want, rtol=1e-5, atol=1e-4)


def test_in_place_reductions_of_a_chain_are_bit_identical_to_unfused(xp):
    from ruda_wgpu import _fusion

    host = _host("float32", (3000, 7))
    host[5, 2], host[9, 4] = np.nan, np.inf
    x = xp.asarray(host)
    results = []
    for enabled in (True, False):
        previous = _fusion.set_enabled(enabled)
        try:
            chain = (x * 1.5 - 0.25) * x
            results.append([np.asarray(f(chain, axis=0)) for f in (xp.sum, xp.max, xp.min, xp.mean)])
        finally:
            _fusion.set_enabled(previous)
    for fused, unfused in zip(*results, strict=True):
        assert fused.tobytes() == unfused.tobytes()
    assert np.isnan(results[0][1][2]) and np.isnan(results[0][2][2])  # NaN wins in its column
    assert results[0][1][4] == np.inf


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_strided_views_and_broadcast_operands_are_reduced_where_they_lie(xp, axis, monkeypatch):
    from ruda_wgpu import _fusion, _statistical

    monkeypatch.setattr(_fusion, "_enabled", True)  # (a chain read in place: whatever RUDA_WGPU_FUSION says)
    host = _host("float32", (400, 60)) * 3 + 1
    x = xp.asarray(host)
    view, view_host = x[1::2, ::3], host[1::2, ::3]
    mean = xp.mean(x, axis=axis, keepdims=True)  # computed: a broadcast leaf of the chain below
    xp.synchronize()
    with monkeypatch.context() as m:
        # nothing copied or computed before the reduction: it reads the view and the chain in place
        m.setattr(_statistical, "contiguous", lambda *a: pytest.fail("copied"))
        m.setattr(_fusion, "_launch", lambda *a: pytest.fail("ran the chain on its own"))
        got_view = xp.sum(view, axis=axis)
        got_squares = xp.sum((x - mean) * (x - mean), axis=axis)
    assert_matches_numpy(got_view, view_host.sum(axis=axis), rtol=1e-5, atol=1e-4)
    want = ((host - host.mean(axis=axis, keepdims=True)) ** 2).sum(axis=axis)
    assert_matches_numpy(got_squares, want, rtol=1e-4)


def test_long_rows_of_views_and_broadcast_leaves_are_reduced_in_place_on_a_gpu(xp, monkeypatch):
    # a GPU reduces long rows a workgroup a row (lavapipe a thread a result): that kernel reads
    # rows a stride apart, and leaves of one element a row, where they lie
    from ruda_wgpu import _fusion, _statistical

    n = 3 * _reduce_kernels.SHORT_ROWS
    host = _host("float32", (40, n)) * 3 + 1
    x = xp.asarray(host)
    monkeypatch.setattr(x.device, "cpu", False)
    mean, total = xp.mean(x, axis=1, keepdims=True), xp.sum(x, keepdims=True)
    view = x[1::2, 5 : n - 7]  # rows of contiguous elements, a stride apart
    results = []
    for enabled in (True, False):
        previous = _fusion.set_enabled(enabled)
        try:
            xp.synchronize()
            with monkeypatch.context() as m:
                if enabled:  # nothing copied or computed before the reductions
                    m.setattr(_statistical, "contiguous", lambda *a: pytest.fail("copied"))
                    m.setattr(_fusion, "_launch", lambda *a: pytest.fail("ran the chain on its own"))
                before = xp.memory_stats()["dispatches"]
                got = [
                    xp.sum(view, axis=1),
                    xp.sum((x - mean) * (x - mean), axis=1),
                    xp.max(x * total, axis=1),
                    xp.sum(x[3] - total),  # one row, and a leaf of one element
                ]
                if enabled:  # one dispatch each (rows this short take one pass)
                    assert xp.memory_stats()["dispatches"] - before == 4
            results.append([np.asarray(r) for r in got])
        finally:
            _fusion.set_enabled(previous)
    for fused, unfused in zip(*results, strict=True):  # the same kernel sums the same values
        assert fused.tobytes() == unfused.tobytes()
    s = host.sum()
    wants = [
        host[1::2, 5 : n - 7].sum(axis=1),
        ((host - host.mean(axis=1, keepdims=True)) ** 2).sum(axis=1),
        (host * s).max(axis=1),
        (host[3] - s).sum(),
    ]
    for got_one, want in zip(results[0], wants, strict=True):
        np.testing.assert_allclose(got_one, want, rtol=1e-4)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat_joins_up_to_seven_views_a_dispatch(xp, axis):
    """Parts of several dtypes (converted to the result's), transposed, reversed, stepped,
    broadcast and empty, and pending chains, joined along each axis: one dispatch for each
    seven of them (after computing the chains), equal to NumPy's."""
    rng = np.random.default_rng(3)
    host = rng.standard_normal((6, 6, 6)).astype(np.float32)
    views = [
        (lambda ns, h: h, "float32"),
        (lambda ns, h: ns.flip(h, axis=2), "float32"),
        (lambda ns, h: h[::2, ::2, ::2], "float32"),
        (lambda ns, h: ns.permute_dims(h, (1, 0, 2)), "float32"),
        (lambda ns, h: ns.broadcast_to(h[:1, :1, :1], (2, 2, 2)), "float32"),
        (lambda ns, h: h[:0] if axis == 0 else h[:, :0] if axis == 1 else h[..., :0], "float32"),
        (lambda ns, h: h[1:, 2:, 3:], "int32"),
        (lambda ns, h: h[:3, 1:4, 2:5], "int16"),
        (lambda ns, h: h * 2.0 + 1.0, "float32"),  # pending, with fusion on
    ]
    keep = tuple(slice(None) if d == axis % 3 else slice(0, 2) for d in range(3))
    for count in (2, 7, 9):
        parts, wants = [], []
        for k in range(count):
            view, dtype = views[k % len(views)]
            x = view(xp, xp.asarray(host))[keep]  # (two along the other axes)
            parts.append(x if dtype == "float32" else xp.astype(x, getattr(xp, dtype)))
            wants.append(view(np, host)[keep].astype(dtype))
        for p in parts:
            p._storage  # noqa: B018  (computed: only the join counts below)
        before = dispatch_count(xp)
        got = xp.concat(parts, axis=axis)
        assert dispatch_count(xp) - before == -(-count // 7)
        assert got.dtype == xp.float32
        np.testing.assert_array_equal(np.asarray(got), np.concatenate(wants, axis=axis).astype(np.float32))
    stacked = xp.stack([xp.asarray(host[k]) for k in range(3)], axis=1)
    assert_matches_numpy(stacked, np.stack(host[:3], axis=1))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_reductions_of_views_and_chains_keep_their_bits_on_either_kernel(xp, data):
    """Random views (sliced, stepped, transposed, broadcast) and chains with broadcast operands
    (a mean, a total, a column), reduced over random axes on a GPU's kernels and a CPU
    adapter's: close to NumPy, and the same bits with fusion on and off."""
    from ruda_wgpu import _fusion

    dev = xp.__array_namespace_info__().default_device()
    gpu = data.draw(st.booleans(), label="gpu")
    rows, cols = (
        data.draw(st.integers(2, 40), label="rows"),
        data.draw(st.sampled_from([3, 70, 300]), label="cols"),
    )
    host = np.random.default_rng(data.draw(st.integers(0, 9), label="seed")).standard_normal((rows, cols + 9))
    host = host.astype(np.float32)
    view = data.draw(st.sampled_from(["whole", "sliced", "stepped", "transposed", "broadcast"]), label="view")
    chain = data.draw(st.sampled_from(["none", "minus mean", "times total", "minus column"]), label="chain")
    axis = data.draw(st.sampled_from([None, 0, 1, -1]), label="axis")
    reduction = data.draw(st.sampled_from(["sum", "max", "mean"]), label="reduction")

    def compute(ns, h):
        x = {
            "whole": h[:, :cols],
            "sliced": h[1:, 4 : cols + 4],
            "stepped": h[::2, :cols],
            "transposed": ns.matrix_transpose(h[:, :cols]),
            "broadcast": ns.broadcast_to(h[:1, :cols], (rows, cols)),
        }[view]
        if chain == "minus mean":
            x = x - ns.mean(x, axis=1, keepdims=True)
        elif chain == "times total":
            x = x * ns.sum(h[:2, :2], keepdims=True)
        elif chain == "minus column":
            x = x - h[: x.shape[0], -1:] if x.shape[0] <= rows else x
        return getattr(ns, reduction)(x * 1.5 + 0.25, axis=axis)

    results = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dev, "cpu", not gpu)
        for enabled in (True, False):
            previous = _fusion.set_enabled(enabled)
            try:
                results.append(np.asarray(compute(xp, xp.asarray(host))))
            finally:
                _fusion.set_enabled(previous)
    assert results[0].tobytes() == results[1].tobytes()
    np.testing.assert_allclose(results[0], compute(np, host), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("gpu", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("shape", [(300, 20), (50, 300)])
def test_variance_keeps_its_bits_with_fusion_off(xp, shape, axis, gpu, monkeypatch):
    from ruda_wgpu import _fusion

    x = xp.asarray(_host("float32", shape) * 2 + 5)
    if gpu:  # long rows take the workgroup kernel
        monkeypatch.setattr(x.device, "cpu", False)
    results = []
    for enabled in (True, False):
        previous = _fusion.set_enabled(enabled)
        try:
            results.append(np.asarray(xp.var(x, axis=axis, correction=1)))
        finally:
            _fusion.set_enabled(previous)
    assert results[0].tobytes() == results[1].tobytes()


@pytest.mark.parametrize("gpu", [False, True])
def test_a_reductions_plan_serves_arrays_of_its_signature_only(xp, gpu, monkeypatch):
    """An array reduced where it lies keeps its reduction's plan: the next one of the same dtype,
    shape and strides, reduced the same way (other data, another offset) goes straight to the
    launch. So does a pending chain of the same structure and operands' strides (other
    operands, other scalars); an array whose reduced axes are apart (copied first), a chain
    computed before it is reduced, or one whose operands lie otherwise, is worked out again."""
    from ruda_wgpu import _fusion, _statistical

    monkeypatch.setattr(xp.__array_namespace_info__().default_device(), "cpu", not gpu)
    monkeypatch.setattr(_fusion, "_enabled", True)  # (chains: whatever RUDA_WGPU_FUSION says)
    rng = np.random.default_rng(8)
    big = rng.standard_normal((90, 3 * _reduce_kernels.SHORT_ROWS)).astype(np.float32)
    ints = rng.integers(-1000, 1000, (90, 40)).astype(np.int32)
    cube = rng.standard_normal((6, 30, 5)).astype(np.float32)
    x, xi, c = xp.asarray(big), xp.asarray(ints), xp.asarray(cube)
    planned = [
        (lambda i: xp.sum(x[i : i + 64], axis=0), lambda i: big[i : i + 64].sum(axis=0)),
        (
            lambda i: xp.max(xi[i : i + 50], axis=-1, keepdims=True),
            lambda i: ints[i : i + 50].max(-1, keepdims=True),
        ),
        (lambda i: xp.min(c[i]), lambda i: cube[i].min()),
        (lambda i: xp.sum(c[i : i + 2], axis=(1, 2)), lambda i: cube[i : i + 2].sum(axis=(1, 2))),
        (
            lambda i: xp.sum(x[i : i + 64] * (i + 2), axis=0),
            lambda i: (big[i : i + 64] * np.float32(i + 2)).sum(axis=0),
        ),
        (
            lambda i: xp.max(xi[i : i + 50] - xi[i + 1 : i + 51], axis=1),
            lambda i: (ints[i : i + 50] - ints[i + 1 : i + 51]).max(axis=1),
        ),
        (lambda i: xp.sum(c[i] * c[i + 1]), lambda i: (cube[i] * cube[i + 1]).sum()),
        (
            lambda i: xp.linalg.vector_norm(x[i : i + 64], axis=1),
            lambda i: np.linalg.norm(big[i : i + 64], axis=1),
        ),
    ]
    if gpu:  # (rows a stride apart, each a workgroup's; a CPU adapter reads such a view as a chain)
        planned.append(
            (lambda i: xp.sum(x[i : i + 64, 3:], axis=1), lambda i: big[i : i + 64, 3:].sum(axis=1))
        )
    worked_out = [
        (lambda i: xp.sum(c[i : i + 2], axis=(0, 2)), lambda i: cube[i : i + 2].sum(axis=(0, 2))),
        (lambda i: xp.sum(c[i : i + 2] * 2, axis=(0, 2)), lambda i: (cube[i : i + 2] * 2).sum(axis=(0, 2))),
        (  # a chain whose operand does not fold into one axis: computed, then reduced
            lambda i: xp.sum(xp.broadcast_to(c[i, :1], (30, 5)) * 2),
            lambda i: (np.broadcast_to(cube[i, :1], (30, 5)) * 2).sum(),
        ),
        (
            lambda i: xp.linalg.vector_norm(c[i : i + 2], axis=(0, 2)),
            lambda i: np.sqrt((cube[i : i + 2] ** 2).sum(axis=(0, 2))),
        ),
    ]
    for reduce, want in planned + worked_out:
        assert_matches_numpy(reduce(0), want(0), rtol=1e-4, atol=1e-4)

    def geometry(*args):
        raise AssertionError("worked out again")

    monkeypatch.setattr(_statistical, "_geometry", geometry)
    for reduce, want in planned:
        for i in (1, 2):
            assert_matches_numpy(reduce(i), want(i), rtol=1e-4, atol=1e-4)
    for reduce, _ in worked_out:
        with pytest.raises(AssertionError, match="worked out again"):
            reduce(1)
    # the chain of the first planned one, its operand transposed: a signature of its own
    across = xp.asarray(np.ascontiguousarray(big[:64].T)).T
    with pytest.raises(AssertionError, match="worked out again"):
        xp.sum(across * 2, axis=0)


@pytest.mark.parametrize("gpu", [False, True])
def test_a_planned_reduction_on_buffers_met_before_records_the_dispatches_it_logged(xp, gpu, monkeypatch):
    """A reduction's plan logs its dispatches from its second launch on, per set of buffers, and
    records them again on the same buffers without launching: with the bits of a launch. A
    chain's other scalar, a scratch buffer made anew or a ``fuse`` trace launches."""
    from ruda_wgpu import _fusion, _statistical

    dev = xp.__array_namespace_info__().default_device()
    monkeypatch.setattr(dev, "cpu", not gpu)
    monkeypatch.setattr(_fusion, "_enabled", True)
    launched = count_calls(monkeypatch, _statistical, "launch_reduce")
    host = np.random.default_rng(9).standard_normal((40, 5000)).astype(np.float32)
    x = xp.asarray(host)
    counts, results = [], {}
    for scale in (2.0, 2.0, 2.0, 3.0, 3.0, 2.0):
        before = len(launched)
        got = np.asarray(xp.sum(x * scale, axis=1))
        counts.append(len(launched) - before)
        results.setdefault(scale, got)
        assert_same_bits(got, results[scale])
        np.testing.assert_allclose(got, (host * np.float32(scale)).sum(axis=1), rtol=1e-4)
    assert counts[:5] == [1, 1, 0, 1, 0]  # (the other scalar's words are part of the key)
    version = dev.scratch_version
    reduction_scratch_made_anew(dev)
    assert dev.scratch_version > version
    before = len(launched)
    assert_same_bits(np.asarray(xp.sum(x * 2.0, axis=1)), results[2.0])
    assert len(launched) == before + 1
    # a trace sees the launch, and replays it
    f = xp.fuse(lambda a: xp.sum(a * 2.0, axis=1))
    for _ in range(3):
        assert_same_bits(np.asarray(f(x)), results[2.0])
    assert None not in f.traces.values()


@pytest.mark.parametrize("gpu", [False, True])
@pytest.mark.parametrize(
    ("shape", "axis", "keepdims"),
    [((4096,), None, False), ((300, 20), 0, False), ((50, 300), 1, True), ((6, 5, 4), (1, 2), False)],
)
def test_a_variance_on_buffers_met_before_records_the_dispatches_it_logged(
    xp, shape, axis, keepdims, gpu, monkeypatch
):
    """``var`` and ``std`` of an array of one signature log their reductions' dispatches and
    record them again on the same buffers, without working out the mean and the chain again:
    with the bits of a launch, and reading the array's data as it is when they run."""
    from ruda_wgpu import _fusion, _statistical

    monkeypatch.setattr(xp.__array_namespace_info__().default_device(), "cpu", not gpu)
    monkeypatch.setattr(_fusion, "_enabled", True)
    worked_out = count_calls(monkeypatch, _statistical, "_deviations")
    host = _host("float32", shape) * 3 + 2
    x = xp.asarray(host)
    want = np.var(host, axis=axis, keepdims=keepdims, ddof=1)
    results, deviations = [], []
    for _ in range(6):
        results.append(np.asarray(xp.var(x, axis=axis, keepdims=keepdims, correction=1)))
        deviations.append(np.asarray(xp.std(x, axis=axis, keepdims=keepdims)))
    assert worked_out, "never worked out"
    assert len(worked_out) < 12, "never recorded from its log"
    for got, deviation in zip(results, deviations, strict=True):
        assert_same_bits(got, results[0])
        assert_same_bits(deviation, deviations[0])
    assert_matches_numpy(results[0], want, rtol=1e-4, atol=1e-5)
    std = np.sqrt(np.var(host, axis=axis, keepdims=keepdims))
    assert_matches_numpy(deviations[0], std, rtol=1e-4, atol=1e-5)
    # the dispatches read the array as it is then
    x[...] = xp.asarray(host * 2)
    np.testing.assert_allclose(
        np.asarray(xp.var(x, axis=axis, keepdims=keepdims, correction=1)), 4 * want, rtol=1e-4, atol=1e-5
    )


@pytest.mark.parametrize("gpu", [False, True])
@pytest.mark.parametrize(("shape", "axis", "keepdims"), [((4096,), None, False), ((50, 300), 1, True)])
def test_a_vector_norm_on_buffers_met_before_records_the_dispatches_it_logged(
    xp, shape, axis, keepdims, gpu, monkeypatch
):
    """The 2-norm of an array of one signature logs its reduction's dispatches and records them
    again on the same buffers, past its magnitudes' chain and its reduction's plan: with the bits
    of a launch."""
    from ruda_wgpu import _fusion, _linalg

    monkeypatch.setattr(xp.__array_namespace_info__().default_device(), "cpu", not gpu)
    monkeypatch.setattr(_fusion, "_enabled", True)
    worked_out = count_calls(monkeypatch, _linalg, "scaled_squares")
    host = _host("float32", shape) * 1e20  # (squares beyond float32: the scaling is kept)
    x = xp.asarray(host)
    results = [np.asarray(xp.linalg.vector_norm(x, axis=axis, keepdims=keepdims)) for _ in range(6)]
    assert worked_out and len(worked_out) < 6, f"worked out {len(worked_out)} times of 6"
    for got in results:
        assert_same_bits(got, results[0])
    want = np.linalg.vector_norm(host.astype(np.float64), axis=axis, keepdims=keepdims)
    assert_matches_numpy(results[0], want.astype(np.float32), rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize(("shape", "axis", "keepdims"), [((4096,), None, False), ((300, 20), 1, True)])
def test_a_mean_on_buffers_met_before_records_the_dispatches_it_logged(
    xp, shape, axis, keepdims, dtype, monkeypatch
):
    """The mean of an array of one signature logs its sum's and division's dispatches and
    records them again on the same buffers: with the bits of a launch, computed (not pending)."""
    from ruda_wgpu import _statistical

    worked_out = count_calls(monkeypatch, _statistical, "sum")
    host = _host(dtype, shape) + 2
    x = xp.asarray(host)
    results = []
    for _ in range(6):
        mu = xp.mean(x, axis=axis, keepdims=keepdims)
        assert mu._node is None  # computed
        results.append(np.asarray(mu))
    assert worked_out and len(worked_out) < 6, f"worked out {len(worked_out)} times of 6"
    for got in results:
        assert_same_bits(got, results[0])
    assert_matches_numpy(results[0], host.mean(axis=axis, keepdims=keepdims), rtol=1e-5, atol=1e-6)


def test_an_operation_whose_dispatches_bind_what_it_frees_stops_logging(xp, monkeypatch):
    """An operation whose logged dispatches bind a buffer it made and dropped cannot be recorded
    from its log: after ``RECORD_TRIES`` such logs it launches unlogged."""
    from ruda_wgpu import _kernels

    dev = xp.__array_namespace_info__().default_device()
    logs = count_calls(monkeypatch, type(dev), "logging_steps")
    x = xp.asarray(np.arange(8, dtype=np.float32))
    recorded = _kernels.Recorded()

    def launch() -> list:
        step = x + 1.0
        step._storage  # noqa: B018  (computed into a buffer of its own, dropped after)
        return [(step * 2.0)._storage]

    for _ in range(3 * _kernels.RECORD_TRIES):
        (out,) = recorded.run(dev, [x._storage.buffer, 0], [x._storage.buffer], launch)
        got = np.frombuffer(dev.read(out.buffer, 0, 32), dtype=np.float32)
        np.testing.assert_array_equal(got, (np.arange(8) + 1) * 2)
    assert recorded.unkept == _kernels.RECORD_TRIES
    assert len(logs) == _kernels.RECORD_TRIES  # (from the second launch on)


def test_long_rows_reduce_a_workgroup_a_row_on_a_gpu(xp, monkeypatch):
    # lavapipe reduces every row a thread; a GPU takes the workgroup kernel from SHORT_ROWS
    host = _host("float32", (300, 2 * _reduce_kernels.SHORT_ROWS + 1))
    x = xp.asarray(host)
    monkeypatch.setattr(x.device, "cpu", False)
    got = xp.sum(x, axis=1)
    assert_matches_numpy(got, host.sum(axis=1), rtol=1e-5, atol=1e-5)
    assert_matches_numpy(xp.max(x[:, :7], axis=1), host[:, :7].max(axis=1))


def test_long_reduction_uses_several_passes(xp):
    host = np.arange(1_000_003, dtype=np.int32) % 7
    assert int(xp.sum(xp.asarray(host))) == int(host.sum())
    f = np.random.default_rng(0).standard_normal(500_000).astype(np.float32)
    assert float(xp.max(xp.asarray(f))) == float(f.max())
    assert abs(float(xp.sum(xp.asarray(f))) - float(f.astype(np.float64).sum())) < 1e-2


@pytest.mark.parametrize(
    "dtype", ["float32", "int32", "int8", "uint16"] + (["int64"] if "int64" in NUMERIC else [])
)
def test_matmul(xp, dtype):
    for sa, sb in [
        ((5, 7), (7, 3)),
        ((33, 17), (17, 40)),
        ((2, 1, 4, 5), (3, 5, 2)),
        ((5,), (5, 4)),
        ((4, 5), (5,)),
        ((6,), (6,)),
    ]:
        a, b = _host(dtype, sa, 1), _host(dtype, sb, 2)
        want = np.matmul(a, b)
        got = xp.matmul(xp.asarray(a), xp.asarray(b))
        assert_matches_numpy(got, want, rtol=1e-5, atol=1e-5)
    a, b = _host("float32", (3, 4, 5)), _host("float32", (4, 5, 2))
    assert_matches_numpy(
        xp.tensordot(xp.asarray(a), xp.asarray(b), axes=([1, 2], [0, 1])),
        np.tensordot(a, b, axes=([1, 2], [0, 1])),
        rtol=1e-5,
        atol=1e-5,
    )
    assert_matches_numpy(xp.tensordot(xp.asarray(a), xp.asarray(a), axes=0), np.tensordot(a, a, axes=0))
    c = _host("float32", (4, 5))
    assert_matches_numpy(xp.vecdot(xp.asarray(a), xp.asarray(c)), np.vecdot(a, c), rtol=1e-5, atol=1e-5)
    assert_matches_numpy(xp.matrix_transpose(xp.asarray(a)), np.matrix_transpose(a))
    with pytest.raises(ValueError, match="align"):
        xp.matmul(xp.ones((2, 3)), xp.ones((2, 3)))


def test_manipulation(xp):
    host = _host("int16", (2, 3, 4))
    x = xp.asarray(host)
    assert_matches_numpy(xp.reshape(x, (4, -1)), host.reshape(4, -1))
    assert_matches_numpy(xp.reshape(x.mT, (-1,)), host.swapaxes(-1, -2).reshape(-1))
    assert_matches_numpy(xp.permute_dims(x, (2, 0, 1)), host.transpose(2, 0, 1))
    assert_matches_numpy(xp.expand_dims(x, axis=1), np.expand_dims(host, 1))
    assert_matches_numpy(xp.squeeze(xp.expand_dims(x, axis=0), axis=0), host)
    assert_matches_numpy(xp.flip(x, axis=(0, 2)), np.flip(host, (0, 2)))
    assert_matches_numpy(xp.roll(x, 2, axis=2), np.roll(host, 2, axis=2))
    assert_matches_numpy(xp.roll(x, (1, -1), axis=(0, 1)), np.roll(host, (1, -1), axis=(0, 1)))
    assert_matches_numpy(xp.roll(x, 5), np.roll(host, 5))
    assert_matches_numpy(xp.concat([x, x[:, :1]], axis=1), np.concatenate([host, host[:, :1]], axis=1))
    assert_matches_numpy(xp.concat([x, x], axis=None), np.concatenate([host, host], axis=None))
    assert_matches_numpy(xp.stack([x, x], axis=-1), np.stack([host, host], axis=-1))
    assert_matches_numpy(xp.broadcast_to(x[:, :1], (2, 3, 4)), np.broadcast_to(host[:, :1], (2, 3, 4)))
    assert_matches_numpy(xp.moveaxis(x, 0, -1), np.moveaxis(host, 0, -1))
    assert_matches_numpy(xp.repeat(x, 2, axis=1), np.repeat(host, 2, axis=1))
    reps = np.array([1, 0, 3], np.int64)
    assert_matches_numpy(xp.repeat(x, indices(reps), axis=1), np.repeat(host, reps, axis=1))
    assert_matches_numpy(xp.tile(x, (2, 1, 2)), np.tile(host, (2, 1, 2)))
    for got, want in zip(xp.unstack(x, axis=1), [host[:, i] for i in range(3)], strict=True):
        assert_matches_numpy(got, want)
    pair = xp.broadcast_arrays(x, xp.asarray(host[0, 0]))
    assert isinstance(pair, tuple) and pair[0].shape == pair[1].shape == (2, 3, 4)
    with pytest.raises(ValueError):
        xp.reshape(x, (5, -1))
    with pytest.raises(ValueError):
        xp.squeeze(x, axis=0)


def test_every_function_of_the_main_namespace_is_computed(xp):
    from ruda import spec

    for name in spec.FUNCTIONS:
        assert callable(getattr(xp, name)), name
        assert "Not implemented" not in (getattr(xp, name).__doc__ or ""), name


@pytest.mark.parametrize("ord", [2, 1, 0, 3, 0.5, -1, -2, np.inf, -np.inf])
def test_vector_norm(xp, ord):
    host = _host("float32", (3, 4, 5))
    host[0, 0, 0] = 0.0
    for axis in (None, 1, (0, 2)):
        for keepdims in (False, True):
            with np.errstate(divide="ignore"):
                want = np.linalg.vector_norm(host, axis=axis, keepdims=keepdims, ord=ord)
            got = xp.linalg.vector_norm(xp.asarray(host), axis=axis, keepdims=keepdims, ord=ord)
            assert_matches_numpy(got, want, rtol=1e-5, atol=1e-6)
    big = np.array([3e30, 4e30], np.float32)  # squares overflow float32: the norm must not
    assert_matches_numpy(xp.linalg.vector_norm(xp.asarray(big)), np.float32(5e30), rtol=1e-6)
    edge = np.array([np.inf, 1.0, -2.0], np.float32)
    assert_matches_numpy(
        xp.linalg.vector_norm(xp.asarray(edge), ord=ord), np.linalg.vector_norm(edge, ord=ord)
    )
    # a huge element beside small ones: a negative ord's norm is about the smallest (scaled by
    # the largest, the -2-norm of these had been 0)
    wide = np.array([1e20, 1.0, -2.0], np.float32)
    want = np.linalg.vector_norm(wide.astype(np.float64), ord=ord).astype(np.float32)
    assert_matches_numpy(xp.linalg.vector_norm(xp.asarray(wide), ord=ord), want, rtol=1e-6)


@pytest.mark.parametrize("gpu", [False, True])
def test_two_norm_scales_its_squares_in_one_pass(xp, gpu, monkeypatch):
    """The 2-norm reduces (scale, sum of scaled squares) pairs in one pass: huge and tiny values
    neither overflow nor underflow, NaN wins over an infinity, which wins over the rest; along
    short and long rows (a GPU's workgroup kernel), in float32 and float64, as NumPy's in float64
    within rounding, with the same bits with fusion on and off."""
    from ruda_wgpu import _fusion

    monkeypatch.setattr(xp.__array_namespace_info__().default_device(), "cpu", not gpu)
    rng = np.random.default_rng(8)
    for dtype in [d for d in ("float32", "float64") if d in xp.__array_namespace_info__().dtypes()]:
        tiny, huge = (1e-30, 1e30) if dtype == "float32" else (1e-200, 1e200)
        rows = rng.standard_normal((5, 300)).astype(dtype)
        rows[1] *= huge
        rows[2] *= tiny
        rows[3, 7], rows[3, 9] = np.inf, -np.inf
        rows[4, 8], rows[4, 250] = np.nan, np.inf
        for axis in (1, None):
            host = rows if axis else rows[2]
            results = []
            for enabled in (True, False):
                previous = _fusion.set_enabled(enabled)
                try:
                    results.append(np.asarray(xp.linalg.vector_norm(xp.asarray(host) * 1.0, axis=axis)))
                finally:
                    _fusion.set_enabled(previous)
            assert results[0].tobytes() == results[1].tobytes()
            wide = np.atleast_2d(host).astype(np.float64)
            scale = np.max(np.abs(wide), axis=1, keepdims=True)
            scale[(scale == 0) | ~np.isfinite(scale)] = 1  # (so that NumPy neither overflows)
            want = (np.linalg.vector_norm(wide / scale, axis=1, keepdims=True) * scale)[:, 0]
            want = want if axis else want[0]
            tol = 1e-6 if dtype == "float32" else 1e-14
            np.testing.assert_allclose(results[0], want.astype(dtype), rtol=tol)


@pytest.mark.parametrize("ord", ["fro", 1, -1, np.inf, -np.inf])
def test_matrix_norm(xp, ord):
    host = _host("float32", (2, 3, 4))
    for keepdims in (False, True):
        got = xp.linalg.matrix_norm(xp.asarray(host), ord=ord, keepdims=keepdims)
        assert_matches_numpy(got, np.linalg.matrix_norm(host, ord=ord, keepdims=keepdims), rtol=1e-5)


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
def test_spectral_matrix_norms(xp, ord):
    host = _host("float32", (2, 3, 4))
    for keepdims in (False, True):
        got = xp.linalg.matrix_norm(xp.asarray(host), ord=ord, keepdims=keepdims)
        assert_matches_numpy(got, np.linalg.matrix_norm(host, ord=ord, keepdims=keepdims), rtol=1e-5)


def test_matrix_norm_refuses_an_unknown_ord(xp):
    with pytest.raises(ValueError, match="ord"):
        xp.linalg.matrix_norm(xp.ones((2, 2)), ord=3)


@pytest.mark.parametrize("ord", [2, 1, 0, 3, 0.5, -1, -2.5, np.inf])
def test_norms_of_nothing_are_numpys(xp, ord):
    """The norm of no elements: 0 for a sum of none or the largest of none, inf for a negative
    ord (had been 0, and a max() error for inf); as NumPy, the least of none raises."""
    for shape, axis in (((0,), None), ((2, 0, 3), 1), ((2, 0), (0, 1))):
        with np.errstate(divide="ignore"):
            want = np.linalg.vector_norm(np.zeros(shape, np.float32), axis=axis, ord=ord)
        assert_matches_numpy(xp.linalg.vector_norm(xp.zeros(shape), axis=axis, ord=ord), want)
    if ord in (1, 2, np.inf):
        for keepdims in (False, True):
            want = np.linalg.matrix_norm(np.zeros((2, 0, 3), np.float32), ord=ord, keepdims=keepdims)
            assert_matches_numpy(xp.linalg.matrix_norm(xp.zeros((2, 0, 3)), ord=ord, keepdims=keepdims), want)
    with pytest.raises(ValueError, match="empty"):
        xp.linalg.vector_norm(xp.zeros((0,)), ord=-np.inf)
    with pytest.raises(ValueError, match="ord=-1 of matrices"):
        xp.linalg.matrix_norm(xp.zeros((0, 0)), ord=-1)
    # the smallest of sums that exist: of 3 empty columns, of 3 empty rows
    for shape, least in (((0, 3), -1), ((3, 0), -np.inf)):
        want = np.linalg.matrix_norm(np.zeros(shape, np.float32), ord=least)
        assert_matches_numpy(xp.linalg.matrix_norm(xp.zeros(shape), ord=least), want)
        with pytest.raises(ValueError, match="smallest of none"):
            xp.linalg.matrix_norm(xp.zeros(shape[::-1]), ord=least)


def _pipelines_asked(dev, monkeypatch) -> list[tuple]:
    """The keys of the pipelines ``dev`` is asked for from now on (compiled or already made)."""
    keys: list[tuple] = []
    original = type(dev).pipeline

    def pipeline(self, key, source):
        keys.append(key)
        return original(self, key, source)

    monkeypatch.setattr(type(dev), "pipeline", pipeline)
    return keys


_BLOCKINGS = [(dtype, b) for dtype, variants in _matmul_kernels.BLOCKED.items() for b in variants]
#: the tolerance of a product of :func:`_host` values per dtype (integers: exact)
_RTOL = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-12, "complex64": 1e-5, "complex128": 1e-12}


def _on_device(xp, dtype: str) -> bool:
    """Whether the default device holds ``dtype`` (float16, not a standard dtype, always)."""
    return dtype == "float16" or dtype in xp.__array_namespace_info__().dtypes()


def _product(a, b):
    """NumPy's ``a @ b``; of float16, the float32 product rounded once, as ours (NumPy's float16
    product sums in another order, and differs from it in an ulp here and there)."""
    if a.dtype == np.float16:
        return (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    return a @ b


def test_a_repeated_product_reads_its_operands_anew(xp):
    # the second and later products of the same buffers replay a prepared dispatch: it must read
    # what the buffers hold now, and write each product's own result
    a, b = _host("float32", (20, 12), 1), _host("float32", (12, 9), 2)
    x, y = xp.asarray(a), xp.asarray(b)
    first = [x @ y for _ in range(3)]
    x[...] = 2 * x  # the same buffer, new values
    again = x @ y
    for got in first:
        assert_matches_numpy(got, a @ b, rtol=1e-5, atol=1e-5)
    assert_matches_numpy(again, (2 * a) @ b, rtol=1e-5, atol=1e-5)
    batched = xp.reshape(xp.concat([x, x]), (2, 20, 12)) @ y
    assert_matches_numpy(batched, np.stack([2 * a, 2 * a]) @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("gpu", [False, True])
def test_a_products_plan_serves_operands_of_its_signature_only(xp, gpu, monkeypatch):
    """A product that reads both operands in place keeps its plan: the next pair of the same
    dtypes, shapes and strides (other data, other offsets) goes straight to the launch, split
    into slices of k as the first was, and so does a pending operand's, computed first as the
    kernels read stored operands; a product whose operands were cast or copied first keeps
    none, and the next of its signature is worked out again."""
    dev = xp.__array_namespace_info__().default_device()
    monkeypatch.setattr(dev, "cpu", not gpu)
    rng = np.random.default_rng(7)
    big, other = rng.standard_normal((70, 40)).astype(np.float32), rng.standard_normal((40, 24))
    tall = rng.standard_normal((3, 20000, 6)).astype(np.float32)
    x, y, t = xp.asarray(big), xp.asarray(other.astype(np.float32)), xp.asarray(tall)
    y64, wide = xp.asarray(other.astype(np.int32)), xp.asarray(np.tile(big, 2))
    cases = [
        (lambda i: x[i : i + 64] @ y, lambda i: big[i : i + 64] @ other.astype(np.float32)),
        (lambda i: x[i : i + 24].T @ y[i : i + 24], lambda i: big[i : i + 24].T @ other[i : i + 24]),
        (lambda i: t[i].T @ t[i], lambda i: tall[i].T @ tall[i]),  # (split into slices on a GPU)
        (lambda i: (x[i : i + 64] - 1) @ y, lambda i: (big[i : i + 64] - 1) @ other),  # (pending: run)
        (lambda i: x[i : i + 64] @ y64, lambda i: big[i : i + 64] @ other.astype(np.int32)),  # (cast)
        (lambda i: wide[i : i + 20, ::2] @ y, lambda i: np.tile(big, 2)[i : i + 20, ::2] @ other),  # (copied)
    ]
    for product, want in cases:
        assert_matches_numpy(product(0), want(0).astype(np.float32), rtol=1e-4, atol=1e-4)

    # the planned signatures no longer pass through the rules that read views and split k
    def worked_out(*args):
        raise AssertionError("worked out again")

    monkeypatch.setattr(_linalg, "_matrices", worked_out)
    for product, want in cases[:4]:
        for i in (1, 2):
            assert_matches_numpy(product(i), want(i).astype(np.float32), rtol=1e-4, atol=1e-4)
    for product, _ in cases[4:]:
        with pytest.raises(AssertionError, match="worked out again"):
            product(1)


def _twice(r):
    return r @ r


def _own_vecdot(xp, r):
    return xp.vecdot(r, r)


def _read_again(*args):
    raise AssertionError("the chain was read again")


@pytest.mark.parametrize("gpu", [False, True])
def test_a_vector_products_plan_serves_operands_of_its_signature_only(xp, gpu, monkeypatch):
    """A product with a vector, a dot product, or ``vecdot``, whose sums read both operands where
    they lie keeps its plan: the next pair of the same dtypes, shapes and strides (other data, other
    offsets, two views of one vector) goes straight to the reduction, and so does an array times
    itself, by a plan of its own. A pair that begins at the same element of one buffer keeps
    none, nor does a product with fusion off take one made with it on, nor a large pending
    operand (whose chain the sums compute as they read it; a small one runs first)."""
    from ruda_wgpu import _fusion

    monkeypatch.setattr(xp.__array_namespace_info__().default_device(), "cpu", not gpu)
    monkeypatch.setattr(_fusion, "_enabled", True)  # (whatever RUDA_WGPU_FUSION says)
    rng = np.random.default_rng(9)
    mat, vec, other = rng.standard_normal((70, 40)), rng.standard_normal(50), rng.standard_normal((40, 24))
    stack, ints = rng.standard_normal((4, 30, 40)), rng.integers(-100, 100, (2, 50)).astype(np.int8)
    mat, vec, other, stack = (a.astype(np.float32) for a in (mat, vec, other, stack))
    x, v, y, s, n = (xp.asarray(a) for a in (mat, vec, other, stack, ints))
    planned = [
        (lambda i: x[i : i + 64] @ v[i : i + 40], lambda i: mat[i : i + 64] @ vec[i : i + 40]),
        (lambda i: v[i : i + 40] @ y, lambda i: vec[i : i + 40] @ other),
        (lambda i: s[i : i + 2] @ v[i : i + 40], lambda i: stack[i : i + 2] @ vec[i : i + 40]),
        (lambda i: _twice(v[i : i + 40]), lambda i: vec[i : i + 40] @ vec[i : i + 40]),  # (one array)
        (lambda i: v[i : i + 40] @ x[i + 1, :40], lambda i: vec[i : i + 40] @ mat[i + 1, :40]),
        (lambda i: n[0, i : i + 40] @ n[1, i : i + 40], lambda i: ints[0, i : i + 40] @ ints[1, i : i + 40]),
        (
            lambda i: xp.vecdot(x[i : i + 6], x[i + 1 : i + 7], axis=0),
            lambda i: (mat[i : i + 6] * mat[i + 1 : i + 7]).sum(axis=0),
        ),
        (
            lambda i: xp.vecdot(s[i : i + 2], v[i : i + 40]),
            lambda i: (stack[i : i + 2] * vec[i : i + 40]).sum(-1),
        ),
        (lambda i: _own_vecdot(xp, s[i]), lambda i: (stack[i] * stack[i]).sum(-1)),  # (one array)
    ]
    served = [  # by the plan of the fifth
        (lambda i: v[i : i + 40] @ v[i : i + 40], lambda i: vec[i : i + 40] @ vec[i : i + 40]),
    ]
    worked_out = [(lambda i: x[i : i + 50] @ x[i, :40], lambda i: mat[i : i + 50] @ mat[i, :40])]
    # a column, strided, summed by a GPU's row kernel (over more than SHORT_ROWS) is copied first
    column = (lambda i: s[i, :, 0] @ x[:30, i], lambda i: stack[i, :, 0] @ mat[:30, i])
    line = rng.standard_normal(80).astype(np.float32)
    w = xp.asarray(line)
    long_column = (lambda i: w[i : i + 70] @ x[:, i], lambda i: line[i : i + 70] @ mat[:, i])
    (worked_out if gpu else planned).append(long_column)
    planned.append(column)
    for product, want in planned + worked_out:
        assert_matches_numpy(product(0), want(0), rtol=1e-4, atol=1e-4)
    if gpu:  # (and that signature is not tried again)
        monkeypatch.setattr(_linalg, "reduction_input", _read_again)
        assert_matches_numpy(long_column[0](3), long_column[1](3), rtol=1e-4, atol=1e-4)

    def summed(*args):
        raise AssertionError("worked out again")

    monkeypatch.setattr(_linalg, "_summed_products", summed)
    for product, want in planned + served:
        for i in (1, 2):
            assert_matches_numpy(product(i), want(i), rtol=1e-4, atol=1e-4)
    for product, _ in worked_out:
        with pytest.raises(AssertionError, match="worked out again"):
            product(1)
    previous = _fusion.set_enabled(False)
    try:
        with pytest.raises(AssertionError, match="worked out again"):
            planned[0][0](1)
    finally:
        _fusion.set_enabled(previous)
    # a small pending operand runs first, and the plan of stored operands serves the product; a
    # larger one's chain is computed as the sums read it, one kernel as the product of stored ones
    monkeypatch.undo()
    monkeypatch.setattr(xp.__array_namespace_info__().default_device(), "cpu", not gpu)
    monkeypatch.setattr(_fusion, "_enabled", True)
    before = dispatch_count(xp)
    stored = x[1:65] @ v[1:41]
    one = dispatch_count(xp) - before
    with monkeypatch.context() as patched:
        patched.setattr(_linalg, "_summed_products", summed)
        small = (x[1:65] * 2) @ v[1:41]
    assert dispatch_count(xp) - before == 2 * one + 1
    monkeypatch.setattr(_linalg, "RUN_FIRST_ELEMENTS", 64 * 40 - 1)
    large = (x[1:65] * 2) @ v[1:41]
    assert dispatch_count(xp) - before == 3 * one + 1
    for got in (small, large):
        assert_matches_numpy(got, (mat[1:65] * 2) @ vec[1:41], rtol=1e-4, atol=1e-4)
    assert_matches_numpy(stored, mat[1:65] @ vec[1:41], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("dtype", "blocking"), _BLOCKINGS, ids=[f"{d}-{b.bm}" for d, b in _BLOCKINGS])
def test_matmul_of_blocks_with_ragged_edges(xp, dtype, blocking, monkeypatch):
    # each register-blocked kernel alone (the only one, taken for a single block): sizes none a
    # multiple of its blocks or of its k step; a batch; and an operand that is a transposed view
    if not _on_device(xp, dtype):
        pytest.skip(f"the default device has no {dtype}")
    monkeypatch.setitem(_matmul_kernels.BLOCKED, dtype, (blocking._replace(min_blocks=1),))
    dev = xp.__array_namespace_info__().default_device()
    compiled = _pipelines_asked(dev, monkeypatch)
    m, n = blocking.bm + 2, 2 * blocking.bm - 55
    a, b = _host(dtype, (2, m, 77), 7), _host(dtype, (2, 77, n), 8)
    rtol = _RTOL.get(dtype, 0)
    assert_matches_numpy(xp.asarray(a) @ xp.asarray(b), _product(a, b), rtol=rtol, atol=rtol)
    c = _host(dtype, (2 * blocking.bm + 44, blocking.bm + 1), 9)
    want = _product(c.T, c)
    assert_matches_numpy(xp.matmul(xp.asarray(c).mT, xp.asarray(c)), want, rtol=rtol, atol=rtol * 10)
    blocked = ("wgsl", "matmul_blocked", dtype)
    assert [key[:3] for key in compiled].count(blocked) == 2
    assert ("matmul", dtype) not in compiled


@pytest.mark.parametrize("dtype", ["float32", "int8", "uint16", "complex64", "float16"])
def test_products_with_a_vector_are_sums_of_products(xp, dtype, monkeypatch):
    """A dot product, a matrix (or a stack) times a vector and a vector times a matrix (or a
    stack), the vector 1-D or a column or row of a 2-D operand whose partner has more than
    SMALL_PRODUCT rows or columns, are the sums of the products along the shared axis, computed
    as they are read, with no product kernel (float16 excepted: it keeps them, its products
    exact); they match NumPy's (integers exactly, wrapping), and a shared axis that differs is
    refused. Small batched products keep the kernel of a thread a result."""
    compiled = _pipelines_asked(xp.__array_namespace_info__().default_device(), monkeypatch)
    k, rows = 300, _matmul_kernels.SMALL_PRODUCT + 1
    shapes = [((k,), (k,)), ((7, k), (k,)), ((2, 3, k), (k,)), ((k,), (k, 5)), ((k,), (2, k, 5))]
    shapes += [((rows, k), (k, 1)), ((1, k), (2, k, rows)), ((2, 1, rows, k), (3, k, 1))]
    for seed, (sa, sb) in enumerate(shapes):
        a, b = _host(dtype, sa, 2 * seed), _host(dtype, sb, 2 * seed + 1)
        got = xp.asarray(a) @ xp.asarray(b)
        with np.errstate(over="ignore"):
            want = _product(a, b)
        assert got.shape == want.shape and got.dtype == want.dtype, (sa, sb)
        rtol = _RTOL.get(dtype, 0)
        assert_matches_numpy(got, want, rtol=rtol, atol=rtol * 10)
    kernels = [key for key in compiled if "matmul" in " ".join(map(str, key[:2]))]
    assert bool(kernels) == (dtype == "float16"), kernels
    ones = functools.partial(xp.ones, dtype=getattr(xp, dtype))
    with pytest.raises(ValueError, match=r"do not align \(4 != 3\)"):
        ones((2, 4)) @ ones(3)
    with pytest.raises(ValueError, match="matmul"):  # (batches that do not broadcast)
        ones((2, rows, 3)) @ ones((3, 3, 1))
    small_a, small_b = _host(dtype, (40, 3, 5), 1), _host(dtype, (40, 5, 1), 2)
    with np.errstate(over="ignore"):
        assert_matches_numpy(xp.asarray(small_a) @ xp.asarray(small_b), _product(small_a, small_b), rtol=rtol)
    assert ("matmul small", dtype) in [key[:2] for key in compiled]


def test_float16_products_of_blocks_round_as_they_are_stored(xp, monkeypatch):
    """float16 takes float32's register-blocked kernel (its values are stored as f32 words) and
    rounds each result to float16 in the store: sums of small integers, exact in f32, beyond
    float16's 2048 (where it holds even integers only), read back through a float32 view made on
    the device, which shows any word stored unrounded."""
    blocking = _matmul_kernels.BLOCKED["float16"][-1]
    monkeypatch.setitem(_matmul_kernels.BLOCKED, "float16", (blocking._replace(min_blocks=1),))
    compiled = _pipelines_asked(xp.__array_namespace_info__().default_device(), monkeypatch)
    rng = np.random.default_rng(5)
    m, k, n = blocking.bm + 2, 70, blocking.bm + 12
    a = rng.integers(0, 16, (m, k)).astype(np.float16)
    b = rng.integers(0, 16, (k, n)).astype(np.float16)
    exact = a.astype(np.float32) @ b.astype(np.float32)
    assert (exact.astype(np.float16) != exact).any()  # (sums that rounding changes)
    got = xp.asarray(a) @ xp.asarray(b)
    assert got.dtype == xp.float16
    words = np.asarray(xp.astype(got, xp.float32))
    np.testing.assert_array_equal(words, exact.astype(np.float16).astype(np.float32))
    assert ("wgsl", "matmul_blocked", "float16") in [key[:3] for key in compiled]


@pytest.mark.parametrize("dtype", ["int8", "int32", "float32", "complex64"])
def test_small_products_take_a_thread_an_element(xp, dtype, monkeypatch):
    """Products of at most SMALL_PRODUCT result elements run a thread an element (one dispatch
    for a whole batch, its grid beyond one dimension's limit here): they match NumPy, integers
    wrapping as NumPy's, and the tiled kernel's result (exactly, for integers)."""
    if dtype not in xp.__array_namespace_info__().dtypes():
        pytest.skip(f"the default device has no {dtype}")
    dev = xp.__array_namespace_info__().default_device()
    monkeypatch.setattr(dev, "max_groups", 1)  # (2 workgroups: a grid of 1 x 2)
    xp.empty_cache()  # (no dispatch prepared by earlier tests on the same pooled buffers)
    kernels = _pipelines_asked(dev, monkeypatch)
    rng = np.random.default_rng(7)
    a, b = _host(dtype, (40, 3, 5), 1), _host(dtype, (40, 5, 4), 2)
    if dtype == "int8":  # (sums that wrap)
        a, b = (rng.integers(-128, 128, shape).astype(np.int8) for shape in ((40, 3, 5), (40, 5, 4)))
    x, y = xp.asarray(a), xp.asarray(b)
    small = np.asarray(xp.matmul(x, y))
    with np.errstate(over="ignore"):
        want = np.matmul(a, b)
    assert_matches_numpy(small, want, rtol=1e-5, atol=1e-5)
    # the tiled kernel, which a CPU adapter no longer takes, on new buffers (x and y keep their
    # prepared dispatch)
    monkeypatch.setattr(_matmul_kernels, "SMALL_PRODUCT", 0)
    monkeypatch.setattr(dev, "cpu", False)
    tiled = np.asarray(xp.matmul(xp.asarray(a), xp.asarray(b)))
    names = [key[0] for key in kernels]
    assert names.count("matmul small") == 1 and names.count("matmul") == 1
    if np.dtype(dtype).kind in "iu":
        np.testing.assert_array_equal(small, tiled)
    else:
        np.testing.assert_allclose(small, tiled, rtol=1e-6, atol=1e-6)


#: operands of (2, rows, columns) for matmul, each (name, shape of the host array for (rows,
#: columns), the operand as a view of that array and (rows, columns), whether matmul copies it)
_VIEWS = [
    ("rows", lambda r, c: (2, r, c), lambda t, r, c: t, False),
    ("transposed", lambda r, c: (2, c, r), lambda t, r, c: t.mT, False),
    ("sliced", lambda r, c: (4, 2 * r, c + 3), lambda t, r, c: t[::2, ::2, 3:], False),
    ("columns of a slice", lambda r, c: (2, c + 3, 2 * r), lambda t, r, c: t[:, 3:, :r].mT, False),
    ("one matrix broadcast", lambda r, c: (1, r, c), lambda t, r, c: t, False),
    ("reversed", lambda r, c: (2, r, c), lambda t, r, c: t[:, :, ::-1], True),
    ("rows and columns strided", lambda r, c: (2, 2 * r, 2 * c), lambda t, r, c: t[:, ::2, ::2], True),
]


def _kernel_for(xp, kernel, dtype, monkeypatch):
    """Make products of ``dtype`` take ``kernel`` ("small", "tiled" or a Blocking) on the default
    device; the key of that kernel's pipelines."""
    dev = xp.__array_namespace_info__().default_device()
    xp.empty_cache()  # (no dispatch prepared by earlier tests on the same pooled buffers)
    if kernel == "small":
        monkeypatch.setattr(_matmul_kernels, "SMALL_PRODUCT", 1 << 30)
        return ("matmul small",)
    monkeypatch.setattr(dev, "cpu", False)
    monkeypatch.setattr(_matmul_kernels, "SMALL_PRODUCT", 0)
    if kernel == "tiled":
        monkeypatch.setitem(_matmul_kernels.BLOCKED, dtype, ())
        return ("matmul",)
    monkeypatch.setitem(_matmul_kernels.BLOCKED, dtype, (kernel._replace(min_blocks=1),))
    return ("wgsl", "matmul_blocked")


_KERNELS = [("small", "float32"), ("tiled", "float32"), ("tiled", "int32"), ("small", "int32")] + [
    (blocking, dtype) for dtype, blocking in _BLOCKINGS
]


@pytest.mark.parametrize(
    ("kernel", "dtype"), _KERNELS, ids=[f"{k if isinstance(k, str) else k.bm}-{d}" for k, d in _KERNELS]
)
def test_matmul_reads_transposed_sliced_and_broadcast_operands_in_place(xp, kernel, dtype, monkeypatch):
    """A transposed, sliced or broadcast operand goes to each kernel as it lies, without a copy
    (one dispatch a product), where its rows or its columns are contiguous; a reversed one, or
    one whose rows and columns are both strided, is copied first. Every result matches NumPy's."""
    if not _on_device(xp, dtype):
        pytest.skip(f"the default device has no {dtype}")
    asked = _pipelines_asked(xp.__array_namespace_info__().default_device(), monkeypatch)
    key = _kernel_for(xp, kernel, dtype, monkeypatch)
    bm = 16 if isinstance(kernel, str) else kernel.bm
    m, k, n = bm + 3, 37, bm + 9  # (ragged edges; m < n, so one matrix times a stack broadcasts)
    rtol = _RTOL.get(dtype, 0)
    pairs = [(0, 0), (1, 0), (0, 1), (1, 1), (2, 3), (3, 2), (4, 1), (5, 1), (1, 6)]
    for seed, (i, j) in enumerate(pairs):
        (a_name, a_shape, a_view, a_copied), (b_name, b_shape, b_view, b_copied) = _VIEWS[i], _VIEWS[j]
        a, b = _host(dtype, a_shape(m, k), 2 * seed), _host(dtype, b_shape(k, n), 2 * seed + 1)
        x, y = a_view(xp.asarray(a), m, k), b_view(xp.asarray(b), k, n)
        before = dispatch_count(xp)
        got = x @ y
        assert dispatch_count(xp) - before == 1 + a_copied + b_copied, (a_name, b_name)
        assert_matches_numpy(got, _product(a_view(a, m, k), b_view(b, k, n)), rtol=rtol, atol=rtol * 10)
    products = {k for k in asked if "matmul" in " ".join(map(str, k[:2]))}
    assert products and all(k[: len(key)] == key for k in products), products
    if kernel != "small":  # (loads along rows or down columns, of a and of b)
        loads = {(k[-1].a_down, k[-1].b_down) for k in products}
        assert loads == {(False, False), (True, False), (False, True), (True, True)}


def _operand_view(data, xp, shape, dtype):
    """A host array and the same view of it on both sides: an operand of ``shape`` that is
    contiguous, transposed, sliced with steps, reversed or broadcast from a smaller array."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    kind = data.draw(st.sampled_from(["contiguous", "transposed", "stepped", "reversed", "broadcast"]))
    *batch, r, c = shape
    base = {"transposed": (*batch, c, r), "stepped": (*batch, 2 * r, c + 1), "reversed": shape}.get(
        kind, shape
    )
    if kind == "broadcast":
        base = tuple(1 if data.draw(st.booleans(), label="broadcast axis") else d for d in shape)
    host = rng.integers(-9, 10, base) if dtype.kind in "iu" else rng.standard_normal(base)
    if dtype.kind == "c":
        host = host + 1j * rng.standard_normal(base)
    host = host.astype(dtype)

    def view(x, ns):
        if kind == "transposed":
            return ns.matrix_transpose(x)
        if kind == "stepped":
            return x[..., ::2, 1:]
        if kind == "reversed":
            return ns.flip(x, axis=-1)
        return ns.broadcast_to(x, shape) if kind == "broadcast" else x

    return view(host, np), view(xp.asarray(host), xp)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_matmul_of_any_views_on_every_kernel_matches_numpy(xp, data):
    """Random stacks and shapes of operands that are contiguous, transposed, stepped, reversed
    or broadcast, in every kernel (a thread an element, tiled, each register-blocked one) and
    with k split or not: the product equals NumPy's (integers exactly)."""
    info = xp.__array_namespace_info__()
    dtype = np.dtype(
        data.draw(
            st.sampled_from([d for d in ("float32", "int32", "float64", "complex64") if d in info.dtypes()])
        )
    )
    kernels = ["default", "small", "tiled"] + [b for b in _matmul_kernels.BLOCKED.get(dtype.name, ())]
    kernel = data.draw(st.sampled_from(kernels), label="kernel")
    m, n = data.draw(st.integers(1, 70), label="m"), data.draw(st.integers(1, 70), label="n")
    k = data.draw(st.sampled_from([1, 2, 17, 64, 300, 1100, 1111]), label="k")
    batch = data.draw(st.sampled_from([(), (1,), (3,), (2, 2)]), label="batch")
    a, x = _operand_view(data, xp, (*batch, m, k), dtype)
    b, y = _operand_view(data, xp, (*batch, k, n), dtype)
    with pytest.MonkeyPatch.context() as patch:
        if kernel != "default":
            _kernel_for(xp, kernel, dtype.name, patch)
        got = np.asarray(x @ y)
    if dtype.kind in "iu":
        np.testing.assert_array_equal(got, a @ b)
    else:
        # within the error bound of a sum of k products, 4 k u of the sum of their magnitudes
        # (a relative one fails where terms cancel, or add up alike: 1100 equal complex64 terms
        # summed in turn came 3e-5 from the sum)
        wide = np.complex128 if dtype.kind == "c" else np.float64
        want = a.astype(wide) @ b.astype(wide)
        bound = 4 * k * np.finfo(dtype).eps / 2 * (np.abs(a).astype(np.float64) @ np.abs(b))
        assert np.all(np.abs(got - want) <= bound), np.max(np.abs(got - want) / bound)


@pytest.fixture
def plans_dropped(xp):
    """Products' plans (see ``_linalg._ProductPlan``) dropped before and after a test that patches
    the rules they come from, so that none made under the patch outlives it."""
    xp.empty_cache()
    yield
    xp.empty_cache()


@pytest.mark.parametrize("cpu", [True, False])
def test_a_long_k_on_few_workgroups_is_split_into_slices(xp, cpu, monkeypatch, plans_dropped):
    """Products of few workgroups and a long k (x.T @ x of a tall x, a dot product, a short
    stack of them) run as a batch of products of slices of k, summed: as many slices as reach
    the workgroups the rule asks for (a GPU's or a CPU adapter's), each covering at least
    SPLIT_DEPTH of k, the last one also what the others leave of k (no product of the rest, no
    addition: as many dispatches as a k the slices divide). A GPU leaves a k shorter than
    GPU_SPLIT_MIN_K whole. Results match NumPy (integers exactly); products with workgroups
    enough are not split."""
    dev = xp.__array_namespace_info__().default_device()
    monkeypatch.setattr(dev, "cpu", cpu)
    monkeypatch.setattr(_linalg, "loop_limited", lambda dev: False)
    f32 = np.dtype("float32")
    depth = _linalg.SPLIT_DEPTH
    want = 2 * (os.cpu_count() or 1) if cpu else _linalg.SPLIT_TO
    for count, m, k, n in [
        (1, 64, 100003, 64),
        (1, 1, 70000, 1),
        (3, 5, 40 * depth + 7, 3),
        (1, 33, _linalg.GPU_SPLIT_MIN_K + 3 * depth, 17),
    ]:
        slices = _linalg._k_slices(dev, f32, count, m, k, n)
        assert 2 <= slices <= k // depth
        assert (
            slices == k // depth or _matmul_kernels.matmul_workgroups(dev, f32, count * slices, m, n) >= want
        )
        assert slices == 2 or _matmul_kernels.matmul_workgroups(dev, f32, count * slices // 2, m, n) < want
    assert _linalg._k_slices(dev, f32, 1, 64, depth + 5, 64) == 1  # (too short to split)
    assert (_linalg._k_slices(dev, f32, 1, 8, _linalg.GPU_SPLIT_MIN_K - 1, 8) == 1) != cpu  # (on a GPU)
    assert _linalg._k_slices(dev, f32, 1, 4096, 4096, 4096) == 1  # (enough workgroups)
    assert _linalg._k_slices(dev, f32, 4096, 64, 4096, 64) == 1  # (a long stack)
    rng = np.random.default_rng(5)
    cases = [("float32", (), (64, 50001, 64)), ("int32", (2,), (3, 40 * depth + 11, 2)),
             ("complex64", (), (2, 36 * depth, 3)), ("float32", (), (1, 20000, 1)),
             ("float32", (2, 1), (4, 36 * depth, 5))]  # fmt: skip
    for dtype, batch, (m, k, n) in cases:
        if dtype not in xp.__array_namespace_info__().dtypes():
            continue
        a = rng.standard_normal((*batch, k, m)) + (
            1j * rng.standard_normal((k, m)) if dtype == "complex64" else 0
        )
        b = rng.standard_normal((k, n)) * (1 + 1j if dtype == "complex64" else 1)
        if dtype == "int32":
            a, b = rng.integers(-50, 50, (*batch, k, m)), rng.integers(-50, 50, (k, n))
        a, b = a.astype(dtype), b.astype(dtype)
        x, y = xp.asarray(a), xp.asarray(b)
        before = dispatch_count(xp)
        got = x.mT @ y
        assert dispatch_count(xp) - before >= 2  # (the slices' batch, their sum)
        want = np.swapaxes(a, -1, -2).astype(np.complex128 if dtype == "complex64" else np.float64) @ b
        if dtype == "int32":
            np.testing.assert_array_equal(np.asarray(got), np.swapaxes(a, -1, -2) @ b)
        else:
            np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=2e-5 * np.sqrt(k))
    x = xp.asarray(rng.standard_normal((50001, 64)).astype(np.float32))
    slices = _linalg._k_slices(dev, f32, 1, 64, 50001, 64)
    whole = x[: slices * (50001 // slices)]
    assert _linalg._k_slices(dev, f32, 1, 64, whole.shape[0], 64) == slices
    dispatches = []
    for y in (x, whole):
        before = dispatch_count(xp)
        y.mT @ y
        dispatches.append(dispatch_count(xp) - before)
    assert dispatches[0] == dispatches[1]


def test_tensordot_multiplies_its_operands_as_they_lie(xp):
    """tensordot over leading axes (x.T @ y in effect), over a reordered pair of axes, or with a
    broadcast axis, multiplies views of its operands: one dispatch, no copy; operands whose axes
    cannot merge into a matrix's two are copied first. Results match NumPy's."""
    rng = np.random.default_rng(10)
    cases = [((50, 3, 4), (50, 6), ([0], [0]), 1), ((3, 4, 5), (4, 5, 2), 2, 1),
             ((6, 1, 5), (6, 3), ([0], [0]), 1), ((3, 4, 5), (5, 4, 2), ([1, 2], [1, 0]), 2),
             ((4, 3, 5), (3, 2), ([1], [0]), 2)]  # fmt: skip
    for sa, sb, axes, dispatches in cases:
        a, b = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)
        x, y = xp.asarray(a), xp.asarray(b)
        before = dispatch_count(xp)
        got = xp.tensordot(x, y, axes=axes)
        assert dispatch_count(xp) - before == dispatches, (sa, sb, axes)
        assert_matches_numpy(got, np.tensordot(a, b, axes=axes), rtol=1e-5, atol=1e-5)


def test_tensordot_refuses_axes_it_cannot_contract(xp):
    """Axes out of range (once taken modulo the dimensions), repeated, or of different lengths
    (once broadcast: the standard contracts no broadcast axis, nor does NumPy) raise."""
    x, y = xp.ones((2, 3, 4)), xp.ones((4, 3, 5))
    with pytest.raises(ValueError, match="axis 5 is out of range for x1 of 3 dimensions"):
        xp.tensordot(x, y, axes=((5,), (0,)))
    with pytest.raises(ValueError, match="axis 7 is out of range for x2 of 3 dimensions"):
        xp.tensordot(x, y, axes=((1,), (7,)))
    with pytest.raises(ValueError, match="repeat an axis"):
        xp.tensordot(x, y, axes=((0, 0), (0, 1)))
    with pytest.raises(ValueError, match=r"axis 1 of x1 \(1\) and axis 0 of x2 \(3\) differ"):
        xp.tensordot(xp.ones((2, 1)), xp.ones((3, 4)), axes=((1,), (0,)))
    with pytest.raises(ValueError, match="two sequences of axes"):
        xp.tensordot(x, y, axes=((2,),))
    assert xp.tensordot(x, y, axes=((-1, 1), (0, -2))).shape == (2, 5)
    # an int for one axis, as NumPy takes it (had been "'int' object is not iterable")
    a, b = np.arange(6.0, dtype=np.float32).reshape(2, 3), np.arange(12.0, dtype=np.float32).reshape(3, 4)
    assert_matches_numpy(xp.tensordot(xp.asarray(a), xp.asarray(b), axes=(1, 0)), a @ b)
    with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
        xp.tensordot(x, y, axes=(2.0, 0))
    with pytest.raises(TypeError, match="n must be an integer, not bool True"):  # (had been taken for 1)
        xp.linalg.matrix_power(xp.eye(2), True)


def test_stacks_broadcast_against_each_other_are_read_in_place(xp):
    """(3, 1) stacks times (1, 4) stacks: an outer and an inner batch, each one stride apart in
    both operands, so neither is copied (one dispatch), where the broadcast had copied both."""
    rng = np.random.default_rng(9)
    for sa, sb in [((3, 1, 5, 6), (1, 4, 6, 7)), ((1, 4, 5, 6), (3, 1, 6, 7)), ((2, 3, 1, 5, 6), (4, 6, 7))]:
        a, b = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)
        x, y = xp.asarray(a), xp.asarray(b)
        before = dispatch_count(xp)
        got = x @ y
        assert dispatch_count(xp) - before == 1, (sa, sb)
        assert_matches_numpy(got, a @ b, rtol=1e-5, atol=1e-5)


def test_matmul_keeps_each_thread_under_llvmpipes_loop_limit(xp, monkeypatch, plans_dropped):
    """llvmpipe stops a thread's loops after LLVMPIPE_LOOPS iterations and returns what it has:
    a dot product of 10^6 elements summed 65535 of them. A product's slices of k stay within
    half of that, and a stack's k is halved until it does."""
    x = np.random.default_rng(6).integers(-3, 4, 1 << 20).astype(np.float32)
    assert float(xp.asarray(x) @ xp.asarray(x)) == float(x @ x)  # (exact: small integers)
    monkeypatch.setattr(_linalg, "loop_limited", lambda dev: True)
    monkeypatch.setattr(_linalg, "LLVMPIPE_LOOPS", _linalg.LOOP_RESERVE + 2 * 300)
    dev = xp.__array_namespace_info__().default_device()
    assert _linalg._deepest(dev) == 300
    assert _linalg._k_slices(dev, np.dtype("float32"), 1, 4096, 1000, 4096) == 4  # (enough workgroups)
    rng = np.random.default_rng(6)
    for sa, sb in [((3, 5, 1000), (3, 1000, 4)), ((7, 1300), (1300, 2)), ((2, 1, 301), (301, 2))]:
        a, b = rng.integers(-9, 9, sa).astype(np.int32), rng.integers(-9, 9, sb).astype(np.int32)
        np.testing.assert_array_equal(np.asarray(xp.asarray(a) @ xp.asarray(b)), a @ b)


def test_one_matrix_and_a_stack_multiply_as_one_product(xp):
    """x @ w with x a stack and w one matrix (or vector) is one 2-D product of x's rows, and w @ x
    (at least as many rows as x's columns) one product with x's columns side by side: the one
    matrix is not copied for every matrix of the stack. Small products (at most SMALL_PRODUCT
    elements each) stay a batch of them."""
    rng = np.random.default_rng(8)
    for xs, ws in [((64, 8, 256), (256, 256)), ((2, 3, 9, 10), (10, 8)), ((2, 3, 9, 10), (10,)),
                   ((0, 9, 10), (10, 8)), ((20, 3, 3), (3, 3)), ((2, 12, 0), (0, 9)),
                   ((256, 256), (64, 256, 8)), ((70, 5), (2, 3, 5, 70)), ((9, 4), (0, 4, 9)),
                   ((3, 3), (20, 3, 1)), ((5, 12, 10), (1, 10, 9)), ((1, 12, 10), (1, 1, 10, 9)),
                   ((1, 12, 10), (4, 10, 9)), ((1, 1, 12, 10), (4, 10, 9))]:  # fmt: skip
        a, b = rng.standard_normal(xs).astype(np.float32), rng.standard_normal(ws).astype(np.float32)
        x, w = xp.asarray(a), xp.asarray(b)
        xp.synchronize()
        before = xp.memory_stats()["allocated_bytes"]
        assert_matches_numpy(x @ w, a @ b, rtol=1e-5, atol=1e-4)
        made = xp.memory_stats()["allocated_bytes"] - before
        if 64 in xs + ws:  # (a copy of the one matrix a matrix of the stack: 16 MiB)
            assert made < 4 * (a @ b).nbytes


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_a_cpu_adapter_multiplies_a_thread_an_element_what_no_block_takes(xp, dtype, monkeypatch):
    """On a CPU adapter (the default device, or taken for one) a product the blocked kernels do not
    take (int32; float32 narrower than a block) runs a thread an element, not tiled."""
    dev = xp.__array_namespace_info__().default_device()
    monkeypatch.setattr(dev, "cpu", True)
    xp.empty_cache()  # (no dispatch prepared by earlier tests on the same pooled buffers)
    kernels = _pipelines_asked(dev, monkeypatch)
    a, b = _host(dtype, (300, 40), 1), _host(dtype, (40, 30), 2)
    assert_matches_numpy(xp.asarray(a) @ xp.asarray(b), a @ b, rtol=1e-5, atol=1e-4)
    assert [key[0] for key in kernels] == ["matmul small"]


def test_matmul_kernel_by_size(xp):
    # a GPU takes the larger blocks once the product has enough of them; a CPU adapter, once
    # the product holds one whole block (the default device, and a stand-in for the other kind)
    f32, f64 = np.dtype("float32"), np.dtype("float64")
    big, small = _matmul_kernels.BLOCKED["float32"]
    dev = xp.__array_namespace_info__().default_device()
    limits = {"max-compute-workgroup-storage-size": 32768}
    other = SimpleNamespace(cpu=not dev.cpu, limits=limits)
    gpu, cpu = (other, dev) if dev.cpu else (dev, other)
    blocking = _matmul_kernels.matmul_blocking
    assert blocking(gpu, f32, 1, 2048, 2048) == big
    assert blocking(gpu, f32, 1, 1024, 1024) == small
    assert blocking(gpu, f32, 16, 256, 256) == small
    assert blocking(gpu, f32, 1, 256, 256) is None
    assert blocking(gpu, f32, 1, 64, 1024) is None
    # blocks wider than the products' rows or columns: the smallest ones, however many products
    assert blocking(gpu, f32, 390, 64, 64) == small
    assert blocking(gpu, f32, 64, 100, 4096) == small
    assert blocking(gpu, f32, 4096, 32, 32) == small
    assert blocking(gpu, np.dtype("int32"), 1, 4096, 4096) == _matmul_kernels.BLOCKED["int32"][0]
    assert blocking(gpu, np.dtype("int32"), 1, 256, 256) is None
    assert blocking(cpu, f32, 1, 128, 128) == big
    assert blocking(cpu, f32, 1, 64, 1024) == small
    assert blocking(cpu, f32, 1, 63, 1024) is None
    assert blocking(gpu, f64, 1, 4096, 4096) == _matmul_kernels.BLOCKED["float64"][0]
    # WebGPU's least workgroup memory (16 KB) holds the 64 x 64 blocks' tiles but not the 128 x 128
    small_gpu = SimpleNamespace(cpu=False, limits={"max-compute-workgroup-storage-size": 16384})
    assert big.workgroup_bytes(4) > 16384 >= small.workgroup_bytes(4)
    assert blocking(small_gpu, f32, 1, 4096, 4096) == small


def test_cross_of_mixed_narrow_integers(xp):
    # narrow integers are widened and wrapped in the kernel: each operand's conversion is one term
    a = np.array([[1, 2, 3], [4, 5, 250]], np.uint8)
    b = np.array([[7, -8, 9], [1, 1, 300]], np.int16)
    assert_matches_numpy(xp.linalg.cross(xp.asarray(a), xp.asarray(b)), np.cross(a, b))


@pytest.mark.parametrize("dtype", NUMERIC)
def test_diagonal_trace_outer_cross_matrix_power(xp, dtype):
    host = _host(dtype, (2, 4, 5))
    x = xp.asarray(host)
    for offset in (-5, -1, 0, 2, 7):
        assert_matches_numpy(xp.linalg.diagonal(x, offset=offset), np.linalg.diagonal(host, offset=offset))
        got = xp.linalg.trace(x, offset=offset)
        assert_matches_numpy(got, np.linalg.trace(host, offset=offset), check_dtype=False, rtol=1e-5)
    d = xp.linalg.diagonal(x)
    d[...] = 0  # a copy: writing to it leaves x alone
    assert_matches_numpy(x, host)
    a, b = host[0, 0], host[1, :, 0]
    assert_matches_numpy(xp.linalg.outer(xp.asarray(a), xp.asarray(b)), np.outer(a, b), rtol=1e-5)
    u, v = host[..., :3], host[::-1, ..., 1:4]
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    want = np.cross(u.astype(wide), v.astype(wide)).astype(host.dtype)
    assert_matches_numpy(xp.linalg.cross(xp.asarray(u), xp.asarray(v)), want, rtol=1e-5, atol=1e-5)
    square = host[:, :4, :4]
    if np.dtype(dtype).kind in "fc":
        square = square / 4
    for n in (0, 1, 2, 5):
        want = np.linalg.matrix_power(square, n)
        assert_matches_numpy(xp.linalg.matrix_power(xp.asarray(square), n), want, rtol=1e-4, atol=1e-4)
    if np.dtype(dtype).kind == "f":  # inverses are real-only (see test_decompositions)
        want = np.linalg.matrix_power(square + 4 * np.eye(4, dtype=dtype), -2)
        got = xp.linalg.matrix_power(xp.asarray(square + 4 * np.eye(4, dtype=dtype)), -2)
        assert_matches_numpy(got, want, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="size 3"):
        xp.linalg.cross(x, x)


@pytest.mark.parametrize("dtype", ["int32", "float32", "bool"])  # (every device holds them)
def test_diff_matches_numpy(xp, dtype):
    """Every order up to past the axis's length (then empty: it once ran a dispatch per order,
    however large), both axes, with arrays and Python scalars before and after, as NumPy's."""
    host = (np.arange(12).reshape(3, 4) ** 2 % 7).astype(dtype)
    x = xp.asarray(host)
    for axis in (0, -1):
        for n in range(6):
            assert_matches_numpy(xp.diff(x, axis=axis, n=n), np.diff(host, axis=axis, n=n))
    assert xp.diff(x, n=10**12).shape == (3, 0)
    # the 0th difference is x itself, without what is put before or after it, as NumPy's
    assert_matches_numpy(xp.diff(x, n=0, prepend=xp.asarray(np.ones((3, 1), dtype))), host)
    edge = np.ones((3, 1), dtype)
    got = xp.diff(x, prepend=xp.asarray(edge), append=xp.asarray(edge))
    assert_matches_numpy(got, np.diff(host, prepend=edge, append=edge))
    scalar = True if dtype == "bool" else 2  # (in x's dtype, as Python scalars combine with arrays)
    same = np.asarray(scalar, dtype)
    assert_matches_numpy(
        xp.diff(x, axis=0, prepend=scalar, append=scalar), np.diff(host, axis=0, prepend=same, append=same)
    )


def test_diff_refuses_what_it_cannot_put_before_or_after_naming_itself(xp):
    """Another library's array, a list or an array of another shape before or after x is an
    error naming diff and the argument (it had named concat, which the caller never called)."""
    x = xp.ones((2, 3), dtype=xp.float32)
    for other in (np.ones((2, 1), np.float32), [1.0, 2.0], "a"):
        with pytest.raises(
            TypeError, match=r"^diff\(\): prepend must be a ruda_wgpu array or a Python scalar"
        ):
            xp.diff(x, prepend=other)
        with pytest.raises(
            TypeError, match=r"^diff\(\): append must be a ruda_wgpu array or a Python scalar"
        ):
            xp.diff(x, append=other)
    for shape in ((3, 1), (2,), (1, 2, 1)):
        with pytest.raises(
            ValueError, match=r"^diff\(\): append must have the shape of x \(2, 3\) except along axis 1"
        ):
            xp.diff(x, append=xp.ones(shape, dtype=xp.float32))
    with pytest.raises(TypeError, match=r"^diff\(\) takes a ruda_wgpu array, not ndarray"):
        xp.diff(np.ones(3))
    assert xp.diff(x, axis=0, prepend=xp.zeros((5, 3), dtype=xp.float32)).shape == (6, 3)


def test_single_axis_functions_refuse_other_axes(xp):
    x = xp.ones((2, 3), dtype=xp.int32)
    with pytest.raises(TypeError, match="diff\\(\\): an axis must be an integer, not tuple"):
        xp.diff(x, axis=(0,))
    with pytest.raises(TypeError, match="cumulative_sum\\(\\): an axis must be an integer, not tuple"):
        xp.cumulative_sum(x, axis=(0, 1))
    with pytest.raises(TypeError, match="an axis must be an integer, not bool"):  # (True had been axis 1)
        xp.sum(x, axis=True)
    with pytest.raises(TypeError, match="float"):
        xp.diff(x, prepend=2.5)
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        xp.diff(x, append=2**40)


def test_diagonal_offsets_are_integers_of_any_size(xp):
    """A float k had been truncated (triu(k=0.5) kept the diagonal); a k past int32 said
    so, for a dtype the caller never asked for: any k beyond the matrix keeps all or nothing."""
    host = np.arange(1, 7, dtype=np.int32).reshape(2, 3)
    a = xp.asarray(host)
    for k in (2**62, -(2**62), 1, -1):
        assert_matches_numpy(xp.tril(a, k=k), np.tril(host, k=k))
        assert_matches_numpy(xp.triu(a, k=k), np.triu(host, k=k))
    for fn in (xp.tril, xp.triu):
        with pytest.raises(TypeError, match="k must be an integer, not float"):
            fn(a, k=0.5)
    with pytest.raises(TypeError, match="k must be an integer, not float"):
        xp.eye(3, k=1.5)
    assert xp.eye(xp.asarray(3)).shape == (3, 3)  # (a 0-d integer array is an index)


def test_shapes_are_integers_not_bools(xp):
    """operator.index takes True for 1: zeros(True) had made one element, reshape (True, 6) a
    (1, 6); a single int is a shape of one axis, as NumPy takes it."""
    for make in (lambda: xp.zeros(True), lambda: xp.ones((True, False)), lambda: xp.full(True, 1)):
        with pytest.raises(TypeError, match="not bools"):
            make()
    with pytest.raises(TypeError, match="reshape\\(\\): a shape holds integers, not bools"):
        xp.reshape(xp.ones(6), (True, 6))
    x = xp.asarray([1.0, 2.0])
    assert xp.broadcast_to(x, 2).shape == (2,)
    assert_matches_numpy(xp.tile(x, 2), np.tile([1.0, 2.0], 2).astype(np.float32))
    assert xp.zeros(range(1, 3)).shape == (1, 2)
    with pytest.raises(TypeError, match="not None"):  # (None had added an axis per dimension)
        xp.expand_dims(x, axis=None)


def test_clip_refuses_bounds_its_dtype_cannot_hold(xp):
    """As x + 300 of int8 and NumPy's clip: 300 had been taken as 127, breaking the bound."""
    x = xp.asarray([1, 0], dtype=xp.int8)
    with pytest.raises(OverflowError, match="300 is out of bounds for int8"):
        xp.clip(x, 300, None)
    with pytest.raises(OverflowError, match="-5 is out of bounds for uint8"):
        xp.clip(xp.asarray([1, 0], dtype=xp.uint8), None, -5)
    assert_matches_numpy(xp.clip(x, -128, 127), np.array([1, 0], np.int8))


def test_broadcast_views_are_read_only(xp):
    """Elements of a broadcast view share memory: writing them raced (the last thread won) and
    changed the array viewed; NumPy's broadcast_to views are read-only."""
    x = xp.asarray([1.0, 2.0, 3.0])
    y = xp.broadcast_to(x, (4, 3))
    with pytest.raises(ValueError, match="broadcast view"):
        y[:, 0] = xp.asarray([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="broadcast view"):
        y += 1.0
    assert_matches_numpy(x, np.array([1.0, 2.0, 3.0], np.float32))
    single = xp.expand_dims(xp.asarray([1.0, 2.0]), axis=0)  # (a stride 0 on an axis of one)
    single[0, 1] = 7.0
    assert_matches_numpy(single, np.array([[1.0, 7.0]], np.float32))


def test_linspace_points_as_numpy_computes_them(xp):
    """Computed in float64 where the device has it and rounded once, as NumPy computes them: equal
    to NumPy's (in float32, 9 * 0.1f had been 0.90000004). Bounds whose span overflows give
    their points (from -3e38 to 3e38 the fourth of five had been inf), and the first point is
    start even where the step is infinite (float16 from 0 to 1e30 had begun with NaN)."""
    wide = "float64" in xp.__array_namespace_info__().dtypes()
    cases = [(0, 1, 11, True), (-3, 7, 50, False), (1e-3, 17.5, 1000, True), (-3e38, 3e38, 5, True)]
    cases += [(-3e38, 3e38, 6, False), (3e38, -3e38 + 1e37j, 7, True), (0, 1e30, 3, True)]
    for start, stop, num, endpoint in cases:
        for dtype in ("float16", "float32", "complex64"):
            if isinstance(stop, complex) and dtype != "complex64":
                continue
            with np.errstate(over="ignore"):
                want = np.linspace(start, stop, num, endpoint=endpoint).astype(dtype)
            got = xp.linspace(start, stop, num, endpoint=endpoint, dtype=getattr(xp, dtype))
            if wide or dtype == "float16":
                np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"{start}, {stop}, {dtype}")
            else:
                assert_matches_numpy(got, want, rtol=1e-6, atol=1e-7)


def test_asarray_says_what_it_cannot_take(xp):
    for bad in (None, {1, 2}, object()):
        with pytest.raises(TypeError, match=f"from {type(bad).__name__}: it takes arrays"):
            xp.asarray(bad)
    loop: list[object] = [1]
    loop.append(loop)
    with pytest.raises(ValueError, match="contains itself"):  # (had been a RecursionError)
        xp.asarray(loop)
    # complex data into a real dtype: refused, as astype refuses it (the imaginary part had been
    # dropped, with a warning, from a scalar or a NumPy array)
    for complex_data in (1.5 + 2j, np.complex64(1 + 2j), np.array([1 + 2j])):
        with pytest.raises(TypeError, match="complex"):
            xp.asarray(complex_data, dtype=xp.float32)
    with pytest.raises(TypeError, match="complex"):
        xp.asarray(1.5 + 2j, dtype=xp.int32)


def test_keepdims_is_a_bool(xp):
    """'yes' and None had been taken by their truth; an int passes, as in NumPy. A list gets the
    same error, not the plan caches' "unhashable type"."""
    x = xp.ones((2, 3))
    for reduce in (xp.sum, xp.max, xp.mean, xp.std, xp.argmax, xp.count_nonzero, xp.linalg.vector_norm):
        for bad in ("yes", [True]):
            with pytest.raises(TypeError, match=f"keepdims must be a bool, not {type(bad).__name__}"):
                reduce(x, axis=1, keepdims=bad)
    assert xp.sum(x, axis=1, keepdims=1).shape == (2, 1)
