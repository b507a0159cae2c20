"""ruda_torch, the Array API namespace over PyTorch: conformance, the info's truth, and every fix
over array-api-compat's torch namespace, each checked against NumPy or the spec's special cases.

Runs on the namespace's default device: the CPU normally, a GPU with RUDA_TORCH_DEVICE=cuda:0.
"""

from __future__ import annotations

import inspect
import math
import warnings

import numpy as np
import pytest
import ruda
from hypothesis import strategies as st
from hypothesis.extra.array_api import make_strategies_namespace
from ruda import spec
from ruda.testing import assert_matches_numpy, assert_same_bits, parametrize_backends, python_output
from ruda.testing.conformance import ConformanceChecks
from ruda.testing.programs import run_programs

_ROW = {b.name: b for b in ruda.backends()}.get("torch")
if _ROW is None or not _ROW.available:
    pytest.skip(f"torch backend unavailable: {_ROW and _ROW.reason}", allow_module_level=True)

import ruda_torch as xp  # noqa: E402
import torch  # noqa: E402

INF, NAN = math.inf, math.nan
with warnings.catch_warnings():  # hypothesis looks for Tensor.__array_namespace__, which torch lacks
    warnings.simplefilter("ignore")
    _XPS = make_strategies_namespace(xp)


pytestmark = pytest.mark.filterwarnings(
    # hypothesis looks for Tensor.__array_namespace__, which torch does not have (see the skips file)
    "ignore:Could not determine whether module ruda_torch is an Array API library"
)


class TestTorchConformance(ConformanceChecks):
    xp = xp
    max_examples = 15

    def _getitem_basic(self, data: st.DataObject) -> None:
        # Tensor indexing refuses negative slice steps (the skips file says so; xp.flip does it),
        # so the kit's index strategy is narrowed to positive steps.
        x = self._array(data, "numeric")
        strategy = _XPS.indices(x.shape).filter(_positive_steps)
        index = data.draw(strategy, label="index")
        assert_matches_numpy(x[index], host(x)[index], err_msg=f"x[{index!r}]")


def _positive_steps(index: object) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return all(not (isinstance(p, slice) and p.step is not None and p.step < 0) for p in parts)


def test_negative_slice_steps_raise_a_clear_error() -> None:
    with pytest.raises(ValueError, match="step must be greater than zero"):
        xp.arange(4)[::-1]
    assert host(xp.flip(xp.arange(4))).tolist() == [3, 2, 1, 0]


def host(x: torch.Tensor) -> np.ndarray:
    """A NumPy copy of a tensor on any device."""
    return x.detach().cpu().numpy()


def c(values: list[complex], dtype: torch.dtype = torch.complex128) -> torch.Tensor:
    """A complex tensor built part by part (``complex(inf, 0)`` through Python keeps exact parts)."""
    real = xp.asarray([v.real for v in values], dtype=torch.float64)
    imag = xp.asarray([v.imag for v in values], dtype=torch.float64)
    return torch.complex(real, imag).to(dtype)


def same_complex(got: torch.Tensor, want: list[complex]) -> None:
    """Real and imaginary parts equal, NaN where NaN, zeros with the same sign."""
    got_h = host(got)
    for g, w in zip(got_h.tolist(), want, strict=True):
        for a, b in ((g.real, w.real), (g.imag, w.imag)):
            if math.isnan(b):
                assert math.isnan(a), (got_h, want)
            else:
                assert a == b and math.copysign(1, a) == math.copysign(1, b), (got_h, want)


@parametrize_backends("torch")
def test_registry_gives_this_namespace(xp: object) -> None:
    assert xp is ruda.namespace("torch") is ruda.torch
    assert ruda.device_of(ruda.torch.ones(2)) == ruda.Device("torch", str(xp.ones(1).device))


def test_namespace_has_the_whole_spec() -> None:
    missing = [n for n in (*spec.FUNCTIONS, *spec.CONSTANTS, *spec.DTYPES) if not hasattr(xp, n)]
    assert not missing
    assert not [n for n in (*spec.LINALG, "eig", "eigvals") if not hasattr(xp.linalg, n)]
    assert not [n for n in spec.FFT if not hasattr(xp.fft, n)]
    assert xp.__array_api_version__ == "2025.12"


