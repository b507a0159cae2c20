"""The router over the host (NumPy) and torch: results against NumPy on each backend, the
backend that really computed, device mixing, explicit migration both ways, devices, dtypes."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import array_api_compat
import numpy as np
import pytest
import ruda
import torch
from router_backends import second_backend
from ruda import spec
from ruda.testing import assert_matches_numpy, assert_numpy_ufuncs_run_in_namespace, python_output
from ruda.testing.programs import run_programs
from ruda_router import Array, DeviceMismatchError, Router, duo, quad, trio
from ruda_router._transfer import migrate

TORCH = second_backend()
XP = Router((ruda.host, TORCH))
HOST = duo.MultiDevice.B1("cpu")
TDEV = duo.MultiDevice.B2(torch.device("cpu"))
# Each case: the backend position, and the library type its arrays must be.
PLACES = [pytest.param(HOST, np.ndarray, id="B1-host"), pytest.param(TDEV, torch.Tensor, id="B2-torch")]


def _on(device: Any, values: Any, dtype: Any = None) -> Array:
    return XP.asarray(values, dtype=dtype, device=device)


# -- results against NumPy, computed by the holding backend -------------------------------------
@pytest.mark.parametrize(("device", "library"), PLACES)
def test_elementwise_and_operators_match_numpy(device: Any, library: type) -> None:
    a = np.linspace(-2, 3, 12, dtype=np.float32).reshape(3, 4)
    b = np.arange(1, 5, dtype=np.float32)
    x, y = _on(device, a), _on(device, b)
    for got, want in [
        (XP.add(x, y), a + b),
        (x - y, a - b),
        (x * 2.5, a * 2.5),
        (1.0 / y, 1.0 / b),
        (x**2, a**2),
        (-x, -a),
        (abs(x), np.abs(a)),
        (XP.exp(x), np.exp(a)),
        (XP.where(x > 0, x, 0.0), np.where(a > 0, a, 0.0)),
        (x @ XP.reshape(y, (4, 1)), a @ b.reshape(4, 1)),
        (x.mT, a.T),
        (x.T, a.T),
        (x // y, a // b),
        (x % y, a % b),
        (x >= 1.0, a >= 1.0),
    ]:
        assert isinstance(got.inner, library), f"computed by {type(got.inner)}, not {library}"
        assert got.device == device
        assert_matches_numpy(got, want)


@pytest.mark.parametrize(("device", "library"), PLACES)
def test_reductions_sorting_sets_and_tuples_match_numpy(device: Any, library: type) -> None:
    a = np.array([[3, 1, 2, 3], [0, 5, 5, 1]], dtype=np.int64)
    x = _on(device, a)
    assert_matches_numpy(XP.sum(x, axis=1), a.sum(axis=1))
    assert_matches_numpy(XP.max(x), np.max(a))
    assert_matches_numpy(XP.sort(x, axis=1), np.sort(a, axis=1))
    assert_matches_numpy(XP.cumulative_sum(x, axis=1), np.cumulative_sum(a, axis=1))
    unique = XP.unique_all(x)  # a named tuple of four arrays
    assert type(unique).__name__ == "UniqueAllResult" and all(isinstance(u, Array) for u in unique)
    assert_matches_numpy(unique.values, np.unique(a))
    assert_matches_numpy(unique.counts, np.unique(a, return_counts=True)[1])
    first, second = XP.broadcast_arrays(x, _on(device, [[1], [2]]))
    assert isinstance(first.inner, library) and second.shape == (2, 4)
    grids = XP.meshgrid(_on(device, [1, 2]), _on(device, [3, 4, 5]))
    assert [g.shape for g in grids] == [(3, 2), (3, 2)]
    assert_matches_numpy(grids[1], np.meshgrid([1, 2], [3, 4, 5])[1])
    assert XP.broadcast_shapes((2, 1), (3,)) == (2, 3)


@pytest.mark.parametrize(("device", "library"), PLACES)
def test_linalg_and_fft_match_numpy(device: Any, library: type) -> None:
    a = np.array([[4.0, 1.0], [1.0, 3.0]])
    x = _on(device, a)
    values, _ = XP.linalg.eigh(x)
    assert isinstance(values.inner, library)
    assert_matches_numpy(values, np.linalg.eigvalsh(a))
    assert_matches_numpy(XP.linalg.inv(x), np.linalg.inv(a))
    assert_matches_numpy(XP.linalg.vector_norm(x), np.linalg.norm(a))
    signal = np.array([1.0, 2.0, 0.0, -1.0])
    spectrum = XP.fft.fft(_on(device, signal))
    assert isinstance(spectrum.inner, library)
    assert_matches_numpy(spectrum, np.fft.fft(signal))
    default_float = XP.__array_namespace_info__().default_dtypes(device=device)["real floating"].name
    assert_matches_numpy(XP.fft.fftfreq(4, device=device), np.fft.fftfreq(4).astype(default_float))


@pytest.mark.parametrize(("device", "library"), PLACES)
def test_indexing_and_in_place_write_into_the_held_array(device: Any, library: type) -> None:
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    x = _on(device, a)
    assert_matches_numpy(x[1], a[1])
    assert_matches_numpy(x[x > 5.0], a[a > 5.0])
    assert_matches_numpy(x[:, _on(device, [0, 2])], a[:, [0, 2]])
    x[0, :] = _on(device, [9.0, 9.0, 9.0, 9.0])
    x[x > 10.0] = -1.0
    b = a.copy()
    b[0, :] = 9.0
    b[b > 10.0] = -1.0
    assert_matches_numpy(x, b)
    held = x.inner
    row = x[1]  # a view of the held array on both libraries
    x += 1.0
    x *= _on(device, [1.0, 2.0, 1.0, 2.0])
    assert x.inner is held, "in-place operators must write into the held array"
    b = (b + 1.0) * np.array([1.0, 2.0, 1.0, 2.0])
    assert_matches_numpy(x, b)
    assert_matches_numpy(row, b[1])


def test_in_place_operator_refuses_to_change_dtype_or_shape() -> None:
    """A change within a kind casts back, as the backends' own operators do (it had been
    refused, so SciPy's freqz failed on router arrays alone); another kind, or shape, raises."""
    for device in (HOST, TDEV):
        h = _on(device, [2.0, 4.0], XP.complex64)
        h /= _on(device, [2.0, 8.0])  # (float64)
        assert h.dtype == XP.complex64
        assert_matches_numpy(h, np.array([1.0, 0.5], np.complex64))
    x = _on(HOST, [1, 2, 3], XP.int32)
    with pytest.raises(TypeError, match="int32 array of shape .* into float64"):
        x += _on(HOST, [0.5, 0.5, 0.5])
    with pytest.raises(TypeError, match=r"shape \(3,\) into .* shape \(2, 3\)"):
        x += _on(HOST, [[1, 1, 1], [2, 2, 2]], XP.int32)


