"""Every elementwise function, on every dtype the device has, against NumPy."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import ruda_wgpu
from ruda.testing import NUMPY_NAMES, assert_matches_numpy, parametrize_backends
from ruda_wgpu import _elementwise
from ruda_wgpu._ops import _OPS

pytestmark = parametrize_backends("wgpu")

DEVICE_DTYPES = list(ruda_wgpu.__array_namespace_info__().dtypes())
KINDS = {"b": "bool", "i": "signed", "u": "unsigned", "f": "float"}
SPECIAL = np.array(
    [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.5, 1e-7, 1e30, -1e30, np.inf, -np.inf, np.nan], dtype=np.float32
)


def _values(dtype: str, n: int = 40, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        edges = np.array([info.min, info.max, 0, 1, info.max - 1], dtype=dt)
        return np.concatenate([edges, rng.integers(info.min, info.max, n - 5, dtype=dt, endpoint=True)])
    if dt.kind == "c":  # finite parts (the suite checks the standard's complex special cases)
        parts = np.concatenate([SPECIAL[:8], rng.standard_normal(n) * 4])
        return (rng.choice(parts, n) + 1j * rng.choice(parts, n)).astype(dt)
    with np.errstate(over="ignore"):  # +-1e30 become +-inf in float16
        return np.concatenate([SPECIAL, (rng.standard_normal(n) * 4).astype(np.float32)]).astype(dt)


def _cases(nargs: int) -> list:
    cases = []
    for name, op in _OPS.items():
        if op.nargs != nargs:
            continue
        for dtype in DEVICE_DTYPES:
            if np.dtype(dtype).kind in op.kinds:
                cases.append(pytest.param(name, dtype, id=f"{name}-{dtype}"))
    return cases


def _numpy(name: str, *args: np.ndarray) -> np.ndarray:
    fn = getattr(np, NUMPY_NAMES.get(name, name))
    with np.errstate(all="ignore"):
        return np.asarray(fn(*args))


@pytest.mark.parametrize(("name", "dtype"), _cases(1))
def test_unary(xp, name, dtype):
    host = _values(dtype)  # includes +-1e30: sin/cos/tan must reduce huge arguments exactly
    got = getattr(xp, name)(xp.asarray(host))
    want = _numpy(name, host)
    if dtype == "float16":
        # computed in f32 and rounded: within one float16 ulp of NumPy's (the dtype's tolerance)
        assert_matches_numpy(got, want, err_msg=name)
    elif np.dtype(dtype).kind == "f":
        # GPU transcendental functions are accurate to a few ulp, not correctly rounded.
        assert_matches_numpy(got, want, rtol=3e-5 if name not in ("tan",) else 1e-4, atol=1e-6, err_msg=name)
    elif np.dtype(dtype).kind == "c" and want.dtype.kind != "b":
        # a few ulp of the larger part (NumPy's complex functions are not correctly rounded either)
        eps = np.finfo(dtype).eps
        got_host = np.asarray(got)
        scale = np.maximum(np.abs(want.real), np.abs(want.imag)) if want.dtype.kind == "c" else np.abs(want)
        finite = np.isfinite(want)
        assert np.array_equal(finite, np.isfinite(got_host)), name
        err = np.abs(got_host - want)[finite] / np.maximum(scale[finite], np.finfo(dtype).tiny)
        assert err.max(initial=0) <= 64 * eps, f"{name}: {err.max() / eps:.0f} eps"
    else:
        assert_matches_numpy(got, want, err_msg=name)


@pytest.mark.parametrize(("name", "dtype"), _cases(2))
def test_binary(xp, name, dtype):
    a, b = _values(dtype, seed=1), _values(dtype, seed=2)[::-1].copy()
    if name in ("bitwise_left_shift", "bitwise_right_shift"):
        b = np.abs(b.astype(np.int64)) % (np.dtype(dtype).itemsize * 8 + 4)
        b = b.astype(dtype)
    if name == "pow" and np.dtype(dtype).kind in "iu":
        b = (np.abs(b.astype(np.int64)) % 5).astype(dtype)
    if name in ("floor_divide", "remainder") and np.dtype(dtype).kind in "iu":
        b = np.where(b == 0, 1, b).astype(dtype)  # NumPy's integer division by zero is a warning and 0
        if np.dtype(dtype).kind == "i":
            b = np.where(b == -1, 3, b).astype(dtype)
    got = getattr(xp, name)(xp.asarray(a), xp.asarray(b))
    want = _numpy(name, a, b)
    if name == "floor_divide" and np.dtype(dtype).kind == "f":
        # The standard: one infinite operand gives x1 / x2 (NumPy's divmod gives nan or -1).
        one_inf = (np.isinf(a) ^ np.isinf(b)) & ~np.isnan(a) & ~np.isnan(b)
        with np.errstate(all="ignore"):
            want = np.where(one_inf, a / b, want)
    rtol = 1e-5 if name in ("pow", "logaddexp", "hypot", "atan2") and dtype != "float16" else None
    assert_matches_numpy(got, want, rtol=rtol, atol=1e-6 if rtol else None, err_msg=name)


@pytest.mark.parametrize("dtype", [d for d in DEVICE_DTYPES if d != "bool"])
def test_broadcasting_strides_and_scalars(xp, dtype):
    a = _values(dtype, 24, seed=3)[:24].reshape(2, 3, 4)
    b = _values(dtype, 8, seed=4)[-4:]
    x, y = xp.asarray(a), xp.asarray(b)
    assert_matches_numpy(x + y, _numpy("add", a, b))
    assert_matches_numpy(x[:, ::-1, 1:] * y[1:], _numpy("multiply", a[:, ::-1, 1:], b[1:]))
    assert_matches_numpy(
        xp.permute_dims(x, (2, 0, 1)) - y[:, None, None],
        _numpy("subtract", a.transpose(2, 0, 1), b[:, None, None]),
    )
    scalar = 3 if np.dtype(dtype).kind in "iu" else 2.5
    assert_matches_numpy(x * scalar, _numpy("multiply", a, np.asarray(scalar, dtype=dtype)))
    assert_matches_numpy(scalar - x, _numpy("subtract", np.asarray(scalar, dtype=dtype), a))


@pytest.mark.parametrize("dtype", ["float32", "int8", "uint16", "float16"])
@pytest.mark.parametrize(
    ("sa", "sb"),
    [
        ((3, 4), (1,)),
        ((3, 4), (1, 1)),
        ((1,), (3, 4)),
        ((1, 1), (4,)),
        ((4,), (1, 1)),
        ((0,), (1,)),
        ((2, 1), (1, 3)),
        ((6, 4), (1, 4)),
        ((4,), (6, 1)),
        ((2, 3, 4), (3, 1)),
        ((0, 4), (1, 4)),
    ],
)
def test_operands_of_one_dtype_broadcast_as_numpy_does(xp, sa, sb, dtype):
    # (binary's short path, past the promotion rules; dtypes() lists the standard's dtypes:
    # float16 is not one)
    if dtype not in xp.__array_namespace_info__().default_device().dtype_names:
        pytest.skip(f"{dtype} is not on this device")
    a = _values(dtype, 24, seed=5)[: int(np.prod(sa))].reshape(sa)
    b = _values(dtype, 24, seed=6)[-max(int(np.prod(sb)), 1) :][: int(np.prod(sb))].reshape(sb)
    x, y = xp.asarray(a), xp.asarray(b)
    assert_matches_numpy(x - y, _numpy("subtract", a, b))
    assert_matches_numpy(y * x, _numpy("multiply", b, a))
    assert_matches_numpy(xp.maximum(x, y + y), _numpy("maximum", a, _numpy("add", b, b)))  # a pending one


def test_shapes_that_do_not_broadcast_are_refused_by_name(xp):
    x, y = xp.ones((3, 4)), xp.ones((2, 4))
    with pytest.raises(ValueError, match="subtract"):
        x - y
    with pytest.raises(ValueError, match="maximum"):
        xp.maximum(xp.ones((5,)), xp.ones((4,)))


@pytest.mark.parametrize(
    ("a", "b"),
    [("int8", "uint8"), ("int16", "uint8"), ("uint16", "int32"), ("int8", "int16"), ("uint8", "uint32")],
)
def test_mixed_integer_promotion(xp, a, b):
    x, y = _values(a, seed=5), _values(b, seed=6)
    got = xp.add(xp.asarray(x), xp.asarray(y))
    assert_matches_numpy(got, _numpy("add", x, y))
    assert_matches_numpy(xp.less(xp.asarray(x), xp.asarray(y)), np.less(x, y))


def test_integers_with_floats_take_the_floating_dtype(xp):
    ints = xp.asarray(np.array([1, -2, 3], np.int64 if "int64" in DEVICE_DTYPES else np.int32))
    floats = xp.asarray(np.array([0.5, 1.5, -2.5], np.float32))
    got = xp.add(ints, floats)
    assert got.dtype == xp.float32  # PyTorch's rule; NumPy would widen to float64
    assert_matches_numpy(got, np.array([1.5, -0.5, 0.5], np.float32))
    assert xp.result_type(xp.uint8, xp.complex64) == xp.complex64
    if "int64" in DEVICE_DTYPES:  # in any order, though int64 with uint64 alone does not promote
        for order in itertools.permutations([xp.int64, xp.uint64, xp.float32]):
            assert xp.result_type(*order) == xp.float32, order
        with pytest.raises(TypeError, match="promote"):
            xp.result_type(xp.int64, xp.uint64)
    assert not xp.can_cast(xp.int32, xp.float16)  # casting keeps the standard's and NumPy's rules
    with pytest.raises(TypeError, match="promote"):
        xp.add(xp.asarray([True, False]), floats[:2])


@pytest.mark.parametrize("dtype", [d for d in ("float32", "float64") if d in DEVICE_DTYPES])
def test_a_python_complex_makes_real_floating_arrays_complex(xp, dtype):
    # the standard since 2024.12: 1j * x of float32 is complex64, of float64 complex128
    host = np.array([1.5, -2.0, 0.0], dtype)
    x = xp.asarray(host)
    want_dtype = np.dtype("complex64" if dtype == "float32" else "complex128")
    for got, want in [
        (x * 1j, host * np.complex64(1j).astype(want_dtype)),
        (2 - 1j + x, (2 - 1j) + host.astype(want_dtype)),
        (xp.subtract(x, 0.5j), host.astype(want_dtype) - want_dtype.type(0.5j)),
        (xp.where(x > 0, x, 3j), np.where(host > 0, host, 3j).astype(want_dtype)),
    ]:
        assert got.dtype == want_dtype
        assert_matches_numpy(got, want.astype(want_dtype))
    assert xp.result_type(x, 1j) == want_dtype and xp.result_type(getattr(xp, dtype), 1, 1j) == want_dtype
    with pytest.raises(TypeError, match="complex cannot combine"):
        xp.asarray([True]) * 1j  # (booleans mix with nothing)
    with pytest.raises(TypeError, match="complex cannot combine"):
        x[0] = 1j  # (a real array cannot hold it)


@pytest.mark.parametrize("fusion", [True, False])
@pytest.mark.parametrize("real", ["float32", "int8"])
def test_a_real_operand_of_a_complex_operation_has_an_imaginary_zero(xp, real, fusion, monkeypatch):
    """A real operand takes part as x + 0j, so 0 * inf is NaN in it: x * (inf+1j) is inf+nanj,
    as NumPy's. Converted inline, the zero was a constant the driver folded: inf+1j, and
    (1+0j) * [-1.0] gave -1-0j."""
    from ruda_wgpu import _fusion

    monkeypatch.setattr(_fusion, "_enabled", fusion)
    host_real = np.array([1, 2, -1, 0], real)
    host_complex = np.array([complex(np.inf, 1), complex(1, np.inf), 1 + 0j, 1 + 0j], np.complex64)
    x, c = xp.asarray(host_real), xp.asarray(host_complex)
    promoted = host_real.astype(np.complex64)
    with np.errstate(invalid="ignore"):
        for got, want in [
            (x * c, promoted * host_complex),
            (c * x, host_complex * promoted),
            (c - x, host_complex - promoted),
            (x - (1 + 0j), promoted - np.complex64(1 + 0j)),
        ]:
            assert got.dtype == xp.complex64
            assert_matches_numpy(got, want)
            zeros = want.imag == 0  # (their signs; a NaN's is the hardware's: NVIDIA's differ)
            assert np.array_equal(np.signbit(np.asarray(got).imag[zeros]), np.signbit(want.imag[zeros]))


def test_python_types_stand_for_dtypes_as_in_numpy(xp):
    # SciPy writes zeros(n, dtype=bool)
    assert xp.zeros(2, dtype=bool).dtype == xp.bool
    if "int64" in DEVICE_DTYPES:
        assert xp.astype(xp.asarray([1.5]), int).dtype == xp.int64
    if "float64" in DEVICE_DTYPES:
        assert xp.full(2, 1, dtype=float).dtype == xp.float64
        assert xp.asarray([1], dtype=complex).dtype == xp.complex128
    assert xp.isdtype(bool, "bool") and xp.result_type(bool, xp.bool) == xp.bool
    with pytest.raises(TypeError, match="not a dtype"):
        xp.zeros(2, dtype=list)


def test_an_array_where_a_dtype_belongs_is_refused_without_reading_it_back(xp):
    """isdtype(x, ...) for isdtype(x.dtype, ...): the error printed the array's repr, which read
    all of it back from the device (a large array whole) to show it."""
    x = xp.ones((300, 300))
    reads = x.device.host_reads
    for call in (
        lambda: xp.isdtype(x, "real floating"),
        lambda: xp.can_cast(xp.float32, x),
        lambda: xp.astype(x, x),
        lambda: xp.zeros(2, dtype=np.ones(3)),
    ):
        with pytest.raises(
            TypeError, match=r"an array \((Array|ndarray) of shape \(.*\)\) is not a dtype: pass its .dtype"
        ):
            call()
    assert x.device.host_reads == reads


def test_result_type_of_python_scalars_alone_is_what_asarray_gives_them(xp):
    # beyond the standard, which asks for an array or dtype among them; NumPy answers, SciPy asks
    for scalars in [(True,), (True, False), (1, True), (1, 2.5), (2.5,), (1j, 1), (1.0, 1j)]:
        assert xp.result_type(*scalars) == xp.asarray(scalars).dtype, scalars
    with pytest.raises(ValueError, match="at least one"):
        xp.result_type()


def _default_floats(xp):
    defaults = xp.__array_namespace_info__().default_dtypes()
    return defaults["real floating"], defaults["complex floating"]


@pytest.mark.parametrize("dtype", [d for d in DEVICE_DTYPES if np.dtype(d).kind in "iu"])
def test_integers_where_floats_are_wanted_give_the_default_float(xp, dtype):
    # beyond the standard, which leaves mixed kinds to the library: PyTorch's rule
    real, complex_ = _default_floats(xp)
    host = np.array([1, 2, 7], dtype)
    x = xp.asarray(host)
    wide = host.astype(real)
    for got, want in [
        (x / x, wide / wide),
        (x / 2, wide / real.type(2)),
        (3 / x, real.type(3) / wide),
        (x * 0.5, wide * real.type(0.5)),
        (xp.sqrt(x), np.sqrt(wide)),
        (xp.exp(x), np.exp(wide)),
        (xp.atan2(x, x + 1), np.arctan2(wide, wide + 1)),
        (xp.where(x > 1, x, 0.5), np.where(host > 1, wide, real.type(0.5))),
    ]:
        assert got.dtype == real
        assert_matches_numpy(got, want.astype(real))
    assert (x * 1j).dtype == complex_ and xp.result_type(x, 1.5) == real
    assert (x // 2).dtype == x.dtype and (x + 1).dtype == x.dtype  # (integer operations stay so)
    with pytest.raises(TypeError, match="in-place"):
        x /= 2  # (a float result cannot go back into integers, as in NumPy and PyTorch)


@pytest.mark.parametrize("dtype", [d for d in DEVICE_DTYPES if np.dtype(d).kind in "iu"])
def test_python_ints_beyond_the_range_compare_and_divide_as_numpys(xp, dtype):
    """A comparison with a Python int the dtype cannot hold has one answer for every element
    (``uint8 < 300``), and an operation computed in floats takes it as a float (``int8 / 300``),
    as NumPy's; both had raised OverflowError, which arithmetic in the dtype still raises."""
    info = np.iinfo(dtype)
    host = np.array([info.min, 0, info.max], dtype)
    x = xp.asarray(host)
    for value in (info.max + 1, info.min - 1, 2**70, -(2**70)):
        for name in ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal"):
            for got, want in (
                (getattr(xp, name)(x, value), getattr(np, name)(host, value)),
                (getattr(xp, name)(value, x), getattr(np, name)(value, host)),
            ):
                assert_matches_numpy(got, want)
    assert_matches_numpy(xp.divide(x, 2**40), (host / 2**40).astype(np.float32), rtol=1e-6)
    with pytest.raises(OverflowError, match="out of bounds"):
        x + (info.max + 1)