def test_returns_plain_tensors() -> None:
    x = xp.exp(xp.ones(3))
    assert type(x) is torch.Tensor and x.device == xp.__array_namespace_info__().default_device()


# -- __array_namespace_info__ -----------------------------------------------------------------------
def test_info_devices_and_defaults() -> None:
    info = xp.__array_namespace_info__()
    devices = info.devices()
    assert isinstance(devices, tuple) and devices[0] == torch.device("cpu")
    assert len(devices) == 1 + torch.cuda.device_count()
    assert info.default_device() in devices
    assert info.default_dtypes() == {
        "real floating": torch.float32,
        "complex floating": torch.complex64,
        "integral": torch.int64,
        "indexing": torch.int64,
    }
    assert set(info.dtypes(kind=("bool", "complex floating"))) == {"bool", "complex64", "complex128"}
    with pytest.raises(ValueError, match="unknown dtype kind 'floats'"):
        info.dtypes(kind="floats")
    with pytest.raises(ValueError, match="torch:cuda:7 is not available"):
        info.dtypes(device="torch:cuda:7")


def test_info_lists_a_dtype_only_where_its_operations_work() -> None:
    info = xp.__array_namespace_info__()
    listed, partial = info.dtypes(), info.partial_dtypes()
    assert set(listed) | set(partial) == set(spec.DTYPES)
    assert not set(listed) & set(partial)
    for name, ops in partial.items():
        assert ops["fails"], name
        # each operation said to fail really does fail, each said to work really works
        a, b = xp.asarray([3, 2], dtype=getattr(xp, name)), xp.asarray([1, 2], dtype=getattr(xp, name))
        for op in ops["fails"]:
            if op == "add":
                with pytest.raises((NotImplementedError, RuntimeError)):
                    xp.add(a, b)
        if "multiply" in ops["works"]:
            assert host(xp.multiply(a, b).to(torch.int64)).tolist() == [3, 4]


def test_partial_dtypes_match_the_installed_torch() -> None:
    # In torch 2.13 on the CPU uint16/32/64 cannot be added; a torch that can is fully listed.
    partial = xp.__array_namespace_info__().partial_dtypes()
    try:
        torch.add(torch.ones(1, dtype=torch.uint16), torch.ones(1, dtype=torch.uint16))
        can_add = True
    except (NotImplementedError, RuntimeError):
        can_add = False
    assert ("uint16" not in partial) or not can_add


# -- creation ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((10,), {}),
        ((1, 10, 3), {}),
        ((10, 1, -3), {}),
        ((0.0, 1.0, 0.1), {}),
        ((5,), {"dtype": "uint8"}),
        ((2**62, 2**62 + 5, 2), {}),
        ((1.0, 0.0, 0.25), {"dtype": "float64"}),
        ((3, 3), {}),
    ],
)
def test_arange_has_the_spec_length_and_values(args: tuple[float, ...], kwargs: dict[str, str]) -> None:
    kw = {k: getattr(xp, v) for k, v in kwargs.items()}
    got = xp.arange(*args, **kw)
    want = np.arange(
        *args, dtype=kwargs.get("dtype", "int64" if all(isinstance(a, int) for a in args) else "float32")
    )
    assert_matches_numpy(got, want, rtol=1e-6)


def test_creation_takes_every_device_spelling() -> None:
    for device in ("cpu", "torch:cpu", ruda.Device.parse("torch:cpu"), torch.device("cpu")):
        assert xp.zeros(2, device=device).device == torch.device("cpu")
    with pytest.raises(ValueError, match="not a ruda_torch device"):
        xp.zeros(2, device=ruda.Device.parse("wgpu:0"))
    with pytest.raises(TypeError, match="a ruda_torch device is"):
        xp.zeros(2, device=1.5)


def test_full_and_like_functions() -> None:
    assert xp.full(3, True).dtype == torch.bool
    x = xp.ones((2, 3), dtype=xp.int16)
    assert xp.full_like(x, 7).dtype == torch.int16 and int(xp.full_like(x, 7)[1, 2]) == 7
    assert xp.zeros_like(x, dtype=xp.float64).dtype == torch.float64


def test_asarray_copy_false_refuses_what_it_must_copy() -> None:
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray([1, 2, 3], copy=False)