@pytest.mark.parametrize(("device", "library"), PLACES)
def test_scalar_conversions_and_attributes(device: Any, library: type) -> None:
    x = _on(device, [[1.5, 2.0, 3.0]], XP.float32)
    assert (x.shape, x.ndim, x.size, x.dtype) == ((1, 3), 2, 3, XP.float32)
    one = x[0, 1]
    assert float(one) == 2.0 and int(one) == 2 and complex(one) == 2 + 0j and bool(one)
    assert f"{one:.2f}" == "2.00" and f"{x}" == str(x)  # (the holding backend formats)
    with pytest.raises(TypeError, match="format"):
        f"{x:.2f}"
    index = _on(device, 2, XP.int64)
    assert [10, 20, 30][index] == 30 and int(index) == 2
    assert array_api_compat.array_namespace(x) is XP and x.__array_namespace__(api_version="2024.12") is XP
    with pytest.raises(ValueError, match="unknown Array API version"):
        x.__array_namespace__(api_version="1999.01")
    with pytest.raises(ValueError, match="2-D arrays only"):
        _ = _on(device, [1.0, 2.0]).T


@pytest.mark.parametrize(("device", "library"), PLACES)
def test_dlpack_exports_the_held_array(device: Any, library: type) -> None:
    x = _on(device, [1.0, 2.0, 4.0], XP.float32)
    assert x.__dlpack_device__() == x.inner.__dlpack_device__()
    np.testing.assert_array_equal(np.from_dlpack(x), [1.0, 2.0, 4.0])
    assert torch.from_dlpack(x).tolist() == [1.0, 2.0, 4.0]