def test_booleans_mix_with_nothing(xp):
    b = xp.asarray([True, False])
    with pytest.raises(TypeError, match="float cannot combine"):
        b + 1.5
    with pytest.raises(TypeError, match="not defined for bool"):
        xp.exp(b)


def test_shapes_that_do_not_broadcast_name_the_operation(xp):
    with pytest.raises(ValueError, match=r"^add\(\): shapes \(3,\), \(4,\) cannot be broadcast together$"):
        xp.ones(3) + xp.ones(4)
    with pytest.raises(ValueError, match=r"^where\(\): shapes"):
        xp.where(xp.ones(3, dtype=xp.bool), xp.ones((2, 1)), xp.ones(4))


@pytest.mark.parametrize("dtype", [d for d in DEVICE_DTYPES if d != "bool"])
def test_astype_matches_numpy(xp, dtype):
    for src in DEVICE_DTYPES:
        if np.dtype(src).kind == "c" and np.dtype(dtype).kind not in "cb":
            continue  # the standard leaves complex -> real to real() and imag() (tested below)
        host = _values(src, seed=7)
        if np.dtype(src).kind == "f":
            host = host[np.isfinite(host) & (np.abs(host) < 100)]  # out-of-range casts are undefined
            if np.dtype(dtype).kind == "u":
                host = np.abs(host)
        got = xp.astype(xp.asarray(host), getattr(xp, dtype))
        with np.errstate(over="ignore"):  # large integers become inf in float16, here as in NumPy
            want = host.astype(dtype)
        assert_matches_numpy(got, want, err_msg=f"{src} -> {dtype}")


