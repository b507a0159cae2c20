"""ruda_torch's plugin and devices, and exchange with other backends through ``ruda.to_device``:
zero-copy (shared memory, proved by writing through one side) between NumPy and ``torch:cpu``,
and between CuPy and ``torch:cuda:N`` on a GPU machine."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import ruda
from ruda.testing import assert_matches_numpy

torch = pytest.importorskip("torch", reason="the torch backend needs PyTorch: pip install 'ruda[torch]'")
import ruda_torch as xp  # noqa: E402
from ruda_torch._plugin import PLUGIN  # noqa: E402

CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="no CUDA device visible to torch (a CPU build or no GPU)")


def test_plugin_import_is_cheap() -> None:
    code = "import sys, ruda, ruda_torch._plugin; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_probe_reports_devices_and_versions() -> None:
    status = PLUGIN.probe()
    assert status.available
    assert status.devices[0] == ruda.Device("torch", "cpu")
    assert len(status.devices) == 1 + torch.cuda.device_count()
    assert status.details["torch"] == torch.__version__


def test_device_names_round_trip() -> None:
    assert PLUGIN.native_device(ruda.Device.parse("torch:cpu")) == torch.device("cpu")
    assert ruda.device_of(torch.ones(1)) == ruda.Device("torch", "cpu")
    assert PLUGIN.owns(torch.ones(1)) and not PLUGIN.owns(np.ones(1))
    with pytest.raises(ValueError, match="torch:cuda:9 is not available"):
        ruda.to_device(np.ones(2), "torch:cuda:9")
    with pytest.raises(ValueError, match="runs on 'torch:cpu' and 'torch:cuda:N'"):
        ruda.to_device(np.ones(2), "torch:meta")


def test_host_to_torch_cpu_shares_memory() -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = ruda.to_device(a, "torch:cpu")
    assert type(t) is torch.Tensor and t.dtype == torch.float32 and t.shape == (2, 3)
    assert t.data_ptr() == a.ctypes.data
    t[1, 2] = 42.0  # a write through the tensor is seen by the NumPy array: one buffer
    assert a[1, 2] == 42.0


def test_torch_cpu_to_host_shares_memory() -> None:
    t = xp.arange(5, dtype=xp.int32)
    a = ruda.to_device(t, "cpu")
    assert type(a) is np.ndarray and a.ctypes.data == t.data_ptr()
    a[0] = -7
    assert int(t[0]) == -7


@pytest.mark.parametrize(
    "dtype", ["bool", "int8", "uint8", "uint16", "uint32", "uint64", "int64", "float64", "complex64"]
)
def test_every_dtype_crosses_without_copy(dtype: str) -> None:
    a = np.ones(4, dtype=dtype)
    t = ruda.to_device(a, "torch:cpu")
    assert t.data_ptr() == a.ctypes.data
    assert_matches_numpy(t, a)


def test_from_dlpack_copies_only_when_asked() -> None:
    a = np.zeros(3)
    assert xp.from_dlpack(a).data_ptr() == a.ctypes.data
    assert xp.from_dlpack(a, device="torch:cpu").data_ptr() == a.ctypes.data
    assert xp.from_dlpack(a, copy=True).data_ptr() != a.ctypes.data


def test_negative_strides_and_numpy_scalars_reach_torch() -> None:
    """torch aborts the process on a DLPack view with negative strides: from_dlpack refuses it
    with BufferError, to_device and asarray copy it; a NumPy scalar, which has no __dlpack__ of
    its own, had reached torch as if a capsule (an AssertionError)."""
    x = np.arange(6.0).reshape(2, 3)[:, ::-1]
    with pytest.raises(BufferError, match="negative strides"):
        xp.from_dlpack(x)
    assert_matches_numpy(ruda.to_device(x, "torch:cpu"), x)
    assert_matches_numpy(xp.asarray(x), x)
    with pytest.raises(ValueError, match="negative strides"):
        xp.asarray(x, copy=False)
    scalar = ruda.to_device(np.float32(3.5), "torch:cpu")
    assert scalar.shape == () and float(scalar) == 3.5


def test_products_refuse_other_libraries_arrays_by_name() -> None:
    """matmul, tensordot and vecdot of a NumPy array had raised "'str' object has no attribute
    'type'" from torch's device checks."""
    for product in (xp.matmul, xp.tensordot, xp.vecdot):
        with pytest.raises(TypeError, match="cannot combine a ruda_torch array with a numpy.ndarray"):
            product(np.ones((2, 2), np.float32), xp.ones((2, 2)))
        with pytest.raises(TypeError, match="takes a torch tensor for x2, not list"):
            product(xp.ones((2, 2)), [[1.0, 2.0], [3.0, 4.0]])


def test_default_device_comes_from_the_environment() -> None:
    env = {**os.environ, "RUDA_TORCH_DEVICE": "torch:cpu"}
    code = "import ruda_torch as xp; print(xp.__array_namespace_info__().default_device(), xp.ones(1).device)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["cpu", "cpu"]
    env["RUDA_TORCH_DEVICE"] = "wgpu:0"
    code = "import ruda_torch as xp; xp.ones(1)"
    bad = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert bad.returncode != 0 and "RUDA_TORCH_DEVICE='wgpu:0' is not a usable device" in bad.stderr


# -- on a CUDA machine --------------------------------------------------------------------------------
@pytest.mark.gpu
@needs_cuda
def test_creation_and_moves_on_cuda() -> None:
    x = xp.arange(4, dtype=xp.float32, device="torch:cuda:0")
    assert x.device == torch.device("cuda", 0) and ruda.device_of(x) == ruda.Device("torch", "cuda:0")
    back = ruda.to_device(x, "torch:cpu")
    assert back.device == torch.device("cpu") and back.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert ruda.to_device(np.arange(3.0), "torch:cuda:0").device == torch.device("cuda", 0)
    assert_matches_numpy(
        xp.unique_values(xp.asarray([2.0, 1.0, 2.0], device="cuda:0")), np.array([1.0, 2.0], "float32")
    )


@pytest.mark.gpu
@needs_cuda
def test_cupy_and_torch_cuda_share_memory_through_the_plugin() -> None:
    cupy = pytest.importorskip("cupy")
    a = cupy.arange(8, dtype=cupy.float32)
    t = PLUGIN.from_dlpack(a, torch.device("cuda", 0))
    assert t.data_ptr() == a.data.ptr
    t[3] = 99.0
    assert float(a[3]) == 99.0
    back = cupy.from_dlpack(t)
    assert back.data.ptr == t.data_ptr()


@pytest.mark.gpu
@needs_cuda
def test_ruda_to_device_between_cuda_backend_and_torch_cuda_shares_memory() -> None:
    cuda_row = {b.name: b for b in ruda.backends()}.get("cuda")
    if cuda_row is None or not cuda_row.available:
        pytest.skip(f"the cuda backend is not usable here: {cuda_row and cuda_row.reason}")
    a = ruda.cuda.arange(8, dtype=ruda.cuda.float32)
    t = ruda.to_device(a, "torch:cuda:0")
    assert type(t) is torch.Tensor and t.device == torch.device("cuda", 0)
    t[5] = -1.0  # written on the torch side, read on the CuPy side
    assert float(ruda.to_numpy(a)[5]) == -1.0
    b = ruda.to_device(t, "cuda:0")
    b[6] = 123.0  # and the other way round
    assert float(t[6]) == 123.0
