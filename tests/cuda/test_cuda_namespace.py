"""ruda_cuda, the Array API namespace over CuPy: conformance and every fix over CuPy."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator

import numpy as np
import pytest
import ruda
from hypothesis import strategies as st
from hypothesis.extra.array_api import make_strategies_namespace
from ruda.testing import assert_matches_numpy
from ruda.testing.conformance import ConformanceChecks

_ROW = {b.name: b for b in ruda.backends()}["cuda"]
if not _ROW.available:
    pytest.skip(f"cuda backend unavailable: {_ROW.reason} (fix: {_ROW.fix})", allow_module_level=True)

import cupy  # noqa: E402
import ruda_cuda as xp  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _unfused() -> Iterator[None]:
    """These tests check the namespace as it computes unfused (test_cuda_fusion.py checks fusion),
    whichever default the installed packages choose."""
    from ruda_cuda import _fusion

    previous = _fusion.set_enabled(False)
    yield
    _fusion.set_enabled(previous)


@functools.cache
def _strategies() -> object:
    return make_strategies_namespace(xp)


class TestCudaConformance(ConformanceChecks):
    xp = xp
    max_examples = 20

    def _array_of(self, data: st.DataObject, dtype: object, shape: object = None) -> object:
        # The kit bounds real floats only; unbounded complex values overflow in prod, where the
        # order of complex multiplications decides nan vs -0 (undefined by the standard).
        if not self.xp.isdtype(dtype, "complex floating"):
            return super()._array_of(data, dtype, shape)
        xps = _strategies()
        shape = shape if shape is not None else xps.array_shapes(min_dims=0, max_dims=3, max_side=5)
        if not isinstance(shape, tuple):
            shape = data.draw(shape, label="shape")
        part = self.xp.float32 if dtype == self.xp.complex64 else self.xp.float64
        bounded = {"allow_nan": False, "allow_infinity": False, "min_value": -30, "max_value": 30}
        real = data.draw(xps.arrays(part, shape, elements=bounded), label="real")
        imag = data.draw(xps.arrays(part, shape, elements=bounded), label="imag")
        return self.xp.astype(real, dtype) + 1j * self.xp.astype(imag, dtype)


def _bits(x: object) -> np.ndarray:
    return np.asarray(ruda.to_numpy(x)).view(np.uint8)


def test_arrays_are_cupy_arrays_of_ours() -> None:
    x = xp.asarray([1.0, 2.0])
    assert isinstance(x, cupy.ndarray) and type(x) is xp.Array
    assert type(x + 1) is xp.Array and type(x[0]) is xp.Array and type(xp.sum(x)) is xp.Array
    assert x.__array_namespace__() is xp
    with pytest.raises(ValueError, match="2099.12"):
        x.__array_namespace__(api_version="2099.12")


@pytest.mark.parametrize(
    "make",
    [
        lambda: xp.asarray(-0.0),
        lambda: xp.asarray(-0.0, dtype=xp.float32),
        lambda: xp.full((3,), -0.0),
        lambda: xp.full_like(xp.ones(2, dtype=xp.float32), -0.0),
        lambda: xp.asarray(complex(-0.0, -0.0)),
    ],
)
def test_negative_zero_survives_creation(make: object) -> None:
    x = make()  # type: ignore[operator]
    host = ruda.to_numpy(x)
    parts = (host.real, host.imag) if host.dtype.kind == "c" else (host,)
    assert all(np.all(np.signbit(p)) and np.all(p == 0) for p in parts)


def test_negative_zero_survives_setitem() -> None:
    x = xp.ones(4)
    x[1:3] = -0.0
    assert np.signbit(ruda.to_numpy(x)).tolist() == [False, True, True, False]


def test_floor_divide_and_remainder_are_exact() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal(10_000) * 100
    b = rng.standard_normal(10_000)
    b[:5] = [0.1, -0.1, np.inf, -np.inf, 0.0]
    a[:5] = [1.0, 1.0, -3.0, 3.0, 2.0]
    x1, x2 = xp.asarray(a), xp.asarray(b)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(ruda.to_numpy(xp.remainder(x1, x2)), np.remainder(a, b))
        np.testing.assert_array_equal(ruda.to_numpy(x1 % x2), np.remainder(a, b))
        want = np.floor_divide(a, b)
    # the standard: exactly one infinite operand gives the quotient itself (NumPy gives -1 / NaN)
    want[2:4] = [-0.0, -0.0]
    got = ruda.to_numpy(xp.floor_divide(x1, x2))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got[2:4]), [True, True])
    np.testing.assert_array_equal(ruda.to_numpy(x1 // x2), want)
    assert float(xp.asarray(1.0) // 0.1) == 9.0  # floor(1.0 / 0.1) would say 10


def test_inplace_floor_divide_keeps_dtype() -> None:
    x = xp.asarray([7.0, -7.0], dtype=xp.float32)
    x //= 2
    assert x.dtype == xp.float32 and ruda.to_numpy(x).tolist() == [3.0, -4.0]
    y = xp.asarray([7, -7], dtype=xp.int16)
    y %= 3
    assert ruda.to_numpy(y).tolist() == [1, 2]


def test_nextafter_equal_operands_return_second() -> None:
    out = xp.nextafter(xp.asarray(0.0), xp.asarray(-0.0))
    assert float(out) == 0.0 and math.copysign(1.0, float(out)) == -1.0


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("tanh", complex(0.0, math.inf), complex(0.0, math.nan)),
        ("tanh", complex(0.0, math.nan), complex(0.0, math.nan)),
        ("tanh", complex(math.inf, 2.0), complex(1.0, 0.0)),
        ("sqrt", complex(math.inf, 2.0), complex(math.inf, 0.0)),
        ("sqrt", complex(-math.inf, 2.0), complex(0.0, math.inf)),
        ("sqrt", complex(1.0, math.inf), complex(math.inf, math.inf)),
        ("log", complex(math.inf, math.nan), complex(math.inf, math.nan)),
        ("log", complex(math.nan, math.inf), complex(math.inf, math.nan)),
        ("log", complex(-0.0, 0.0), complex(-math.inf, math.pi)),
        ("log1p", complex(-math.inf, math.nan), complex(math.inf, math.nan)),
        ("log1p", complex(-1.0, 0.0), complex(-math.inf, 0.0)),
        ("acosh", complex(0.0, math.nan), complex(math.nan, math.pi / 2)),
        ("log2", complex(-math.inf, 3.0), complex(math.inf, math.pi / math.log(2))),
        ("log2", complex(math.inf, -2.5), complex(math.inf, -0.0)),
        ("log10", complex(-1e-38, math.inf), complex(math.inf, math.pi / 2 / math.log(10))),
        ("log10", complex(-2.5, 0.0), complex(math.log10(2.5), math.pi / math.log(10))),
    ],
)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_special_cases(name: str, value: complex, expected: complex, dtype: str) -> None:
    got = complex(getattr(xp, name)(xp.asarray(value, dtype=getattr(xp, dtype))))
    for part_got, part_want in ((got.real, expected.real), (got.imag, expected.imag)):
        if math.isnan(part_want):
            assert math.isnan(part_got), (name, value, got)
        else:
            assert part_got == pytest.approx(part_want, rel=1e-6), (name, value, got)
            assert math.copysign(1, part_got) == math.copysign(1, part_want), (name, value, got)


@pytest.mark.parametrize("name", ["log2", "log10"])
@pytest.mark.parametrize("value", [-5e-324, -1e-300, -2.0])
def test_logs_of_negative_numbers_are_nan(name: str, value: float) -> None:
    assert math.isnan(float(getattr(xp, name)(xp.asarray(value))))
    assert float(getattr(xp, name)(xp.asarray(-0.0))) == -math.inf


def test_finfo_iinfo_are_python_numbers() -> None:
    info = xp.finfo(xp.float32)
    assert type(info.eps) is float and info.eps == float(np.finfo(np.float32).eps)
    assert info.dtype == np.float32 and xp.finfo(xp.complex64).dtype == np.float32
    assert type(xp.iinfo(xp.int8).max) is int and xp.iinfo(xp.asarray(1)).bits == 64


def test_info_tells_the_truth() -> None:
    info = xp.__array_namespace_info__()
    devices = info.devices()
    assert isinstance(devices, tuple) and len(devices) == cupy.cuda.runtime.getDeviceCount()
    assert info.default_device() in devices
    assert len(info.dtypes()) == 13 and set(info.dtypes(kind="real floating")) == {"float32", "float64"}
    assert info.default_dtypes(device=devices[0])["indexing"] == np.int64
    assert info.capabilities()["max dimensions"] == 64
    with pytest.raises(ValueError, match="cuda:"):
        info.dtypes(device=f"cuda:{len(devices)}")
    with pytest.raises(ValueError, match="unknown dtype kind"):
        info.dtypes(kind="quaternion")


def test_devices_by_name_and_transfers() -> None:
    x = xp.asarray([1, 2, 3], device="cuda:0")
    assert x.device == xp.__array_namespace_info__().devices()[0]
    assert x.to_device("cuda:0") is x
    assert ruda.device_of(x) == ruda.Device("cuda", "0")
    host = ruda.to_device(x, "cpu")
    assert isinstance(host, np.ndarray) and host.tolist() == [1, 2, 3]
    back = ruda.to_device(host, "cuda:0")
    assert type(back) is xp.Array and ruda.to_numpy(back).tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="has no device 'cpu'"):
        xp.asarray([1], device="cpu")
    with pytest.raises(ValueError, match="has no device"):
        xp.zeros(2, device="cuda:99")


def test_index_and_dlpack_methods() -> None:
    assert [10, 20, 30][xp.asarray(1)] == 20
    with pytest.raises(TypeError, match="integer"):
        [1][xp.asarray(0.0)]
    x = xp.arange(4.0)
    y = xp.from_dlpack(x, copy=True)
    y[0] = 7.0
    assert float(x[0]) == 0.0
    assert xp.from_dlpack(x, copy=False).data.ptr == x.data.ptr
    assert ruda.to_numpy(x).tolist() == [0.0, 1.0, 2.0, 3.0]  # through DLPack's copy to the CPU
    with pytest.raises(BufferError, match="copy=False"):
        x.__dlpack__(dl_device=(1, 0), copy=False)


def test_matrix_transpose_repeat_solve_fftn() -> None:
    a = np.arange(24.0).reshape(2, 3, 4)
    assert_matches_numpy(xp.asarray(a).mT, np.swapaxes(a, -1, -2))
    assert_matches_numpy(xp.repeat(xp.asarray([1, 2]), xp.asarray([2, 3])), np.array([1, 1, 2, 2, 2]))
    m = np.array([[[3.0, 1.0], [1.0, 2.0]], [[2.0, 0.0], [0.0, 4.0]]])
    v = np.array([9.0, 8.0])
    want = np.linalg.solve(m, v[None, :, None])[..., 0]
    assert_matches_numpy(xp.linalg.solve(xp.asarray(m), xp.asarray(v)), want)
    b = np.arange(4.0).reshape(2, 2)
    assert_matches_numpy(xp.linalg.solve(xp.asarray(m), xp.asarray(b)), np.linalg.solve(m, b))
    z = np.arange(12.0).reshape(3, 4)
    assert_matches_numpy(
        xp.fft.fftn(xp.asarray(z), s=(6,)), np.fft.fftn(z, s=(6,)), rtol=1e-10, atol=1e-10, check_dtype=False
    )
    assert xp.fft.rfftn(xp.asarray(z, dtype=xp.float32)).dtype == xp.complex64


@pytest.mark.parametrize("axes", [(1, 0), (0, 1), (2, 0), (-1, 0, 1), (0, 2, 1), (1,)])
@pytest.mark.parametrize("sized", [False, True])
def test_real_nd_transforms_take_axes_in_any_order(axes, sized) -> None:
    x = np.random.default_rng(0).standard_normal((3, 4, 6))
    s = tuple(x.shape[a] + 1 for a in axes) if sized else None
    want = np.fft.rfftn(x, s=s, axes=axes, norm="ortho")
    got = xp.fft.rfftn(xp.asarray(x), s=s, axes=axes, norm="ortho")
    assert_matches_numpy(got, want, rtol=1e-10, atol=1e-10)
    back = np.fft.irfftn(want, s=s, axes=axes)
    assert_matches_numpy(xp.fft.irfftn(xp.asarray(want), s=s, axes=axes), back, rtol=1e-10, atol=1e-10)


def test_eig_is_complex() -> None:
    a = np.array([[0.0, -1.0], [1.0, 0.0]])
    values = ruda.to_numpy(xp.linalg.eigvals(xp.asarray(a)))
    assert values.dtype == np.complex128
    assert sorted(values.imag.round(6).tolist()) == [-1.0, 1.0]
    result = xp.linalg.eig(xp.asarray(a, dtype=xp.float32))
    assert result.eigenvalues.dtype == xp.complex64 and result.eigenvectors.shape == (2, 2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_streaming_kernels_match_cupy_exactly(dtype: str) -> None:
    from ruda_cuda._kernels import STREAM_MIN_SIZE

    n = 3 * STREAM_MIN_SIZE + 3  # threads that take two vectors, some one, and a scalar tail
    rng = np.random.default_rng(1)
    a = cupy.asarray(rng.standard_normal(n).astype(dtype))
    b = cupy.asarray(rng.standard_normal(n).astype(dtype) + 3)
    for name, reference in [
        ("add", cupy.add),
        ("subtract", cupy.subtract),
        ("multiply", cupy.multiply),
        ("divide", cupy.divide),
    ]:
        got = getattr(xp, name)(a, b)
        assert type(got) is xp.Array and got.dtype == a.dtype
        cupy.testing.assert_array_equal(got, reference(a, b))
        cupy.testing.assert_array_equal(getattr(xp, name)(a[1:], b[1:]), reference(a[1:], b[1:]))  # unaligned
    for name, reference in [("exp", cupy.exp), ("sin", cupy.sin), ("cos", cupy.cos)]:
        cupy.testing.assert_array_equal(getattr(xp, name)(a), reference(a))


def test_scalars_in_binary_functions_promote_weakly() -> None:
    x = xp.asarray([1, 2], dtype=xp.int8)
    assert xp.add(x, 1).dtype == xp.int8 and xp.multiply(2, x).dtype == xp.int8
    y = xp.asarray([1.5], dtype=xp.float32)
    assert xp.floor_divide(y, 2.0).dtype == xp.float32 and xp.remainder(3.0, y).dtype == xp.float32
    assert xp.result_type(x, 1) == np.int8
    with pytest.raises(ValueError, match="only Python scalars"):
        xp.result_type(1, 2.0)
