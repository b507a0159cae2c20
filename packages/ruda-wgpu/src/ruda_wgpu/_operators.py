"""The Python operators of :class:`ruda_wgpu.Array`, each the namespace's function of that name.

``x + y`` is ``add(x, y)``, ``y + x`` with a scalar ``y`` is ``add(y, x)``, ``x += y`` writes
``add(x, y)`` into ``x`` (it must keep x's dtype and shape, as the standard asks), and ``x @ y``
is ``matmul``. An operand that is neither an array nor a (Python or NumPy) scalar gives
``NotImplemented``, so that Python tries the other operand's method.
"""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def _function(name: str) -> Any:
    # imported here: the functions' modules import the array module, which imports this one
    if name == "matmul":
        from ruda_wgpu._linalg import matmul

        return matmul
    from ruda_wgpu._elementwise import apply

    return lambda *args: apply(name, *args)


def _operand(value: Any) -> Any:
    """``value`` as an array or Python scalar, or None for what the operators do not take."""
    from ruda_wgpu._array import Array, python_scalar

    value = python_scalar(value)
    return value if isinstance(value, Array | bool | int | float | complex) else None


def _binary(name: str, x: Any, other: Any, reflected: bool = False) -> Any:
    other = _operand(other)
    if other is None:
        return NotImplemented
    return _function(name)(other, x) if reflected else _function(name)(x, other)


def _inplace(name: str, x: Any, other: Any) -> Any:
    from ruda_wgpu._array import assign
    from ruda_wgpu._fusion import write_into

    result = _function(name)(x, other)
    if result.dtype != x.dtype or result.shape != x.shape:
        raise TypeError(
            f"in-place {name} would turn {x.dtype.name}{list(x.shape)} into "
            f"{result.dtype.name}{list(result.shape)}: use the out-of-place form"
        )
    if not write_into(result, x):  # computed into x directly where that is safe
        assign(x, result)
    return x


def _unary(name: str, x: Any) -> Any:
    return _function(name)(x)


class Operators:
    """Every arithmetic, bitwise, comparison and matmul operator, forward, reflected and in place."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]  # arrays compare elementwise: not hashable

    def __add__(self, other: Any) -> Any:
        return _binary("add", self, other)

    def __radd__(self, other: Any) -> Any:
        return _binary("add", self, other, reflected=True)

    def __iadd__(self, other: Any) -> Any:
        return _inplace("add", self, other)

    def __sub__(self, other: Any) -> Any:
        return _binary("subtract", self, other)

    def __rsub__(self, other: Any) -> Any:
        return _binary("subtract", self, other, reflected=True)

    def __isub__(self, other: Any) -> Any:
        return _inplace("subtract", self, other)

    def __mul__(self, other: Any) -> Any:
        return _binary("multiply", self, other)

    def __rmul__(self, other: Any) -> Any:
        return _binary("multiply", self, other, reflected=True)

    def __imul__(self, other: Any) -> Any:
        return _inplace("multiply", self, other)

    def __truediv__(self, other: Any) -> Any:
        return _binary("divide", self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return _binary("divide", self, other, reflected=True)

    def __itruediv__(self, other: Any) -> Any:
        return _inplace("divide", self, other)

    def __floordiv__(self, other: Any) -> Any:
        return _binary("floor_divide", self, other)

    def __rfloordiv__(self, other: Any) -> Any:
        return _binary("floor_divide", self, other, reflected=True)

    def __ifloordiv__(self, other: Any) -> Any:
        return _inplace("floor_divide", self, other)

    def __mod__(self, other: Any) -> Any:
        return _binary("remainder", self, other)

    def __rmod__(self, other: Any) -> Any:
        return _binary("remainder", self, other, reflected=True)

    def __imod__(self, other: Any) -> Any:
        return _inplace("remainder", self, other)

    def __pow__(self, other: Any) -> Any:
        return _binary("pow", self, other)

    def __rpow__(self, other: Any) -> Any:
        return _binary("pow", self, other, reflected=True)

    def __ipow__(self, other: Any) -> Any:
        return _inplace("pow", self, other)

    def __and__(self, other: Any) -> Any:
        return _binary("bitwise_and", self, other)

    def __rand__(self, other: Any) -> Any:
        return _binary("bitwise_and", self, other, reflected=True)

    def __iand__(self, other: Any) -> Any:
        return _inplace("bitwise_and", self, other)

    def __or__(self, other: Any) -> Any:
        return _binary("bitwise_or", self, other)

    def __ror__(self, other: Any) -> Any:
        return _binary("bitwise_or", self, other, reflected=True)

    def __ior__(self, other: Any) -> Any:
        return _inplace("bitwise_or", self, other)

    def __xor__(self, other: Any) -> Any:
        return _binary("bitwise_xor", self, other)

    def __rxor__(self, other: Any) -> Any:
        return _binary("bitwise_xor", self, other, reflected=True)

    def __ixor__(self, other: Any) -> Any:
        return _inplace("bitwise_xor", self, other)

    def __lshift__(self, other: Any) -> Any:
        return _binary("bitwise_left_shift", self, other)

    def __rlshift__(self, other: Any) -> Any:
        return _binary("bitwise_left_shift", self, other, reflected=True)

    def __ilshift__(self, other: Any) -> Any:
        return _inplace("bitwise_left_shift", self, other)

    def __rshift__(self, other: Any) -> Any:
        return _binary("bitwise_right_shift", self, other)

    def __rrshift__(self, other: Any) -> Any:
        return _binary("bitwise_right_shift", self, other, reflected=True)

    def __irshift__(self, other: Any) -> Any:
        return _inplace("bitwise_right_shift", self, other)

    def __matmul__(self, other: Any) -> Any:
        return _binary("matmul", self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return _binary("matmul", self, other, reflected=True)

    def __imatmul__(self, other: Any) -> Any:
        return _inplace("matmul", self, other)

    def __eq__(self, other: Any) -> Any:
        return _binary("equal", self, other)

    def __ne__(self, other: Any) -> Any:
        return _binary("not_equal", self, other)

    def __lt__(self, other: Any) -> Any:
        return _binary("less", self, other)

    def __le__(self, other: Any) -> Any:
        return _binary("less_equal", self, other)

    def __gt__(self, other: Any) -> Any:
        return _binary("greater", self, other)

    def __ge__(self, other: Any) -> Any:
        return _binary("greater_equal", self, other)

    def __neg__(self) -> Any:
        return _unary("negative", self)

    def __pos__(self) -> Any:
        return _unary("positive", self)

    def __abs__(self) -> Any:
        return _unary("abs", self)

    def __invert__(self) -> Any:
        return _unary("bitwise_invert", self)
