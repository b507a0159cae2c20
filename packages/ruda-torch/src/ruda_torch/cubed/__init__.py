"""ruda_torch as Cubed's backend: the same functions computing on the same torch tensors, with
NumPy's dtype objects wherever the namespace names, takes or returns a dtype.

    CUBED_BACKEND_ARRAY_API_MODULE=ruda_torch.cubed python3 my_cubed_script.py

Why it exists: Cubed (0.27) plans and stores chunks with NumPy and Zarr, and passes the backend's
dtypes to ``np.dtype(...)`` (``cubed.utils.normalize_dtype``, the chunking it vendors from Dask,
Zarr's array creation); ``np.dtype(torch.float64)`` raises ``TypeError: Cannot interpret
'torch.float64' as a data type``. Cubed takes its public dtypes (``cubed.array_api.float64``)
from the backend too, so they must be NumPy's for its checks to agree with its storage. The fix
belongs on our side of that boundary, not in Cubed: this module, with no state of its own.

What it changes:

- dtypes: the 13 Array API dtypes are NumPy's (``ruda_torch.cubed.float64 == np.dtype("float64")``).
  Every function that takes a dtype (creation, ``astype``, ``sum``, ``prod``, ``mean``,
  ``cumulative_*``, ``nansum``, ``nanprod``, ``result_type``, ``can_cast``, ``isdtype``,
  ``finfo``, ``iinfo``, ``linalg.trace``, ``fft.fftfreq``, ``fft.rfftfreq``) converts it to
  torch's and calls ruda_torch; those that return one (``result_type``, ``finfo().dtype``,
  ``iinfo().dtype``, the info's ``dtypes()`` and ``default_dtypes()``) convert it back.
- host arrays: Cubed also makes small arrays on the client and reads their ``.dtype`` into its
  plan (the ``2`` of ``x * 2``, ``asarray([...])``, ``arange(n)``'s dtype, ``searchsorted``'s
  chunk offsets), and a tensor's dtype is torch's. So ``asarray`` of Python values and
  ``arange`` without a dtype give NumPy arrays (values and dtypes as ruda_torch makes them), and
  ``cumulative_sum`` of one gives one. Cubed reads each chunk of them back through ``asarray``,
  which makes it a tensor.
- chunks: every tensor this module makes (reading a chunk from Zarr through ``asarray``,
  creating one) is a ``ChunkTensor``, a torch tensor whose ``np.asarray`` is a copy to the host
  from any device, and torch gives that class to everything computed from one: Cubed stores each
  chunk in Zarr through ``np.asarray``, which a plain CUDA tensor refuses. A chunk read from Zarr
  (a NumPy array) goes to ruda_torch's default device (``RUDA_TORCH_DEVICE``, else torch's
  default), so ``RUDA_TORCH_DEVICE=cuda:0`` computes every chunk on the GPU.
- NumPy-style calls Cubed makes on chunks, beyond the standard: ``take`` with a Python int
  (``var``), ``mean`` with a ``dtype`` (``var``), ``full_like`` with a ``shape``
  (``map_overlap``), ``broadcast_to`` of a host array (``mean``'s and ``var``'s counts).

Everything else is ruda_torch's own function, looked up there (module ``__getattr__``), so a
function added to ruda_torch is here too; ``tests/torch/test_cubed_torch.py`` fails if it takes
a dtype and is not converted here. Chunks are torch tensors computed by torch; ``compute()``
returns one (a ``ChunkTensor`` on the default device: ``np.asarray(result)`` for NumPy's).

What it cannot change: Cubed reads the dtype of an array you give it, so give
``cubed.array_api.asarray`` and ``cubed.from_array`` NumPy arrays, not tensors (``t.numpy()``).
Every intermediate chunk makes a round trip through host memory (Zarr), as with every backend.
A function you map over chunks must make its result from its chunks (``torch.full_like(block,
...)``), not from scratch: a fresh CUDA tensor is a plain one, which Cubed cannot store. With the
processes executor, name the device with ``RUDA_TORCH_DEVICE`` (the workers inherit it; they do
not inherit ``torch.set_default_device``). Cubed's ``groupby`` reductions (``numpy_groupies``)
are untested.
"""

from __future__ import annotations

import builtins
import dataclasses
from typing import Any

import numpy as np
import torch
from ruda.spec import finfo_object, iinfo_object

import ruda_torch
from ruda_torch import _namespace as _xp
from ruda_torch.cubed import fft, linalg
from ruda_torch.cubed._chunk import ChunkTensor, as_chunk
from ruda_torch.cubed._dtypes import kind_to_torch, to_numpy, to_torch

