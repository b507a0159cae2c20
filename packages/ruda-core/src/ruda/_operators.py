"""The Python operators of an array type, written out once for the array types ruda defines.

``x + y`` is the namespace's ``add(x, y)``; ``y + x`` with ``y`` not an array, ``add(y, x)``;
``x += y`` writes ``add(x, y)`` into ``x``. Each operator names both the standard function it
stands for and its own dunder name, and hands them to one of three methods the array type
defines (:meth:`ArrayOperators._binary_operator`, ``_inplace_operator``, ``_unary_operator``):
a local backend calls the function, a remote one sends the dunder name. Every method is written
out, rather than made in a loop, so that readers, IDEs and type checkers see each one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

#: what Python repeats when ``x * seq`` finds no multiplication (through ``x.__index__()``)
_SEQUENCES = (str, bytes, bytearray, list, tuple, range)


def unsupported(array: Any, function: str, other: Any) -> Any:
    """What an operator of ``array`` returns for an operand its type does not take.

    ``NotImplemented``, so that Python tries the other operand's method (another ruda array type
    answers for itself). But a TypeError that names both types and the way out where Python's
    fallbacks would mislead: for an array of another library (a NumPy array would answer
    through ``__array_ufunc__``, "operand 'Array' does not support ufuncs", and ``==`` would
    fall back to identity and return False), and for a multiplication by a sequence
    (``x * "ab"``, ``[0] * x``: Python would repeat the sequence ``x.__index__()`` times, and
    the error would speak of an index).
    """
    if function == "multiply" and isinstance(other, _SEQUENCES):
        raise TypeError(
            f"unsupported operand type(s) for *: '{type(array).__name__}' and '{type(other).__name__}': "
            "operands are arrays or Python scalars (convert a sequence with asarray)"
        )
    if not isinstance(other, ArrayOperators) and is_foreign_array(other):
        raise mixing_error(type(array).__module__.partition(".")[0], function, other)
    return NotImplemented


def mixing_error(namespace: str, function: str, other: Any) -> TypeError:
    """The error for ``function`` given ``other``, an array of another library, with an array of
    ``namespace`` (a module name): it says how to bring the data over."""
    return TypeError(
        f"{function}() cannot combine a {namespace} array with a "
        f"{type(other).__module__}.{type(other).__qualname__}: arrays of two libraries do not mix; "
        f"move it first with {namespace}.asarray(x, device=...)"
    )


def is_foreign_array(value: Any) -> bool:
    """Whether ``value`` is an array of some library: it speaks the standard's protocol or
    DLPack's (NumPy, CuPy, PyTorch, JAX arrays all do)."""
    return hasattr(value, "__array_namespace__") or hasattr(value, "__dlpack__")


