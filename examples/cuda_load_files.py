"""Build one kernel as a PTX, a CUBIN and a FATBIN file with nvcc, load each with
`Module.load_from_file`, run it, and check the result against NumPy.

    python examples/cuda_load_files.py

Needs the CUDA toolkit's nvcc (on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin);
without it the example says so and stops. The kernel is cuda_scale_add.cu beside
this file; the files are built into a temporary folder, for this GPU's architecture.

A PTX file declares its kernels' parameter types, so its kernel takes Python numbers
(`2.5`, `n`) and converts them; a CUBIN or FATBIN declares none, so its kernel takes
NumPy scalars whose dtype is the C type (`np.float32(2.5)`, `np.int32(n)`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from ruda_cuda.kernel import Context, Device, DeviceBuffer, Module, init

KERNEL = Path(__file__).with_name("cuda_scale_add.cu")
FLAGS = {"ptx": "-ptx", "cubin": "-cubin", "fatbin": "-fatbin"}


def find_nvcc() -> str | None:
    """nvcc on PATH, else in $CUDA_HOME/bin or /usr/local/cuda/bin, else None."""
    found = shutil.which("nvcc")
    if found:
        return found
    for folder in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        candidate = Path(folder or "/nonexistent") / "bin" / "nvcc"
        if candidate.is_file():
            return str(candidate)
    return None


def build(nvcc: str, kind: str, capability: tuple[int, int], folder: Path) -> Path:
    """Compile KERNEL to `folder/scale_add.<kind>` for this GPU (PTX: its virtual architecture).

    `--fmad=false` keeps `a * x + y` as a multiply and an add, rounded as NumPy rounds them.
    """
    arch = "{}_{}{}".format("compute" if kind == "ptx" else "sm", *capability)
    path = folder / f"scale_add.{kind}"
    command = [nvcc, FLAGS[kind], f"-arch={arch}", "--fmad=false", "-o", str(path), str(KERNEL)]
    subprocess.run(command, check=True, capture_output=True, text=True)
    return path


def main(n: int = 100_000) -> None:
    nvcc = find_nvcc()
    if nvcc is None:
        print("nvcc not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin): install the CUDA toolkit")
        return
    init()
    device = Device.get(0)
    context = Context.primary(device)
    x_host = np.linspace(0, 1, n, dtype=np.float32)
    y_host = np.arange(n, dtype=np.float32)
    expected = np.float32(2.5) * x_host + y_host
    with tempfile.TemporaryDirectory() as folder:
        for kind in FLAGS:
            path = build(nvcc, kind, device.compute_capability(), Path(folder))
            module = Module.load_from_file(path)
            scale_add = module.scale_add
            x, y = DeviceBuffer.from_slice(x_host), DeviceBuffer.from_slice(y_host)
            if scale_add.parameters is not None:  # a PTX file: Python numbers, converted
                scale_add[(n + 255) // 256, 256](2.5, x, y, n)
            else:  # CUBIN, FATBIN: explicit C types
                scale_add[(n + 255) // 256, 256](np.float32(2.5), x, y, np.int32(n))
            result = y.to_numpy()
            declared = "no types" if scale_add.parameters is None else scale_add
            print(f"{kind:>6}: {path.stat().st_size:>6} bytes, {declared}, y[-1] = {result[-1]}")
            np.testing.assert_array_equal(result, expected)
            for owned in (x, y, module):  # free what lives in the context before it goes
                owned.close()
    context.close()
    print(f"PTX, CUBIN and FATBIN files all gave a * x + y exactly on {device.name()}")


if __name__ == "__main__":
    main()
