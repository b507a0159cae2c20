"""Data types: the standard's promotion (by name, from ``ruda.spec``), ``isdtype``,
``finfo``/``iinfo`` and ``astype``.

torch's own promotion refuses uint16/uint32/uint64 and its ``finfo``/``iinfo``
name the dtype as a string; these follow the spec instead.
"""

from __future__ import annotations

import functools
from typing import Any

import torch
from ruda.spec import DTYPE_KINDS, DTYPES, finfo_object, iinfo_object, promote_names

from ruda_torch._checks import tensor
from ruda_torch._devices import resolve

Tensor = torch.Tensor

#: the standard's dtype kinds (``ruda.spec.DTYPE_KINDS``) as torch dtypes
_KIND_MEMBERS: dict[str, frozenset[torch.dtype]] = {
    kind: frozenset(getattr(torch, name) for name in names) for kind, names in DTYPE_KINDS.items()
}
_PY_SCALARS = (bool, int, float, complex)


def result_type(*arrays_and_dtypes: Tensor | torch.dtype | complex) -> torch.dtype:
    """The dtype the spec's promotion rules give; Python scalars are weak (they never widen)."""
    dtypes = [
        a if isinstance(a, torch.dtype) else a.dtype
        for a in arrays_and_dtypes
        if not isinstance(a, _PY_SCALARS)
    ]
    if not dtypes:
        raise ValueError("result_type needs at least one array or dtype (Python scalars alone have none)")
    out = functools.reduce(_promote, dtypes)
    for scalar in (a for a in arrays_and_dtypes if isinstance(a, _PY_SCALARS)):
        out = scalar_result_type(out, scalar)
    return out


@functools.cache
def _promote(a: torch.dtype, b: torch.dtype) -> torch.dtype:
    """The standard's promotion (``ruda.spec.promote_names``), which torch's own refuses for
    uint16/32/64; mixed kinds (bool with numbers, integers with floats) are left to torch, as
    the standard allows."""
    name = promote_names(_NAME[a], _NAME[b]) if a in _NAME and b in _NAME else None
    if name is not None:
        return getattr(torch, name)  # type: ignore[no-any-return]
    if {a, b} <= _KIND_MEMBERS["integral"]:
        raise TypeError(
            f"{a} and {b} have no common integer dtype (no signed integer holds every uint64, "
            "so the standard defines none): cast one of them first"
        )
    return torch.promote_types(a, b)


_NAME = {getattr(torch, name): name for name in DTYPES}


def scalar_result_type(dtype: torch.dtype, scalar: complex) -> torch.dtype:
    """The dtype of ``array op scalar``: the array's, unless the scalar is of a higher kind."""
    if isinstance(scalar, bool):
        return dtype
    if isinstance(scalar, int):
        return torch.int64 if dtype == torch.bool else dtype
    if isinstance(scalar, float):
        return dtype if dtype.is_floating_point or dtype.is_complex else torch.get_default_dtype()
    if dtype.is_complex:
        return dtype
    if dtype.is_floating_point:
        return torch.complex128 if dtype == torch.float64 else torch.complex64
    return torch.complex128 if torch.get_default_dtype() == torch.float64 else torch.complex64


def can_cast(from_: torch.dtype | Tensor, to: torch.dtype, /) -> bool:
    """Whether the spec's promotion would turn ``from_`` into ``to`` (never across kinds downwards)."""
    source = from_ if isinstance(from_, torch.dtype) else from_.dtype
    if source == to:
        return True
    try:
        return _promote(source, to) == to
    except TypeError:
        return False


def isdtype(dtype: torch.dtype, kind: torch.dtype | str | tuple[torch.dtype | str, ...]) -> bool:
    """Whether ``dtype`` is ``kind`` (a dtype, a kind name, or a tuple of either). Another
    library's dtype (NumPy's) raises TypeError, as everywhere in this namespace: it is a member
    of no kind here, and False would be a quiet wrong answer."""
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"isdtype takes a torch dtype (e.g. xp.float32), not {dtype!r}")
    if isinstance(kind, tuple):
        return any(_isdtype_one(dtype, k) for k in kind)
    return _isdtype_one(dtype, kind)


def _isdtype_one(dtype: torch.dtype, kind: torch.dtype | str) -> bool:
    if isinstance(kind, torch.dtype):
        return dtype == kind
    if isinstance(kind, str):
        try:
            return dtype in _KIND_MEMBERS[kind]
        except KeyError:
            raise ValueError(
                f"unknown dtype kind {kind!r}: expected one of {', '.join(_KIND_MEMBERS)}"
            ) from None
    raise TypeError(f"kind must be a dtype, a kind name or a tuple of them, not {type(kind).__name__}")


def finfo(type: torch.dtype | Tensor, /) -> finfo_object:
    """Limits of a real or complex floating dtype (of a complex one: of its real part)."""
    dtype = type if isinstance(type, torch.dtype) else type.dtype
    info = torch.finfo(dtype)
    real = {torch.complex64: torch.float32, torch.complex128: torch.float64}.get(dtype, dtype)
    return finfo_object.of(info, real)


def iinfo(type: torch.dtype | Tensor, /) -> iinfo_object:
    """Limits of an integer dtype."""
    dtype = type if isinstance(type, torch.dtype) else type.dtype
    info = torch.iinfo(dtype)
    return iinfo_object.of(info, dtype)


def astype(x: Tensor, dtype: torch.dtype, /, *, copy: bool = True, device: Any = None) -> Tensor:
    """``x`` as ``dtype`` (and on ``device``); a new tensor unless ``copy=False`` allows reuse."""
    tensor(x, "astype")
    if device is not None:
        return x.to(resolve(device), dtype=dtype, copy=copy)
    return x.to(dtype=dtype, copy=copy)
