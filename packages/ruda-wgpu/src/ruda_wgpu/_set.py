"""unique_* and isin, written once on the GPU primitives: sort, scan, compaction, gather, scatter.

unique: sort the flattened values (a stable argsort when positions are wanted),
flag each element that differs from its predecessor (NaN differs from everything,
so every NaN is its own value; -0 equals +0), compact the flagged positions, and
read their count back: the result's length depends on the data. isin: sort the
second array and binary-search each element of the first (complex values through integer keys).
"""

from __future__ import annotations

from typing import Any

from ruda.spec import UniqueAllResult, UniqueCountsResult, UniqueInverseResult

from ruda_wgpu import _dtypes
from ruda_wgpu._array import Array
from ruda_wgpu._creation import asarray, full, zeros
from ruda_wgpu._indexing import Gather, gather, scatter, take
from ruda_wgpu._info import default_dtypes_of
from ruda_wgpu._manipulation import concat, expand_dims, reshape
from ruda_wgpu._ops import _scalar_operand, apply, astype
from ruda_wgpu._searching import flat_nonzero, searchsorted
from ruda_wgpu._sorting import argsort, sort
from ruda_wgpu._statistical import any as any_
from ruda_wgpu._statistical import cumulative_sum


def _check(x: Any, fn: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{fn}() takes a ruda_wgpu array, not {type(x).__name__}")
    return x


def _new_value_flags(sorted_values: Array) -> Array:
    """Whether each element of a sorted 1-D array begins a new value (NaN != NaN: each NaN does)."""
    first = full((1,), True, device=sorted_values.device)
    if sorted_values.size == 1:
        return first
    return concat([first, apply("not_equal", sorted_values[1:], sorted_values[:-1])])


def _order(flat: Array) -> Array:
    """A stable argsort of a 1-D array; complex values in NumPy's order, by real then imaginary part."""
    if flat.dtype.kind != "c":
        return argsort(flat)
    by_imag = argsort(apply("imag", flat))
    return take(by_imag, argsort(take(apply("real", flat), by_imag)))  # stable: ties keep imag's order


def _sorted(flat: Array) -> Array:
    return take(flat, _order(flat)) if flat.dtype.kind == "c" else sort(flat)


def _counts(starts: Array, n: int) -> Array:
    index = default_dtypes_of(starts.device)["indexing"]
    bounds = concat([astype(starts, index), asarray([n], dtype=index, device=starts.device)])
    return apply("subtract", bounds[1:], bounds[:-1])


def unique_values(x: Array, /) -> Array:
    """The distinct values of ``x`` (flattened), in ascending order; each NaN is distinct."""
    values = _sorted(reshape(_check(x, "unique_values"), (-1,)))
    return take(values, flat_nonzero(_new_value_flags(values))) if values.size else values


def unique_counts(x: Array, /) -> UniqueCountsResult:
    """Distinct values and how often each occurs."""
    values = _sorted(reshape(_check(x, "unique_counts"), (-1,)))
    if not values.size:
        return UniqueCountsResult(values, zeros((0,), dtype=default_dtypes_of(x.device)["indexing"]))
    starts = flat_nonzero(_new_value_flags(values))
    return UniqueCountsResult(take(values, starts), _counts(starts, values.size))


def _unique_with_positions(x: Array, fn: str) -> tuple[Array, Array, Array, Array]:
    """(values, first indices, inverse indices, counts) of the flattened ``x``."""
    flat = reshape(_check(x, fn), (-1,))
    index = default_dtypes_of(x.device)["indexing"]
    if not flat.size:
        empty_index = zeros((0,), dtype=index, device=x.device)
        return flat, empty_index, zeros(x.shape, dtype=index, device=x.device), empty_index
    order = _order(flat)  # stable: the first of each run of equal values is its first occurrence
    ordered = take(flat, order)
    new = _new_value_flags(ordered)
    starts = flat_nonzero(new)
    run_of = apply("subtract", cumulative_sum(new, dtype=index), 1)  # the distinct value of each
    inverse = zeros((flat.size,), dtype=index, device=x.device)
    scatter(
        Gather(inverse, order.shape, (0,), order, order._strides, flat.size, 1), run_of
    )  # inverse[order] = run_of
    return take(ordered, starts), take(order, starts), reshape(inverse, x.shape), _counts(starts, flat.size)


def unique_inverse(x: Array, /) -> UniqueInverseResult:
    """Distinct values, and for each element of ``x`` the index of its value among them."""
    values, _, inverse, _ = _unique_with_positions(x, "unique_inverse")
    return UniqueInverseResult(values, inverse)


def unique_all(x: Array, /) -> UniqueAllResult:
    """Distinct values, their first indices in the flattened ``x``, the inverse, and the counts."""
    return UniqueAllResult(*_unique_with_positions(x, "unique_all"))


def isin(x1: Array | int, x2: Array | int, /, *, invert: bool = False) -> Array:
    """Whether each element of ``x1`` equals some element of ``x2`` (NaN equals nothing)."""
    # a NumPy array would pass asarray below, uploaded: as in every other function, it is refused
    operands = [v if isinstance(v, Array) else _scalar_operand(v, "isin") for v in (x1, x2)]
    arrays = [a for a in operands if isinstance(a, Array)]
    if not arrays:
        raise TypeError("isin() needs x1 or x2 to be a ruda_wgpu array")
    dev = arrays[0].device
    if arrays[-1].device is not dev:
        raise ValueError(
            f"isin() got arrays on two devices, {dev} and {arrays[-1].device}: move one with to_device()"
        )
    dt = _dtypes.result_type(*operands)
    a, b = (
        astype(v, dt, copy=False) if isinstance(v, Array) else asarray(v, dtype=dt, device=dev)
        for v in operands
    )
    b = reshape(b, (-1,))
    if not b.size or not a.size:
        return full(a.shape, invert, device=dev)
    found = _complex_isin(a, b) if dt.kind == "c" else _lookup(sort(b), a)[1]
    return apply("logical_not", found) if invert else found


def _lookup(table: Array, values: Array) -> tuple[Array, Array]:
    """(the index of each of ``values`` in the sorted, non-empty 1-D ``table``, or where it would
    go, and whether it is there) by binary search."""
    at = searchsorted(table, values)  # the first element not less than each value
    clamped = apply("minimum", at, table.size - 1)
    candidate = gather(Gather(table, at.shape, (0,) * at.ndim, clamped, clamped._strides, table.size, 1))
    return at, apply("logical_and", apply("equal", candidate, values), apply("less", at, table.size))


def _complex_isin(a: Array, b: Array) -> Array:
    """:func:`isin` of complex ``a`` in the flat, non-empty ``b``. Complex values have no order a
    binary search could use, and comparing every pair took ``a.size * b.size`` booleans of
    memory: instead each part (real, imaginary) of a value becomes its index among the distinct
    values that part takes in ``b``, and a value the integer key (real index) * (distinct
    imaginary values) + (imaginary index), found by the binary search of integers. A value of
    ``a`` whose part ``b`` lacks (NaN: every NaN is distinct) is in nothing; -0 equals +0."""
    index = default_dtypes_of(a.device)["indexing"]
    real_table, imag_table = unique_values(apply("real", b)), unique_values(apply("imag", b))
    if index.itemsize < 8 and real_table.size * imag_table.size >= 1 << 31:
        # (keys would pass 32 bits: a device without 64-bit integers compares every pair)
        return any_(apply("equal", expand_dims(a, axis=-1), b), axis=-1)

    def key(real_at: Array, imag_at: Array) -> Array:
        real, imag = astype(real_at, index), astype(imag_at, index)
        return apply("add", apply("multiply", real, imag_table.size), imag)

    real_at, real_known = _lookup(real_table, apply("real", a))
    imag_at, imag_known = _lookup(imag_table, apply("imag", a))
    key_b = key(searchsorted(real_table, apply("real", b)), searchsorted(imag_table, apply("imag", b)))
    found = _lookup(sort(key_b), key(real_at, imag_at))[1]
    return apply("logical_and", found, apply("logical_and", real_known, imag_known))