# -- no implicit movement: mixing raises, naming both devices ------------------------------------
def test_mixing_backends_raises_naming_both_devices() -> None:
    x, y = _on(HOST, [1.0, 2.0]), _on(TDEV, [1.0, 2.0])
    both = r"B1\('cpu'\).*B2\(device\(type='cpu'\)\)"
    for call in (
        lambda: XP.add(x, y),
        lambda: x + y,
        lambda: y * x,
        lambda: XP.where(x > 0, x, y),
        lambda: XP.concat([x, y]),
        lambda: XP.stack((y, x)),
        lambda: XP.clip(x, min=y),
        lambda: x[y > 0],
        lambda: XP.searchsorted(x, y),
    ):
        with pytest.raises(DeviceMismatchError, match="never moves data implicitly"):
            call()
    with pytest.raises(DeviceMismatchError, match=both):
        XP.add(x, y)
    with pytest.raises(DeviceMismatchError, match=r"an input on .*B2.*among inputs of backend 1"):
        XP.asarray([[x[0], y[0]]])  # nested deeper than the first level
    with pytest.raises(DeviceMismatchError):
        x[0] = y[0]
    with pytest.raises(DeviceMismatchError, match=r"^__setitem__: inputs on two devices"):
        x[y > 0] = 1.0  # (the mask is the key: the error had named __getitem__)
    with pytest.raises(DeviceMismatchError):
        x += y
    assert float(XP.sum(x)) == 3.0, "a refused in-place operation must leave the array unchanged"


def test_an_operation_on_two_backends_raises() -> None:
    x = _on(HOST, [1, 2, 3])
    with pytest.raises(DeviceMismatchError, match=r"B2.*B1|B1.*B2"):
        XP.ones_like(x) + XP.zeros(3, device=TDEV)
    with pytest.raises(DeviceMismatchError, match=r"B2.*B1|B1.*B2"):
        XP.add(x, _on(TDEV, [1, 1, 1]))


def test_asarray_and_astype_onto_another_backend_are_explicit_moves() -> None:
    # the standard's device= says where the result goes (SciPy's quantile moves its
    # probabilities so); a move between backends is a copy, so copy=False refuses
    x = _on(HOST, [1, 2, 3])
    for y, dtype in [
        (XP.asarray(x, device=TDEV), XP.int64),
        (XP.asarray(x, device=TDEV, dtype=XP.float32), XP.float32),
        (XP.astype(x, XP.float64, device=TDEV), XP.float64),
    ]:
        assert y.device == TDEV and isinstance(y.inner, torch.Tensor) and y.dtype is dtype
        assert_matches_numpy(y, np.array([1, 2, 3], dtype=np.dtype(dtype.name)))
    with pytest.raises(ValueError, match=r"copy=False.*copy between backends"):
        XP.asarray(x, device=TDEV, copy=False)
    assert XP.asarray(x, device=HOST, copy=False).inner is x.inner  # (no move: the backend's own)


@pytest.mark.parametrize(("source", "target"), [(HOST, TDEV), (TDEV, HOST)], ids=["to-torch", "to-host"])
def test_moves_asked_to_copy_share_no_memory(source: Any, target: Any) -> None:
    # between NumPy and torch:cpu a move shares memory through DLPack, and these had returned
    # an alias of the source, which the standard's copy=True (astype's default) rules out
    moves = [
        lambda x: XP.asarray(x, device=target, copy=True),
        lambda x: XP.astype(x, XP.float64, device=target),
        lambda x: XP.astype(x, XP.float64, device=target, copy=True),
        lambda x: XP.from_dlpack(x, device=target, copy=True),
    ]
    for move in moves:
        x = _on(source, [1.0, 2.0, 3.0])
        y = move(x)
        y[0] = 99.0
        assert y.device == target and float(x[0]) == 1.0


def test_a_move_casts_first_where_the_target_lacks_the_dtype() -> None:
    """An OpenGL adapter has no float64: ``asarray(x_float64, dtype=float32, device=gpu)`` had
    moved x as it was, and the adapter refused it."""
    code = (
        "import numpy as np, ruda, ruda_wgpu\n"
        "from ruda_router import Router\n"
        "xp = Router((ruda.host, ruda_wgpu)); gpu = xp.__array_namespace_info__().devices()[1]\n"
        "x = xp.asarray(np.array([1.5, 2.5]))\n"
        "for y in (xp.asarray(x, dtype=xp.float32, device=gpu), xp.astype(x, xp.float32, device=gpu)):\n"
        "    print(y.device == gpu, y.dtype == xp.float32, np.asarray(y).tolist())\n"
        "print(ruda_wgpu.__array_namespace_info__().default_device().description)\n"
    )
    probe = "import ruda_wgpu as xp; print(xp.__array_namespace_info__().default_device().description)"
    try:
        python_output(probe, RUDA_WGPU_BACKEND="gl")
    except subprocess.CalledProcessError as err:
        pytest.skip(f"no OpenGL adapter of wgpu here: {(err.stderr.strip().splitlines() or ['-'])[-1]}")
    out = python_output(code, RUDA_WGPU_BACKEND="gl").splitlines()
    assert "OpenGL" in out[-1]
    assert out[:-1] == ["True True [1.5, 2.5]"] * 2


