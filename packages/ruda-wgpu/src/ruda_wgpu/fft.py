"""The ``fft`` extension of ruda_wgpu, computed on the GPU.

Every transform is one-dimensional complex FFTs of rows (``_fft.transform_rows``): the axis is
moved last and made contiguous, cropped or zero-padded to ``n``, transformed, and moved back.
Real transforms of even length n go through complex ones of n/2 points: the real samples in
pairs are viewed as complex numbers, and one kernel before or after the transform turns the
spectrum of the pairs into the signal's and back (``_fft.real_spectrum``, ``pair_spectrum``),
half the work of a complex transform of n points. Odd lengths take that one: ``rfft`` keeps its
first n//2 + 1 outputs, ``irfft`` completes the Hermitian spectrum and keeps the real part.
float32 data gives complex64 results, float64 complex128.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from ruda import spec

from ruda_wgpu import _dtypes
from ruda_wgpu._array import Array, contiguous, copy_of
from ruda_wgpu._buffers import storage_itemsize
from ruda_wgpu._creation import arange, zeros
from ruda_wgpu._engine import resolve_device
from ruda_wgpu._fft import check_length, norm_scale, pair_spectrum, real_spectrum, transform_rows
from ruda_wgpu._info import default_dtypes_of
from ruda_wgpu._kernels import c_strides
from ruda_wgpu._manipulation import concat, flip, moveaxis, reshape, roll
from ruda_wgpu._ops import apply, astype
from ruda_wgpu._parts import fits

_NORM = "backward"
_NORMS = ("backward", "ortho", "forward")
_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _check(x: Any, fn: str, kinds: str, norm: str) -> Array:
    """``x``, checked as the input of transform ``fn`` (dtype kinds ``kinds``) with ``norm``: a
    TypeError or ValueError naming ``fn`` otherwise. Every transform calls this first, so the
    norm is checked once, before any work, and its error names the transform that was called."""
    if norm not in _NORMS:  # (a tuple: an unhashable norm is refused as well)
        raise ValueError(f"fft.{fn}(): norm must be 'backward', 'ortho' or 'forward', not {norm!r}")
    if not isinstance(x, Array):
        raise TypeError(f"fft.{fn}() takes a ruda_wgpu array, not {type(x).__name__}")
    if x.dtype.kind not in kinds or x.dtype == _dtypes.float16:
        wanted = {
            "fc": "a floating-point array (float32, float64, complex64 or complex128)",
            "f": "a real floating-point array (float32 or float64)",
        }[kinds]
        raise TypeError(f"fft.{fn}() needs {wanted}, not {x.dtype.name}")
    if x.ndim == 0:
        raise ValueError(f"fft.{fn}() needs an array of at least one dimension")
    return x


def _as_complex(x: Array) -> Array:
    return x if x.dtype.kind == "c" else astype(x, _dtypes.COMPLEX_OF[x.dtype])


def _axis(axis: int, ndim: int, fn: str) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"fft.{fn}(): axis {axis} is out of range for {ndim} dimensions")
    return axis % ndim


def _length(x: Array, axis: int, n: int | None, fn: str, name: str = "n") -> int:
    """The transform's length along ``axis``: ``n`` (the argument ``name``), else the axis's
    own, which must not be 0 (a transform of no points has no value, and NumPy raises as well)."""
    if n is not None:
        return check_length(n, f"fft.{fn}(): {name}")
    if x.shape[axis] == 0:
        raise ValueError(f"fft.{fn}(): axis {axis} of shape {x.shape} is empty: no points to transform")
    return x.shape[axis]


def _sequence(value: Any, name: str, fn: str) -> list[int]:
    """``s`` or ``axes`` as a list, or a TypeError: the standard takes a sequence of ints."""
    if not isinstance(value, Sequence):
        raise TypeError(f"fft.{fn}(): {name} must be a sequence of ints, not {type(value).__name__}")
    return list(value)


def _resized(x: Array, n: int) -> Array:
    """``x`` cropped or zero-padded to length ``n`` along its last axis."""
    have = x.shape[-1]
    if n == have:
        return x
    if n < have:
        return x[..., :n]
    pad = zeros((*x.shape[:-1], n - have), dtype=x.dtype, device=x.device)
    return concat([x, pad], axis=-1)


def _rows(x: Array, axis: int, n: int) -> tuple[Array, tuple[int, ...]]:
    """``x`` with ``axis`` moved last and cropped or zero-padded to ``n``, as contiguous (rows, n),
    and the other axes' lengths (for :func:`_unrows`). The last axis at its length needs no moves,
    which keeps a call on one signal to a few microseconds of Python."""
    if axis != x.ndim - 1 or n != x.shape[-1]:
        x = _resized(moveaxis(x, axis, -1), n)
    lead = x.shape[:-1]
    x = contiguous(x)
    return x._view((math.prod(lead), n), (n, 1), x._offset), lead


def _unrows(out: Array, lead: tuple[int, ...], axis: int) -> Array:
    """Contiguous (rows, k) results back to ``lead`` + (k,), the last axis moved to ``axis``."""
    shape = (*lead, out.shape[-1])
    out = out._view(shape, c_strides(shape), out._offset)
    return out if axis == len(lead) else moveaxis(out, -1, axis)


def _transform(x: Array, axis: int, n: int, inverse: bool, norm: str) -> Array:
    """The complex DFT of length ``n`` of complex ``x`` along ``axis``, scaled as ``norm`` says."""
    rows, lead = _rows(x, axis, n)
    return _unrows(transform_rows(rows, inverse, norm_scale(norm, n, inverse)), lead, axis)


def _one(x: Array, n: int | None, axis: int, norm: str, inverse: bool, fn: str) -> Array:
    x = _as_complex(_check(x, fn, "fc", norm))
    axis = _axis(axis, x.ndim, fn)
    return _transform(x, axis, _length(x, axis, n, fn), inverse, norm)


def fft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = _NORM) -> Array:
    """The one-dimensional discrete Fourier transform along ``axis`` (length ``n``)."""
    return _one(x, n, axis, norm, False, "fft")


def ifft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = _NORM) -> Array:
    """The one-dimensional inverse discrete Fourier transform along ``axis`` (length ``n``)."""
    return _one(x, n, axis, norm, True, "ifft")


def _s_axes(
    x: Array, s: Sequence[int] | None, axes: Sequence[int] | None, fn: str
) -> tuple[list[int], list[int]]:
    """The axes to transform and their lengths, with NumPy's defaults."""
    s = None if s is None else _sequence(s, "s", fn)
    if axes is None:
        if s is not None and len(s) > x.ndim:
            raise ValueError(f"fft.{fn}(): s has {len(s)} lengths for an array of {x.ndim} dimensions")
        axes = list(range(x.ndim)) if s is None else list(range(x.ndim - len(s), x.ndim))
    axes = [_axis(a, x.ndim, fn) for a in _sequence(axes, "axes", fn)]
    if len(set(axes)) != len(axes):
        raise ValueError(f"fft.{fn}(): axes {axes} repeat an axis")
    if s is not None and len(s) != len(axes):
        raise ValueError(f"fft.{fn}(): s and axes need the same length, not {len(s)} and {len(axes)}")
    given: list[int | None] = [None] * len(axes) if s is None else [None if k == -1 else k for k in s]
    sizes = [_length(x, a, k, fn, "s") for k, a in zip(given, axes, strict=True)]
    return axes, sizes


