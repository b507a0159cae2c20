"""float16 on every device, bit for bit against NumPy's float16 (stored as f32 words)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ruda.testing import assert_matches_numpy, parametrize_backends
from ruda_wgpu._engine import GpuDevice, default_device

pytestmark = parametrize_backends("wgpu")

# values whose float32 arithmetic rounds differently from float16: halfway cases, subnormals,
# the largest finite value, overflow to inf, signed zeros, infinities, NaN
EDGES = np.array(
    [
        0.0,
        -0.0,
        1.0,
        -1.0,
        1 / 3,
        2049.0,
        2051.0,
        65504.0,
        -65504.0,
        6e-8,
        -6e-8,
        1e-5,
        0.1,
        np.inf,
        -np.inf,
        np.nan,
    ],
    dtype=np.float16,
)


def _host(shape: Any = (40,), seed: int = 0, scale: float = 4.0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float16)


def _exact(got: Any, want: np.ndarray) -> None:
    """Bit-for-bit NumPy's float16 result (NaN where NumPy has NaN)."""
    assert_matches_numpy(got, want, rtol=0, atol=0)


def test_upload_download_round_trip(xp):
    host = np.concatenate([EDGES, _host()])
    x = xp.asarray(host)
    assert x.dtype == xp.float16
    _exact(x, host)
    np.testing.assert_array_equal(np.asarray(x).view(np.uint16), host.view(np.uint16))  # -0.0 and NaN bits
    # Python floats round to float16 on the way in, as in NumPy (which warns of the overflow too)
    with np.errstate(over="ignore"):
        got = xp.asarray([0.1, 1e-8, 70000.0, 65519.0], dtype=xp.float16)
    _exact(got, np.array([0.1, 1e-8, np.inf, 65504.0], np.float16))
    # views, slices and assignment move 2-byte elements as whole stored words
    y = xp.asarray(host.reshape(4, 14))
    _exact(y[1:, ::-3], host.reshape(4, 14)[1:, ::-3])
    y[0, :3] = 0.1
    want = host.reshape(4, 14).copy()
    want[0, :3] = 0.1
    _exact(y, want)


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide"])
def test_arithmetic_rounds_exactly_as_numpy(xp, op):
    a = np.concatenate([np.repeat(EDGES, len(EDGES)), _host((2000,), 1, 300.0)])
    b = np.concatenate([np.tile(EDGES, len(EDGES)), _host((2000,), 2, 3.0)])
    with np.errstate(all="ignore"):
        want = getattr(np, op)(a, b)
        want_scalar = getattr(np, op)(a, np.float16(0.1))
    got = getattr(xp, op)(xp.asarray(a), xp.asarray(b))
    _exact(got, want)
    _exact(getattr(xp, op)(xp.asarray(a), 0.1), want_scalar)  # the Python float rounds to float16 first
    # a second operation on the stored result: the GPU must have rounded it, not only the download
    with np.errstate(all="ignore"):
        _exact(got * 3 - xp.asarray(b), want * np.float16(3) - b)
        assert_matches_numpy(got == xp.asarray(want), want == want)


def test_sqrt_is_exact_and_transcendentals_within_float16_tolerance(xp):
    x = np.abs(_host((500,), 3))
    _exact(xp.sqrt(xp.asarray(x)), np.sqrt(x))
    for name in ("exp", "log", "sin", "tanh", "expm1"):
        got = getattr(xp, name)(xp.asarray(x))
        with np.errstate(all="ignore"):
            want = getattr(np, name)(x)
        assert got.dtype == xp.float16
        assert_matches_numpy(got, want, err_msg=name)  # float16's tolerance: about one ulp
    a, b = _host((100,), 4), _host((100,), 5)
    with np.errstate(all="ignore"):
        assert_matches_numpy(xp.pow(xp.asarray(np.abs(a)), xp.asarray(b)), np.power(np.abs(a), b))
    _exact(xp.nextafter(xp.asarray(EDGES), xp.asarray(EDGES[::-1].copy())), np.nextafter(EDGES, EDGES[::-1]))


