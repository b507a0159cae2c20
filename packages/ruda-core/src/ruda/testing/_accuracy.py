"""Accuracy sweeps: values that stress floating-point functions, and errors in units in the last place."""

from __future__ import annotations

from typing import Any

import numpy as np

#: NumPy's names for the standard's elementwise functions where they differ
NUMPY_NAMES = {
    "bitwise_invert": "invert",
    "bitwise_left_shift": "left_shift",
    "bitwise_right_shift": "right_shift",
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "atan2": "arctan2",
    "pow": "power",
}

#: the floating-point functions whose accuracy a backend's own math decides, one argument
MATH_UNARY = ("exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos",
              "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh")  # fmt: skip
#: and two arguments (divide: the driver's, which Vulkan lets be a few ulp off)
MATH_BINARY = ("divide", "pow", "atan2", "hypot", "logaddexp")


def sweep_values(dtype: Any, n: int = 20000, seed: int = 0) -> np.ndarray:
    """About ``n`` values of a float dtype: ordinary ones, every binade from the smallest subnormal
    to the largest finite value (both signs), arguments near multiples of pi/2 (trigonometric
    reductions), near 0 and 1, and the special values (zeros, infinities, NaN)."""
    dt = np.dtype(dtype)
    info = np.finfo(dt)
    rng = np.random.default_rng(seed)
    k = max(n // 8, 1)
    tiny = float(info.smallest_subnormal)
    binades = np.exp(rng.uniform(np.log(tiny), np.log(float(info.max)), k)) * rng.choice([-1.0, 1.0], k)
    near_pio2 = (np.arange(-k // 2, k // 2) * (np.pi / 2)) * (1 + rng.uniform(-1e-12, 1e-12, k))
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, tiny, -tiny, float(info.smallest_normal), float(info.max),
                -float(info.max), 1.0, -1.0, 0.5, -0.5, 2.0, 1e-10, 1e22]  # fmt: skip
    parts = [
        rng.standard_normal(2 * k) * 3,
        rng.uniform(-1, 1, k),
        binades,
        rng.uniform(-1e6, 1e6, k),
        near_pio2,
        1 + rng.uniform(-1e-6, 1e-6, k),
        np.array(specials),
    ]
    with np.errstate(over="ignore"):
        return np.concatenate(parts).astype(dt)


def ulp_error(got: np.ndarray, want: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
    """|got - want| in units in the last place of ``want`` (of ``scale`` where given, for results
    whose size comes from cancellation); 0 where both are equal or both NaN, inf where one is NaN
    or infinite and the other is not."""
    got, want = np.asarray(got), np.asarray(want)
    dt = want.dtype
    ref = np.abs(want if scale is None else np.maximum(np.abs(want), np.abs(scale)))
    with np.errstate(all="ignore"):
        err: np.ndarray[Any, Any] = np.abs(got.astype(np.float64) - want.astype(np.float64)) / np.spacing(
            np.maximum(ref, np.finfo(dt).smallest_normal).astype(dt)
        ).astype(np.float64)
    err[(got == want) | (np.isnan(got) & np.isnan(want))] = 0.0
    err[np.isnan(got) != np.isnan(want)] = np.inf
    err[np.isinf(got) != np.isinf(want)] = np.inf
    return err