@pytest.mark.parametrize("target", [d for d in DEVICE_DTYPES if np.dtype(d).kind in "iu"])
def test_floats_beyond_an_integer_range_saturate_alike_from_every_precision(xp, target):
    """The standard leaves these to the library: 32- and 64-bit targets saturate at their limits
    and NaN gives 0, from float16, float32 and float64 alike, on the device and in asarray
    (float32 had stopped at the largest float32 below 2^31, 2147483520, where float64 gave
    2147483647); narrower targets take the 32-bit result's low bits, as an in-range value's
    are."""
    values = [np.inf, 1e30, -np.inf, -1e30, np.nan]
    sources = [d for d in ("float16", "float32", "float64") if d in DEVICE_DTYPES]
    results = {
        src: np.asarray(xp.astype(xp.asarray(np.array(values, src)), getattr(xp, target))) for src in sources
    }
    info = np.iinfo(target)
    if info.bits >= 32:
        # (below an unsigned range: the signed minimum of its width, wrapped into it)
        below = info.min if info.min < 0 else 1 << (info.bits - 1)
        assert results["float32"].tolist() == [info.max, info.max, below, below, 0]
    for src in sources:
        assert results[src].tolist() == results["float32"].tolist(), src
        # asarray converts host floats by the same rules (NumPy had, with C's: NaN as INT_MIN)
        uploaded = xp.asarray(np.array(values, src), dtype=getattr(xp, target))
        assert np.asarray(uploaded).tolist() == results[src].tolist(), src