@pytest.mark.parametrize("device", [HOST, TDEV], ids=["host", "torch"])
@pytest.mark.parametrize(
    "key",
    [
        (slice(None, None, -1),),
        (0, slice(2, None, -2)),
        (Ellipsis, slice(None, None, -3), None),
        (True, slice(None, None, -1)),  # (a Python bool had been taken for an integer)
        (slice(None, None, -1), True),
        (Ellipsis, slice(None, None, -2), False),
    ],
)
def test_negative_steps_get_and_set_as_numpy_does(device: Any, key: tuple[Any, ...]) -> None:
    host = np.arange(24.0).reshape(2, 3, 4)
    x = _on(device, host)
    assert_matches_numpy(x[key], host[key])
    value = -np.arange(host[key].size, dtype=np.float64).reshape(host[key].shape)
    x[key] = _on(device, value)
    host[key] = value
    assert_matches_numpy(x, host)


def test_from_dlpack_onto_another_backend_is_an_explicit_import() -> None:
    x = _on(HOST, [1, 2, 3])
    y = XP.from_dlpack(x, device=TDEV)
    assert y.device == TDEV and isinstance(y.inner, torch.Tensor)
    assert_matches_numpy(y, np.array([1, 2, 3]))
    with pytest.raises(BufferError, match="copy=False"):
        XP.from_dlpack(x, device=TDEV, copy=False)
    same = XP.from_dlpack(x)
    assert same.device == HOST and isinstance(same.inner, np.ndarray)
    foreign = XP.from_dlpack(torch.arange(3), device=TDEV)  # an object of another library
    assert isinstance(foreign.inner, torch.Tensor) and foreign.dtype is XP.int64


def test_an_array_of_a_backend_imported_without_device_stays_with_that_backend() -> None:
    # the standard infers asarray's device from an array: a torch tensor given to a host+torch
    # router is the torch backend's, not a copy through the first backend
    tensor = torch.arange(3.0)
    for imported in (XP.asarray(tensor), XP.from_dlpack(tensor)):
        assert imported.device == TDEV and isinstance(imported.inner, torch.Tensor)
        assert_matches_numpy(imported, np.arange(3.0, dtype=np.float32))
    assert XP.asarray(tensor, copy=False).inner is tensor
    reverse = Router((TORCH, ruda.host))
    assert isinstance(reverse.asarray(np.arange(3.0)).inner, np.ndarray)
    for data in ([1.0, 2.0], 3.0, np.float32(3.0)):  # not an array: the first backend's default
        assert XP.asarray(data).device == HOST


def test_foreign_arrays_are_refused_not_computed() -> None:
    x = _on(HOST, [1.0, 2.0])
    with pytest.raises(TypeError, match=r"numpy.ndarray.*own arrays only.*asarray"):
        XP.add(x, np.ones(2))
    with pytest.raises(TypeError, match="own arrays only"):
        XP.concat([x, torch.ones(2)])
    with pytest.raises(TypeError, match="own arrays only"):
        x + np.ones(2)
    with pytest.raises(TypeError):
        np.ones(2) + x  # NumPy defers (__array_ufunc__ = None) and our reflected operator refuses
    other = Router((ruda.host, TORCH))
    with pytest.raises(TypeError, match="belong to the router that made them"):
        XP.add(x, other.asarray([1.0, 2.0]))
    with pytest.raises(TypeError, match="make arrays with a Router"):
        Array(np.ones(2))


def test_data_of_no_standard_dtype_is_refused_when_imported() -> None:
    # ruda.host refuses strings and objects at asarray, as NumPy does not
    with pytest.raises(TypeError, match=r"^asarray\(\): ruda.host has no dtype <U3"):
        XP.asarray(["yes", "no"], device=HOST)
    with pytest.raises(TypeError, match=r"^asarray\(\): ruda.host has no dtype object"):
        XP.asarray(np.array([None, 1], dtype=object), device=HOST)


def test_a_backend_that_makes_data_of_no_standard_dtype_is_refused_at_import() -> None:
    # (a backend that takes strings, as NumPy itself does: the router refuses them at asarray,
    # not at their first use)
    router = Router((array_api_compat.numpy, ruda.host))
    with pytest.raises(
        TypeError, match=r"^Unsupported dtype <U3 for asarray\(\).*not one of the Array API's dtypes"
    ):
        router.asarray(["yes", "no"])