class ArrayOperators:
    """Every arithmetic, bitwise, comparison and matmul operator, forward, reflected and in place;
    negation, ``+x``, ``abs`` and ``~``; ``len`` and iteration over the first axis. Arrays compare
    elementwise, so they are not hashable."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]

    def _binary_operator(self, function: str, dunder: str, other: Any, reflected: bool) -> Any:
        """``function(self, other)``, or ``function(other, self)`` when ``reflected``; or
        ``NotImplemented`` for an operand the array type does not take, so that Python tries the
        other operand's method."""
        raise NotImplementedError(f"{type(self).__name__} defines no binary operators")

    def _inplace_operator(self, function: str, dunder: str, other: Any) -> Any:
        """``function(self, other)`` written into ``self`` (same dtype and shape, as the standard
        asks), returning ``self``."""
        raise NotImplementedError(f"{type(self).__name__} defines no in-place operators")

    def _unary_operator(self, function: str, dunder: str) -> Any:
        """``function(self)``."""
        raise NotImplementedError(f"{type(self).__name__} defines no unary operators")

    def __len__(self) -> int:
        """The length of the first axis (not in the standard; NumPy, CuPy and PyTorch have it);
        a 0-D array raises TypeError."""
        shape = self._first_axis("len() of")
        return int(shape[0])

    def __iter__(self) -> Iterator[Any]:
        """The arrays ``x[0]``, ``x[1]``, ... along the first axis, as NumPy's ``for row in x``;
        a 0-D array raises TypeError. Python would iterate through ``__getitem__`` alone, but
        code checks for ``__iter__`` (``isinstance(x, Iterable)``; scikit-learn's chunked
        pairwise reductions)."""
        shape = self._first_axis("iteration over")
        array: Any = self  # (every array type built on this class takes integer keys)
        return (array[i] for i in range(shape[0]))

    def _first_axis(self, what: str) -> tuple[Any, ...]:
        """The array's shape, or a TypeError for ``what`` ("len() of") a 0-D array."""
        shape: tuple[Any, ...] = self.shape  # type: ignore[attr-defined]
        if not shape:
            raise TypeError(f"{what} a 0-D {type(self).__module__.partition('.')[0]} array")
        return shape

    def __add__(self, other: Any) -> Any:
        return self._binary_operator("add", "__add__", other, False)

    def __radd__(self, other: Any) -> Any:
        return self._binary_operator("add", "__radd__", other, True)

    def __iadd__(self, other: Any) -> Any:
        return self._inplace_operator("add", "__iadd__", other)

    def __sub__(self, other: Any) -> Any:
        return self._binary_operator("subtract", "__sub__", other, False)

    def __rsub__(self, other: Any) -> Any:
        return self._binary_operator("subtract", "__rsub__", other, True)

    def __isub__(self, other: Any) -> Any:
        return self._inplace_operator("subtract", "__isub__", other)

    def __mul__(self, other: Any) -> Any:
        return self._binary_operator("multiply", "__mul__", other, False)

    def __rmul__(self, other: Any) -> Any:
        return self._binary_operator("multiply", "__rmul__", other, True)

    def __imul__(self, other: Any) -> Any:
        return self._inplace_operator("multiply", "__imul__", other)

    def __truediv__(self, other: Any) -> Any:
        return self._binary_operator("divide", "__truediv__", other, False)

    def __rtruediv__(self, other: Any) -> Any:
        return self._binary_operator("divide", "__rtruediv__", other, True)

    def __itruediv__(self, other: Any) -> Any:
        return self._inplace_operator("divide", "__itruediv__", other)

    def __floordiv__(self, other: Any) -> Any:
        return self._binary_operator("floor_divide", "__floordiv__", other, False)

    def __rfloordiv__(self, other: Any) -> Any:
        return self._binary_operator("floor_divide", "__rfloordiv__", other, True)

    def __ifloordiv__(self, other: Any) -> Any:
        return self._inplace_operator("floor_divide", "__ifloordiv__", other)

    def __mod__(self, other: Any) -> Any:
        return self._binary_operator("remainder", "__mod__", other, False)

    def __rmod__(self, other: Any) -> Any:
        return self._binary_operator("remainder", "__rmod__", other, True)

    def __imod__(self, other: Any) -> Any:
        return self._inplace_operator("remainder", "__imod__", other)

    def __pow__(self, other: Any) -> Any:
        return self._binary_operator("pow", "__pow__", other, False)

    def __rpow__(self, other: Any) -> Any:
        return self._binary_operator("pow", "__rpow__", other, True)

    def __ipow__(self, other: Any) -> Any:
        return self._inplace_operator("pow", "__ipow__", other)

    def __and__(self, other: Any) -> Any:
        return self._binary_operator("bitwise_and", "__and__", other, False)

    def __rand__(self, other: Any) -> Any:
        return self._binary_operator("bitwise_and", "__rand__", other, True)

    def __iand__(self, other: Any) -> Any:
        return self._inplace_operator("bitwise_and", "__iand__", other)

    def __or__(self, other: Any) -> Any:
        return self._binary_operator("bitwise_or", "__or__", other, False)

    def __ror__(self, other: Any) -> Any:
        return self._binary_operator("bitwise_or", "__ror__", other, True)

    def __ior__(self, other: Any) -> Any:
        return self._inplace_operator("bitwise_or", "__ior__", other)

    def __xor__(self, other: Any) -> Any:
        return self._binary_operator("bitwise_xor", "__xor__", other, False)

    def __rxor__(self, other: Any) -> Any:
        return self._binary_operator("bitwise_xor", "__rxor__", other, True)

    def __ixor__(self, other: Any) -> Any:
        return self._inplace_operator("bitwise_xor", "__ixor__", other)

    def __lshift__(self, other: Any) -> Any:
        return self._binary_operator("bitwise_left_shift", "__lshift__", other, False)

    def __rlshift__(self, other: Any) -> Any:
        return self._binary_operator("bitwise_left_shift", "__rlshift__", other, True)

    def __ilshift__(self, other: Any) -> Any:
        return self._inplace_operator("bitwise_left_shift", "__ilshift__", other)

    def __rshift__(self, other: Any) -> Any:
        return self._binary_operator("bitwise_right_shift", "__rshift__", other, False)

    def __rrshift__(self, other: Any) -> Any:
        return self._binary_operator("bitwise_right_shift", "__rrshift__", other, True)

    def __irshift__(self, other: Any) -> Any:
        return self._inplace_operator("bitwise_right_shift", "__irshift__", other)

    def __matmul__(self, other: Any) -> Any:
        return self._binary_operator("matmul", "__matmul__", other, False)

    def __rmatmul__(self, other: Any) -> Any:
        return self._binary_operator("matmul", "__rmatmul__", other, True)

    def __imatmul__(self, other: Any) -> Any:
        return self._inplace_operator("matmul", "__imatmul__", other)

    def __eq__(self, other: Any) -> Any:
        return self._binary_operator("equal", "__eq__", other, False)

    def __ne__(self, other: Any) -> Any:
        return self._binary_operator("not_equal", "__ne__", other, False)

    def __lt__(self, other: Any) -> Any:
        return self._binary_operator("less", "__lt__", other, False)

    def __le__(self, other: Any) -> Any:
        return self._binary_operator("less_equal", "__le__", other, False)

    def __gt__(self, other: Any) -> Any:
        return self._binary_operator("greater", "__gt__", other, False)

    def __ge__(self, other: Any) -> Any:
        return self._binary_operator("greater_equal", "__ge__", other, False)

    def __neg__(self) -> Any:
        return self._unary_operator("negative", "__neg__")

    def __pos__(self) -> Any:
        return self._unary_operator("positive", "__pos__")

    def __abs__(self) -> Any:
        return self._unary_operator("abs", "__abs__")

    def __invert__(self) -> Any:
        return self._unary_operator("bitwise_invert", "__invert__")
