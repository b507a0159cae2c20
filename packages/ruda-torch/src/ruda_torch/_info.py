"""``__array_namespace_info__`` for ruda_torch: what the installed torch really does, per device.

torch has uint16, uint32 and uint64 tensors, but only some operations have
kernels for them (in torch 2.13 on the CPU: creation, casting, DLPack,
``==``, ``*``, bitwise and/or/xor, sum, prod, sort; no ``+``, ``<``, ``where``
or ``abs``), and torch's promotion refuses them. Rather than hard-code that, the namespace asks the installed
torch once per device: :meth:`__array_namespace_info__.dtypes` lists a dtype
only when every probed operation works on it, and
:meth:`__array_namespace_info__.partial_dtypes` says, for each dtype left
out, exactly which operations work and which do not.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch
from ruda.spec import dtype_names

from ruda_torch import _devices

Tensor = torch.Tensor

#: Dtypes whose support differs between torch versions, and so are probed.
PROBED = ("uint16", "uint32", "uint64")

#: One small use of each operation family, through the namespace, on ``a`` = [3, 2] and ``b`` = [1, 2].
_PROBES: dict[str, Callable[[Any, Tensor, Tensor], object]] = {
    "full": lambda xp, a, b: xp.full((2,), 1, dtype=a.dtype, device=a.device),
    "arange": lambda xp, a, b: xp.arange(0, 3, dtype=a.dtype, device=a.device),
    "astype": lambda xp, a, b: xp.astype(xp.astype(a, xp.int64), a.dtype),
    "add": lambda xp, a, b: xp.add(a, b),
    "subtract": lambda xp, a, b: xp.subtract(a, b),
    "multiply": lambda xp, a, b: xp.multiply(a, b),
    "floor_divide": lambda xp, a, b: xp.floor_divide(a, b),
    "remainder": lambda xp, a, b: xp.remainder(a, b),
    "pow": lambda xp, a, b: xp.pow(a, b),
    "equal": lambda xp, a, b: xp.equal(a, b),
    "less": lambda xp, a, b: xp.less(a, b),
    "maximum": lambda xp, a, b: xp.maximum(a, b),
    "minimum": lambda xp, a, b: xp.minimum(a, b),
    "clip": lambda xp, a, b: xp.clip(a, b, a),
    "abs": lambda xp, a, b: xp.abs(a),
    "negative": lambda xp, a, b: xp.negative(a),
    "sign": lambda xp, a, b: xp.sign(a),
    "square": lambda xp, a, b: xp.square(a),
    "bitwise_and": lambda xp, a, b: xp.bitwise_and(a, b),
    "bitwise_or": lambda xp, a, b: xp.bitwise_or(a, b),
    "bitwise_xor": lambda xp, a, b: xp.bitwise_xor(a, b),
    "bitwise_invert": lambda xp, a, b: xp.bitwise_invert(a),
    "bitwise_left_shift": lambda xp, a, b: xp.bitwise_left_shift(a, b),
    "bitwise_right_shift": lambda xp, a, b: xp.bitwise_right_shift(a, b),
    "sum": lambda xp, a, b: xp.sum(a),
    "prod": lambda xp, a, b: xp.prod(a),
    "cumulative_sum": lambda xp, a, b: xp.cumulative_sum(a),
    "max": lambda xp, a, b: xp.max(a),
    "argmax": lambda xp, a, b: xp.argmax(a),
    "sort": lambda xp, a, b: xp.sort(a),
    "argsort": lambda xp, a, b: xp.argsort(a),
    "searchsorted": lambda xp, a, b: xp.searchsorted(b, a),
    "unique_values": lambda xp, a, b: xp.unique_values(a),
    "isin": lambda xp, a, b: xp.isin(a, b),
    "where": lambda xp, a, b: xp.where(xp.equal(a, b), a, b),
    "nonzero": lambda xp, a, b: xp.nonzero(a),
    "concat": lambda xp, a, b: xp.concat([a, b]),
    "flip": lambda xp, a, b: xp.flip(a),
    "take": lambda xp, a, b: xp.take(a, xp.zeros(1, dtype=xp.int64, device=a.device)),
    "matmul": lambda xp, a, b: xp.matmul(xp.reshape(a, (1, 2)), xp.reshape(b, (2, 1))),
    "boolean indexing": lambda xp, a, b: a[xp.equal(a, b)],
    "from_dlpack": lambda xp, a, b: xp.from_dlpack(a),
}


@functools.cache
def _probe(name: str, device: torch.device) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(operations that work, operations that raise) for dtype ``name`` on ``device``."""
    import ruda_torch as xp

    dtype = getattr(torch, name)
    a = torch.tensor([3, 2], device=device).to(dtype)
    b = torch.tensor([1, 2], device=device).to(dtype)
    works, fails = [], []
    for op, probe in _PROBES.items():
        try:
            probe(xp, a, b)
        except Exception:  # torch raises NotImplementedError or RuntimeError for a missing kernel
            fails.append(op)
        else:
            works.append(op)
    return tuple(works), tuple(fails)


class __array_namespace_info__:  # noqa: N801  (the spec's name)
    """Capabilities, devices and dtypes of ruda_torch for the installed torch.

    Examples
    --------
    >>> info = ruda_torch.__array_namespace_info__()
    >>> info.default_dtypes()["real floating"]
    torch.float32
    >>> info.devices()[0]
    device(type='cpu')
    """

    def capabilities(self) -> dict[str, Any]:
        """Boolean indexing and data-dependent shapes work; torch tensors have at most 64 dimensions."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self) -> torch.device:
        """Where creation functions put arrays: ``RUDA_TORCH_DEVICE``, else torch's default."""
        return _devices.default_device()

    def devices(self) -> tuple[torch.device, ...]:
        """``torch.device("cpu")``, then each CUDA device torch can use."""
        return tuple(_devices.available_devices())

    def default_dtypes(self, *, device: Any = None) -> dict[str, torch.dtype]:
        """torch's default float (float32 unless changed), its complex partner, int64 and int64 indices."""
        _check(device)
        real = torch.get_default_dtype()
        return {
            "real floating": real,
            "complex floating": torch.complex128 if real == torch.float64 else torch.complex64,
            "integral": torch.int64,
            "indexing": torch.int64,
        }

    def dtypes(
        self, *, device: Any = None, kind: str | tuple[str, ...] | None = None
    ) -> dict[str, torch.dtype]:
        """The Array API dtypes that work on ``device``, or those of ``kind`` (a name or a tuple).

        uint16, uint32 and uint64 are listed only where the installed torch runs every probed
        operation on them; :meth:`partial_dtypes` says what works where they are not.
        """
        native = _check(device)
        names = dtype_names(kind)
        return {n: getattr(torch, n) for n in names if n not in PROBED or not _probe(n, native)[1]}

    def partial_dtypes(self, *, device: Any = None) -> dict[str, dict[str, tuple[str, ...]]]:
        """For each dtype torch has but cannot fully compute with on ``device``: the operations
        that work (``"works"``) and those that raise (``"fails"``). Not part of the spec.

        >>> ruda_torch.__array_namespace_info__().partial_dtypes()["uint16"]["fails"][:3]
        ('add', 'subtract', 'floor_divide')
        """
        native = _check(device)
        out = {}
        for name in PROBED:
            works, fails = _probe(name, native)
            if fails:
                out[name] = {"works": works, "fails": fails}
        return out


def _check(device: Any) -> torch.device:
    """The device asked about (the default one for None); unknown devices raise."""
    native = _devices.default_device() if device is None else _devices.to_torch_device(device)
    return _devices.check_available(native)