@pytest.mark.parametrize("device", [HOST, TDEV], ids=["B1-host", "B2-torch"])
def test_numpy_ufuncs_run_on_the_holding_backend(device: Any) -> None:
    # np.isfinite(x) (matplotlib's) as the router's isfinite, on the backend that holds x
    assert_numpy_ufuncs_run_in_namespace(XP, device)


def test_a_device_that_is_not_this_routers_is_refused() -> None:
    for device in ("cpu", trio.MultiDevice.B1("cpu"), torch.device("cpu")):
        with pytest.raises(TypeError, match=r"must be a device of this router.*MultiDevice.B1\('cpu'\)"):
            XP.zeros(3, device=device)


def test_backend_without_a_function_says_so() -> None:
    names = [n for n in dir(ruda.host) if n != "searchsorted"]
    partial = types.SimpleNamespace(**{n: getattr(ruda.host, n) for n in names})
    partial.__name__ = "partial_host"
    xp = Router((TORCH, partial))
    where = duo.MultiDevice.B2("cpu")
    with pytest.raises(NotImplementedError, match=r"searchsorted is not provided by backend 2"):
        xp.searchsorted(xp.asarray([1, 2], device=where), xp.asarray([1], device=where))
    assert_matches_numpy(xp.searchsorted(xp.asarray([1, 2]), xp.asarray([2])), np.array([1]))


# -- explicit migration --------------------------------------------------------------------------
MIGRATED_DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float32", "float64", "complex64"]


@pytest.mark.parametrize("dtype", MIGRATED_DTYPES)
@pytest.mark.parametrize(("source", "target"), [(HOST, TDEV), (TDEV, HOST)], ids=["to-torch", "to-host"])
def test_migration_moves_values_dtype_and_shape(dtype: str, source: Any, target: Any) -> None:
    values = (np.arange(24).reshape(2, 3, 4) % 7 - 3).astype(dtype)
    x = _on(source, values)
    y = x.to_device(target)
    assert y.device == target and y.dtype is getattr(XP, dtype) and y.shape == (2, 3, 4)
    assert isinstance(y.inner, torch.Tensor if target == TDEV else np.ndarray)
    assert_matches_numpy(y, values)
    assert_matches_numpy(XP.to_device(x[:, 1:], target), values[:, 1:])  # a strided view
    assert_matches_numpy(
        XP.to_device(XP.zeros((0, 3), dtype=x.dtype, device=source), target), np.zeros((0, 3), dtype=dtype)
    )


def test_migrated_arrays_compute_on_their_new_backend() -> None:
    x = _on(HOST, [1.0, 4.0, 9.0])
    y = x.to_device(TDEV)
    z = XP.sqrt(y) + _on(TDEV, [1.0, 1.0, 1.0])
    assert isinstance(z.inner, torch.Tensor)
    back = z.to_device(HOST)
    assert isinstance(back.inner, np.ndarray)
    assert_matches_numpy(back, np.array([2.0, 3.0, 4.0]))


def test_migration_falls_back_to_host_bytes_when_dlpack_refuses() -> None:
    class NoDLPack:
        """The host namespace with a from_dlpack that refuses, as a device without a shared
        DLPack device does."""

        def __getattr__(self, name: str) -> Any:
            return getattr(ruda.host, name)

        def from_dlpack(self, x: Any, **kwargs: Any) -> Any:
            raise BufferError("no DLPack exchange with this device")

    source = torch.arange(6, dtype=torch.int16).reshape(2, 3)
    moved = migrate(source, NoDLPack(), "cpu")
    assert isinstance(moved, np.ndarray) and moved.dtype == np.int16
    np.testing.assert_array_equal(moved, source.numpy())
    source[0, 0] = 100  # the copy path never aliases
    assert moved[0, 0] == 0


@pytest.mark.parametrize(
    ("source", "target"),
    [(HOST, TDEV), (TDEV, HOST), (HOST, HOST), (TDEV, TDEV)],
    ids=["host-to-torch", "torch-to-host", "host-to-host", "torch-to-torch"],
)
def test_moves_between_host_and_torch_cpu_share_memory(source: Any, target: Any) -> None:
    x = _on(source, [1.0, 2.0, 3.0])
    y = x.to_device(target)
    x[0] = 100.0
    assert float(y[0]) == 100.0, "DLPack hands over the same memory: a write to the source shows"
    y[2] = -1.0
    assert float(x[2]) == -1.0, "and a write to the result shows in the source"


