"""Bit-for-bit comparisons on edge values: what tests of fusion (fused against unfused results)
and of exact kernels share."""

from __future__ import annotations

from typing import Any

import numpy as np

_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-3, -7.25, 100.0, np.inf, -np.inf, np.nan]


def edge_values(dtype: Any, n: int, seed: int) -> np.ndarray:
    """``n`` values of ``dtype``: its edge values (NaN, signed zeros, infinities, extremes,
    subnormals; for integers 0, +-1, the limits) first, then random ones; complex numbers pair
    them with a rotated copy as imaginary parts."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        limits = [0, 1, 2, 3, 7, info.max, info.min, info.max - 1]
        limits += [-1, -2, -8] if dtype.kind == "i" else []
        rand = rng.integers(info.min, int(info.max) + 1, n - len(limits), dtype=dtype)
        return np.concatenate([np.array(limits, dtype), rand])
    real = np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype
    finfo = np.finfo(real)
    edges = np.array([*_FLOATS, float(finfo.max), float(finfo.smallest_subnormal), -float(finfo.tiny)], real)
    with np.errstate(all="ignore"):
        rand = (rng.standard_normal(n - len(edges)) * 4).astype(real)
    parts = np.concatenate([edges, rand])
    if dtype.kind == "c":
        out = np.empty(n, dtype)
        out.real, out.imag = parts, np.roll(parts, 5)
        return out
    return parts


def edge_operands(name: str, dtype: Any, n: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Two arrays of :func:`edge_values` for the elementwise function ``name``; the right
    operand of an integer shift or power is kept where the result is defined (a shift below
    the bit width plus a few, an exponent from 0 to 8)."""
    dtype = np.dtype(dtype)
    a, b = edge_values(dtype, n, 1), edge_values(dtype, n, 2)
    if dtype.kind in "iu" and name in ("bitwise_left_shift", "bitwise_right_shift"):
        b = np.abs(b.astype(np.int64) % (dtype.itemsize * 8 + 3)).astype(dtype)
    if dtype.kind in "iu" and name == "pow":
        b = np.abs(b.astype(np.int64) % 9).astype(dtype)
    return a, b


def assert_same_bits(got: np.ndarray, want: np.ndarray) -> None:
    """Equal dtypes, shapes and bits, signed zeros and infinities included, except NaN's sign and
    payload: which operand's NaN an IEEE operation passes on is left to the hardware and to the
    compiler's choice of operand order, which differs between two compilations of one code."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if got.dtype.kind in "fc":
        got, want = got.reshape(-1), want.reshape(-1)  # a 0-d complex array has no float view
        got_parts = got.view(got.real.dtype) if got.dtype.kind == "c" else got
        want_parts = want.view(want.real.dtype) if want.dtype.kind == "c" else want
        nan = np.isnan(want_parts)
        np.testing.assert_array_equal(np.isnan(got_parts), nan)
        got, want = got_parts[~nan], want_parts[~nan]
    assert got.tobytes() == want.tobytes(), (got, want)
