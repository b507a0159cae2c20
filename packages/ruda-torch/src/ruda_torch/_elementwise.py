"""Element-wise functions where torch misses the spec's special cases, done right.

Each fix computes torch's result and then patches only the special cases, so
the common path costs one or two extra masks, and only for the dtypes that
have the problem (floats for division, complex for the transcendental ones).
"""

from __future__ import annotations

import math
from typing import Any

import torch
from array_api_compat.torch import _aliases as _compat

from ruda_torch._checks import tensor

Tensor = torch.Tensor


_SCALARS = (bool, int, float, complex)


def _tensors(x1: Any, x2: Any, function: str) -> tuple[Tensor, Tensor]:
    """Both operands as tensors of their common dtype (a Python scalar takes the other's dtype);
    a TypeError naming ``function`` for anything else, or for two scalars."""
    if isinstance(x1, Tensor) and isinstance(x2, Tensor) and x1.dtype == x2.dtype:
        return x1, x2  # (the common case, kept cheap: add and subtract come through here)
    for x, name in ((x1, "x1"), (x2, "x2")):
        if not isinstance(x, _SCALARS):
            tensor(x, function, name)
    if not (isinstance(x1, Tensor) or isinstance(x2, Tensor)):
        raise TypeError(f"{function}() needs x1 or x2 to be a torch tensor, not two Python scalars")
    x1 = _compat._scalar_to_tensor(x1, x2)
    x2 = _compat._scalar_to_tensor(x2, x1)
    if x1.dtype != x2.dtype:
        from ruda_torch._dtypes import result_type

        dtype = result_type(x1, x2)
        x1, x2 = x1.to(dtype), x2.to(dtype)
    return x1, x2


def add(x1: Tensor | complex, x2: Tensor | complex, /) -> Tensor:
    """``x1 + x2``; complex operands part by part (see :func:`_by_parts`)."""
    if _complex(x1) or _complex(x2):
        return _by_parts(torch.add, *_tensors(x1, x2, "add"))
    out: Tensor = _compat.add(x1, x2)  # (array-api-compat is untyped)
    return out


def subtract(x1: Tensor | complex, x2: Tensor | complex, /) -> Tensor:
    """``x1 - x2``; complex operands part by part (see :func:`_by_parts`)."""
    if _complex(x1) or _complex(x2):
        return _by_parts(torch.subtract, *_tensors(x1, x2, "subtract"))
    out: Tensor = _compat.subtract(x1, x2)
    return out


def negative(x: Tensor, /) -> Tensor:
    """``-x``; a complex ``x`` part by part (see :func:`_by_parts`)."""
    if _complex(x):
        return _by_parts(torch.negative, x)
    return torch.negative(x)


_COMPLEX = frozenset({torch.complex64, torch.complex128})


def _complex(x: Any) -> bool:
    """Whether ``x`` is a complex tensor or a Python complex (in a few hundred nanoseconds: every
    ``xp.add`` asks it of both operands)."""
    return isinstance(x, complex) or getattr(x, "dtype", None) in _COMPLEX


def _by_parts(function: Any, *xs: Tensor) -> Tensor:
    """``function`` of complex tensors ``xs`` computed on their real and imaginary parts side by
    side, one kernel. torch's complex ``add`` and ``subtract`` compute ``x1 + alpha * x2`` with
    ``alpha = 1 + 0j``, whose product makes the other part NaN when one part is infinite
    (``(0.5-0.5j) + (inf-56j)`` gave ``inf+nanj``), and its vectorised complex ``negative``
    gives +0 for a +0 part, as ``0 - x`` would."""
    # (view_as_real refuses tensors with torch's lazy conjugate or negative bit set)
    out = function(*(torch.view_as_real(x.resolve_conj().resolve_neg()) for x in xs))
    if not out.is_contiguous() and (out.stride(-1) != 1 or any(s % 2 for s in out.stride()[:-1])):
        out = out.contiguous()  # (view_as_complex needs pairs of neighbouring floats)
    return torch.view_as_complex(out)


