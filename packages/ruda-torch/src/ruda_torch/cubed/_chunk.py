"""The tensors ruda_torch.cubed gives Cubed: torch tensors whose ``np.asarray`` is a copy to the host,
on whatever device they live, so that Cubed can store every chunk in Zarr."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch


class ChunkTensor(torch.Tensor):
    """A torch tensor that Cubed can store: ``np.asarray`` copies it to the host from any device.

    Cubed (0.27) hands every chunk it writes to Zarr through ``np.asarray``, and torch refuses that
    for a CUDA tensor (``TypeError: can't convert cuda:0 device type tensor to numpy``). Cubed
    offers no hook between a task's result and that call, so the chunks themselves must take it:
    ruda_torch.cubed makes every chunk of this class (reading one from Zarr, creating one), and
    torch gives the class to every result computed from one (``Tensor.__torch_function__``), so the
    results Cubed stores are of it too. It holds no state of its own: the same storage, device and
    dtype as a plain tensor, computed by the same torch functions.

    A function you map over chunks (``cubed.map_blocks``) gets chunks of this class; make its
    result from them (``torch.full_like(block, ...)``, ``block * 2``) or with ruda_torch.cubed's
    functions, not from scratch (``torch.full(...)`` gives a plain tensor, which on a GPU Cubed
    cannot store).

    Examples
    --------
    >>> t = ruda_torch.cubed.asarray(np.arange(3.0))
    >>> type(t * 2).__name__, np.asarray(t * 2)
    ('ChunkTensor', array([0., 2., 4.]))
    """

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray[Any, Any]:
        """The tensor's values as a NumPy array: on the CPU its own memory where ``dtype`` and
        ``copy`` allow it (as torch does), on a GPU a copy to the host."""
        on_host = self.device.type == "cpu"
        if copy is False and not on_host:
            raise ValueError(
                f"np.asarray(copy=False) of a tensor on torch:{self.device} cannot share its memory "
                "with the host: pass copy=None or copy=True for a host copy"
            )
        host = self.numpy(force=True)  # detached, resolved, on the host: a copy unless on the CPU
        return np.array(host, dtype=dtype, copy=copy if on_host else None)


def as_chunk(x: torch.Tensor) -> ChunkTensor:
    """``x`` as a :class:`ChunkTensor` (the same storage, no copy)."""
    return x.as_subclass(ChunkTensor)