# the namespace's functions that array-api-compat gives it (a star import, which mypy cannot see
# through, as it does not follow array-api-compat)
_compat: Any = _xp

Tensor = torch.Tensor
Axis = int | tuple[int, ...] | None

__all__ = list(ruda_torch.__all__)
_NAMES = frozenset(__all__)

bool = np.dtype("bool")
int8 = np.dtype("int8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
uint8 = np.dtype("uint8")
uint16 = np.dtype("uint16")
uint32 = np.dtype("uint32")
uint64 = np.dtype("uint64")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
complex64 = np.dtype("complex64")
complex128 = np.dtype("complex128")


# -- creation --------------------------------------------------------------------------------------


def arange(
    start: float, /, stop: float | None = None, step: float = 1, *, dtype: Any = None, device: Any = None
) -> Tensor | np.ndarray[Any, Any]:
    """ruda_torch's ``arange``; without a ``dtype``, as a NumPy array (a host array: Cubed calls it
    so only to learn the dtype ruda_torch picks, and passes that dtype for every chunk)."""
    if dtype is None:
        return _xp.arange(start, stop, step, device="cpu").numpy()
    return as_chunk(_xp.arange(start, stop, step, dtype=to_torch(dtype), device=device))


def asarray(
    obj: Any, /, *, dtype: Any = None, device: Any = None, copy: builtins.bool | None = None
) -> Tensor | np.ndarray[Any, Any]:
    """ruda_torch's ``asarray``; of Python values (a scalar or a list or tuple), the same values as
    a NumPy array.

    Cubed turns a Python value into an array on the client (the ``2`` of ``x * 2``,
    ``cubed.array_api.asarray([...])``) and reads that array's ``.dtype`` into its plan with
    ``np.dtype``, which a tensor's would fail. The values are made by ruda_torch (its dtype rules,
    its default float) and handed over as NumPy's; Cubed reads them back chunk by chunk through
    this function, which makes each chunk a tensor. Arrays, buffers and tensors become tensors
    (a NumPy array of a matching dtype is shared, not copied).
    """
    if isinstance(obj, _PYTHON_VALUES) and not isinstance(obj, np.generic):  # np.float64 is a float
        return _xp.asarray(obj, dtype=to_torch(dtype), device="cpu", copy=copy).numpy()
    return as_chunk(_xp.asarray(obj, dtype=to_torch(dtype), device=device, copy=copy))


_PYTHON_VALUES = (int, float, complex, list, tuple)  # a Python bool is an int


def empty(shape: int | tuple[int, ...], *, dtype: Any = None, device: Any = None) -> Tensor:
    """ruda_torch's ``empty``."""
    return as_chunk(_xp.empty(shape, dtype=to_torch(dtype), device=device))


def empty_like(x: Tensor, /, *, dtype: Any = None, device: Any = None) -> Tensor:
    """ruda_torch's ``empty_like``."""
    return as_chunk(_xp.empty_like(x, dtype=to_torch(dtype), device=device))


def eye(
    n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None, device: Any = None
) -> Tensor:
    """ruda_torch's ``eye``."""
    return as_chunk(_xp.eye(n_rows, n_cols, k=k, dtype=to_torch(dtype), device=device))


def full(shape: int | tuple[int, ...], fill_value: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    """ruda_torch's ``full``."""
    return as_chunk(_xp.full(shape, fill_value, dtype=to_torch(dtype), device=device))


def full_like(
    x: Tensor,
    /,
    fill_value: Any,
    *,
    dtype: Any = None,
    device: Any = None,
    shape: tuple[int, ...] | None = None,
) -> Tensor:
    """ruda_torch's ``full_like``. ``shape`` (another shape than ``x``'s) is beyond the standard, as
    in NumPy: Cubed's ``map_overlap`` pads chunks with it."""
    if shape is None:
        return as_chunk(_xp.full_like(x, fill_value, dtype=to_torch(dtype), device=device))
    dtype = x.dtype if dtype is None else to_torch(dtype)
    return as_chunk(_xp.full(shape, fill_value, dtype=dtype, device=x.device if device is None else device))


def linspace(
    start: complex,
    stop: complex,
    /,
    num: int,
    *,
    dtype: Any = None,
    device: Any = None,
    endpoint: builtins.bool = True,
) -> Tensor:
    """ruda_torch's ``linspace``."""
    return as_chunk(_xp.linspace(start, stop, num, dtype=to_torch(dtype), device=device, endpoint=endpoint))


def ones(shape: int | tuple[int, ...], *, dtype: Any = None, device: Any = None) -> Tensor:
    """ruda_torch's ``ones``."""
    return as_chunk(_xp.ones(shape, dtype=to_torch(dtype), device=device))


def ones_like(x: Tensor, /, *, dtype: Any = None, device: Any = None) -> Tensor:
    """ruda_torch's ``ones_like``."""
    return as_chunk(_xp.ones_like(x, dtype=to_torch(dtype), device=device))


def zeros(shape: int | tuple[int, ...], *, dtype: Any = None, device: Any = None) -> Tensor:
    """ruda_torch's ``zeros``."""
    return as_chunk(_xp.zeros(shape, dtype=to_torch(dtype), device=device))


def zeros_like(x: Tensor, /, *, dtype: Any = None, device: Any = None) -> Tensor:
    """ruda_torch's ``zeros_like``."""
    return as_chunk(_xp.zeros_like(x, dtype=to_torch(dtype), device=device))


# -- data types ------------------------------------------------------------------------------------


def astype(x: Tensor, dtype: Any, /, *, copy: builtins.bool = True, device: Any = None) -> Tensor:
    """ruda_torch's ``astype``."""
    return _xp.astype(x, to_torch(dtype), copy=copy, device=device)


def can_cast(from_: Any, to: Any, /) -> builtins.bool:
    """ruda_torch's ``can_cast`` (``from_`` a dtype or a tensor)."""
    return _xp.can_cast(from_ if isinstance(from_, Tensor) else to_torch(from_), to_torch(to))


def finfo(type: Any, /) -> finfo_object:
    """ruda_torch's ``finfo``, its ``dtype`` NumPy's."""
    info = _xp.finfo(type if isinstance(type, Tensor) else to_torch(type))
    return dataclasses.replace(info, dtype=to_numpy(info.dtype))


def iinfo(type: Any, /) -> iinfo_object:
    """ruda_torch's ``iinfo``, its ``dtype`` NumPy's."""
    info = _xp.iinfo(type if isinstance(type, Tensor) else to_torch(type))
    return dataclasses.replace(info, dtype=to_numpy(info.dtype))


def isdtype(dtype: Any, kind: Any) -> builtins.bool:
    """ruda_torch's ``isdtype``; ``kind`` is a kind name, a dtype, or a tuple of them."""
    return _xp.isdtype(to_torch(dtype), kind_to_torch(kind))


def result_type(*arrays_and_dtypes: Any) -> np.dtype[Any]:
    """ruda_torch's ``result_type`` (the spec's promotion), as a NumPy dtype."""
    # arrays and Python scalars (a Python bool is an int) pass as they are
    passed = Tensor | int | float | complex
    torch_args = [a if isinstance(a, passed) else to_torch(a) for a in arrays_and_dtypes]
    return to_numpy(_xp.result_type(*torch_args))


# -- manipulation ----------------------------------------------------------------------------------


def broadcast_to(x: Tensor | np.ndarray[Any, Any], /, shape: tuple[int, ...]) -> Tensor:
    """ruda_torch's ``broadcast_to``; of a host array too, as a tensor: Cubed's ``mean`` and ``var``
    broadcast ``asarray(count)`` to make a chunk."""
    chunk = x if isinstance(x, Tensor) else as_chunk(_xp.asarray(x))
    out: Tensor = _compat.broadcast_to(chunk, shape)
    return out


def take(x: Tensor, indices: Tensor | int, /, *, axis: int | None = None) -> Tensor:
    """ruda_torch's ``take``, also with one Python int as ``indices``, which (as in NumPy) picks
    that element along ``axis`` and drops the axis: Cubed's ``var`` combines chunks with it."""
    if not isinstance(indices, int):
        taken: Tensor = _compat.take(x, indices, axis=axis)
        return taken
    if axis is None and x.ndim != 1:
        raise ValueError(f"take of a {x.ndim}-d array needs an axis")
    return torch.select(x, 0 if axis is None else axis, indices).clone()


# -- reductions that take a dtype ------------------------------------------------------------------


def sum(x: Tensor, /, *, axis: Axis = None, dtype: Any = None, keepdims: builtins.bool = False) -> Tensor:
    """ruda_torch's ``sum``."""
    out: Tensor = _compat.sum(x, axis=axis, dtype=to_torch(dtype), keepdims=keepdims)
    return out


def prod(x: Tensor, /, *, axis: Axis = None, dtype: Any = None, keepdims: builtins.bool = False) -> Tensor:
    """ruda_torch's ``prod``."""
    out: Tensor = _compat.prod(x, axis=axis, dtype=to_torch(dtype), keepdims=keepdims)
    return out


def mean(x: Tensor, /, *, axis: Axis = None, keepdims: builtins.bool = False, dtype: Any = None) -> Tensor:
    """ruda_torch's ``mean``. ``dtype`` (the dtype to accumulate and return in) is beyond the
    standard, as in NumPy: Cubed's ``var`` passes it."""
    out: Tensor
    if dtype is None:
        out = _compat.mean(x, axis=axis, keepdims=keepdims)
    else:
        out = _compat.mean(x, axis=axis, keepdims=keepdims, dtype=to_torch(dtype))
    return out


def cumulative_sum(
    x: Tensor | np.ndarray[Any, Any],
    /,
    *,
    axis: int | None = None,
    dtype: Any = None,
    include_initial: builtins.bool = False,
) -> Tensor | np.ndarray[Any, Any]:
    """ruda_torch's ``cumulative_sum``; of a host array, a host array (Cubed's ``searchsorted`` sums
    its chunk sizes so on the client and reads the result's dtype)."""
    kwargs = {"axis": axis, "dtype": to_torch(dtype), "include_initial": include_initial}
    if isinstance(x, np.ndarray):
        on_host: Tensor = _compat.cumulative_sum(torch.from_numpy(x), **kwargs)
        return on_host.numpy()
    out: Tensor = _compat.cumulative_sum(x, **kwargs)
    return out


def cumulative_prod(
    x: Tensor, /, *, axis: int | None = None, dtype: Any = None, include_initial: builtins.bool = False
) -> Tensor:
    """ruda_torch's ``cumulative_prod``."""
    out: Tensor = _compat.cumulative_prod(
        x, axis=axis, dtype=to_torch(dtype), include_initial=include_initial
    )
    return out


def nansum(x: Tensor, /, *, axis: Axis = None, dtype: Any = None, keepdims: builtins.bool = False) -> Tensor:
    """ruda_torch's ``nansum`` (beyond the standard; Cubed's ``nansum`` and ``nanmean`` call it)."""
    out: Tensor = _xp.nansum(x, axis=axis, dtype=to_torch(dtype), keepdims=keepdims)
    return out


def nanprod(x: Tensor, /, *, axis: Axis = None, dtype: Any = None, keepdims: builtins.bool = False) -> Tensor:
    """ruda_torch's ``nanprod`` (beyond the standard)."""
    out: Tensor = _xp.nanprod(x, axis=axis, dtype=to_torch(dtype), keepdims=keepdims)
    return out


# -- inspection ------------------------------------------------------------------------------------


class __array_namespace_info__:  # noqa: N801  (the spec's name)
    """ruda_torch's ``__array_namespace_info__``, with NumPy dtypes in ``dtypes`` and
    ``default_dtypes``.

    Examples
    --------
    >>> ruda_torch.cubed.__array_namespace_info__().default_dtypes()["real floating"]
    dtype('float32')
    """

    def __init__(self) -> None:
        self._info = _xp.__array_namespace_info__()

    def capabilities(self) -> dict[str, Any]:
        """ruda_torch's capabilities."""
        return self._info.capabilities()

    def default_device(self) -> torch.device:
        """ruda_torch's default device (``RUDA_TORCH_DEVICE``, else torch's default)."""
        return self._info.default_device()

    def devices(self) -> tuple[torch.device, ...]:
        """ruda_torch's devices."""
        return self._info.devices()

    def default_dtypes(self, *, device: Any = None) -> dict[str, np.dtype[Any]]:
        """ruda_torch's default dtypes, as NumPy's."""
        return {k: to_numpy(v) for k, v in self._info.default_dtypes(device=device).items()}

    def dtypes(
        self, *, device: Any = None, kind: str | tuple[str, ...] | None = None
    ) -> dict[str, np.dtype[Any]]:
        """The dtypes ruda_torch computes with on ``device``, as NumPy's."""
        return {k: to_numpy(v) for k, v in self._info.dtypes(device=device, kind=kind).items()}

    def partial_dtypes(self, *, device: Any = None) -> dict[str, dict[str, tuple[str, ...]]]:
        """ruda_torch's ``partial_dtypes`` (not in the spec): what works on uint16/32/64."""
        return self._info.partial_dtypes(device=device)


# -- everything else is ruda_torch's own -----------------------------------------------------------

_DEFINED_HERE = frozenset(globals())


def __getattr__(name: str) -> Any:
    # The names this module does not define take and return no dtype, so they are ruda_torch's
    # own objects: looked up at first use rather than listed, so that the two cannot drift apart.
    if name in _NAMES and name not in _DEFINED_HERE:
        return getattr(_xp, name)
    raise AttributeError(f"module 'ruda_torch.cubed' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