def test_moves_to_and_from_wgpu_copy() -> None:
    try:
        wgpu = ruda.namespace("wgpu")
    except (ruda.BackendNotFoundError, ruda.BackendUnavailableError) as err:
        pytest.skip(f"no wgpu backend here: {err}")
    xp = Router((ruda.host, wgpu))
    gpu = xp.MultiDevice.B2(wgpu.__array_namespace_info__().default_device())
    for source, target in [(xp.MultiDevice.B1("cpu"), gpu), (gpu, xp.MultiDevice.B1("cpu"))]:
        x = xp.asarray([1.0, 2.0, 3.0], dtype=xp.float32, device=source)
        y = x.to_device(target)
        x[0] = 100.0
        assert float(y[0]) == 1.0, f"{source!r} to {target!r} copies: the result keeps the old value"


def test_to_device_within_a_backend_keeps_the_backend() -> None:
    x = _on(TDEV, [1, 2])
    y = x.to_device(TDEV)
    assert y.device == TDEV and isinstance(y.inner, torch.Tensor)
    with pytest.raises(ValueError, match="stream applies within one backend"):
        x.to_device(HOST, stream=1)
    with pytest.raises(TypeError, match="to_device takes an array of this router"):
        XP.to_device(np.ones(2), HOST)


def test_ruda_to_device_takes_a_routers_devices() -> None:
    # a router's MultiDevice is no backend's own device: ruda.to_device had refused it, though
    # its docstring takes "x.device of any ruda array"; the router moves its array itself
    x = _on(HOST, [1.0, 2.0])
    y = ruda.to_device(x, TDEV)
    assert isinstance(y, Array) and y.device == TDEV and isinstance(y.inner, torch.Tensor)
    assert_matches_numpy(ruda.to_device(y, HOST), np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="a device is a string like 'cuda:0'"):
        ruda.to_device(np.ones(2), object())


# -- devices, dtypes, namespace info -------------------------------------------------------------
def test_multidevice_is_an_enum_of_backend_positions() -> None:
    assert duo.MultiDevice.B1("cpu") == duo.MultiDevice.B1("cpu")
    assert duo.MultiDevice.B1("cpu") != duo.MultiDevice.B2("cpu")
    assert duo.MultiDevice.B1("cpu") != trio.MultiDevice.B1("cpu")
    assert len({duo.MultiDevice.B1("cpu"), duo.MultiDevice.B1("cpu"), duo.MultiDevice.B2("cpu")}) == 2
    assert [v.variant for v in quad.MultiDevice.variants] == ["B1", "B2", "B3", "B4"]
    assert isinstance(trio.MultiDevice.B3("x"), trio.MultiDevice)
    assert repr(TDEV) == "duo.MultiDevice.B2(device(type='cpu'))" and str(HOST) == "B1(cpu)"
    match TDEV:
        case duo.MultiDevice.B1(_):
            raise AssertionError("B2 matched B1")
        case duo.MultiDevice.B2(inner):
            assert inner == torch.device("cpu")
    with pytest.raises(TypeError, match="enum: pick a variant"):
        duo.MultiDevice("cpu")
    with pytest.raises(AttributeError, match="immutable"):
        HOST._device = "gpu"  # type: ignore[misc]


def test_router_size_picks_the_device_enum_and_bad_backends_are_refused() -> None:
    assert Router((ruda.host, TORCH, ruda.host)).MultiDevice is trio.MultiDevice
    assert Router(("host", "host", "host", "host")).MultiDevice is quad.MultiDevice
    with pytest.raises(ValueError, match="2 to 4 backends"):
        Router((ruda.host,))
    with pytest.raises(ValueError, match="2 to 4 backends"):
        Router((ruda.host,) * 5)
    with pytest.raises(TypeError, match="backend 2 is 42, not an Array API namespace"):
        Router((ruda.host, 42))
    with pytest.raises(ruda.BackendNotFoundError, match="unknown backend 'nope'"):
        Router(("host", "nope"))
    with pytest.raises(TypeError, match="tuple of 2 to 4 backends"):
        Router("host")


def test_default_device_is_the_first_backends() -> None:
    assert XP.__array_namespace_info__().default_device() == HOST
    assert XP.ones(2).device == HOST and isinstance(XP.ones(2).inner, np.ndarray)
    flipped = Router((TORCH, ruda.host))
    assert isinstance(flipped.ones(2).inner, torch.Tensor)
    assert flipped.ones(2).device == duo.MultiDevice.B1(torch.device("cpu"))