# -- dtypes -----------------------------------------------------------------------------------------
def test_result_type_follows_the_spec_table() -> None:
    assert xp.result_type(xp.uint8, xp.int8) == torch.int16
    assert xp.result_type(xp.uint16, xp.int16) == torch.int32
    assert xp.result_type(xp.uint32, xp.int8) == torch.int64
    assert xp.result_type(xp.uint64, xp.uint8) == torch.uint64
    assert xp.result_type(xp.float32, xp.complex128) == torch.complex128
    assert xp.result_type(xp.int8, 1, 2.0) == torch.float32
    with pytest.raises(TypeError, match="no common integer dtype"):
        xp.result_type(xp.int64, xp.uint64)
    assert not xp.can_cast(xp.int64, xp.uint64) and xp.can_cast(xp.uint8, xp.int16)


def test_finfo_and_iinfo_name_dtypes() -> None:
    assert xp.finfo(xp.complex64).dtype == torch.float32
    assert xp.finfo(xp.float64).eps == float(np.finfo(np.float64).eps)
    info = xp.iinfo(xp.ones(1, dtype=xp.int16))
    assert (info.min, info.max, info.dtype) == (-32768, 32767, torch.int16)


def test_isdtype_refuses_another_librarys_dtype() -> None:
    """``isdtype(np.dtype("int64"), "integral")`` had answered False, a quiet wrong answer."""
    assert xp.isdtype(xp.int64, "integral") and xp.isdtype(xp.float32, (xp.int8, "real floating"))
    for dtype, kind in ((np.dtype("int64"), "integral"), (np.float64, "real floating")):
        with pytest.raises(TypeError, match="torch dtype"):
            xp.isdtype(dtype, kind)
    with pytest.raises(TypeError, match="kind must be"):
        xp.isdtype(xp.int8, np.dtype("int8"))


def test_a_read_only_array_copied_in_raises_no_warning() -> None:
    """``asarray(copy=True)`` of a read-only 0-D NumPy array (a remote server's uploads are)
    copied it but made torch warn that writing the tensor was undefined (the warning comes once
    a process: a fresh one checks it)."""
    code = (
        "import warnings, numpy as np, ruda_torch as xp\n"
        "warnings.simplefilter('error')\n"
        "a = np.frombuffer(bytes(4), dtype=np.int32).reshape(())\n"
        "t = xp.asarray(a, copy=True); t += 1\n"
        "print(int(t), int(a))\n"
    )
    assert python_output(code).strip() == "1 0"


def test_read_only_arrays_are_copied_in(tmp_path) -> None:
    """torch has no read-only tensors: one over a read-only NumPy array had let a write change
    the array (a read-only memmap's crashed the process). Such arrays are copied, or refused
    where no copy is allowed."""
    path = tmp_path / "a.bin"
    np.arange(4.0).tofile(path)
    for make in (
        lambda: np.memmap(path, dtype=np.float64, mode="r"),
        lambda: np.broadcast_to(np.arange(4.0), (2, 4)),
    ):
        for bring_in in (xp.asarray, xp.from_dlpack, lambda a: ruda.to_device(a, "torch:cpu")):
            a = make()
            t = bring_in(a)
            t[..., 0] = 100.0
            assert np.asarray(a).tolist() == make().tolist() and t[..., 0].tolist() != a[..., 0].tolist()
        with pytest.raises(ValueError, match="read-only"):
            xp.asarray(make(), copy=False)
        with pytest.raises(BufferError, match="read-only"):
            xp.from_dlpack(make(), copy=False)


def test_inverse_ffts_of_real_input_export() -> None:
    """torch's ifft and ihfft of a real tensor return it lazily conjugated (its conjugate bit
    set), which DLPack, NumPy and a remote server's reads refused."""
    host = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    for name in ("ifft", "ihfft"):
        got = getattr(xp.fft, name)(xp.asarray(host))
        assert not got.is_conj()
        np.testing.assert_allclose(np.from_dlpack(got), getattr(np.fft, name)(host), rtol=1e-6)


# -- element-wise fixes -----------------------------------------------------------------------------
def test_floor_divide_with_one_infinite_operand() -> None:
    got = xp.floor_divide(xp.asarray([INF, -INF, 1.0, -1.0, 7.0]), xp.asarray([1.0, 1.0, -INF, INF, 2.0]))
    assert host(got).tolist() == [INF, -INF, -0.0, -0.0, 3.0]
    assert [math.copysign(1, v) for v in host(got)[2:4]] == [-1, -1]
    assert_matches_numpy(xp.floor_divide(xp.asarray([7, -7]), 2), np.array([3, -4]))


