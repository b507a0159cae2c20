"""The array object: operators, indexing, conversions, DLPack, devices and errors."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as npst
from ruda.testing import (
    assert_exports_host_copies,
    assert_matches_numpy,
    assert_numpy_ufuncs_run_in_namespace,
    assert_python_scalar_conversions,
    parametrize_backends,
)

from tests.wgpu.dtype_support import needs

pytestmark = parametrize_backends("wgpu")

BINARY = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift", "rshift"]
COMPARE = ["eq", "ne", "lt", "le", "gt", "ge"]


def _pair(xp, kind: str):
    rng = np.random.default_rng(1)
    if kind == "float":
        a = rng.uniform(0.5, 4, (3, 4)).astype(np.float32)
        b = rng.uniform(0.5, 4, (4,)).astype(np.float32)
    else:
        a = rng.integers(1, 50, (3, 4)).astype(np.int32)
        b = rng.integers(1, 5, (4,)).astype(np.int32)
    return a, b, xp.asarray(a), xp.asarray(b)


@pytest.mark.parametrize("op", BINARY)
def test_binary_operators_forward_reflected_inplace(xp, op):
    kind = "int" if op in ("and", "or", "xor", "lshift", "rshift") else "float"
    if op == "floordiv":
        kind = "int"
    a, b, x, y = _pair(xp, kind)
    name = op + "_" if op in ("and", "or") else op
    fn = getattr(operator, name)
    with np.errstate(all="ignore"):
        want = fn(a, b)
    assert_matches_numpy(fn(x, y), want, rtol=1e-5 if op == "pow" else None)
    scalar = 2 if kind == "int" else 2.0
    with np.errstate(all="ignore"):
        assert_matches_numpy(fn(x, scalar), fn(a, a.dtype.type(scalar)), rtol=1e-5 if op == "pow" else None)
        assert_matches_numpy(fn(scalar, y), fn(b.dtype.type(scalar), b), rtol=1e-5 if op == "pow" else None)
    z = xp.asarray(a)
    alias = z
    inplace = getattr(operator, f"i{op}")
    z = inplace(z, y)
    assert z is alias  # in place: the same array object, its buffer overwritten
    assert_matches_numpy(z, want, rtol=1e-5 if op == "pow" else None)


@pytest.mark.parametrize("op", COMPARE)
def test_comparison_operators(xp, op):
    a, b, x, y = _pair(xp, "float")
    fn = getattr(operator, op)
    assert_matches_numpy(fn(x, y), fn(a, b))
    assert_matches_numpy(fn(x, 2.0), fn(a, np.float32(2.0)))


def test_unary_operators_and_matmul(xp):
    a, _, x, _ = _pair(xp, "int")
    assert_matches_numpy(-x, -a)
    assert_matches_numpy(+x, +a)
    assert_matches_numpy(abs(-x), a)
    assert_matches_numpy(~x, ~a)
    assert_matches_numpy(x @ x.T, a @ a.T)
    f = xp.asarray(a.astype(np.float32))
    g = f
    g @= xp.ones((4, 4))
    assert g is f
    assert_matches_numpy(f, a.astype(np.float32) @ np.ones((4, 4), np.float32))


@pytest.mark.parametrize(
    ("dtype", "other"),
    [
        ("int8", "int16"),
        ("uint8", "uint16"),
        pytest.param("float32", "float64", marks=needs("float64")),
        pytest.param("complex64", "complex128", marks=needs("complex128")),
    ],
)
def test_inplace_casts_a_wider_result_of_the_same_kind_back(xp, dtype, other):
    # as NumPy's "same_kind" casting, which CuPy, PyTorch and ruda's other backends share
    a = np.array([1.5, 2.25, 100.0, 3.0]).astype(dtype)
    b = np.array([1e-9, 300.5, 2.0, 1.0]).astype(other)
    x = xp.asarray(a)
    before = x
    x += xp.asarray(b)
    assert x is before
    expected = a.copy()
    expected += b
    assert_matches_numpy(x, expected)


def test_inplace_refuses_to_change_kind_or_shape(xp):
    x = xp.asarray([1, 2, 3], dtype=xp.int32)
    with pytest.raises(TypeError, match="int32"):
        x += xp.asarray([1.0, 2.0, 3.0], dtype=xp.float32)
    u = xp.asarray([1, 2, 3], dtype=xp.uint8)
    with pytest.raises(TypeError):
        u += xp.asarray([1, 2, 3], dtype=xp.int8)  # int16, not unsigned
    y = xp.ones((3,))
    with pytest.raises(TypeError):
        y += xp.ones((3,), dtype=xp.complex64)
    with pytest.raises(TypeError):
        y += xp.ones((2, 3))
    assert_matches_numpy(y, np.ones(3, np.float32))


def test_format_takes_a_spec_for_a_zero_dimensional_array(xp):
    # as NumPy's: SciPy's integrators format their results so
    x = xp.asarray([1.25, -2.5])
    assert f"{xp.sum(x):.3f}" == "-1.250" and f"{x[0]:>6}" == "  1.25" and f"{x}" == str(x)
    with pytest.raises(TypeError, match="format"):
        f"{x:.2f}"


def test_numpys_elementwise_ufuncs_run_on_the_gpu(xp):
    # as CuPy's: matplotlib calls np.isfinite on the values it is given
    assert_numpy_ufuncs_run_in_namespace(xp)
    a = np.ones(3, np.float32)
    with pytest.raises(TypeError, match="do not mix"):
        np.add(a, xp.asarray(a))
    with pytest.raises(TypeError, match="do not mix"):
        a @ xp.asarray(a)


def test_numpy_scalars_defer_to_the_array(xp):
    x = xp.asarray([1.0, 2.0])
    out = np.float32(2.0) * x
    assert type(out) is type(x)
    assert_matches_numpy(out, np.array([2.0, 4.0], np.float32))


@pytest.mark.parametrize(
    "key",
    [
        1,
        -1,
        (1, 2),
        (slice(None), 2),
        (slice(1, None, 2),),
        (Ellipsis, 1),
        (None, 1),
        (1, None, slice(None, None, -1)),
        (slice(None, None, -2), Ellipsis, None),
        (),
        Ellipsis,
        (slice(5, 1),),
        (0, slice(None), -3),
    ],
)
def test_getitem_basic(xp, key):
    host = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
    x = xp.asarray(host)
    assert_matches_numpy(x[key], host[key], err_msg=repr(key))


def test_getitem_errors(xp):
    x = xp.zeros((2, 3))
    with pytest.raises(IndexError):
        x[2]
    with pytest.raises(IndexError):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="boolean index of shape"):
        x[xp.asarray([True, False, True])]
    with pytest.raises(IndexError, match="out of bounds"):
        np.asarray(x[xp.asarray([0, 2])])  # (raised by the read: the gather does not wait)
    with pytest.raises(IndexError, match="integer or boolean"):
        x[xp.asarray([0.0])]


def test_setitem_views_and_aliasing(xp):
    host = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = xp.asarray(host)
    x[1] = 7.0
    host[1] = 7.0
    x[:, ::2] = xp.asarray(np.array([1.0, 2.0, 3.0], np.float32))
    host[:, ::2] = [1.0, 2.0, 3.0]
    x[1:, 1:] = x[:-1, :-1]  # overlapping source and target
    host[1:, 1:] = host[:-1, :-1].copy()
    x[..., -1] = 0
    host[..., -1] = 0
    assert_matches_numpy(x, host)
    v = x[::2]
    v[...] = -1.0
    host[::2] = -1.0
    assert_matches_numpy(x, host)  # writing through a view changes the base


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_basic_keys_take_the_short_way_to_the_same_view(xp, data):
    """Keys of ints, slices (negative steps, out-of-range bounds), None and ... make their view
    without the general key reader, and the same view it makes: shape, strides, offset, values."""
    from ruda_wgpu._indexing import _basic_view, _plan

    shape = data.draw(npst.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
    key = data.draw(npst.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    host = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    x = xp.asarray(host)[...]  # (offset 0 here; a second key below starts from an offset)
    for base, expected in (
        (x, host),
        (x[(slice(None, None, -1),) * x.ndim], host[(slice(None, None, -1),) * x.ndim]),
    ):
        fast, general = _basic_view(base, key), _plan(base, key)
        assert fast is not None
        assert (fast.shape, fast._strides, fast._offset) == (general.shape, general._strides, general._offset)
        assert_matches_numpy(base[key], expected[key])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_reshape_is_a_view_wherever_numpy_makes_one(xp, data):
    """reshape of a stepped, transposed or broadcast view: a view (writes reach the base) where
    NumPy makes one, else a copy (and ``copy=False`` raises), with NumPy's values either way."""
    shape = data.draw(npst.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5))
    host = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    key = data.draw(npst.basic_indices(shape, allow_newaxis=False, allow_ellipsis=False))
    assume(host[key].ndim and host[key].size)
    order = data.draw(st.permutations(range(host[key].ndim)))
    size = host[key].size
    new = data.draw(st.lists(st.sampled_from([d for d in range(1, size + 1) if size % d == 0]), max_size=3))
    assume(size % int(np.prod(new)) == 0)
    new = (*new, size // int(np.prod(new)))
    view = np.transpose(host[key], order)
    x = xp.permute_dims(xp.asarray(host)[key], tuple(order))
    try:
        want = view.view()
        want.shape = new  # NumPy's reshape without a copy, or AttributeError
    except AttributeError:
        with pytest.raises(ValueError, match="no view"):
            xp.reshape(x, new, copy=False)
        assert_matches_numpy(xp.reshape(x, new), view.reshape(new))
        return
    got = xp.reshape(x, new, copy=False)
    assert got._storage is x._storage
    assert_matches_numpy(got, want)
    if got.size:
        got[(0,) * len(new)] = -1  # (the first element of the view, through the reshape)
        assert_matches_numpy(x, np.where(view == want.flat[0], -1, view))


def test_basic_keys_the_short_way_cannot_take_raise_as_before(xp):
    x = xp.reshape(xp.arange(12, dtype=xp.int32), (3, 4))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        x[3]
    with pytest.raises(IndexError, match="index -5 is out of bounds for axis 1 with size 4"):
        x[0, -5]
    with pytest.raises(IndexError, match="too many indices for an array with 2 dimensions: 3 given"):
        x[0, ..., 1, 2]
    with pytest.raises(IndexError, match="a single ellipsis"):
        x[..., 0, ...]
    with pytest.raises(IndexError, match="invalid index 1.5"):
        x[0, 1.5]
    x[1, ::-2] = 0  # (assignment takes the short way too)
    assert_matches_numpy(
        x, np.where(np.isin(np.arange(12), [7, 5]), 0, np.arange(12)).reshape(3, 4).astype(np.int32)
    )


def test_steps_past_the_axis_take_one_element(xp):
    """A step of 2**62 kept its stride, whose bytes overflowed the read (a view of one element
    needs none)."""
    host = np.arange(10, dtype=np.int32).reshape(2, 5)  # (int32: OpenGL has no int64)
    x = xp.asarray(host)
    for key in (
        (slice(None, None, 2**62),),
        (slice(None), slice(None, None, -(2**62))),
        (1, slice(3, None, 2**40)),
    ):
        assert_matches_numpy(x[key], host[key])
        assert_matches_numpy(x[key] + 1, host[key] + 1)


def test_views_share_the_buffer(xp):
    x = xp.reshape(xp.arange(12, dtype=xp.int32), (3, 4))
    t = x.T
    m = x.mT
    assert t._storage is x._storage and m._storage is x._storage
    assert_matches_numpy(t, np.arange(12, dtype=np.int32).reshape(3, 4).T)
    assert x.shape == (3, 4) and x.ndim == 2 and x.size == 12 and x.dtype == xp.int32


def test_scalar_conversions(xp):
    assert_python_scalar_conversions(xp)


def test_dlpack_and_array_are_host_copies(xp):
    host = np.arange(6, dtype=np.int16).reshape(2, 3)
    assert_exports_host_copies(xp.asarray(host), host)
    back = xp.from_dlpack(np.arange(4, dtype=np.uint8))
    assert_matches_numpy(back, np.arange(4, dtype=np.uint8))
    with pytest.raises(BufferError, match="copied"):
        xp.from_dlpack(np.arange(4), copy=False)
    for bad in (5, [1, 2]):  # AttributeError, as the standard says, with what it takes
        with pytest.raises(AttributeError, match="takes an object with __dlpack__"):
            xp.from_dlpack(bad)
    with pytest.raises(ValueError, match="negative lengths"):
        xp.broadcast_shapes((-1,), (1,))


def test_dtype_the_device_lacks_names_the_device_and_the_gap(xp):
    info = xp.__array_namespace_info__()
    for dev in info.devices():
        missing = [n for n in ("float64", "int64", "complex64") if n not in info.dtypes(device=dev)]
        for name in missing:
            with pytest.raises(TypeError, match=f"{name} is not supported on {dev.name}") as err:
                xp.zeros((2,), dtype=getattr(xp, name), device=dev)
            assert "lacks" in str(err.value)


def test_mixing_devices_raises(xp):
    from ruda_wgpu._engine import GpuDevice

    first = xp.__array_namespace_info__().devices()[0]
    second = GpuDevice(1, first.adapter)  # a second device on the same adapter: separate memory
    a = xp.ones((3,), device=first)
    b = xp.ones((3,), device=second)
    for fn in (
        lambda: a + b,
        lambda: xp.concat([a, b]),
        lambda: xp.matmul(a, b),
        lambda: xp.where(a > 0, a, b),
    ):
        with pytest.raises(ValueError, match="two devices") as err:
            fn()
        assert first.name in str(err.value) and second.name in str(err.value)
    moved = b.to_device(first)
    assert moved.device is first
    assert_matches_numpy(a + moved, np.full(3, 2.0, np.float32))


def test_to_device_through_ruda(xp):
    import ruda

    x = xp.arange(5, dtype=xp.int32)
    host = ruda.to_device(x, "cpu")
    np.testing.assert_array_equal(host, np.arange(5, dtype=np.int32))
    back = ruda.to_device(host, "wgpu:0")
    assert_matches_numpy(back, np.arange(5, dtype=np.int32))
    assert str(ruda.device_of(back)) == "wgpu:0"


def test_the_whole_standard_is_there(xp):
    from ruda import spec

    for names, module in ((spec.FUNCTIONS, xp), (spec.LINALG, xp.linalg), (spec.FFT, xp.fft)):
        missing = [n for n in names if not callable(getattr(module, n, None))]
        assert not missing, missing


def test_host_copies_follow_writes(xp):
    """Reads of small arrays are served from a host copy: it must never go stale."""
    host = np.arange(6, dtype=np.float32)
    x = xp.asarray(host)
    host[0] = 100.0  # the caller's array is not the cache
    assert float(x[0]) == 0.0
    y = x[1:]
    x[1] = -1.0  # written through another view of the same buffer
    assert float(y[0]) == -1.0
    x += 1.0
    assert_matches_numpy(y, np.array([0.0, 3.0, 4.0, 5.0, 6.0], np.float32))


def test_every_adapter_computes(xp):
    """Kernels compile and agree with NumPy on every adapter found (e.g. Vulkan and OpenGL)."""
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    for dev in xp.__array_namespace_info__().devices():
        x = xp.asarray(host, device=dev)
        assert x.device is dev
        assert_matches_numpy(xp.sum(xp.exp(x / 4.0), axis=0), np.exp(host / 4).sum(axis=0), rtol=1e-5)
        assert_matches_numpy(x @ x.T, host @ host.T)
        small = xp.astype(x, xp.int8) * 30
        assert_matches_numpy(small, host.astype(np.int8) * np.int8(30))
        assert (
            xp.arange(3, device=dev).dtype
            == xp.__array_namespace_info__().default_dtypes(device=dev)["integral"]
        )


def test_numpy_scalars_are_taken_wherever_python_scalars_are(xp):
    x = xp.asarray([1.0, 2.0, 3.0])
    f, i = np.float32(2), np.int64(1)
    assert_matches_numpy(xp.full((2,), f), np.full(2, 2.0, np.float32))
    assert_matches_numpy(xp.full_like(x, f), np.full(3, 2.0, np.float32))
    assert_matches_numpy(xp.arange(np.int64(3), dtype=xp.int32), np.arange(3, dtype=np.int32))
    assert_matches_numpy(
        xp.linspace(np.float32(0), np.float64(1), np.int64(3)), np.array([0, 0.5, 1], np.float32)
    )
    assert_matches_numpy(xp.where(x > 1, f, x), np.array([1, 2, 2], np.float32))
    assert_matches_numpy(xp.clip(x, np.float32(1.5), np.float64(2.5)), np.array([1.5, 2, 2.5], np.float32))
    assert_matches_numpy(x**i + f, np.array([3, 4, 5], np.float32))
    assert_matches_numpy(x[i], np.float32(2))
    assert_matches_numpy(xp.sum(x, axis=np.int64(0)), np.float32(6))
    assert_matches_numpy(xp.expand_dims(x, axis=np.int64(0)), np.ones((1, 3)) * [1, 2, 3], check_dtype=False)
    assert_matches_numpy(xp.roll(x, i), np.array([3, 1, 2], np.float32))
    assert int(xp.searchsorted(x, f)) == 1
    assert bool(xp.isin(xp.asarray([1, 2]), np.int64(2))[1])
    y = xp.zeros((3,))
    y[i] = f
    assert_matches_numpy(y, np.array([0, 2, 0], np.float32))


def test_numpy_data_keeps_its_dtype_and_is_described(xp):
    """full() takes a NumPy scalar's or 0-d array's dtype, as NumPy does (int8 had become the
    default integer); big-endian data is taken in its values; an empty array's repr shows its
    shape, and finfo and iinfo print their fields."""
    assert xp.full(2, np.int8(3)).dtype == xp.int8
    assert xp.full(2, xp.asarray(np.uint8(7))).dtype == xp.uint8
    assert xp.full(2, 3).dtype == xp.__array_namespace_info__().default_dtypes()["integral"]
    assert_matches_numpy(xp.asarray(np.arange(3, dtype=">i4")), np.arange(3, dtype=np.int32))
    assert repr(xp.zeros((0, 3))) == "Array([], shape=(0, 3), dtype=float32, device='wgpu:0')"
    assert repr(xp.zeros((0,))) == "Array([], dtype=float32, device='wgpu:0')"
    assert repr(xp.iinfo(xp.uint8)) == "iinfo(bits=8, max=255, min=0, dtype=uint8)"
    assert repr(xp.finfo(xp.float32)).startswith("finfo(bits=32, eps=1.1920928955078125e-07, ")
    # an integer range of fractional steps is refused (truncated first, -0.1 had made all values 1)
    with pytest.raises(TypeError, match="int32 range needs whole start and step"):
        xp.arange(1, 0, -0.1, dtype=xp.int32)
    assert_matches_numpy(xp.arange(0, 2.5, 1, dtype=xp.int32), np.arange(3, dtype=np.int32))


def test_where_refuses_other_libraries_arrays_by_name(xp):
    """As the operators do (it had raised "only 0-dimensional arrays can be converted to Python
    scalars", or "unhashable type" for a 0-d NumPy array)."""
    w = xp.ones(3)
    for other in (np.ones(3, np.float32), np.array(1, np.float32)):
        with pytest.raises(TypeError, match="cannot combine a ruda_wgpu array with a numpy.ndarray"):
            xp.where(w > 0, w, other)
    with pytest.raises(TypeError, match="takes ruda_wgpu arrays or Python scalars, not str"):
        xp.where(w > 0, "x", w)
    assert_matches_numpy(xp.where(w > 0, np.float32(2), w), np.full(3, 2, np.float32))
    with pytest.raises(TypeError, match="needs a boolean condition, not float32"):
        xp.where(w, w, 0.0)  # (its own array, not another library's: it had said "do not mix")
    with pytest.raises(TypeError, match="as its condition, not list"):
        xp.where([True], w, 0.0)


def test_array_protocol_is_an_explicit_host_copy(xp):
    x = xp.asarray(np.arange(4, dtype=np.float32))
    host = np.asarray(x)
    host[0] = 9.0  # a copy: the device array is untouched
    assert float(x[0]) == 0.0
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="copy"):
        np.asarray(x, copy=False)


def test_arrays_pickle_to_another_process(xp):
    # process executors (Cubed, Dask) move chunks between processes by pickling them
    import pickle
    import subprocess
    import sys

    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = xp.asarray(host)[::-1, 1:]  # a view: strides and offset travel as data
    y = pickle.loads(pickle.dumps(x))
    assert type(y) is type(x) and y.device == x.device
    assert_matches_numpy(y, host[::-1, 1:])
    code = (
        "import pickle, sys, numpy as np; y = pickle.loads(sys.stdin.buffer.read()); "
        "print(type(y).__module__, y.dtype, np.asarray(y).sum())"
    )
    blob = pickle.dumps(x)
    done = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True, timeout=120)
    want = ["ruda_wgpu._array", "float32", str(host[::-1, 1:].sum())]
    assert done.stdout.decode().split() == want, done.stderr
