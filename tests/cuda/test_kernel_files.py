"""Module.load_from_file with PTX, CUBIN and FATBIN files that nvcc builds at run time."""

from __future__ import annotations

import importlib.util
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import ruda

_ROW = {b.name: b for b in ruda.backends()}["cuda"]
if not _ROW.available:
    pytest.skip(f"cuda backend unavailable: {_ROW.reason} (fix: {_ROW.fix})", allow_module_level=True)

from ruda_cuda.kernel import (  # noqa: E402
    Context,
    Device,
    DeviceBuffer,
    FileNotFoundCudaError,
    Module,
    init,
)

pytestmark = pytest.mark.gpu

SOURCE = r"""
extern "C" __global__ void scale_add(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void shift(long long offset, double* y) { y[threadIdx.x] += (double)offset; }
"""
N = 10_000


def _nvcc() -> str | None:
    """The example's search for nvcc (PATH, $CUDA_HOME, $CUDA_PATH, /usr/local/cuda)."""
    path = Path(__file__).resolve().parents[2] / "examples" / "cuda_load_files.py"
    spec = importlib.util.spec_from_file_location("cuda_load_files", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    found: str | None = example.find_nvcc()
    return found


@pytest.fixture(scope="module")
def context() -> Iterator[Context]:
    """GPU 0's primary context, held for the module (released when its Context is collected)."""
    init()
    ctx = Context.primary(Device.get(0))
    yield ctx
    ctx.close()


@pytest.fixture(scope="module")
def built(context: Context, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """kernels.ptx, kernels.cubin and kernels.fatbin for GPU 0, built by nvcc."""
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip(
            "nvcc not found on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin: install the CUDA toolkit"
        )
    major, minor = Device.get(0).compute_capability()
    folder = tmp_path_factory.mktemp("kernels")
    source = folder / "kernels.cu"
    source.write_text(SOURCE)
    paths = {}
    for kind, arch in [
        ("ptx", f"compute_{major}{minor}"),
        ("cubin", f"sm_{major}{minor}"),
        ("fatbin", f"sm_{major}{minor}"),
    ]:
        paths[kind] = folder / f"kernels.{kind}"
        # --fmad=false: a * x + y rounds twice, as NumPy computes it, so results compare exactly
        command = [nvcc, f"-{kind}", f"-arch={arch}", "--fmad=false", "-o", str(paths[kind]), str(source)]
        subprocess.run(command, check=True, capture_output=True, text=True)
    return paths


@pytest.mark.parametrize("kind", ["ptx", "cubin", "fatbin"])
def test_load_from_file_and_run(built: dict[str, Path], kind: str) -> None:
    path = built[kind]
    head = path.read_bytes()[:4]
    assert (head == b"\x7fELF") == (kind == "cubin")  # nvcc really built what we asked for
    module = Module.load_from_file(path)
    scale_add = module.scale_add
    x_host = np.linspace(-1, 1, N, dtype=np.float32)
    y_host = np.arange(N, dtype=np.float32)
    x, y = DeviceBuffer.from_slice(x_host), DeviceBuffer.from_slice(y_host)
    block = 256
    if kind == "ptx":  # a PTX file declares the types: Python numbers are converted
        assert [str(p) for p in scale_add.parameters] == [".f32", ".u64", ".u64", ".u32"]
        scale_add[(N + block - 1) // block, block](-0.75, x, y, N)
    else:  # CUBIN and FATBIN declare none: NumPy scalars with C types
        assert scale_add.parameters is None
        with pytest.raises(TypeError, match="bare Python float"):
            scale_add[1, 1](-0.75, x, y, N)
        scale_add[(N + block - 1) // block, block](np.float32(-0.75), x, y, np.int32(N))
    np.testing.assert_array_equal(y.to_numpy(), np.float32(-0.75) * x_host + y_host)
    values = DeviceBuffer.from_slice(np.array([0.5, 1.5], dtype=np.float64))
    offset = -(2**40) if kind != "ptx" else 2**40  # .u64 in PTX: a negative needs np.int64
    module.shift[1, 2](np.int64(offset) if kind != "ptx" else offset, values)
    assert values.to_numpy().tolist() == [0.5 + offset, 1.5 + offset]
    for owned in (x, y, values, module):
        owned.close()


def test_load_from_a_missing_file(built: dict[str, Path]) -> None:
    missing = built["cubin"].with_name("missing.cubin")
    with pytest.raises(FileNotFoundCudaError, match="cuModuleLoad"):
        Module.load_from_file(missing)