def test_remainder_is_exact_for_large_floats_and_signs_zeros_like_the_divisor() -> None:
    x1 = xp.asarray([1e30, -0.0, 0.0, -3.0, 3.0, 5.5], dtype=xp.float64)
    x2 = xp.asarray([7.0, 1.0, -1.0, INF, -INF, -2.0], dtype=xp.float64)
    assert_matches_numpy(xp.remainder(x1, x2), np.remainder(host(x1), host(x2)))
    zeros = host(xp.remainder(x1, x2))[1:3]
    assert [math.copysign(1, v) for v in zeros] == [1, -1]


def test_sign_keeps_nan() -> None:
    x = xp.asarray([NAN, -2.0, -0.0, 3.0, INF])
    got = host(xp.sign(x))
    assert np.isnan(got[0]) and got[1:].tolist() == [-1.0, 0.0, 1.0, 1.0]
    assert host(xp.sign(xp.asarray([5.0, -1.0]))).tolist() == [1.0, -1.0]  # the fast path


@pytest.mark.parametrize(
    ("z", "want"),
    [
        (complex(-0.0, 0), complex(0, 0)),
        (complex(INF, 0), complex(INF, 0)),
        (complex(-INF, INF), complex(-1, 0)),
        (complex(-INF, NAN), complex(-1, 0)),
        (complex(INF, NAN), complex(INF, NAN)),
        (complex(NAN, 0), complex(NAN, 0)),
    ],
)
def test_expm1_complex_special_cases(z: complex, want: complex) -> None:
    same_complex(xp.expm1(c([z])), [want])


def test_expm1_complex_is_accurate_near_zero() -> None:
    z = c([complex(1e-10, 1e-10), complex(0.5, -2.0)])
    assert_matches_numpy(xp.expm1(z), np.expm1(host(z)))


def test_log1p_tanh_acos_complex_special_cases() -> None:
    same_complex(xp.log1p(c([complex(INF, NAN), complex(NAN, INF)])), [complex(INF, NAN)] * 2)
    same_complex(xp.log1p(c([complex(9e15, INF)])), [complex(INF, math.pi / 2)])
    same_complex(xp.tanh(c([complex(INF, 6.7e153), complex(-INF, -2.0)])), [complex(1, 0), complex(-1, -0.0)])
    same_complex(
        xp.acos(c([complex(0, 0), complex(-0.0, -0.0)])),
        [complex(math.pi / 2, -0.0), complex(math.pi / 2, 0)],
    )
    same_complex(xp.tanh(c([complex(0, INF), complex(-0.0, NAN)])), [complex(0, NAN), complex(-0.0, NAN)])
    same_complex(xp.acosh(c([complex(0, NAN)])), [complex(NAN, math.pi / 2)])


def test_integer_contractions_without_a_gpu_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    # On CUDA, torch has no integer matmul; ruda_torch multiplies and sums instead. That path
    # runs here on the CPU by pretending every device needs it, and must agree with NumPy.
    from ruda_torch import _contraction

    monkeypatch.setattr(_contraction, "_needs_integer_path", lambda x: not x.dtype.is_floating_point)
    rng = np.random.default_rng(0)
    a, b = rng.integers(-9, 9, (2, 3, 4)), rng.integers(-9, 9, (3, 4, 5))
    ta, tb = xp.asarray(a), xp.asarray(b)
    assert_matches_numpy(xp.tensordot(ta, tb, axes=2), np.tensordot(a, b, axes=2))
    assert_matches_numpy(xp.tensordot(ta, tb, axes=([1], [0])), np.tensordot(a, b, axes=([1], [0])))
    assert_matches_numpy(xp.matmul(ta, xp.asarray(b[0])), a @ b[0])
    assert_matches_numpy(xp.matmul(xp.asarray(b[0, :, 0]), xp.asarray(b[1])), b[0, :, 0] @ b[1])
    v = b[0, :, 0]  # 4 values, like the last axis of a
    assert_matches_numpy(xp.vecdot(ta, xp.asarray(v)), np.sum(a * v, axis=-1))
    i8 = xp.asarray([[100, 100]], dtype=xp.int8)
    assert_matches_numpy(
        xp.matmul(i8, xp.asarray([[2], [1]], dtype=xp.int8)),
        np.array([[100 * 2 + 100]], dtype=np.int64).astype(np.int8),
    )  # wraps like the CPU
    with pytest.raises(ValueError, match="do not align"):
        xp.matmul(ta, ta)
    # 0-d operands (axes=0) and empty axes, where -1 in a reshape would be ambiguous
    for x, y, axes in [((), (), 0), ((2, 0), (0, 3), 1), ((0,), (0,), 1), ((3,), (2,), 0)]:
        u, w = rng.integers(-9, 9, x), rng.integers(-9, 9, y)
        assert_matches_numpy(xp.tensordot(xp.asarray(u), xp.asarray(w), axes=axes), np.tensordot(u, w, axes))