def test_dtypes_are_the_routers_whichever_backend_holds_the_array() -> None:
    for device in (HOST, TDEV):
        x = XP.asarray([1, 2], dtype=XP.int16, device=device)
        assert x.dtype is XP.int16 and XP.astype(x, XP.float32).dtype is XP.float32
        assert XP.isdtype(x.dtype, "signed integer") and not XP.isdtype(x.dtype, ("bool", XP.float32))
        assert XP.result_type(x, XP.float32) is XP.float32
        assert XP.finfo(XP.float32).dtype is XP.float32 and XP.iinfo(x).max == 32767
    assert XP.result_type(XP.uint8, XP.int8) is XP.int16 and XP.can_cast(XP.int8, XP.int32)
    assert XP.zeros(2, device=TDEV).dtype is XP.float32, "torch's default float is float32"
    assert XP.zeros(2, device=HOST).dtype is XP.float64
    with pytest.raises(ValueError, match="unknown dtype kind"):
        XP.isdtype(XP.int8, "integer-ish")


def test_namespace_info_tells_each_devices_truth() -> None:
    info = XP.__array_namespace_info__()
    torch_devices = TORCH.__array_namespace_info__().devices()  # cuda:N too on a GPU machine
    assert info.devices() == (HOST, *(duo.MultiDevice.B2(d) for d in torch_devices))
    assert TDEV in info.devices()
    torch_names = set(TORCH.__array_namespace_info__().dtypes())
    assert set(info.dtypes(device=TDEV)) == torch_names
    assert set(info.dtypes(device=HOST)) == set(ruda.host.__array_namespace_info__().dtypes())
    assert info.dtypes(device=TDEV, kind="real floating") == {"float32": XP.float32, "float64": XP.float64}
    assert info.default_dtypes(device=TDEV)["real floating"] is XP.float32
    assert info.default_dtypes()["real floating"] is XP.float64
    assert info.capabilities()["boolean indexing"] is True


def test_like_functions_create_on_the_named_backend_without_moving_data() -> None:
    x = _on(HOST, [[1, 2, 3]], XP.int32)
    for got, fill in (
        (XP.zeros_like(x, device=TDEV), 0),
        (XP.ones_like(x, device=TDEV), 1),
        (XP.full_like(x, 7, device=TDEV), 7),
    ):
        assert got.device == TDEV and got.dtype is XP.int32 and isinstance(got.inner, torch.Tensor)
        assert_matches_numpy(got, np.full((1, 3), fill, dtype=np.int32))
    assert XP.empty_like(x, device=TDEV, dtype=XP.float32).dtype is XP.float32
    assert XP.zeros_like(x).device == HOST


def test_any_namespace_is_a_backend() -> None:
    import array_api_compat.torch as compat_torch

    xp = Router((ruda.host, compat_torch))
    y = xp.asarray([1.0, 2.0]).to_device(duo.MultiDevice.B2(torch.device("cpu")))
    assert isinstance(y.inner, torch.Tensor)
    assert_matches_numpy(xp.cumulative_sum(y), np.array([1.0, 3.0]))


def test_default_router_and_registry_entry() -> None:
    row = {b.name: b for b in ruda.backends()}["router"]
    assert row.available and "Router((ns1, ns2, ...))" in row.details["note"]
    xp = ruda.namespace("router")
    assert xp is ruda.router and repr(xp) == "ruda.router"
    assert xp._namespaces[0] is ruda.host, "the default router puts the host first"
    available = [b.name for b in ruda.backends() if b.available and b.name != "router"]
    assert len(xp._namespaces) == max(2, min(4, len(available)))
    assert_matches_numpy(xp.sum(xp.arange(4.0)), np.array(6.0))
    assert ruda.to_numpy(xp.arange(3)).tolist() == [0, 1, 2]


def test_the_router_row_lists_the_default_routers_devices() -> None:
    rows = {b.name: b for b in ruda.backends()}
    routed = [b for b in rows.values() if b.available and b.name != "router"][:4]
    want = tuple(dict.fromkeys(d for b in routed for d in b.devices))
    assert rows["router"].devices == want, "the devices of the backends ruda.router routes over"
    assert rows["router"].devices[0] == ruda.Device("cpu"), "the host first"
    positions = ", ".join(f"B{i + 1} {b.name}" for i, b in enumerate(routed * (2 if len(routed) == 1 else 1)))
    assert rows["router"].details["default routing"] == positions
    # `ruda info` in a fresh process: the router's probe runs while ruda.backends() probes the rest
    shown = subprocess.run(
        [sys.executable, "-m", "ruda", "info", "--json"], capture_output=True, text=True, check=True
    )
    row = {b["name"]: b for b in json.loads(shown.stdout)["backends"]}["router"]
    assert row["devices"] == [str(d) for d in want]