def test_promotion(xp):
    h, f = _host((8,), 6), _host((8,), 7).astype(np.float32)
    got = xp.asarray(h) + xp.asarray(f)
    assert got.dtype == xp.float32
    assert_matches_numpy(got, h + f)
    assert xp.result_type(xp.float16, xp.float32) == xp.float32
    assert xp.can_cast(xp.float16, xp.float32) and not xp.can_cast(xp.float32, xp.float16)
    _exact(xp.asarray(h) * 2, h * np.float16(2))  # Python scalars take the array's dtype
    for other in (xp.int8, xp.uint8, xp.int32):  # integers take the floating dtype, as in PyTorch
        mixed = xp.asarray(h) + xp.asarray(np.full(8, 3), dtype=other)
        assert mixed.dtype == xp.float16
        _exact(mixed, h + np.float16(3))
    with pytest.raises(TypeError, match="promote"):
        xp.asarray(h) + xp.asarray(np.ones(8), dtype=xp.bool)
    assert xp.result_type(xp.float16, xp.int16) == xp.float16


def test_astype_both_ways(xp):
    h = np.concatenate([EDGES[np.isfinite(EDGES)], _host((50,), 8, 50.0)])
    x = xp.asarray(h)
    for dtype in ("float32", "int32", "int8", "uint8", "bool"):
        src = np.abs(h) if dtype == "uint8" else h
        with np.errstate(all="ignore"):
            want = src.astype(dtype)
        assert_matches_numpy(xp.astype(xp.asarray(src), getattr(xp, dtype)), want, err_msg=dtype)
    f = np.concatenate(
        [
            np.array([0.1, 65519.0, 65520.0, 1e6, -1e6, 2.98e-8, np.nan], np.float32),
            _host((50,), 9).astype(np.float32) / 7,
        ]
    )
    with np.errstate(over="ignore"):
        _exact(xp.astype(xp.asarray(f), xp.float16), f.astype(np.float16))
    ints = np.array([0, 1, -7, 2049, 65504, 65535, 70000, -(2**31)], np.int32)
    with np.errstate(over="ignore"):
        _exact(xp.astype(xp.asarray(ints), xp.float16), ints.astype(np.float16))
    _exact(xp.astype(x, xp.float16), h)


def test_reductions(xp):
    h = _host((6, 300), 10)
    x = xp.asarray(h)
    # NumPy accumulates float16 sums in float32 and rounds once; so does the GPU (in another order)
    assert_matches_numpy(xp.sum(x, axis=1), h.sum(axis=1))
    assert_matches_numpy(xp.sum(x), h.sum(), rtol=2e-3, atol=2e-2)
    assert xp.sum(x).dtype == xp.float16
    _exact(xp.max(x, axis=0), h.max(axis=0))
    _exact(xp.min(x), h.min())
    assert_matches_numpy(xp.mean(x, axis=1), h.mean(axis=1), atol=2e-3)
    _exact(xp.cumulative_sum(xp.asarray(h[0, :50])), np.cumsum(h[0, :50]))  # rounded at every step
    _exact(
        xp.sum(xp.asarray(np.array([65504.0, 65504.0, -65504.0], np.float16))), np.array(65504.0, np.float16)
    )
    # a mean whose sum passes float16's range, kept in float32 as NumPy does (it had been inf)
    big = np.array([6e4, 6e4, 1.0], np.float16)
    _exact(xp.mean(xp.asarray(big)), big.mean())


def test_long_rows(xp):
    """Past 65504 elements: a cumulative sum goes on after llvmpipe's loop limit (65535
    iterations of a thread's loops, which had left the rest of the row unwritten), and var and
    std are computed in float32 (the element count, a float16 divisor, had been inf)."""
    h = np.random.default_rng(2).standard_normal(70000).astype(np.float16)
    _exact(xp.cumulative_sum(xp.asarray(h)), np.cumsum(h))
    rows = np.full((2, 70000), -1, np.float16)
    _exact(xp.cumulative_prod(xp.asarray(rows), axis=1), np.cumprod(rows, axis=1))
    small = (np.arange(70000) % 2).astype(np.float16) * np.float16(0.01)  # var 2.5e-5, std 0.005
    wide = small.astype(np.float64)
    for got, want in ((xp.var(xp.asarray(small)), wide.var()), (xp.std(xp.asarray(small)), wide.std())):
        assert got.dtype == xp.float16
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-3)
    _exact(xp.var(xp.ones((70000, 2), dtype=xp.float16), axis=0), np.zeros(2, np.float16))


