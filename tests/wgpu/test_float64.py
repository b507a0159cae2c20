"""float64 on devices with shader-f64: every function is our own f64 arithmetic, swept against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import ruda_wgpu
from ruda.testing import (
    MATH_BINARY,
    MATH_UNARY,
    NUMPY_NAMES,
    assert_matches_numpy,
    parametrize_backends,
    sweep_values,
    ulp_error,
)

pytestmark = [
    parametrize_backends("wgpu"),
    pytest.mark.skipif(
        "float64" not in ruda_wgpu.__array_namespace_info__().dtypes(),
        reason="the default WebGPU device lacks shader-f64 or shader-int64",
    ),
]

UNARY = MATH_UNARY
# divide is held to 1 ulp by test_arithmetic_rounding_and_conversions_are_exact
BINARY = [name for name in MATH_BINARY if name != "divide"]
#: the bound we hold float64 to: within 4 ulp of NumPy over the whole range
MAX_ULP = 4.0


def _numpy(name: str, *args: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return getattr(np, NUMPY_NAMES.get(name, name))(*args)


@pytest.mark.parametrize("name", UNARY)
def test_unary_within_4_ulp(xp, name):
    x = sweep_values(np.float64)
    got = np.asarray(getattr(xp, name)(xp.asarray(x)))
    err = ulp_error(got, _numpy(name, x))
    worst = int(np.argmax(err))
    assert err[worst] <= MAX_ULP, f"{name}({x[worst]!r}) = {got[worst]!r}, NumPy {_numpy(name, x[worst])!r}"


@pytest.mark.parametrize("name", BINARY)
def test_binary_within_4_ulp(xp, name):
    x = sweep_values(np.float64, seed=1)
    y = sweep_values(np.float64, seed=2)[: x.size]
    y[::5] = np.round(y[::5])  # integer exponents for pow, with negative bases
    if name == "pow":
        x[::3] = np.abs(x[::3])
        y = np.clip(y, -400, 400)
    got = np.asarray(getattr(xp, name)(xp.asarray(x), xp.asarray(y)))
    want = _numpy(name, x, y)
    # logaddexp of values of opposite size cancels: measure in ulp of the larger input, as its own
    # error is (NumPy computes it the same way, with the same cancellation)
    scale = np.maximum(np.abs(x), np.abs(y)) if name == "logaddexp" else None
    err = ulp_error(got, want, scale)
    worst = int(np.argmax(err))
    assert err[worst] <= MAX_ULP, (
        f"{name}({x[worst]!r}, {y[worst]!r}) = {got[worst]!r}, NumPy {want[worst]!r}"
    )


def test_arithmetic_rounding_and_conversions_are_exact(xp):
    x = sweep_values(np.float64, 4000, seed=3)
    y = sweep_values(np.float64, 4000, seed=4)[: x.size]
    a, b = xp.asarray(x), xp.asarray(y)
    with np.errstate(all="ignore"):
        exact = ["add", "subtract", "multiply", "floor_divide", "remainder", "maximum", "minimum"]
        for name in [*exact, "copysign", "nextafter"]:
            want = getattr(np, name)(x, y)
            assert_matches_numpy(getattr(xp, name)(a, b), want, rtol=0, atol=0, err_msg=name)
        for name in ("floor", "ceil", "trunc", "round", "abs", "negative", "sign", "square"):
            assert_matches_numpy(getattr(xp, name)(a), getattr(np, name)(x), rtol=0, atol=0, err_msg=name)
        assert np.max(ulp_error(np.asarray(a / b), x / y)) <= 1.0  # the driver's division, checked
        for dtype in ("float32", "float16", "int32", "int64", "uint8", "bool"):
            want = (
                x.astype(dtype)
                if dtype[0] in "fb"
                else np.where(np.isfinite(x), x, 0).clip(-1e6, 1e6).astype(dtype)
            )
            src = x if dtype[0] in "fb" else np.where(np.isfinite(x), x, 0).clip(-1e6, 1e6)
            assert_matches_numpy(
                xp.astype(xp.asarray(src), getattr(xp, dtype)), want, rtol=0, atol=0, err_msg=dtype
            )


def test_special_cases(xp):
    inf, nan = np.inf, np.nan
    x = np.array([0.0, -0.0, inf, -inf, nan])  # results fixed by the standard, signs of zeros included
    for name in UNARY:
        got = np.asarray(getattr(xp, name)(xp.asarray(x)))
        want = _numpy(name, x)
        np.testing.assert_array_equal(got, want, err_msg=name)
        signed = ~np.isnan(want)  # the sign of a NaN means nothing
        np.testing.assert_array_equal(np.signbit(got[signed]), np.signbit(want[signed]), err_msg=name)
    x = np.array([0.0, -0.0, inf, -inf, nan, 1.0, -1.0, 2.0, -2.0])
    # (+-1e200, 3e300: huge even integers, where -1 ** 1e200 had been inf)
    exponent = np.tile(
        np.array([0.0, -0.0, inf, -inf, nan, 1.0, -1.0, 3.0, 0.5, 1e200, -1e200, 3e300]), x.size
    )
    base = np.repeat(x, exponent.size // x.size)
    assert_matches_numpy(
        xp.pow(xp.asarray(base), xp.asarray(exponent)), _numpy("pow", base, exponent), rtol=0, atol=0
    )
    assert_matches_numpy(
        xp.atan2(xp.asarray(base), xp.asarray(exponent)), _numpy("atan2", base, exponent), rtol=0, atol=0
    )


def test_float64_data_keeps_its_dtype_and_the_default_stays_float32(xp):
    info = xp.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == xp.float32
    assert xp.asarray(np.arange(3.0)).dtype == xp.float64
    assert xp.asarray(np.float64(2.5)).dtype == xp.float64
    assert xp.asarray([1.0, 2.0]).dtype == xp.float32  # Python floats take the default
    x = xp.asarray(np.linspace(0, 1, 7))
    assert (x + 1.5).dtype == xp.float64 and (x + xp.ones(7)).dtype == xp.float64
    assert_matches_numpy(xp.sort(-x), np.sort(-np.linspace(0, 1, 7)))
    assert_matches_numpy(x @ x, np.linspace(0, 1, 7) @ np.linspace(0, 1, 7), rtol=1e-14)
    assert_matches_numpy(xp.sum(x), np.linspace(0, 1, 7).sum(), rtol=1e-14)


@pytest.fixture
def default_float(monkeypatch):
    """Sets RUDA_WGPU_DEFAULT_FLOAT for one test (it is read once per process)."""
    from ruda_wgpu._info import DEFAULT_FLOAT_ENV, wide_default_float

    def set_to(value: str) -> None:
        monkeypatch.setenv(DEFAULT_FLOAT_ENV, value)
        wide_default_float.cache_clear()

    yield set_to
    monkeypatch.delenv(DEFAULT_FLOAT_ENV, raising=False)
    wide_default_float.cache_clear()


def test_the_default_float_can_be_float64_as_numpys(xp, default_float):
    default_float("float64")
    defaults = xp.__array_namespace_info__().default_dtypes()
    assert (defaults["real floating"], defaults["complex floating"]) == (xp.float64, xp.complex128)
    assert xp.asarray([1.0, 2.0]).dtype == xp.float64
    assert xp.asarray([1j]).dtype == xp.complex128
    for made in (xp.ones(3), xp.zeros(3), xp.empty(3), xp.linspace(0, 1, 4), xp.eye(2), xp.full(2, 0.5)):
        assert made.dtype == xp.float64
    assert xp.arange(0.0, 1.0, 0.25).dtype == xp.float64
    assert xp.asarray([1, 2]).dtype != xp.float64  # integers keep the integral default
    # float32 data keeps its dtype: only what the namespace chooses changes
    assert (xp.ones(2, dtype=xp.float32) + 1.5).dtype == xp.float32
    assert_matches_numpy(xp.linspace(0, 1, 7), np.linspace(0, 1, 7), rtol=1e-15)


def test_ruda_info_says_which_default_float_is_in_effect(xp, default_float):
    from ruda_wgpu._plugin import WgpuBackend

    assert WgpuBackend().probe().details["default float"].startswith("float32 (")
    default_float("float64")
    assert WgpuBackend().probe().details["default float"].startswith("float64 where")


def test_a_default_float_other_than_float32_or_float64_is_refused(xp, default_float):
    default_float("float16")
    with pytest.raises(ValueError, match="RUDA_WGPU_DEFAULT_FLOAT='float16'"):
        xp.ones(3)
