"""float32 functions swept against NumPy (computed in float64, rounded): subnormals included.

Drivers may flush float32 subnormals to zero in arithmetic (NVIDIA's does, as WGSL allows); the
library functions take them apart and build them with integers, so the sweep's subnormal
arguments and results hold on every adapter.
"""

from __future__ import annotations

import numpy as np
import pytest
from ruda.testing import MATH_BINARY, MATH_UNARY, NUMPY_NAMES, parametrize_backends, sweep_values, ulp_error

from tests.wgpu.dtype_support import keeps_float32_subnormals

pytestmark = parametrize_backends("wgpu")

UNARY = MATH_UNARY
BINARY = [name for name in MATH_BINARY if name != "logaddexp"]  # its ulp is of the larger argument
#: 4 ulp, plus the half ulp the float32 rounding of the float64 reference may add
MAX_ULP = 4.5


def _reference(name: str, *args: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        wide = getattr(np, NUMPY_NAMES.get(name, name))(*(a.astype(np.float64) for a in args))
        return wide.astype(np.float32)


@pytest.mark.parametrize("name", [*UNARY, *BINARY])
def test_within_4_ulp(xp, name):
    x = sweep_values(np.float32, 20000, seed=5)
    args: tuple[np.ndarray, ...] = (x,)
    if name in BINARY:
        y = sweep_values(np.float32, 20000, seed=6)[: x.size]
        y[::5] = np.round(y[::5])
        args = (np.abs(x), np.clip(y, -400, 400)) if name == "pow" else (x, y)
    got = np.asarray(getattr(xp, name)(*(xp.asarray(a) for a in args)))
    want = _reference(name, *args)
    err = ulp_error(got, want)
    worst = int(np.argmax(err))
    at = ", ".join(repr(a[worst]) for a in args)
    assert err[worst] <= MAX_ULP, f"{name}({at}) = {got[worst]!r}, NumPy {want[worst]!r}"


@pytest.mark.parametrize("name", ["remainder", "floor_divide"])
def test_remainder_and_floor_divide_exact_with_subnormals(xp, name):
    """Both are exact in NumPy, and so here, subnormal dividends and divisors among them (a
    subnormal divisor had given the dividend back, or 300 for its quotient: the long division's
    steps took frexp of subnormals, which lavapipe gets wrong). Normal operands near 2^-126 and
    2^-100 are among them too: their steps and sums pass below 2^-126, which NVIDIA flushes to
    zero, so that a remainder came out 0 or a quotient one too many there."""
    rng = np.random.default_rng(0)
    edges = [1e-45, 3e-45, 1e-40, 1.1754942e-38, 1.1754944e-38, 2e-38, 3e-35, 1.0, 7.0, 1e30, 3.4e38]
    small = np.float32(2.0**-100)  # (where the steps are scaled: see fmod_scaled_f)
    edges += [small, np.nextafter(small, np.float32(0)), 3 * small]
    edges = np.array(edges, np.float32)
    values = np.concatenate([edges, -edges, (rng.standard_normal(20) * 1e-39).astype(np.float32)])
    a, b = (v.ravel() for v in np.meshgrid(values, values))
    got = np.asarray(getattr(xp, name)(xp.asarray(a), xp.asarray(b)))
    with np.errstate(over="ignore", invalid="ignore"):  # (huge quotients are inf, here too)
        want = getattr(np, name)(a, b)
    if not keeps_float32_subnormals():  # (a device that flushes them: where none is met)
        normal = [
            (np.abs(v) >= np.finfo(np.float32).smallest_normal) | (v == 0) | ~np.isfinite(v)
            for v in (a, b, want)
        ]
        kept = normal[0] & normal[1] & normal[2]
        got, want = got[kept], want[kept]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_floor_divide_of_large_quotients_rounds_as_numpy(xp):
    """NumPy's floor_divide rounds (a - fmod(a, b)) / b once: a driver's division an ulp off
    (NVIDIA's) gave whole quotients above 2^24 one step too small or large."""
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(4096) * 10.0 ** rng.uniform(0, 14, 4096)).astype(np.float32)
    b = rng.standard_normal(4096).astype(np.float32)
    got = np.asarray(xp.floor_divide(xp.asarray(a), xp.asarray(b)))
    np.testing.assert_array_equal(got, np.floor_divide(a, b))


def test_pow_of_exact_squares_and_firsts_up_to_the_largest_float(xp):
    """x ** 1 is x and x ** 2 is x * x, as in fdlibm and NumPy: 2^(2 log2(x)) had overflowed within
    an ulp of the largest float (3.4028235e38 ** 1 and 1.8446743e19 ** 2 were inf)."""
    base = np.array([3.4028235e38, 1.8446743e19, -1.8446743e19, 1e-30, -7.5, np.inf, np.nan], np.float32)
    for power in (1.0, 2.0):
        exponent = np.full_like(base, power)
        with np.errstate(over="ignore", under="ignore"):  # (3.4028235e38 ** 2 is inf)
            want = np.power(base, exponent)
        np.testing.assert_array_equal(np.asarray(xp.pow(xp.asarray(base), xp.asarray(exponent))), want)
