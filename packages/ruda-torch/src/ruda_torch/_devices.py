"""Devices of ruda_torch: torch's own ``torch.device`` objects, and the canonical names.

``torch.device("cpu")`` is ``torch:cpu`` and ``torch.device("cuda", 1)`` is
``torch:cuda:1``. Functions accept a ``torch.device``, torch's strings
(``"cpu"``, ``"cuda:1"``), the canonical strings (``"torch:cuda:1"``) or a
``ruda.Device``.

The default device of the namespace's creation functions is the one named
by the environment variable ``RUDA_TORCH_DEVICE`` (read at import, e.g.
``RUDA_TORCH_DEVICE=cuda:0``); unset, it is torch's own default
(``torch.get_default_device()``, normally the CPU). The variable changes
nothing else in torch, unlike ``torch.set_default_device``, which affects
every torch call in the process.
"""

from __future__ import annotations

import os
from typing import Any

import torch
from ruda._device import Device

#: Environment variable naming the default device of ruda_torch's creation functions.
ENV_DEFAULT_DEVICE = "RUDA_TORCH_DEVICE"


def to_torch_device(device: Any) -> torch.device:
    """The ``torch.device`` for any accepted spelling of a device; errors say what is accepted."""
    if isinstance(device, torch.device):
        return _with_index(device)
    if isinstance(device, Device):
        if device.kind != "torch" or device.id is None:
            raise ValueError(
                f"{str(device)!r} is not a ruda_torch device: use 'torch:cpu' or 'torch:cuda:N', "
                "or move the array there with ruda.to_device"
            )
        text = device.id
    elif isinstance(device, str):
        text = device.removeprefix("torch:")
    else:
        raise TypeError(
            f"a ruda_torch device is a torch.device, 'cpu', 'cuda:N', 'torch:cuda:N' or a ruda.Device, "
            f"not {type(device).__name__}"
        )
    try:
        native = torch.device(text)
    except RuntimeError as err:
        raise ValueError(f"invalid torch device {device!r}: {err}") from None
    if native.type not in ("cpu", "cuda"):
        raise ValueError(f"ruda_torch runs on 'torch:cpu' and 'torch:cuda:N', not {str(device)!r}")
    return _with_index(native)


def check_available(native: torch.device) -> torch.device:
    """Raise a clear error when ``native`` is a CUDA device this torch cannot use."""
    if native.type == "cuda":
        count = torch.cuda.device_count()
        if native.index is not None and native.index >= count:
            reason = (
                "this torch is a CPU build"
                if torch.version.cuda is None
                else f"torch sees {count} CUDA device(s)"
            )
            here = ", ".join(str(to_ruda_device(d)) for d in available_devices())
            raise ValueError(f"torch:{native} is not available: {reason}; the devices here are {here}")
    return native


def to_ruda_device(native: Any) -> Device:
    """The canonical ``ruda.Device`` (``torch:cpu``, ``torch:cuda:N``) of a torch device."""
    return Device("torch", str(_with_index(torch.device(native))))


def available_devices() -> list[torch.device]:
    """The CPU, then every CUDA device torch can use."""
    try:
        cuda_count = torch.cuda.device_count()
    except Exception:  # a broken driver hides the GPUs, not the CPU
        cuda_count = 0
    return [torch.device("cpu"), *(torch.device("cuda", i) for i in range(cuda_count))]


def _with_index(native: torch.device) -> torch.device:
    # torch.device("cuda") means "the current CUDA device": name it, so that devices compare equal
    if native.type == "cuda" and native.index is None:
        return torch.device("cuda", torch.cuda.current_device())
    return native


def _default_from_environment() -> torch.device | None:
    text = os.environ.get(ENV_DEFAULT_DEVICE, "").strip()
    if not text:
        return None
    try:
        return to_torch_device(text)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{ENV_DEFAULT_DEVICE}={text!r} is not a usable device: {err}") from None


#: The device creation functions use when given none; None means torch's own default.
DEFAULT: torch.device | None = _default_from_environment()


def default_device() -> torch.device:
    """The device an array is created on when no device is given."""
    return DEFAULT if DEFAULT is not None else _with_index(torch.get_default_device())


def resolve(device: Any) -> torch.device | None:
    """The device to pass to torch for a creation function's ``device`` argument (fast path first)."""
    if device is None:
        return DEFAULT
    if isinstance(device, torch.device):
        return device
    return to_torch_device(device)