@pytest.mark.parametrize("dtype", [d for d in DEVICE_DTYPES if d.startswith("complex")])
def test_complex_to_real_is_refused_and_division_by_zero_is_infinite(xp, dtype):
    x = xp.asarray(np.array([1 + 2j, 0j], dtype=dtype))
    with pytest.raises(TypeError, match="real"):
        xp.astype(x, xp.float32)
    q = np.asarray(xp.divide(x, xp.asarray(np.zeros(2, dtype=dtype))))
    assert np.isinf(q[0].real) and np.isinf(q[0].imag) and np.isnan(q[1].real)
    assert_matches_numpy(xp.real(x), np.array([1, 0], dtype=np.dtype(dtype).char.lower()))
    assert_matches_numpy(xp.imag(x), np.array([2, 0], dtype=np.dtype(dtype).char.lower()))


@pytest.mark.parametrize("dtype", [d for d in DEVICE_DTYPES if d.startswith("complex")])
def test_complex_functions_at_the_ends_of_the_range(xp, dtype):
    """Finite values whose products or moduli overflow or underflow, as NumPy computes them (each
    had given inf, NaN or 0 here): z * z with a part near the largest float, log and sign of
    |z| past it, 1 / z of subnormal parts, 0 ** z for Re z > 0, and a huge base's power."""
    big = np.finfo(np.dtype(dtype).char.lower()).max / 1.2
    tiny = np.finfo(np.dtype(dtype).char.lower()).smallest_subnormal * 1e3 if dtype == "complex128" else 0.0
    z = np.array([big + 0.5j, big + 0j, big + 1j * big, -big - 1j * big / 3], dtype=dtype)
    # (squares of two huge parts differ as the compiler contracts x^2 - y^2: NumPy's is -inf)
    for name, values in (("square", z[:2]), ("log", z), ("log2", z), ("log10", z), ("sign", z)):
        got, want = np.asarray(getattr(xp, name)(xp.asarray(values))), _numpy(name, values)
        if name == "sign":  # (NumPy's sign of big + big j is 1j: its |z| overflows too)
            want = _numpy(name, values / 2)
        # (parts below the smallest normal may be flushed: sign(3e38 + 0.5j) is 1 + 1.8e-39j)
        atol = np.finfo(dtype).smallest_normal
        np.testing.assert_allclose(got, want, rtol=8 * np.finfo(dtype).eps, atol=atol, err_msg=name)
    if tiny:  # (float32 subnormals may be flushed by the device)
        small = np.array([tiny + 0j, 1j * tiny, tiny / 8 + 1j * tiny], dtype=dtype)
        np.testing.assert_array_equal(
            np.asarray(xp.reciprocal(xp.asarray(small))), _numpy("reciprocal", small)
        )
    exponent = np.array([2 + 1j, 0.5 - 3j, -1 + 1j, 0j], dtype=dtype)
    got = np.asarray(xp.pow(xp.asarray(np.zeros(4, dtype)), xp.asarray(exponent)))
    np.testing.assert_array_equal(got, _numpy("pow", np.zeros(4, dtype), exponent))
    got = np.asarray(xp.pow(xp.asarray(z[2:3]), xp.asarray(np.array([-0.5], dtype))))
    np.testing.assert_allclose(
        got, _numpy("pow", z[2:3], np.array([-0.5], dtype)), rtol=64 * np.finfo(dtype).eps
    )