def test_matmul(xp):
    a, b = _host((3, 17, 33), 11, 1.0), _host((33, 9), 12, 1.0)
    got = xp.matmul(xp.asarray(a), xp.asarray(b))
    assert got.dtype == xp.float16
    assert_matches_numpy(got, np.matmul(a, b), rtol=2e-3, atol=4e-3)  # f32 accumulation, another order
    assert_matches_numpy(xp.asarray(a) @ xp.asarray(b.astype(np.float32)), a @ b.astype(np.float32))


def test_creation_and_manipulation(xp):
    f16 = xp.float16
    _exact(xp.zeros((2, 3), dtype=f16), np.zeros((2, 3), np.float16))
    _exact(xp.ones(5, dtype=f16), np.ones(5, np.float16))
    _exact(xp.full((2, 2), 0.1, dtype=f16), np.full((2, 2), 0.1, np.float16))
    _exact(xp.eye(3, 4, k=1, dtype=f16), np.eye(3, 4, k=1, dtype=np.float16))
    _exact(xp.arange(0, 8, 0.5, dtype=f16), np.arange(0, 8, 0.5, dtype=np.float16))
    assert_matches_numpy(xp.linspace(-1, 1, 9, dtype=f16), np.linspace(-1, 1, 9, dtype=np.float16))
    h = _host((4, 5), 13)
    x = xp.asarray(h)
    _exact(xp.reshape(x, (5, 4)), h.reshape(5, 4))
    _exact(xp.permute_dims(x, (1, 0)), h.T)
    _exact(xp.concat([x, x[:1]], axis=0), np.concatenate([h, h[:1]], axis=0))
    _exact(xp.stack([x, x], axis=1), np.stack([h, h], axis=1))
    _exact(xp.flip(x, axis=1), np.flip(h, axis=1))
    _exact(xp.roll(x, 2, axis=1), np.roll(h, 2, axis=1))
    _exact(xp.take(x, xp.asarray([3, 0, 0]), axis=1), np.take(h, [3, 0, 0], axis=1))
    _exact(xp.where(x > 0, x, 0.5), np.where(h > 0, h, np.float16(0.5)))
    _exact(x[2], h[2])
    _exact(xp.clip(x, -1.0, 0.1), np.clip(h, np.float16(-1.0), np.float16(0.1)))


def test_finfo(xp):
    info = xp.finfo(xp.float16)
    assert (info.bits, info.max, info.eps) == (16, 65504.0, float(np.finfo(np.float16).eps))


class _AdapterWithoutF16:
    """The real adapter with 'shader-f16' hidden: a device that lacks the feature."""

    def __init__(self, adapter: Any) -> None:
        self._adapter = adapter
        self.info, self.limits = adapter.info, adapter.limits
        self.features = set(adapter.features) - {"shader-f16"}

    def request_device_sync(self, **kwargs: Any) -> Any:
        return self._adapter.request_device_sync(**kwargs)


def test_float16_needs_no_shader_f16(xp):
    """Rounding to float16 is integer arithmetic, so a device without the feature computes it."""
    dev = GpuDevice(7, _AdapterWithoutF16(default_device().adapter))
    a, b = _host((300,), 14, 50.0), _host((300,), 15, 3.0)
    x, y = xp.asarray(a, device=dev), xp.asarray(b, device=dev)
    with np.errstate(all="ignore"):
        _exact(x / y, a / b)
        _exact(x * y - 1.5, a * b - np.float16(1.5))
    _exact(
        xp.astype(xp.astype(x, xp.float32) / 3.0, xp.float16), (a.astype(np.float32) / 3).astype(np.float16)
    )


def test_float16_is_not_listed_among_the_standard_dtypes(xp):
    assert "float16" not in xp.__array_namespace_info__().dtypes()
    assert xp.zeros((2,), dtype=xp.float16).dtype == xp.float16


def test_float16_is_a_real_floating_dtype(xp: Any) -> None:
    assert xp.isdtype(xp.float16, "real floating")
    assert xp.isdtype(xp.float16, ("integral", "numeric"))
    assert not xp.isdtype(xp.float16, "integral")
