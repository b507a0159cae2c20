"""Registry entry for ruda_torch (entry point ``torch`` in ``ruda.backends``).

Cheap to import: torch is imported only when the core probes the backend or
moves an array, never by ``import ruda``.
"""

from __future__ import annotations

import contextlib
from typing import Any

from ruda._device import Device
from ruda.plugin import Availability, Backend, install_command


def _fix() -> str:
    return f"{install_command('torch')} (any torch >= 2.4; a CPU build is enough)"


class TorchBackend(Backend):
    """PyTorch tensors on ``torch:cpu`` and on every CUDA device torch sees (``torch:cuda:N``)."""

    name = "torch"
    cubed_module = "ruda_torch.cubed"  # NumPy dtypes, which Cubed's planning needs
    array_packages = ("torch",)

    def probe(self) -> Availability:
        try:
            import torch
        except ImportError as err:
            return Availability.unavailable(f"PyTorch is not installed ({err})", fix=_fix())
        except Exception as err:  # a broken torch install must not break ruda
            reason = f"importing torch failed: {type(err).__name__}: {err}"
            return Availability.unavailable(reason, fix=_fix())
        try:
            cuda_count = torch.cuda.device_count()
        except Exception:  # a driver problem hides the GPUs, not the CPU
            cuda_count = 0
        devices = (Device("torch", "cpu"), *(Device("torch", f"cuda:{i}") for i in range(cuda_count)))
        details = {"torch": torch.__version__, "cuda": torch.version.cuda or "none (CPU build)"}
        return Availability(available=True, devices=devices, details=details)

    def array_type(self) -> type:
        import torch

        return torch.Tensor

    def device_type(self) -> type:
        import torch

        return torch.device

    def native_device(self, device: Device) -> Any:
        from ruda_torch._devices import check_available, to_torch_device

        return check_available(to_torch_device(device))

    def device_of_native(self, native: Any) -> Device:
        from ruda_torch._devices import to_ruda_device

        return to_ruda_device(native)

    def exporting(self, x: Any) -> contextlib.AbstractContextManager[Any]:
        """torch exports a CUDA tensor through DLPack only while its GPU is torch's current one."""
        if x.device.type != "cuda":
            return contextlib.nullcontext()
        import torch

        return torch.cuda.device(x.device)

    def move(self, x: Any, native_device: Any) -> Any:
        return x.to(native_device)

    def from_dlpack(self, x: Any, native_device: Any) -> Any:
        from ruda_torch import from_dlpack

        return from_dlpack(x, device=native_device)


PLUGIN = TorchBackend()