def test_where_and_clip(xp):
    a = _values("float32", seed=8)
    b = _values("float32", seed=9)
    c = a > b
    assert_matches_numpy(xp.where(xp.asarray(c), xp.asarray(a), xp.asarray(b)), np.where(c, a, b))
    assert_matches_numpy(xp.where(xp.asarray(c), xp.asarray(a), 0.0), np.where(c, a, np.float32(0)))
    ints = _values("int16", seed=10)
    assert_matches_numpy(xp.clip(xp.asarray(ints), -5, 7), np.clip(ints, -5, 7))
    finite = a[np.isfinite(a)]
    assert_matches_numpy(xp.clip(xp.asarray(finite), min=-1.0), np.clip(finite, -1.0, None))


def test_rounding_of_large_floats_is_identity(xp):
    """Floats beyond 2^23 are integers already; rounding must not route them through int32."""
    host = np.array([-2306268012.0, 4.6373153e17, 3.0e38, -8388609.0, 8388607.5], np.float32)
    for name in ("floor", "ceil", "trunc", "round"):
        assert_matches_numpy(getattr(xp, name)(xp.asarray(host)), getattr(np, name)(host), err_msg=name)


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint8", "int64"])
def test_integers_to_a_negative_python_int_power_are_refused(xp, dtype):
    """As in NumPy and PyTorch (the result had been 0 for every base but 1 and -1); an exponent
    array's negative elements give the power's integer part, unchecked."""
    if dtype not in DEVICE_DTYPES:
        pytest.skip(f"the device lacks {dtype}")
    x = xp.asarray(np.array([2, 1, 0], dtype))
    for power in (lambda: x**-1, lambda: xp.pow(x, -3)):
        with pytest.raises(ValueError, match="negative integer power"):
            power()
    assert_matches_numpy(x**2, np.array([4, 1, 0], dtype))
    if np.dtype(dtype).kind == "i":
        exponents = xp.asarray(np.array([-1, -2, -1], dtype))
        assert_matches_numpy(
            xp.asarray(np.array([2, -1, -1], dtype)) ** exponents, np.array([0, 1, -1], dtype)
        )


