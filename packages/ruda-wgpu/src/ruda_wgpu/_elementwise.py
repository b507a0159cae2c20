"""The elementwise functions of ``ruda_wgpu``, one named definition each.

Each checks its arguments and hands over to :func:`ruda_wgpu._ops.unary` or ``binary``, which
promotes dtypes, broadcasts and runs the operation's WGSL (``_ops._OPS``). Operands
are ruda_wgpu arrays; binary functions also take Python (or NumPy) scalars, as the standard
allows. ``tests/wgpu/test_elementwise.py`` checks that every operation of the table has a function here.
"""

from __future__ import annotations

from typing import Any

from ruda_wgpu._array import Array
from ruda_wgpu._ops import binary, unary

# the namespace's elementwise functions (the package imports them all), a line a family
__all__ = ["abs", "negative", "positive", "square", "sign", "bitwise_invert", "logical_not"]
__all__ += ["isnan", "isinf", "isfinite", "signbit", "floor", "ceil", "trunc", "round"]
__all__ += ["real", "imag", "conj", "reciprocal", "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt"]
__all__ += ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh"]
__all__ += ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "pow", "maximum", "minimum"]
__all__ += ["atan2", "hypot", "copysign", "nextafter", "logaddexp"]
__all__ += ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
__all__ += ["logical_and", "logical_or", "logical_xor"]
__all__ += ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"]

#: the Python scalars a binary function takes beside an array
PythonScalar = bool | int | float | complex


def _unary(name: str, x: Any) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{name}() takes a ruda_wgpu array, not {type(x).__name__}")
    return unary(name, x)


def abs(x: Array, /) -> Array:
    """|x|."""
    return _unary("abs", x)


def negative(x: Array, /) -> Array:
    """-x."""
    return _unary("negative", x)


def positive(x: Array, /) -> Array:
    """+x (a copy)."""
    return _unary("positive", x)


def square(x: Array, /) -> Array:
    """x * x."""
    return _unary("square", x)


def sign(x: Array, /) -> Array:
    """The sign of x (x / |x| for complex)."""
    return _unary("sign", x)


def bitwise_invert(x: Array, /) -> Array:
    """~x."""
    return _unary("bitwise_invert", x)


def logical_not(x: Array, /) -> Array:
    """not x."""
    return _unary("logical_not", x)


def isnan(x: Array, /) -> Array:
    """Whether x is NaN."""
    return _unary("isnan", x)


def isinf(x: Array, /) -> Array:
    """Whether x is infinite."""
    return _unary("isinf", x)


def isfinite(x: Array, /) -> Array:
    """Whether x is finite."""
    return _unary("isfinite", x)


def signbit(x: Array, /) -> Array:
    """Whether the sign bit of x is set (-0.0 and NaNs included)."""
    return _unary("signbit", x)


def floor(x: Array, /) -> Array:
    """The largest integer value <= x."""
    return _unary("floor", x)


def ceil(x: Array, /) -> Array:
    """The smallest integer value >= x."""
    return _unary("ceil", x)


def trunc(x: Array, /) -> Array:
    """x rounded toward zero."""
    return _unary("trunc", x)


def round(x: Array, /) -> Array:
    """x rounded to the nearest integer value, halves to even."""
    return _unary("round", x)


def real(x: Array, /) -> Array:
    """The real part of x."""
    return _unary("real", x)


def imag(x: Array, /) -> Array:
    """The imaginary part of x."""
    return _unary("imag", x)


def conj(x: Array, /) -> Array:
    """The complex conjugate of x."""
    return _unary("conj", x)


def reciprocal(x: Array, /) -> Array:
    """1 / x."""
    return _unary("reciprocal", x)


def exp(x: Array, /) -> Array:
    """e^x."""
    return _unary("exp", x)


def expm1(x: Array, /) -> Array:
    """e^x - 1, exact near 0."""
    return _unary("expm1", x)


def log(x: Array, /) -> Array:
    """The natural logarithm of x."""
    return _unary("log", x)


def log1p(x: Array, /) -> Array:
    """log(1 + x), exact near 0."""
    return _unary("log1p", x)


def log2(x: Array, /) -> Array:
    """The base-2 logarithm of x."""
    return _unary("log2", x)


def log10(x: Array, /) -> Array:
    """The base-10 logarithm of x."""
    return _unary("log10", x)


def sqrt(x: Array, /) -> Array:
    """The square root of x."""
    return _unary("sqrt", x)