def test_a_third_backend_with_its_own_array_class() -> None:
    try:
        wgpu = ruda.namespace("wgpu")
    except (ruda.BackendNotFoundError, ruda.BackendUnavailableError) as err:
        pytest.skip(f"no third backend here: {err}")
    xp = Router((ruda.host, TORCH, wgpu))
    assert xp.MultiDevice is trio.MultiDevice
    gpu = xp.MultiDevice.B3(wgpu.__array_namespace_info__().default_device())
    y = xp.asarray(np.arange(6, dtype=np.float32)).to_device(gpu)
    assert y.device == gpu and type(y.inner).__module__.startswith("ruda_wgpu")
    z = (y * 2.0).to_device(xp.MultiDevice.B2(torch.device("cpu")))
    assert_matches_numpy(z, np.arange(6, dtype=np.float32) * 2)
    # the router carries the standard's dtypes only (wgpu may also list float16)
    own = set(wgpu.__array_namespace_info__().dtypes(device=gpu.device)) & set(spec.DTYPES)
    assert set(xp.__array_namespace_info__().dtypes(device=gpu)) == own, "the device's own dtypes, no more"


def test_the_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    if TORCH.__name__ != "ruda_torch":
        pytest.skip("the example names the registered torch backend")
    example = Path(__file__).parents[2] / "examples" / "router_two_backends.py"
    runpy.run_path(str(example), run_name="__main__")
    out = capsys.readouterr().out
    assert "refused: multiply: inputs on two devices" in out and "= 2.5" in out


def test_the_seed_example_on_host_and_wgpu() -> None:
    """Router((ruda.host, ruda.wgpu)): data made on the host, moved to the GPU, computed there."""
    try:
        wgpu = ruda.namespace("wgpu")
    except (ruda.BackendNotFoundError, ruda.BackendUnavailableError) as err:
        pytest.skip(f"no wgpu backend here: {err}")
    xp = Router((ruda.host, wgpu))
    cpu = xp.__array_namespace_info__().default_device()
    gpu = xp.MultiDevice.B2(wgpu.__array_namespace_info__().default_device())
    x = xp.asarray([1.0, 2.0, 3.0], dtype=xp.float32, device=cpu)
    y = x.to_device(gpu)
    assert y.device == gpu
    assert_matches_numpy(xp.sort(-y), np.array([-3.0, -2.0, -1.0], np.float32))
    assert float(xp.linalg.vector_norm(y)) == pytest.approx(14**0.5)
    assert_matches_numpy(y[y > 1.5].to_device(cpu), np.array([2.0, 3.0], np.float32))


def test_numpy_scalars_are_taken_wherever_python_scalars_are() -> None:
    x = _on(HOST, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(x + np.int64(2)), [3.0, 4.0, 5.0])
    np.testing.assert_array_equal(np.asarray(XP.multiply(np.float32(2), x)), [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(np.asarray(_on(TDEV, [1, 2]) * np.int16(3)), [3, 6])
    # data to import keeps its NumPy dtype, as NumPy's asarray keeps it
    assert XP.asarray(np.float32(1.5)).dtype == XP.float32
    assert XP.asarray(np.int16(3), device=TDEV).dtype == XP.int16


def test_numpy_conversion_is_the_holding_backends_own() -> None:
    np.testing.assert_array_equal(np.asarray(_on(HOST, [1.0, 2.0])), [1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(_on(TDEV, [3.0, 4.0])), [3.0, 4.0])
    assert np.asarray(_on(HOST, [1.0, 2.0]), dtype=np.float32).dtype == np.float32


@pytest.mark.parametrize("first", ["torch", "host"])
def test_a_mask_with_an_empty_axis_selects_nothing(first: str) -> None:
    # NumPy and the standard's suite select nothing; torch itself refuses such a mask
    xp = Router((TORCH, ruda.host) if first == "torch" else (ruda.host, TORCH))
    host = np.arange(6.0).reshape(2, 3)
    x = xp.asarray(host)
    for shape in [(0,), (2, 0), (0, 3), (0, 0)]:
        mask = np.zeros(shape, dtype=bool)
        got = x[xp.asarray(mask)]
        assert got.shape == host[mask].shape, shape
    with pytest.raises(IndexError):
        x[xp.asarray(np.zeros((3,), dtype=bool))]  # neither matches nor is empty


def test_random_programs_of_views_and_writes_match_numpy():
    # the router's arrays wrap the backend's: views, in-place writes and reads through them
    # (see ruda.testing.programs)
    run_programs(XP)