def _many(x: Array, s: Any, axes: Any, norm: str, inverse: bool, fn: str) -> Array:
    x = _as_complex(_check(x, fn, "fc", norm))
    axes, sizes = _s_axes(x, s, axes, fn)
    for axis, n in zip(axes, sizes, strict=True):
        x = _transform(x, axis, n, inverse, norm)
    return x


def fftn(
    x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str = _NORM
) -> Array:
    """The n-dimensional discrete Fourier transform over ``axes`` (all by default)."""
    return _many(x, s, axes, norm, False, "fftn")


def ifftn(
    x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str = _NORM
) -> Array:
    """The n-dimensional inverse discrete Fourier transform over ``axes`` (all by default)."""
    return _many(x, s, axes, norm, True, "ifftn")


def _pairs(rows: Array) -> Array:
    """Contiguous real (rows, n), n even, as complex (rows, n/2): samples in pairs as real and
    imaginary parts (a view of the same buffer; a copy first when the rows start at an odd element)."""
    if rows._offset % 2:
        rows = copy_of(rows)
    count, n = rows.shape
    return Array._new(
        rows._storage, (count, n // 2), _dtypes.COMPLEX_OF[rows.dtype], rows.device, None, rows._offset // 2
    )


def _half(x: Array, axis: int, n: int, norm: str) -> Array:
    """rfft along ``axis``: the n//2 + 1 non-negative frequencies of real ``x``. An even length
    takes a complex transform of half the length, of the samples in pairs (_fft.real_spectrum);
    an odd one, or one whose spectrum one storage binding cannot hold, the complex transform of
    the whole."""
    if n % 2 or not _spectrum_fits(x, n):
        full = _transform(_as_complex(x), axis, n, False, norm)
        return moveaxis(moveaxis(full, axis, -1)[..., : n // 2 + 1], -1, axis)
    rows, lead = _rows(x, axis, n)
    spectrum = real_spectrum(transform_rows(_pairs(rows), False, norm_scale(norm, n, False)), n)
    return _unrows(spectrum, lead, axis)


def _spectrum_fits(x: Array, n: int) -> bool:
    """Whether the half spectrum of one real signal of length ``n`` fits one storage binding of
    ``x``'s device (the real transforms' pass reads and writes a signal's whole)."""
    complex_dtype = _dtypes.COMPLEX_OF.get(x.dtype, x.dtype)
    return fits(x.device, n // 2 + 1, storage_itemsize(complex_dtype))


def _hermitian(x: Array, axis: int, n: int, norm: str) -> Array:
    """irfft along ``axis``: the real signal of length ``n`` whose spectrum starts with ``x``. An
    even length goes back through a complex transform of half the length (_fft.pair_spectrum);
    an odd one, or a spectrum one storage binding cannot hold, takes the real part of the
    inverse transform of the completed spectrum."""
    if n % 2 == 0 and _spectrum_fits(x, n):
        rows, lead = _rows(_as_complex(x), axis, n // 2 + 1)
        pairs = transform_rows(pair_spectrum(rows, n), True, 2 * norm_scale(norm, n, True))
        reals = Array._new(pairs._storage, (pairs.shape[0], n), _dtypes.REAL_OF[pairs.dtype], pairs.device)
        return _unrows(reals, lead, axis)
    half = _resized(moveaxis(_as_complex(x), axis, -1), n // 2 + 1)
    tail = apply("conj", flip(half[..., 1 : (n + 1) // 2], axis=-1))  # X[n - k] = conj(X[k])
    full = concat([half, tail], axis=-1) if tail.shape[-1] else half
    out = transform_rows(reshape(contiguous(full), (-1, n)), True, norm_scale(norm, n, True))
    return moveaxis(reshape(apply("real", out), (*half.shape[:-1], n)), -1, axis)


def rfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = _NORM) -> Array:
    """The discrete Fourier transform of real ``x`` along ``axis``: the n//2 + 1 non-negative frequencies."""
    x = _check(x, "rfft", "f", norm)
    axis = _axis(axis, x.ndim, "rfft")
    return _half(x, axis, _length(x, axis, n, "rfft"), norm)


def irfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = _NORM) -> Array:
    """The inverse of :func:`rfft`: a real signal of length ``n`` (default 2 (m - 1)) along ``axis``."""
    x = _check(x, "irfft", "fc", norm)
    axis = _axis(axis, x.ndim, "irfft")
    n = 2 * (x.shape[axis] - 1) if n is None else check_length(n, "fft.irfft(): n")
    check_length(n, "fft.irfft(): the output length 2 (m - 1)")
    return _hermitian(x, axis, n, norm)


def rfftn(
    x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str = _NORM
) -> Array:
    """The n-dimensional transform of real ``x``: rfft over the last of ``axes``, fft over the others."""
    x = _check(x, "rfftn", "f", norm)
    axes, sizes = _s_axes(x, s, axes, "rfftn")
    if not axes:
        raise ValueError("fft.rfftn() needs at least one axis to transform")
    out = _half(x, axes[-1], sizes[-1], norm)
    for axis, n in zip(axes[:-1], sizes[:-1], strict=True):
        out = _transform(out, axis, n, False, norm)
    return out


def irfftn(
    x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str = _NORM
) -> Array:
    """The inverse of :func:`rfftn`: ifft over all but the last of ``axes``, irfft over the last."""
    x = _as_complex(_check(x, "irfftn", "fc", norm))
    axes_, sizes = _s_axes(x, s, axes, "irfftn")
    if not axes_:
        raise ValueError("fft.irfftn() needs at least one axis to transform")
    if s is None or _sequence(s, "s", "irfftn")[-1] == -1:  # (the standard's default: 2 (m - 1))
        sizes[-1] = 2 * (x.shape[axes_[-1]] - 1)
    check_length(sizes[-1], "fft.irfftn(): the last output length")
    for axis, n in zip(axes_[:-1], sizes[:-1], strict=True):
        x = _transform(x, axis, n, True, norm)
    return _hermitian(x, axes_[-1], sizes[-1], norm)


def hfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = _NORM) -> Array:
    """The transform of a Hermitian-symmetric signal given by its first half: a real spectrum."""
    x = _as_complex(_check(x, "hfft", "fc", norm))
    axis = _axis(axis, x.ndim, "hfft")
    n = 2 * (x.shape[axis] - 1) if n is None else check_length(n, "fft.hfft(): n")
    check_length(n, "fft.hfft(): the output length 2 (m - 1)")
    return _hermitian(apply("conj", x), axis, n, _SWAP[norm])


def ihfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = _NORM) -> Array:
    """The inverse of :func:`hfft`: the first n//2 + 1 values of a Hermitian signal, from a real one."""
    x = _check(x, "ihfft", "f", norm)
    axis = _axis(axis, x.ndim, "ihfft")
    n = _length(x, axis, n, "ihfft")
    return apply("conj", _half(x, axis, n, _SWAP[norm]))


def _freq_dtype(dtype: Any, device: Any) -> tuple[np.dtype[Any], Any]:
    dev = resolve_device(device)
    dt = default_dtypes_of(dev)["real floating"] if dtype is None else _dtypes.check_dtype(dtype)
    if dt.kind != "f" or dt == _dtypes.float16:
        raise TypeError(f"frequencies are real floating-point: float32 or float64, not {dt.name}")
    return dt, dev


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Array:
    """The sample frequencies of an FFT of length ``n``: [0, 1, ..., -1] / (d n)."""
    n = check_length(n, "fft.fftfreq(): n")
    dt, dev = _freq_dtype(dtype, device)
    k = arange(n, dtype=_dtypes.int32, device=dev)
    negative = astype(apply("greater_equal", k, (n + 1) // 2), k.dtype)  # the second half: k - n
    signed = apply("subtract", k, apply("multiply", negative, n))
    return apply("divide", astype(signed, dt), float(d * n))


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Array:
    """The sample frequencies of an rfft of length ``n``: [0, 1, ..., n//2] / (d n)."""
    n = check_length(n, "fft.rfftfreq(): n")
    dt, dev = _freq_dtype(dtype, device)
    return apply("divide", astype(arange(n // 2 + 1, dtype=_dtypes.int32, device=dev), dt), float(d * n))


def _shift(x: Array, axes: Any, sign: int, fn: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"fft.{fn}() takes a ruda_wgpu array, not {type(x).__name__}")
    if axes is None:
        axes = tuple(range(x.ndim))
    elif not isinstance(axes, Sequence):
        axes = (axes,)  # (one axis: _axis takes an int, or raises a TypeError naming the type)
    axes = tuple(_axis(a, x.ndim, fn) for a in axes)
    if not axes:
        return roll(x, 0)
    shifts = tuple(sign * (x.shape[a] // 2) for a in axes)
    return roll(x, shifts, axis=axes)


def fftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array:
    """``x`` with the zero frequency moved to the middle of ``axes`` (all by default)."""
    return _shift(x, axes, 1, "fftshift")


def ifftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array:
    """The inverse of :func:`fftshift`."""
    return _shift(x, axes, -1, "ifftshift")


__all__ = list(spec.FFT)