def floor_divide(x1: Tensor | complex, x2: Tensor | complex, /) -> Tensor:
    """``floor(x1 / x2)``; where exactly one operand is infinite, the spec's signed infinities
    and zeros (torch returns NaN or -1 there)."""
    x1, x2 = _tensors(x1, x2, "floor_divide")
    out = torch.floor_divide(x1, x2)
    if not out.is_floating_point() or (out.device.type == "cpu" and _all_finite(x1) and _all_finite(x2)):
        return out
    # inf // finite is +-inf and finite // inf is +-0: exactly what true division gives there
    one_infinite = torch.isinf(x1) ^ torch.isinf(x2)
    return torch.where(one_infinite, x1 / x2, out)


def _all_finite(x: Tensor) -> bool:
    """Cheap test on the CPU: a finite sum proves every element finite (an infinite or NaN sum
    only sends the caller down its exact path). Not used on GPUs, where it would wait for them."""
    return math.isfinite(float(torch.sum(x)))


def sign(x: Tensor, /) -> Tensor:
    """-1, 0 or 1 by the sign of ``x``, NaN for NaN (torch gives 0); ``x / |x|`` for complex."""
    if tensor(x, "sign").is_complex():
        unit: Tensor = _compat.sign(x)  # array-api-compat is untyped
        return unit
    out = torch.sign(x)
    if not x.is_floating_point() or (x.device.type == "cpu" and not math.isnan(float(torch.sum(x)))):
        return out
    return out.masked_fill_(torch.isnan(x), math.nan)


def remainder(x1: Tensor | complex, x2: Tensor | complex, /) -> Tensor:
    """``x1 - floor(x1 / x2) * x2`` with the sign of ``x2``, exact for large floats.

    torch computes floats as ``x1 - floor(x1 / x2) * x2``, which loses all precision when
    ``x1 / x2`` is large (``1e30 % 7`` gives 1, not 5) and gives zeros the sign of ``x1``.
    ``fmod`` is exact; moving its result into ``x2``'s sign is one addition.
    """
    x1, x2 = _tensors(x1, x2, "remainder")
    if not (x1.is_floating_point() and x2.is_floating_point()):
        return torch.remainder(x1, x2)
    out = torch.fmod(x1, x2)
    wrong_sign = (out != 0) & ((out < 0) != (x2 < 0))
    out = torch.where(wrong_sign, out + x2, out)
    return torch.where(out == 0, torch.copysign(out, x2), out)


def expm1(x: Tensor, /) -> Tensor:
    """``exp(x) - 1``, accurate near zero; complex input follows the spec's special cases."""
    if not tensor(x, "expm1").is_complex():
        return torch.expm1(x)
    # torch's complex expm1 returns NaN for most non-finite inputs. Written from real parts:
    # expm1(a+ib) = expm1(a)cos(b) - 2 sin^2(b/2) + i e^a sin(b), precise for small |z|.
    a, b = x.real, x.imag
    half = torch.sin(b / 2)
    # "+ 0.0" turns the -0 of expm1(-0 + 0j) into the +0 that exp(z) - 1 gives
    real = torch.expm1(a) * torch.cos(b) - 2 * half * half + 0.0
    imag = torch.where(b == 0, b, torch.exp(a) * torch.sin(b))
    # a = -inf with b infinite or NaN: -1 + 0j; a = +inf with b infinite or NaN: inf + NaN j
    odd_b = ~torch.isfinite(b)
    low, high = odd_b & (a == -math.inf), odd_b & (a == math.inf)
    real = torch.where(low, -1.0, torch.where(high, math.inf, real))
    imag = torch.where(low, 0.0, torch.where(high, math.nan, imag))
    return torch.complex(real, imag)