@pytest.mark.parametrize("dtype", ["float16", *(d for d in DEVICE_DTYPES if np.dtype(d).kind == "f")])
def test_float_remainder_of_signed_zeros_and_infinities(xp, dtype):
    """A zero's remainder takes the divisor's sign, an infinite divisor's too, as the standard
    and NumPy have it (0 % -inf had been +0, -0 % inf -0)."""
    zeros_and_more = np.array([0.0, -0.0, 0.0, -0.0, 5.0, -5.0, 5.0, -5.0], dtype)
    infinities = np.array([-np.inf, np.inf, np.inf, -np.inf, np.inf, np.inf, -np.inf, -np.inf], dtype)
    got = np.asarray(xp.remainder(xp.asarray(zeros_and_more), xp.asarray(infinities)))
    want = np.remainder(zeros_and_more, infinities)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", [d for d in DEVICE_DTYPES if np.dtype(d).kind == "i"])
def test_signed_division_every_sign_and_extreme(xp, dtype):
    """floor_divide and remainder over every pair of signs, with the dtype's extremes and -1."""
    info = np.iinfo(dtype)
    small = np.arange(-9, 10)
    a = np.concatenate([small, [info.min, info.min + 1, info.max, info.max - 1]]).astype(dtype)
    b = np.concatenate([small, [info.min, info.max, -1, 1]]).astype(dtype)
    a, b = np.repeat(a, len(b)), np.tile(b, len(a))
    x, y = xp.asarray(a), xp.asarray(b)
    with np.errstate(all="ignore"):  # NumPy warns of x // 0 and min // -1
        assert_matches_numpy(x // y, a // b)
        assert_matches_numpy(x % y, a % b)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "uint16", "uint32"])
