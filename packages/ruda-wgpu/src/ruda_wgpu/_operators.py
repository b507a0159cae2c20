"""The Python operators of :class:`ruda_wgpu.Array` (written out in :mod:`ruda._operators`):
each is the namespace's function of that name. ``x += y`` must keep x's dtype and shape, as the
standard asks: as NumPy, CuPy and PyTorch do (and so ruda's other backends), a result of a wider
dtype of the same kind is cast back to x's (``float32 += float64``, ``int8 += int16``), while
one of another kind or shape is refused. It computes into ``x`` where that is safe. An operand
that is neither an array nor a (Python or NumPy) scalar gives ``NotImplemented``, so that Python
tries the other operand's method (see :func:`ruda._operators.unsupported`).
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any, cast

import numpy as np
from ruda._array import python_scalar
from ruda._operators import ArrayOperators, unsupported
from ruda._ufuncs import NumpyUfuncs


@functools.cache
def _ops() -> ModuleType:
    """:mod:`ruda_wgpu._ops`, imported on first use: it imports the array module, which imports
    this one."""
    from ruda_wgpu import _ops

    return _ops


@functools.cache
def _linalg() -> ModuleType:
    """:mod:`ruda_wgpu._linalg`, imported on first use (as :func:`_ops`; an import statement in
    :func:`_binary` cost each ``a @ b`` a microsecond)."""
    from ruda_wgpu import _linalg

    return _linalg


def _binary(function: str, x: Any, y: Any) -> Any:
    """``function(x, y)``: the namespace's matmul, or an elementwise operation."""
    if function == "matmul":
        return _linalg().matmul(x, y)
    return _ops().binary(function, x, y)


def _operand(value: Any) -> Any:
    """``value`` as an array or Python scalar, or None for what the operators do not take."""
    if isinstance(value, Operators):  # ruda_wgpu.Array, the one class built on Operators
        return value
    value = python_scalar(value)
    return value if isinstance(value, bool | int | float | complex) else None


class Operators(NumpyUfuncs, ArrayOperators):
    """:class:`ruda._operators.ArrayOperators` on this namespace's functions, and NumPy's ufuncs
    (:class:`ruda._ufuncs.NumpyUfuncs`: ``np.abs(x)`` runs on the GPU)."""

    __slots__ = ()

    def _binary_operator(self, function: str, dunder: str, other: Any, reflected: bool) -> Any:
        # (every operator passes here: arrays and Python floats and ints go straight on)
        if not isinstance(other, Operators) and type(other) is not float and type(other) is not int:
            operand = _operand(other)
            if operand is None:
                return unsupported(self, function, other)
            other = operand
        return _binary(function, other, self) if reflected else _binary(function, self, other)

    def _inplace_operator(self, function: str, dunder: str, other: Any) -> Any:
        from ruda_wgpu._array import Array, assign
        from ruda_wgpu._fusion import write_into

        x = cast(Array, self)  # the one class built on this one
        result = _binary(function, x, other)
        if result.dtype != x.dtype and np.can_cast(result.dtype, x.dtype, "same_kind"):
            result = _ops().astype(result, x.dtype)
        if result.dtype != x.dtype or result.shape != x.shape:
            raise TypeError(
                f"in-place {function} would turn {x.dtype.name}{list(x.shape)} into "
                f"{result.dtype.name}{list(result.shape)}: use the out-of-place form"
            )
        if not write_into(result, x):  # computed into x directly where that is safe
            assign(x, result)
        return x

    def _unary_operator(self, function: str, dunder: str) -> Any:
        return _ops().unary(function, self)
