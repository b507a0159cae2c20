"""Canonical devices, TensorData and to_device between host arrays."""

from __future__ import annotations

import numpy as np
import pytest
import ruda
from ruda import Device, TensorData


@pytest.mark.parametrize(
    ("text", "kind", "ident"),
    [
        ("cpu", "cpu", None),
        ("cuda:0", "cuda", "0"),
        ("wgpu:1", "wgpu", "1"),
        ("torch:cpu", "torch", "cpu"),
        ("torch:cuda:1", "torch", "cuda:1"),
        ("remote:ws://127.0.0.1:3000", "remote", "ws://127.0.0.1:3000"),
    ],
)
def test_device_parse_roundtrip(text: str, kind: str, ident: str | None) -> None:
    device = Device.parse(text)
    assert (device.kind, device.id) == (kind, ident)
    assert str(device) == text
    assert Device.parse(device) is device


@pytest.mark.parametrize("bad", ["", "CUDA:0", "cuda:", ":0", "9gpu", "cu da"])
def test_device_parse_rejects_malformed(bad: str) -> None:
    with pytest.raises(ValueError, match="invalid device"):
        Device.parse(bad)


def test_device_parse_rejects_non_strings() -> None:
    with pytest.raises(TypeError, match="a device is a string"):
        Device.parse(0)  # type: ignore[arg-type]


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int64", "float16", "float32", "complex128"])
def test_tensordata_roundtrip(dtype: str) -> None:
    x = (np.arange(24).reshape(2, 3, 4) % 7).astype(dtype)
    data = TensorData.from_array(x)
    assert data.shape == (2, 3, 4) and data.dtype == dtype and data.nbytes == x.nbytes
    np.testing.assert_array_equal(data.to_numpy(), x)


def test_tensordata_from_non_contiguous_and_byteswapped() -> None:
    x = np.arange(12, dtype=">i4").reshape(3, 4)[:, ::2]
    data = TensorData.from_array(x)
    assert data.dtype == "int32"
    np.testing.assert_array_equal(data.to_numpy(), x)


def test_tensordata_keeps_zero_dimensions() -> None:
    """A NumPy scalar or 0-d array is carried 0-d (np.ascontiguousarray had made it (1,))."""
    for x in (np.float32(3.5), np.array(2, np.int8)):
        data = TensorData.from_array(x)
        assert data.shape == ()
        np.testing.assert_array_equal(data.to_numpy(), x)


def test_tensordata_from_buffer_protocol() -> None:
    data = TensorData.from_array(memoryview(bytearray(b"\x01\x02\x03")))
    assert data.dtype == "uint8" and data.shape == (3,)


def test_tensordata_checks_its_input() -> None:
    with pytest.raises(ValueError, match="needs 16 bytes, got 15"):
        TensorData((2, 2), "float32", bytes(15))
    with pytest.raises(ValueError, match="unsupported dtype 'float128'"):
        TensorData((1,), "float128", bytes(16))
    with pytest.raises(ValueError, match="invalid shape"):
        TensorData((-1,), "int8", b"")
    with pytest.raises(TypeError, match="cannot read an array of type builtins.object"):
        TensorData.from_array(object())


def test_to_device_host_to_host_keeps_the_array() -> None:
    x = ruda.host.arange(5)
    assert ruda.to_device(x, "cpu") is x
    assert ruda.device_of(x) == Device("cpu")


def test_to_device_takes_any_buffer_through_tensordata() -> None:
    source = memoryview(np.arange(4, dtype=np.float32).tobytes()).cast("f")
    moved = ruda.to_device(source, "cpu")
    assert isinstance(moved, np.ndarray) and moved.dtype == np.float32
    np.testing.assert_array_equal(moved, [0, 1, 2, 3])


def test_to_device_errors_are_clear() -> None:
    with pytest.raises(ruda.BackendNotFoundError, match="no installed backend owns device 'gpux:0'"):
        ruda.to_device(ruda.host.ones(2), "gpux:0")
    with pytest.raises(ValueError, match="only the device 'cpu'"):
        ruda.to_device(ruda.host.ones(2), "cpu:1")
    with pytest.raises(TypeError, match="not an array of any installed ruda backend"):
        ruda.device_of([1, 2])


def test_to_device_takes_each_backends_own_device_objects() -> None:
    """An array's .device of any backend is a target, and is never read as a string."""
    torch = pytest.importorskip("torch")
    ruda_torch = pytest.importorskip("ruda_torch")
    x = ruda.host.asarray([1.0, 2.0])
    t = ruda_torch.asarray([1.0, 2.0])
    assert str(t.device) == "cpu"  # as a string it would name the host
    moved = ruda.to_device(x, t.device)
    assert isinstance(moved, torch.Tensor) and str(ruda.device_of(moved)) == "torch:cpu"
    with pytest.raises(TypeError, match="own device object"):
        ruda.to_device(x, 3.5)


def test_to_device_takes_a_wgpu_device_object() -> None:
    ruda_wgpu = pytest.importorskip("ruda_wgpu")
    gpu = ruda_wgpu.__array_namespace_info__().devices()[0]
    data = ruda.host.asarray([1.0, 2.0], dtype=ruda.host.float32)  # (every GPU has float32)
    on_gpu = ruda.to_device(data, gpu)
    assert isinstance(on_gpu, ruda_wgpu.Array) and ruda.device_of(on_gpu) == Device.parse(gpu.name)
    np.testing.assert_array_equal(np.asarray(on_gpu), [1.0, 2.0])


PICKY_PLUGIN = '''
import contextlib
import numpy as np
from ruda.plugin import Availability, Backend

CURRENT = {"device": 0}


class PickyArray:
    """An array on device 1 that exports through DLPack only while device 1 is current, as a
    torch tensor on cuda:1 does."""

    def __init__(self, values):
        self.values = np.asarray(values)

    def __dlpack__(self, **kwargs):
        if CURRENT["device"] != 1:
            raise BufferError("Can't export tensors on a different device index")
        return self.values.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.values.__dlpack_device__()


class Picky(Backend):
    name = "picky"
    module = "fake_picky"
    device_kinds = ("picky",)
    array_packages = ("fake_picky",)

    def probe(self):
        return Availability(available=True, devices=())

    def array_type(self):
        return PickyArray

    @contextlib.contextmanager
    def exporting(self, x):
        previous, CURRENT["device"] = CURRENT["device"], 1
        try:
            yield
        finally:
            CURRENT["device"] = previous


PLUGIN = Picky()
'''


def test_arrays_export_inside_their_backends_exporting_context(install_plugin) -> None:  # type: ignore[no-untyped-def]
    install_plugin("picky", "fake_picky:PLUGIN", "fake_picky", PICKY_PLUGIN)
    import fake_picky

    x = fake_picky.PickyArray([1.0, 2.0, 3.0])
    with pytest.raises(BufferError):  # outside the context, as torch refuses
        np.from_dlpack(x)
    np.testing.assert_array_equal(ruda.to_numpy(x), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(ruda.to_device(x, "cpu"), [1.0, 2.0, 3.0])
    assert fake_picky.CURRENT["device"] == 0  # and the context is left again