def test_qr_r_is_upper_triangular() -> None:
    x = xp.asarray([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=xp.float64)
    q, r = xp.linalg.qr(x)
    assert (host(r) == np.triu(host(r))).all()
    assert_matches_numpy(q @ r, host(x))


# -- statistics, sets, manipulation -----------------------------------------------------------------
@pytest.mark.parametrize("correction", [0, 1, 1.5, 3])
@pytest.mark.parametrize("axis", [None, 1, (0, 1), ()])
def test_var_and_std_follow_the_spec(correction: float, axis: object) -> None:
    x = xp.asarray([[1.0, 2.0, 4.0], [0.5, -1.0, 8.0]], dtype=xp.float64)
    n = 6 if axis in (None, (0, 1)) else 3 if axis == 1 else 1
    if n - correction <= 0:
        want = np.full(np.var(host(x), axis=axis).shape, np.nan)
    else:
        want = np.var(host(x), axis=axis, ddof=correction)
    assert_matches_numpy(xp.var(x, axis=axis, correction=correction), want)
    assert_matches_numpy(xp.std(x, axis=axis, correction=correction), np.sqrt(want))
    assert xp.var(x, axis=axis, keepdims=True).ndim == 2


def test_unique_all_treats_nans_as_distinct_and_finds_first_indices() -> None:
    x = xp.asarray([3.0, NAN, 1.0, 3.0, NAN, -0.0, 0.0])
    values, indices, inverse, counts = xp.unique_all(x)
    assert host(values)[:3].tolist() == [0.0, 1.0, 3.0] and np.isnan(host(values)[3:]).all()
    assert host(indices).tolist() == [5, 2, 0, 1, 4]
    assert host(counts).tolist() == [2, 1, 2, 1, 1]
    assert_matches_numpy(values[inverse], host(x))


def test_unique_functions_take_complex_and_keep_the_shape_of_inverse() -> None:
    x = xp.asarray([[1 + 1j, 2j], [1 + 1j, 2j]])
    values, counts = xp.unique_counts(x)
    assert sorted(host(values).tolist(), key=abs) == [1 + 1j, 2j] and host(counts).tolist() == [2, 2]
    assert xp.unique_inverse(x).inverse_indices.shape == x.shape
    assert xp.unique_values(xp.asarray([], dtype=xp.complex64)).shape == (0,)


def test_isin_takes_elements_of_any_layout() -> None:
    # torch.isin raises "view size is not compatible" on a non-contiguous 2-d second argument, such
    # as a transpose or a slice of a chunk (Cubed's isin hands it those)
    values, elements = np.array([5, 6, 7, 3, 1, -1, 0]), np.array([[3, 1], [-1, 1], [1, 0]])
    transposed = xp.matrix_transpose(xp.asarray(elements))
    sliced = xp.asarray(np.tile(elements, (1, 2)))[:, 1:3]
    for other, want in ((transposed, elements.T), (sliced, np.tile(elements, (1, 2))[:, 1:3])):
        for invert in (False, True):
            got = xp.isin(xp.asarray(values), other, invert=invert)
            assert_matches_numpy(got, np.isin(values, want, invert=invert))


def test_isin_takes_bool_arrays() -> None:
    # torch.isin refuses them ("Unsupported input type ... Bool")
    got = xp.isin(xp.asarray([True, False, True]), xp.asarray([True]))
    assert got.tolist() == [True, False, True]
    assert xp.isin(xp.asarray([0, 1, 2]), xp.asarray([True])).tolist() == [False, True, False]


def test_count_nonzero_over_no_axis_counts_each_element_alone() -> None:
    # array-api-compat's counted over every axis, and with keepdims raised
    host_x = np.array([[1, 0, 2], [0, 0, 3]])
    x = xp.asarray(host_x)
    for keepdims in (False, True):
        assert_matches_numpy(xp.count_nonzero(x, axis=(), keepdims=keepdims), (host_x != 0).astype(np.int64))
    assert_matches_numpy(xp.count_nonzero(x, axis=1), np.count_nonzero(host_x, axis=1))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_orders_nan_last_as_sort_does(side: str) -> None:
    # torch.searchsorted([5, nan], 2.5) gave 2: its binary search met the NaNs sort leaves last
    sequences = [[5.0, NAN], [1.0, 2.0, NAN, NAN], [-INF, 1.0, INF, NAN], [NAN], [1.0, 2.0]]
    wanted = np.array([2.5, 5.0, 6.0, NAN, INF, -INF, 1.0])
    for sequence in sequences:
        host_x1 = np.array(sequence)
        got = xp.searchsorted(xp.asarray(host_x1), xp.asarray(wanted), side=side)
        assert got.tolist() == np.searchsorted(host_x1, wanted, side=side).tolist(), sequence
    unsorted = np.array([3.0, NAN, 1.0])
    order = np.argsort(unsorted)
    got = xp.searchsorted(xp.asarray(unsorted), xp.asarray(wanted), side=side, sorter=xp.asarray(order))
    assert got.tolist() == np.searchsorted(unsorted, wanted, side=side, sorter=order).tolist()


def test_broadcast_shapes_raises_value_error() -> None:
    assert xp.broadcast_shapes((2, 1), (3,)) == (2, 3)
    with pytest.raises(ValueError, match="do not broadcast"):
        xp.broadcast_shapes((4,), (3,))


def test_eig_returns_complex_named_results() -> None:
    result = xp.linalg.eig(xp.asarray([[2.0, 0.0], [0.0, 3.0]]))
    assert result.eigenvalues.dtype == torch.complex64 and result.eigenvectors.shape == (2, 2)
    assert sorted(host(xp.linalg.eigvals(xp.asarray([[2.0, 0.0], [0.0, 3.0]]))).real.tolist()) == [2.0, 3.0]


def test_pow_with_a_python_half_keeps_the_special_cases() -> None:
    # torch takes x ** 0.5 as sqrt(x) and x ** -0.5 as rsqrt(x): -0 and -inf gave -0, NaN and
    # -inf, NaN, where the spec has +0, +inf and +inf, +0
    base = xp.asarray([-0.0, -math.inf, 0.0, 4.0])
    for exponent, want in ((0.5, [0.0, math.inf, 0.0, 2.0]), (-0.5, [math.inf, 0.0, math.inf, 0.5])):
        got = xp.pow(base, exponent)
        assert got.tolist() == want and not torch.signbit(got).any()


def test_round_of_complex_keeps_infinite_parts_and_signed_zeros() -> None:
    # array-api-compat rounds complex numbers as re + 1j * im: inf * 1j made NaN of the whole
    # number, and -0 real parts became +0
    z = xp.asarray([complex(math.inf, 1.4), complex(-0.0, 2.5), complex(1.5, -math.inf), complex(-0.4, 0.5)])
    got = xp.round(z)
    want = np.round(
        np.array([complex(math.inf, 1.4), complex(-0.0, 2.5), complex(1.5, -math.inf), complex(-0.4, 0.5)])
    )
    assert got.dtype == z.dtype
    np.testing.assert_array_equal(host(got.real), want.real)
    np.testing.assert_array_equal(host(got.imag), want.imag)
    assert torch.signbit(got.real).tolist() == np.signbit(want.real).tolist()


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # (NumPy's inf - inf)
def test_complex_add_subtract_and_negative_are_exact_part_by_part(dtype: str) -> None:
    # torch adds x1 + alpha * x2 with alpha = 1 + 0j, which made NaN of the part beside an
    # infinite one, and its vectorised negative (from 4 or 8 elements on) lost zeros' signs
    parts = [0.0, -0.0, 1.5, -56.0, INF, -INF, NAN]
    values = np.array([complex(a, b) for a in parts for b in parts], dtype=dtype)
    x1, x2 = np.meshgrid(values, values[::-1].copy())  # (every pair of values meets)
    want = {"add": x1 + x2, "subtract": x1 - x2, "negative": -x1}
    got = {
        "add": xp.add(xp.asarray(x1), xp.asarray(x2)),
        "subtract": xp.subtract(xp.asarray(x1), xp.asarray(x2)),
        "negative": xp.negative(xp.asarray(x1)),
    }
    for name, result in got.items():
        assert result.dtype == getattr(xp, dtype), name
        assert_same_bits(host(result), want[name])
    # Python scalars and real operands promote as the standard says; conjugate views are read
    one = xp.asarray(values)
    scalar = complex(INF, -0.0)
    assert_same_bits(host(xp.add(one, scalar)), values + np.array(scalar, dtype=dtype))
    assert_same_bits(host(xp.subtract(2j, one)), np.array(2j, dtype=dtype) - values)
    real = np.array(parts, dtype=np.float32 if dtype == "complex64" else np.float64)
    assert_same_bits(host(xp.add(xp.asarray(real), one[:7])), real + values[:7])
    assert_same_bits(host(xp.add(torch.conj(one), one)), np.conj(values) + values)


def test_bad_keyword_values_raise_what_the_other_backends_raise() -> None:
    # arange moves its result with .to(dtype), which read a string as a device ("cuda" moved it
    # to the GPU); the others were torch's RuntimeErrors
    for dtype in ("cpu", "float32", -7):
        with pytest.raises(TypeError, match="takes a torch dtype"):
            xp.arange(3, dtype=dtype)
    x = xp.asarray([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="side must be 'left' or 'right'"):
        xp.searchsorted(x, x, side="middle")
    with pytest.raises(ValueError, match="num must be non-negative"):
        xp.linspace(0, 1, -3)
    with pytest.raises(ValueError, match="axes must be non-negative"):
        xp.tensordot(x, x, axes=-1)
    with pytest.raises(TypeError, match="axes is an int or a pair"):
        xp.tensordot(x, x, axes="zz")
    assert xp.tensordot(x, x, axes=1).item() == 14.0


def test_roll_take_and_clip_as_the_standard_has_them() -> None:
    x = xp.reshape(xp.arange(6), (2, 3))
    host = np.arange(6).reshape(2, 3)
    assert xp.roll(xp.arange(3), 1, axis=()).tolist() == [0, 1, 2]  # (torch rolled the flat array)
    assert xp.roll(x, 1, axis=(0, 1)).tolist() == np.roll(host, 1, axis=(0, 1)).tolist()  # (refused)
    assert xp.roll(x, (1, -1), axis=(1, 0)).tolist() == np.roll(host, (1, -1), axis=(1, 0)).tolist()
    for dtype in (xp.int8, xp.uint8, xp.int16, xp.int32):  # (torch took int64, or int32 too, only)
        rows = xp.asarray([[0], [2]], dtype=dtype)
        assert xp.take_along_axis(x, rows, axis=1).tolist() == [[0], [5]]
        assert xp.take(x, xp.asarray([2, 0], dtype=dtype), axis=1).tolist() == [[2, 0], [5, 3]]
    clipped = xp.clip(xp.asarray([1, 100], dtype=xp.int8), xp.asarray([5, 5], dtype=xp.int16))
    assert clipped.dtype == xp.int8 and clipped.tolist() == [5, 100]  # (it took the bound's int16)


def test_random_programs_of_views_and_writes_match_numpy():
    # (see ruda.testing.programs; PyTorch's tensors refuse slices with negative steps, and
    # writes of a tensor into memory it shares: "clone() the tensor before"; their complex + and
    # - are torch's own, which the README lists)
    run_programs(
        xp,
        reversed_slices=False,
        aliased_writes=False,
        complex_operators=False,
        dtypes=("float32", "int32", "bool", "complex64"),
    )


@pytest.mark.parametrize(
    "name",
    [
        "sign",
        "expm1",
        "round",
        "unique_values",
        "unique_all",
        "unique_counts",
        "unique_inverse",
        "std",
        "var",
    ],
)
def test_own_functions_refuse_what_is_not_a_tensor_naming_themselves(name: str) -> None:
    """The functions written here read a tensor's attributes first: a NumPy array or a list had
    met them as an AttributeError ("'list' object has no attribute 'is_complex'")."""
    function = getattr(xp, name)
    with pytest.raises(
        TypeError, match=rf"^{name}\(\) cannot combine a ruda_torch array with a numpy.ndarray"
    ):
        function(np.ones(3, np.float32))
    with pytest.raises(TypeError, match=rf"^{name}\(\) takes a torch tensor for x, not list"):
        function([1.0, 2.0])


def test_astype_and_division_refuse_what_is_not_a_tensor_naming_themselves() -> None:
    """astype of a NumPy array had raised AttributeError ('to'); floor_divide and remainder of a
    list, a string or two Python scalars, AttributeError ('dtype'), and of a NumPy array an
    error naming torch's promote_types()."""
    with pytest.raises(
        TypeError, match=r"^astype\(\) cannot combine a ruda_torch array with a numpy.ndarray"
    ):
        xp.astype(np.ones(3), xp.float32)
    x = xp.asarray([1.0, 2.0])
    for name in ("floor_divide", "remainder"):
        function = getattr(xp, name)
        with pytest.raises(
            TypeError, match=rf"^{name}\(\) cannot combine a ruda_torch array with a numpy.ndarray"
        ):
            function(x, np.ones(2))
        with pytest.raises(TypeError, match=rf"^{name}\(\) takes a torch tensor for x2, not list"):
            function(x, [1.0, 2.0])
        with pytest.raises(TypeError, match=rf"^{name}\(\) takes a torch tensor for x1, not str"):
            function("a", x)
        with pytest.raises(TypeError, match=rf"^{name}\(\) needs x1 or x2 to be a torch tensor"):
            function(7, 2)
        assert_matches_numpy(function(x, 2), getattr(np, name)(np.array([1.0, 2.0], np.float32), 2))


def test_std_and_var_refuse_axes_that_are_no_ints() -> None:
    """A bool axis had been taken as axis 0 or 1 (std(x, axis=True) was std(x, axis=1)); a float
    or a string failed inside the axis loop with an error naming neither function nor axis."""
    x = xp.reshape(xp.arange(6, dtype=xp.float32), (2, 3))
    for name in ("std", "var"):
        for axis in (True, 1.0, "a", (0, 1.0)):
            with pytest.raises(TypeError, match=rf"^{name}\(\): an axis is an int or a tuple of ints"):
                getattr(xp, name)(x, axis=axis)
    assert_matches_numpy(xp.std(x, axis=(0, 1)), np.std(np.arange(6, dtype=np.float32).reshape(2, 3)))


def test_take_refuses_floating_indices() -> None:
    """Floating-point indices had been truncated to integers without a word (take(x, [1.7])
    took element 1); NumPy refuses them and the standard asks for an integer dtype."""
    x = xp.reshape(xp.arange(6, dtype=xp.float32), (2, 3))
    with pytest.raises(TypeError, match=r"^take\(\): indices must have an integer dtype, not torch.float32"):
        xp.take(x, xp.asarray([1.7]), axis=0)
    with pytest.raises(TypeError, match=r"^take_along_axis\(\): indices must have an integer dtype"):
        xp.take_along_axis(x, xp.asarray([[1.0, 0.0, 1.0]]), axis=0)
    assert_matches_numpy(
        xp.take(x, xp.asarray([1], dtype=xp.int8), axis=0), np.arange(3.0, 6.0)[None].astype(np.float32)
    )


def test_fft_and_linalg_keywords_they_cannot_take_raise_value_error() -> None:
    # (torch's were RuntimeErrors: "Invalid normalization mode", "Order zz not supported", ...)
    x = xp.ones((4, 4))
    for call in (
        lambda: xp.fft.fft(x, norm="zz"),
        lambda: xp.fft.rfft(x, n=0),
        lambda: xp.fft.fftn(x, s=(-7, 2)),
        lambda: xp.fft.ihfft(x, n=-1),
        lambda: xp.linalg.matrix_norm(x, ord="zz"),
        lambda: xp.linalg.qr(x, mode="r"),
    ):
        with pytest.raises(ValueError, match=r"^(fft|rfft|fftn|ihfft|matrix_norm|qr)\(\): "):
            call()
    assert xp.fft.fftn(x, s=(-1, 2)).shape == (4, 2)  # (-1: the whole axis, as the standard says)
    assert str(inspect.signature(xp.fft.fft)) == "(x, /, *, n=None, axis=-1, norm='backward')"
