"""ruda.host: the namespace, its info, and the fixes over array-api-compat's NumPy."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import ruda
from ruda import spec
from ruda.testing.conformance import ConformanceChecks

xp = ruda.host
INF, NAN = math.inf, math.nan


class TestHostConformance(ConformanceChecks):
    xp = ruda.host
    max_examples = 15


def test_namespace_has_the_whole_spec() -> None:
    missing = [n for n in (*spec.FUNCTIONS, *spec.CONSTANTS, *spec.DTYPES) if not hasattr(xp, n)]
    assert not missing
    assert not [n for n in spec.LINALG if not hasattr(xp.linalg, n)]
    assert not [n for n in spec.FFT if not hasattr(xp.fft, n)]


def test_returns_plain_numpy_arrays() -> None:
    assert type(xp.exp(xp.ones(3))) is np.ndarray


def test_info_tells_the_truth() -> None:
    info = xp.__array_namespace_info__()
    assert info.devices() == ("cpu",) and info.default_device() == "cpu"
    assert info.default_dtypes()["real floating"] == xp.float64
    assert set(info.dtypes()) == set(spec.DTYPES)
    assert set(info.dtypes(kind="unsigned integer")) == {"uint8", "uint16", "uint32", "uint64"}
    assert set(info.dtypes(kind=("bool", "complex floating"))) == {"bool", "complex64", "complex128"}
    with pytest.raises(ValueError, match="unknown dtype kind 'floats'"):
        info.dtypes(kind="floats")
    with pytest.raises(ValueError, match="only the device 'cpu'"):
        info.dtypes(device="cuda:0")


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_finfo_gives_python_floats(dtype: str) -> None:
    info = xp.finfo(getattr(xp, dtype))
    assert all(type(v) is float for v in (info.eps, info.max, info.min, info.smallest_normal))
    assert info.eps == float(np.finfo(dtype).eps)
    assert xp.finfo(xp.ones(1, dtype=getattr(xp, dtype))).bits == info.bits


@pytest.mark.parametrize(
    ("z", "want"),
    [
        (complex(0, 0), complex(0, 0)),
        (complex(-0.0, 0), complex(0, 0)),
        (complex(INF, 0), complex(INF, 0)),
        (complex(-INF, INF), complex(-1, 0)),
        (complex(-INF, NAN), complex(-1, 0)),
        (complex(NAN, 0), complex(NAN, 0)),
        (complex(1e-10, 1e-10), complex(1e-10, 1e-10)),
    ],
)
def test_expm1_complex_special_cases(z: complex, want: complex) -> None:
    got = complex(xp.expm1(xp.asarray([z]))[0])
    assert math.copysign(1, got.real) == math.copysign(1, want.real)
    for part_got, part_want in ((got.real, want.real), (got.imag, want.imag)):
        both_nan = math.isnan(part_got) and math.isnan(part_want)
        assert both_nan or math.isclose(part_got, part_want, rel_tol=1e-9)


def test_expm1_complex_matches_exp_minus_one() -> None:
    z = np.random.default_rng(1).standard_normal(100) * 3 + 1j * np.random.default_rng(2).standard_normal(100)
    np.testing.assert_allclose(xp.expm1(z), np.exp(z) - 1, rtol=1e-12, atol=1e-14)


def test_tanh_complex_at_infinity() -> None:
    got = xp.tanh(xp.asarray([complex(INF, 1.0), complex(-INF, NAN), complex(0.0, NAN)]))
    assert got[0] == 1 and got[1] == -1
    assert got[2].real == 0 and math.isnan(got[2].imag)
    # the imaginary zero takes y's sign, whatever sin(2y) is (here sin(4) < 0)
    assert math.copysign(1, xp.tanh(xp.asarray(complex(INF, 2.0))).imag) == 1


def test_floor_divide_by_infinity_follows_the_spec() -> None:
    got = xp.floor_divide(xp.asarray([1.0, -1.0, INF, -INF, 7.0]), xp.asarray([-INF, INF, 2.0, 2.0, 2.0]))
    assert [math.copysign(1, v) for v in got[:2]] == [-1, -1] and got[0] == 0 and got[1] == 0
    assert got[2] == INF and got[3] == -INF and got[4] == 3.0
    assert xp.floor_divide(xp.asarray(INF), xp.asarray(-2.0)) == -INF
    np.testing.assert_array_equal(xp.floor_divide(xp.arange(7), 2), np.arange(7) // 2)


def test_clip_keeps_the_dtype_and_nan_on_both_paths() -> None:
    x = xp.asarray([NAN, -2.0, 0.5, 3.0], dtype=xp.float32)
    got = xp.clip(x, -1, 1.0)
    assert got.dtype == xp.float32
    np.testing.assert_array_equal(got, np.asarray([NAN, -1.0, 0.5, 1.0], dtype=np.float32))
    assert bool(xp.all(xp.isnan(xp.clip(x, NAN, None))))
    ints = xp.clip(xp.asarray([1, 100], dtype=xp.int8), -1000, 50)  # out-of-range int bound
    assert ints.dtype == xp.int8 and ints.tolist() == [1, 50]
    bounds = xp.clip(x, xp.asarray([0.0, 0, 0, 0], dtype=xp.float32), None)
    np.testing.assert_array_equal(bounds, np.asarray([NAN, 0.0, 0.5, 3.0], dtype=np.float32))


def test_irfftn_reads_a_last_length_of_minus_one_as_the_standard_does() -> None:
    # s[-1] == -1 is 2 (m - 1), as with no s; NumPy reads it as m
    spectrum = np.fft.rfftn(np.arange(12.0).reshape(3, 4))
    for s, axes in [((-1, -1), (0, 1)), ((-1, -1), None), ((3, -1), (0, 1))]:
        out = xp.fft.irfftn(spectrum, s=s, axes=axes)
        np.testing.assert_allclose(out, np.arange(12.0).reshape(3, 4), atol=1e-12)
    assert xp.fft.irfftn(spectrum, s=(3, 5)).shape == (3, 5)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_n_dimensional_transforms_with_s_alone_take_the_last_axes(name: str) -> None:
    # the standard's default; NumPy 2 deprecates leaving axes out with s (and will change it)
    x = np.arange(24.0).reshape(2, 3, 4) + (1j if name in ("ifftn", "irfftn") else 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = getattr(xp.fft, name)(x, s=(3, 4))
    want = getattr(np.fft, name)(x, s=(3, 4), axes=(1, 2))
    np.testing.assert_allclose(got, want, atol=1e-12)


@pytest.mark.parametrize(
    ("name", "kwargs", "shape"),
    [
        ("irfft", {"n": 3}, (2, 3)),
        ("hfft", {"n": 4}, (2, 4)),
        ("irfft", {"n": 5, "axis": 0}, (5, 0)),
        ("irfftn", {"s": (2, 3)}, (2, 3)),
        ("irfftn", {"s": (4,), "axes": (0,)}, (4, 0)),
    ],
)
def test_real_output_transforms_of_empty_inputs_give_zeros(name: str, kwargs: dict, shape: tuple) -> None:
    # zero-padded, an empty input is all zeros; NumPy's returned memory it never wrote
    x = xp.zeros((0, 0) if "axis" in kwargs else (2, 0), dtype=xp.complex128)
    for _ in range(3):
        np.fft.ifft(np.full(64, 1e300 + 1e300j))  # leaves non-zero memory about
        got = getattr(xp.fft, name)(x, **kwargs)
        assert got.shape == shape and got.dtype == xp.float64
        np.testing.assert_array_equal(got, np.zeros(shape))


@pytest.mark.parametrize("exponent", [0.5, np.asarray(0.5, np.float32), np.float32(0.5)])
def test_pow_with_a_scalar_half_keeps_the_special_cases_of_negative_zero_and_infinity(exponent) -> None:
    # NumPy takes a scalar 0.5 as sqrt: -0 ** 0.5 was -0 and -inf ** 0.5 NaN (spec: +0, +inf)
    base = np.array([-0.0, -np.inf, 0.0, np.inf, 4.0], np.float32)
    got = xp.pow(base, exponent)
    np.testing.assert_array_equal(got, [0.0, np.inf, 0.0, np.inf, 2.0])
    assert not np.signbit(got).any() and got.dtype == np.float32


def test_variance_axes_are_checked_as_numpy_checks_them() -> None:
    # an axis out of range had met "tuple index out of range", a float one "'float' object is
    # not iterable", both from counting the reduced elements
    x = np.ones((2, 3), np.float32)
    for fn in (xp.var, xp.std):
        with pytest.raises(np.exceptions.AxisError, match="axis 5 is out of bounds for array of dimension 2"):
            fn(x, axis=5)
        with pytest.raises(TypeError, match="integer"):
            fn(x, axis=1.0)
        with pytest.raises(ValueError, match="repeated axis"):
            fn(x, axis=(1, -1))


def test_variance_without_degrees_of_freedom_is_nan() -> None:
    # NumPy divides by max(N - correction, 0), giving inf; the spec says NaN
    x = np.array([[1.0, 2.0], [3.0, 5.0]], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (and NumPy's warning of it is not passed on)
        for fn in (xp.var, xp.std):
            assert np.isnan(fn(x[0], correction=2)) and np.isnan(fn(x, axis=(0, 1), correction=4.5))
            got = fn(x, axis=1, correction=2, keepdims=True)
            assert got.shape == (2, 1) and got.dtype == np.float32 and np.isnan(got).all()
            assert (
                fn(x, axis=0, correction=1).tolist()
                == np.asarray(getattr(np, fn.__name__)(x, axis=0, ddof=1)).tolist()
            )