def sin(x: Array, /) -> Array:
    """The sine of x."""
    return _unary("sin", x)


def cos(x: Array, /) -> Array:
    """The cosine of x."""
    return _unary("cos", x)


def tan(x: Array, /) -> Array:
    """The tangent of x."""
    return _unary("tan", x)


def asin(x: Array, /) -> Array:
    """The inverse sine of x."""
    return _unary("asin", x)


def acos(x: Array, /) -> Array:
    """The inverse cosine of x."""
    return _unary("acos", x)


def atan(x: Array, /) -> Array:
    """The inverse tangent of x."""
    return _unary("atan", x)


def sinh(x: Array, /) -> Array:
    """The hyperbolic sine of x."""
    return _unary("sinh", x)


def cosh(x: Array, /) -> Array:
    """The hyperbolic cosine of x."""
    return _unary("cosh", x)


def tanh(x: Array, /) -> Array:
    """The hyperbolic tangent of x."""
    return _unary("tanh", x)


def asinh(x: Array, /) -> Array:
    """The inverse hyperbolic sine of x."""
    return _unary("asinh", x)


def acosh(x: Array, /) -> Array:
    """The inverse hyperbolic cosine of x."""
    return _unary("acosh", x)


def atanh(x: Array, /) -> Array:
    """The inverse hyperbolic tangent of x."""
    return _unary("atanh", x)


def add(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """x1 + x2."""
    return binary("add", x1, x2)


def subtract(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """x1 - x2."""
    return binary("subtract", x1, x2)


def multiply(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """x1 * x2."""
    return binary("multiply", x1, x2)


def divide(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """x1 / x2."""
    return binary("divide", x1, x2)


def floor_divide(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """floor(x1 / x2), as Python's //."""
    return binary("floor_divide", x1, x2)


def remainder(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """x1 - floor_divide(x1, x2) * x2 (the sign of x2, as Python's %)."""
    return binary("remainder", x1, x2)


def pow(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """x1 ** x2. Integers to a negative Python int power raise ValueError, as in NumPy and
    PyTorch; a negative element of an integer exponent array gives the integer part of the
    power (1 and -1 to it give 1 or -1, other bases 0), which the GPU computes without a check
    (the standard leaves it unspecified)."""
    return binary("pow", x1, x2)


def maximum(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """The larger of x1 and x2 (NaN if either is)."""
    return binary("maximum", x1, x2)


def minimum(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """The smaller of x1 and x2 (NaN if either is)."""
    return binary("minimum", x1, x2)


def atan2(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """The angle of the point (x2, x1)."""
    return binary("atan2", x1, x2)


def hypot(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """sqrt(x1^2 + x2^2) without overflow."""
    return binary("hypot", x1, x2)


def copysign(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """|x1| with the sign of x2."""
    return binary("copysign", x1, x2)


def nextafter(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """The next representable value after x1 toward x2."""
    return binary("nextafter", x1, x2)


def logaddexp(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """log(e^x1 + e^x2) without overflow."""
    return binary("logaddexp", x1, x2)


def equal(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """x1 == x2."""
    return binary("equal", x1, x2)


def not_equal(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """x1 != x2."""
    return binary("not_equal", x1, x2)


def less(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """x1 < x2."""
    return binary("less", x1, x2)


def less_equal(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """x1 <= x2."""
    return binary("less_equal", x1, x2)


def greater(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """x1 > x2."""
    return binary("greater", x1, x2)


def greater_equal(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """x1 >= x2."""
    return binary("greater_equal", x1, x2)


def logical_and(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """x1 and x2."""
    return binary("logical_and", x1, x2)


def logical_or(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """x1 or x2."""
    return binary("logical_or", x1, x2)


def logical_xor(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """x1 xor x2."""
    return binary("logical_xor", x1, x2)


def bitwise_and(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """x1 & x2."""
    return binary("bitwise_and", x1, x2)


def bitwise_or(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """x1 | x2."""
    return binary("bitwise_or", x1, x2)


def bitwise_xor(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """x1 ^ x2."""
    return binary("bitwise_xor", x1, x2)


def bitwise_left_shift(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """x1 << x2."""
    return binary("bitwise_left_shift", x1, x2)


def bitwise_right_shift(x1: Array | PythonScalar, x2: Array | PythonScalar, /) -> Array:
    """x1 >> x2 (arithmetic for signed integers)."""
    return binary("bitwise_right_shift", x1, x2)
