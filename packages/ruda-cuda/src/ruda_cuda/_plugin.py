"""Registry entry for ruda_cuda (entry point ``cuda`` in ``ruda.backends``).

Importing this module imports no GPU library: CuPy is imported only when the
core asks for availability or for the namespace.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from ruda._device import Device
from ruda.plugin import Availability, Backend, install_command


def install_fix() -> str:
    """How to install CuPy and cuda-bindings for ruda_cuda, per CUDA major version."""
    return f"{install_command('cuda')} (CUDA 12) or {install_command('cuda13')} (CUDA 13)"


# cudaError_t values whose meaning a user can act on.
_RUNTIME_REASONS = {
    35: (
        "no CUDA driver, or a driver older than this CuPy's CUDA runtime",
        "install or update the NVIDIA driver, or install the CuPy flavour that matches it "
        "(the extra cuda for CUDA 12, cuda13 for CUDA 13)",
    ),
    100: ("no CUDA GPU found", "run on a machine with an NVIDIA GPU (check `nvidia-smi`)"),
    999: ("the CUDA driver failed to initialise", "check `nvidia-smi`; a reboot may be needed"),
}


def runtime_failure(err: Any) -> tuple[str, str | None]:
    """What a ``CUDARuntimeError`` means to a user, and what fixes it (None where unknown)."""
    return _RUNTIME_REASONS.get(err.status, (f"CUDA runtime error: {err}", None))


class CudaBackend(Backend):
    """NVIDIA GPUs through CuPy: one device ``cuda:N`` per GPU."""

    name = "cuda"
    array_packages = ("cupy", "ruda_cuda")

    def probe(self) -> Availability:
        if importlib.util.find_spec("cupy") is None:
            return Availability.unavailable("CuPy not installed", fix=install_fix())
        try:
            import cupy
        except Exception as err:  # a broken CuPy install must not break `ruda info`
            return Availability.unavailable(
                f"CuPy failed to import: {type(err).__name__}: {err}", fix=f"reinstall CuPy: {install_fix()}"
            )
        try:
            count = cupy.cuda.runtime.getDeviceCount()
            if count == 0:
                return Availability.unavailable(*_RUNTIME_REASONS[100])
            details = {
                "cupy": cupy.__version__,
                "platform": "ROCm" if cupy.cuda.runtime.is_hip else "CUDA",
                "runtime": str(cupy.cuda.runtime.runtimeGetVersion()),
                "driver": str(cupy.cuda.runtime.driverGetVersion()),
            }
            for i in range(count):
                props = cupy.cuda.runtime.getDeviceProperties(i)
                name = props["name"]
                details[f"cuda:{i}"] = name.decode() if isinstance(name, bytes) else str(name)
        except cupy.cuda.runtime.CUDARuntimeError as err:
            return Availability.unavailable(*runtime_failure(err))
        except Exception as err:  # e.g. libcuda.so or libnvrtc missing
            return Availability.unavailable(
                f"no CUDA driver: {type(err).__name__}: {err}",
                fix="install the NVIDIA driver (check `nvidia-smi`)",
            )
        if count > 1:
            details["between GPUs"] = _copy_paths(count)
        from ruda_cuda._fusion import describe

        details["fusion"] = describe()
        return Availability(
            available=True, devices=tuple(Device("cuda", str(i)) for i in range(count)), details=details
        )

    def array_type(self) -> type:
        import cupy

        return cupy.ndarray  # type: ignore[no-any-return]

    def device_type(self) -> type:
        import cupy

        return cupy.cuda.Device  # type: ignore[no-any-return]

    def native_device(self, device: Device) -> Any:
        from ruda_cuda._devices import native_device

        return native_device(device)

    def device_of_native(self, native: Any) -> Device:
        return Device("cuda", str(int(native.id)))

    def move(self, x: Any, native_device: Any) -> Any:
        from ruda_cuda._array import to_device
        from ruda_cuda._fusion import realized

        return to_device(realized(x), native_device)

    def from_dlpack(self, x: Any, native_device: Any) -> Any:
        # the namespace's own function (ruda_cuda.from_dlpack), imported here as move's is: this
        # module must import without CuPy
        from ruda_cuda._creation import from_dlpack

        return from_dlpack(x, device=native_device)


def _copy_paths(count: int) -> str:
    """How ``to_device`` copies between each pair of GPUs: peer-to-peer, or through the host."""
    from ruda_cuda._devices import peers  # this module imports without CuPy

    pairs = [(a, b) for a in range(count) for b in range(a + 1, count)]
    direct = [f"cuda:{a}<->cuda:{b}" for a, b in pairs if peers(a, b)]
    if len(direct) == len(pairs):
        return "peer-to-peer"
    staged = len(pairs) - len(direct)
    return f"peer-to-peer {', '.join(direct) or 'nowhere'}; {staged} pair(s) copy through the host"


PLUGIN = CudaBackend()
