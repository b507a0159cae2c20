"""``unique_*`` for every dtype, written once on top of ``torch.unique``, and ``isin``.

torch.unique has no first-occurrence indices, merges NaNs (which the spec
says are all distinct, as NaN != NaN) and rejects complex input. One routine
fixes all three: NaNs are set aside and appended one by one, complex values
are made unique as (real, imag) rows, and the first index of each value is
the minimum position scattered over the inverse indices (deterministic,
unlike the scatter trick torch's issue tracker suggests).

``torch.isin`` raises ("view size is not compatible") when its second argument
is a non-contiguous tensor of two or more dimensions, such as a transpose or a
slice of a chunk; ``isin`` passes it flattened, which copies only then.
"""

from __future__ import annotations

import torch
from ruda.spec import UniqueAllResult, UniqueCountsResult, UniqueInverseResult

from ruda_torch._checks import tensor

Tensor = torch.Tensor


def _unique_sorted(flat: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """(values, inverse, counts) of a 1-D tensor without NaNs; complex as (real, imag) rows."""
    if flat.is_complex():
        pairs = torch.view_as_real(flat)
        values, inverse, counts = torch.unique(pairs, return_inverse=True, return_counts=True, dim=0)
        return torch.view_as_complex(values.contiguous()), inverse, counts
    # torch.unique is built by boolean_dispatch, which mypy sees as Any: name what it returns
    values, inverse, counts = torch.unique(flat, return_inverse=True, return_counts=True)
    return values, inverse, counts


def _unique(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """(values, inverse indices of x.reshape(-1), counts), NaNs distinct and last."""
    flat = x.reshape(-1)
    if not (flat.is_floating_point() or flat.is_complex()):
        return _unique_sorted(flat)
    nan = torch.isnan(flat)
    if not bool(nan.any()):
        return _unique_sorted(flat)
    keep = ~nan
    values, inverse_kept, counts = _unique_sorted(flat[keep])
    nans = flat[nan]
    inverse = torch.empty(flat.shape, dtype=torch.int64, device=flat.device)
    inverse[keep] = inverse_kept
    inverse[nan] = torch.arange(values.shape[0], values.shape[0] + nans.shape[0], device=flat.device)
    ones = torch.ones(nans.shape, dtype=counts.dtype, device=flat.device)
    return torch.cat([values, nans]), inverse, torch.cat([counts, ones])


def unique_all(x: Tensor, /) -> UniqueAllResult:
    """Unique values, the index of each one's first occurrence, inverse indices and counts."""
    values, inverse, counts = _unique(tensor(x, "unique_all"))
    n = inverse.shape[0]
    positions = torch.arange(n, device=x.device)
    first = torch.full(values.shape[:1], n, dtype=torch.int64, device=x.device)
    first.scatter_reduce_(0, inverse, positions, reduce="amin")
    return UniqueAllResult(values, first, inverse.reshape(x.shape), counts)


def unique_counts(x: Tensor, /) -> UniqueCountsResult:
    """Unique values and how often each occurs."""
    values, _, counts = _unique(tensor(x, "unique_counts"))
    return UniqueCountsResult(values, counts)


def unique_inverse(x: Tensor, /) -> UniqueInverseResult:
    """Unique values, and for each element of ``x`` the index of its value."""
    values, inverse, _ = _unique(tensor(x, "unique_inverse"))
    return UniqueInverseResult(values, inverse.reshape(x.shape))


def unique_values(x: Tensor, /) -> Tensor:
    """The unique values of ``x`` (each NaN counts as its own value)."""
    flat = tensor(x, "unique_values").reshape(-1)
    if flat.is_complex():
        return _unique(x)[0]
    if not flat.is_floating_point():
        return _unique_plain(flat)
    nan = torch.isnan(flat)
    if not bool(nan.any()):
        return _unique_plain(flat)
    return torch.cat([_unique_plain(flat[~nan]), flat[nan]])


def _unique_plain(flat: Tensor) -> Tensor:
    """torch.unique's sorted values alone (typed: mypy sees torch.unique as Any)."""
    values: Tensor = torch.unique(flat)
    return values


def isin(x1: Tensor | complex, x2: Tensor | complex, /, *, invert: bool = False) -> Tensor:
    """Whether each element of ``x1`` is in ``x2`` (of any shape and layout). torch.isin refuses
    bool tensors: they are compared as 0 and 1."""
    if isinstance(x1, Tensor) and x1.dtype == torch.bool:
        x1 = x1.to(torch.uint8)
    if isinstance(x2, Tensor) and x2.dtype == torch.bool:
        x2 = x2.to(torch.uint8)
    if isinstance(x2, Tensor):
        return torch.isin(x1, x2.reshape(-1), invert=invert)
    if isinstance(x1, Tensor):
        return torch.isin(x1, x2, invert=invert)
    raise TypeError(
        f"isin needs an array for x1 or x2, not two Python scalars ({type(x1).__name__} and "
        f"{type(x2).__name__}): pass one of them as an array"
    )