def test_float_to_int_truncates_and_wraps_like_numpy(xp, dtype):
    values = np.array([-3.7, -1.5, -0.9, -0.0, 0.4, 1.5, 127.9, 255.5, 300.7, 65535.5, 1e5], np.float32)
    if dtype == "uint32":
        values = np.concatenate([values, [2.5e9, 4.2e9]]).astype(np.float32)
    if dtype == "int32":
        values = np.concatenate([values, [2.1e9, -2.1e9]]).astype(np.float32)
    with np.errstate(invalid="ignore"):
        want = values.astype(np.int64).astype(dtype)  # C casts: truncate, then wrap
    assert_matches_numpy(xp.astype(xp.asarray(values), getattr(xp, dtype)), want)


@pytest.mark.parametrize("dtype", [d for d in DEVICE_DTYPES if np.dtype(d).kind in "iu"])
def test_shifts_past_the_width(xp, dtype):
    """Counts from past the width, and negative ones (which had shifted by their low bits), as NumPy's."""
    bits = np.dtype(dtype).itemsize * 8
    a = np.array([1, 5, np.iinfo(dtype).max, np.iinfo(dtype).min], dtype=dtype)
    low = -min(bits + 3, -int(np.iinfo(dtype).min))
    counts = np.arange(low, bits + 40, dtype=np.int64).astype(dtype)  # (unsigned: the negatives wrap)
    a, counts = np.repeat(a, len(counts)), np.tile(counts, len(a))
    for op in ("bitwise_left_shift", "bitwise_right_shift"):
        want = getattr(np, op.removeprefix("bitwise_"))(a, counts)
        assert_matches_numpy(getattr(xp, op)(xp.asarray(a), xp.asarray(counts)), want, err_msg=op)


def test_every_operation_is_a_named_function_of_the_namespace(xp):
    # the table of operations and the written-out functions must not drift apart
    for name in _OPS:
        fn = getattr(xp, name)
        assert fn is getattr(_elementwise, name) and fn.__name__ == name and fn.__doc__, name
    written = {
        n
        for n, v in vars(_elementwise).items()
        if callable(v) and getattr(v, "__module__", "") == _elementwise.__name__
    }
    assert written - {"_unary"} == set(_OPS)


def test_operators_are_methods_of_the_array_type(xp):
    from ruda._operators import ArrayOperators

    for dunder in ("add", "radd", "iadd", "matmul", "rmatmul", "eq", "lt", "neg", "invert", "rshift"):
        assert f"__{dunder}__" in vars(ArrayOperators), dunder
        assert f"__{dunder}__" not in vars(xp.Array), dunder  # not bound onto the class later
    assert issubclass(xp.Array, ruda_wgpu._operators.Operators)
    assert issubclass(xp.Array, ArrayOperators)
