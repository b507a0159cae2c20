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


@functools.cache
def _ops() -> ModuleType:
    """:mod:`ruda_wgpu._ops`, imported on first use: it imports the array module, which imports
    this one."""
    from ruda_wgpu import _ops

    return _ops


def _binary(function: str, x: Any, y: Any) -> Any:
    """``function(x, y)``: the namespace's matmul, or an elementwise operation."""
    if function == "matmul":
        from ruda_wgpu._linalg import matmul

        return matmul(x, y)
    return _ops().binary(function, x, y)


def _operand(value: Any) -> Any:
    """``value`` as an array or Python scalar, or None for what the operators do not take."""
    if isinstance(value, Operators):  # ruda_wgpu.Array, the one class built on Operators
        return value
    value = python_scalar(value)
    return value if isinstance(value, bool | int | float | complex) else None


@functools.cache
def _ufunc_names() -> dict[np.ufunc, str]:
    """NumPy's ufuncs that are the standard's elementwise functions, ``matmul`` and ``vecdot``,
    each with its name there (NumPy 2 has the standard's names too: ``np.asin is np.arcsin``)."""
    from ruda.spec import ELEMENTWISE_FUNCTIONS

    found = ((getattr(np, name, None), name) for name in (*ELEMENTWISE_FUNCTIONS, "matmul", "vecdot"))
    return {ufunc: name for ufunc, name in found if isinstance(ufunc, np.ufunc)}


#: the ufuncs whose ``reduce`` NumPy's reductions call (``np.sum``, ``np.max``, ``np.all``, ...),
#: with the namespace's function for it
_REDUCTIONS = {
    "add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min", "logical_and": "all",
    "logical_or": "any",
}  # fmt: skip


def _numpy_reduction(ufunc: np.ufunc, x: Any, kwargs: dict[str, Any]) -> Any:
    """``ufunc.reduce(x, **kwargs)`` by the namespace's reduction, or None where it has none:
    ``axis`` (the first, as NumPy's, when not given), ``keepdims`` and, for sums and products,
    ``dtype`` are taken; ``out``, ``initial`` and ``where`` are not."""
    import ruda_wgpu

    name = _REDUCTIONS.get(ufunc.__name__)
    options = dict(kwargs)
    axis = options.pop("axis", 0)
    keepdims = options.pop("keepdims", False)
    dtype = options.pop("dtype", None)
    if name in ("all", "any") and dtype in (bool, np.bool_):
        dtype = None  # (np.all and np.any pass it)
    if name is None or options or (dtype is not None and name not in ("sum", "prod")):
        return None
    extra = {} if dtype is None else {"dtype": dtype}
    return getattr(ruda_wgpu, name)(x, axis=axis, keepdims=keepdims, **extra)


class Operators(ArrayOperators):
    """:class:`ruda._operators.ArrayOperators` on this namespace's functions, and NumPy's ufuncs."""

    __slots__ = ()
    __array_priority__ = 100

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """NumPy's elementwise functions called on these arrays run here, on the GPU, as CuPy's
        do: ``np.abs(x)``, ``np.isfinite(x)`` (which matplotlib calls), ``np.float32(2) * x``, and
        ``np.matmul``, ``np.vecdot``; so do ``np.sum``, ``np.prod``, ``np.max``, ``np.min``,
        ``np.all`` and ``np.any`` (see :func:`_numpy_reduction`). Only calls on arrays of this
        type and Python or NumPy scalars, without other keywords; anything else raises TypeError
        rather than copy to the host (``np.asarray(x)`` does that). A NumPy array among the
        operands raises as it does in operators (no silent transfer)."""
        name = _ufunc_names().get(ufunc)
        operands = []
        for value in inputs:
            operand = value if isinstance(value, Operators) else _operand(value)
            if operand is None:
                return unsupported(self, name or ufunc.__name__, value)
            operands.append(operand)
        if method == "reduce" and len(operands) == 1:
            reduced = _numpy_reduction(ufunc, operands[0], kwargs)
            if reduced is not None:
                return reduced
        if method != "__call__" or name is None or kwargs:
            what = f"numpy.{ufunc.__name__}" + (f".{method}" if method != "__call__" else "")
            extra = f" with {', '.join(f'{k}=' for k in kwargs)}" if kwargs else ""
            raise TypeError(
                f"{what}(){extra} does not run on ruda_wgpu arrays: use ruda_wgpu's functions, "
                "or np.asarray(x) for a host copy"
            )
        import ruda_wgpu

        return getattr(ruda_wgpu, name)(*operands)

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