def log1p(x: Tensor, /) -> Tensor:
    """``log(1 + x)``; complex input with an infinite or NaN part follows the spec's special cases
    (torch's complex log1p returns NaN there, its log does not)."""
    out = torch.log1p(x)
    if not x.is_complex():
        return out
    special = ~(torch.isfinite(x.real) & torch.isfinite(x.imag))
    return torch.where(special, torch.log(x + 1), out)


def tanh(x: Tensor, /) -> Tensor:
    """Hyperbolic tangent; complex input follows the spec's special cases: ``+-inf + iy`` gives
    ``+-1 + 0j`` with the zero signed like ``y`` (torch signs it like ``sin(2y)``), and
    ``+-0 + i inf`` or ``+-0 + i NaN`` give ``+-0 + NaN j`` (torch's CUDA kernel gives NaN + NaN j)."""
    out = torch.tanh(x)
    if not x.is_complex():
        return out
    a, b = x.real, x.imag
    zero = torch.zeros_like(b)
    fixed = torch.complex(
        torch.copysign(torch.ones_like(a), a), torch.where(torch.isfinite(b), torch.copysign(zero, b), zero)
    )
    out = torch.where(torch.isinf(a), fixed, out)
    zero_real = (a == 0) & ~torch.isfinite(b)
    return torch.where(zero_real, torch.complex(a, torch.full_like(b, math.nan)), out)


def acosh(x: Tensor, /) -> Tensor:
    """Inverse hyperbolic cosine; ``acosh(+-0 + NaN j)`` is ``NaN + pi/2 j`` (torch's CUDA kernel
    gives NaN + NaN j)."""
    out = torch.acosh(x)
    if not x.is_complex():
        return out
    a, b = x.real, x.imag
    fix = (a == 0) & torch.isnan(b)
    return torch.where(fix, torch.complex(torch.full_like(a, math.nan), torch.full_like(a, math.pi / 2)), out)


def acos(x: Tensor, /) -> Tensor:
    """Inverse cosine; ``acos(+-0 + 0j)`` is ``pi/2 - 0j`` (torch's complex128 gives ``+0j``)."""
    out = torch.acos(x)
    if not x.is_complex():
        return out
    a, b = x.real, x.imag
    zero = (a == 0) & (b == 0)
    return torch.where(zero, torch.complex(out.real, -b), out)


def pow(x1: Tensor | complex, x2: Tensor | complex, /) -> Tensor:
    """``x1 ** x2``. torch takes a Python exponent of 0.5 or -0.5 as a square root or its
    reciprocal, which gives -0 and NaN for bases -0 and -inf (0.5), or -inf and NaN (-0.5),
    where the spec has +0 and +inf, or +inf and +0: those bases are taken by their magnitude."""
    if isinstance(x2, float) and abs(x2) == 0.5 and isinstance(x1, Tensor) and x1.is_floating_point():
        x1 = torch.where((x1 == 0) | (x1 == -math.inf), torch.abs(x1), x1)
    out: Tensor = _compat.pow(x1, x2)  # (array-api-compat is untyped)
    return out


def round(x: Tensor, /) -> Tensor:
    """``x`` rounded to the nearest integer, half to even; a complex ``x`` part by part (torch
    has no complex rounding, and array-api-compat's ``re + 1j * im`` makes NaN of an infinite
    part and +0 of a -0 real part)."""
    if tensor(x, "round").is_complex():
        return torch.complex(torch.round(x.real), torch.round(x.imag))
    return torch.round(x)


def clip(x: Tensor, /, min: Any = None, max: Any = None) -> Tensor:
    """``x`` clamped to ``[min, max]``, in ``x``'s dtype as the spec says (torch promotes to a
    wider bound's: int8 clipped by int16 bounds was int16)."""
    out: Tensor = _compat.clip(x, min, max)
    return out if out.dtype == x.dtype else out.to(x.dtype)
