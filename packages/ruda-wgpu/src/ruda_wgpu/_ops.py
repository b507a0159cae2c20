"""The table of elementwise operations (each a small WGSL function body, specialised per dtype)
and :func:`apply`, which promotes, broadcasts and records one; the public functions over it are
in :mod:`ruda_wgpu._elementwise`.

An operation is ``fn f(a: T, b: T) -> R { ... }`` where ``T`` is the compute type
of the promoted dtype (``f32``, ``i32``, ``u32``, ``i64``, ``u64``; bool is
``u32`` 0/1). The generic strided kernel of :mod:`ruda_wgpu._kernels` calls it
once per output element and wraps narrow integer results. Bodies call helpers of
the WGSL library (``isnan_f``, ``floordiv_i32``, ``div_f16``...), linked into the
kernel on use; the library's comments say which driver behaviour each one avoids.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
from ruda._array import python_scalar
from ruda._operators import is_foreign_array, mixing_error

from ruda_wgpu import _dtypes
from ruda_wgpu._array import Array, check_scalar_range, int_fits, int_range
from ruda_wgpu._fusion import Operation, record
from ruda_wgpu._kernels import COMPLEX_SUFFIX, FLOAT_SUFFIX, ONE, ZERO, Scalar, convert, wgsl_type
from ruda_wgpu._manipulation import broadcast_for

#: result rules: the dtype of the result from the promoted dtype of the inputs (REAL: the real
#: dtype of a complex one, as abs, real and imag give)
SAME, BOOL, REAL = "same", "bool", "real"


class Op:
    """One elementwise operation: allowed dtype kinds, result rule and WGSL bodies by kind.

    A body keyed by a dtype name (``"float16"``) takes precedence over the one of its kind.
    """

    def __init__(self, name: str, nargs: int, kinds: str, bodies: dict[str, str], result: str = SAME) -> None:
        self.name, self.nargs, self.kinds, self.bodies, self.result = name, nargs, kinds, bodies, result

    def body_for(self, dt: np.dtype[Any]) -> str:
        if dt.name in self.bodies:
            return self.bodies[dt.name]
        k = _dtypes.kind_of(dt)
        for key, body in self.bodies.items():
            if key not in _dtypes.NAME.values() and k in key:
                return body
        raise AssertionError(f"{self.name} has no body for {dt.name}")


def _fmt(template: str, t: str) -> str:
    """A body for WGSL type ``t``: {T} the type, {Z}/{O} its zero and one, {BITS} its width, {S} the
    float library's suffix, {C} the complex library's, {P} the float suffix of a complex's parts."""
    bits = "64" if t in ("i64", "u64") else "32"
    suffix = FLOAT_SUFFIX.get(t, "")
    complex_ = COMPLEX_SUFFIX.get(t, "")
    part = FLOAT_SUFFIX[t[5:-1]] if complex_ else ""  # vec2<f32> -> f32 -> f
    out = template.replace("{T}", t).replace("{Z}", ZERO[t]).replace("{O}", ONE[t]).replace("{BITS}", bits)
    return out.replace("{S}", suffix).replace("{C}", complex_).replace("{P}", part)


_OPS: dict[str, Op] = {}


def _op(name: str, nargs: int, kinds: str, bodies: dict[str, str], result: str = SAME) -> None:
    _OPS[name] = Op(name, nargs, kinds, bodies, result)


# -- unary ------------------------------------------------------------------------------------------
# Float bodies are written once: {S} is the suffix of the library's helpers for the dtype (``f`` for
# float16 and float32 in f32 words, ``d`` for float64), {C} the complex library's (``c64``, ``c128``).
_op("abs", 1, "iufc", {"f": "return abs_{S}(a);", "i": "return select(a, -a, a < {Z});", "u": "return a;",
                        "c": "return abs_{C}(a);"}, REAL)  # fmt: skip
_op("negative", 1, "iufc", {"fic": "return -a;", "u": "return {Z} - a;"})
_op("positive", 1, "iufc", {"iufc": "return a;"})
_op("square", 1, "iufc", {"iuf": "return a * a;", "c": "return square_{C}(a);"})
_op(
    "sign",
    1,
    "iufc",
    {
        "f": "if (isnan_{S}(a)) { return a; } return select(select({Z}, {O}, a > {Z}), -{O}, a < {Z});",
        "i": "return select(select({Z}, {O}, a > {Z}), -{O}, a < {Z});",
        "u": "return select({Z}, {O}, a > {Z});",
        "c": "return sign_{C}(a);",
    },
)
_op("bitwise_invert", 1, "biu", {"b": "return 1u - a;", "iu": "return ~a;"})
_op("logical_not", 1, "b", {"b": "return 1u - a;"})
_op("isnan", 1, "biufc", {"fc": "return select(0u, 1u, isnan_{S}{C}(a));", "biu": "return 0u;"}, BOOL)
_op("isinf", 1, "biufc", {"fc": "return select(0u, 1u, isinf_{S}{C}(a));", "biu": "return 0u;"}, BOOL)
_op(
    "isfinite",
    1,
    "biufc",
    {
        "f": "return select(1u, 0u, isnan_{S}(a) || isinf_{S}(a));",
        "c": "return select(0u, 1u, isfinite_{C}(a));",
        "biu": "return 1u;",
    },
    BOOL,
)
_op("signbit", 1, "f", {"f": "return select(0u, 1u, signbit_{S}(a));"}, BOOL)
for _name in ("floor", "ceil", "trunc"):
    _op(_name, 1, "iuf", {"f": f"return {_name}_{{S}}(a);", "iu": "return a;"})
_op(
    "round",
    1,
    "iufc",
    {"f": "return round_{S}(a);", "iu": "return a;", "c": "return {T}(round_{P}(a.x), round_{P}(a.y));"},
)
_op("real", 1, "iufc", {"iuf": "return a;", "c": "return a.x;"}, REAL)
_op("imag", 1, "iufc", {"iuf": "return {Z};", "c": "return a.y;"}, REAL)
_op("conj", 1, "iufc", {"iuf": "return a;", "c": "return {T}(a.x, -a.y);"})
_op("reciprocal", 1, "fc", {"f": "return {O} / a;", "c": "return reciprocal_{C}(a);"})
# the functions of the real and complex libraries, by the same names
for _name in ("exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos",
              "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh"):  # fmt: skip
    _op(_name, 1, "fc", {"f": f"return {_name}_{{S}}(a);", "c": f"return {_name}_{{C}}(a);"})
# Vulkan lets f32 sqrt and division be a few ulp off, which can cross a float16 rounding boundary.
_OPS["sqrt"].bodies["float16"] = "return sqrt_f16(a);"

# -- binary -----------------------------------------------------------------------------------------
_op("add", 2, "iufc", {"iufc": "return a + b;"})
_op("subtract", 2, "iufc", {"iufc": "return a - b;"})
_op("multiply", 2, "iufc", {"iuf": "return a * b;", "c": "return mul_{C}(a, b);"})
_op(
    "divide",
    2,
    "fc",
    {
        "f": "return a / b;",
        "float32": "return div_f(a, b);",
        "float16": "return div_f16(a, b);",
        "c": "return div_{C}(a, b);",
    },
)
_op(
    "floor_divide",
    2,
    "iuf",
    {
        "f": """
  // The standard's special cases: an infinite operand gives a / b (inf // 1 is inf, 1 // -inf
  // is -0), where NumPy's divmod gives nan and -1.
  if (isnan_{S}(a) || isnan_{S}(b) || (isinf_{S}(a) && isinf_{S}(b))) { return nan_{S}(); }
  if (isinf_{S}(a) || isinf_{S}(b) || b == {Z}) { return a / b; }
  // (scaled for b: see fmod_scaled_f; a scaled a past the range means a quotient past it too),
  // the quotient rounded as NumPy's is (a driver's division may be an ulp off: div_rounded_f)
  let m = fmod_scaled_{S}(a, b);
  var d = div_rounded_{S}(scaled_for_{S}(a, b) - m, scaled_for_{S}(b, b));
  if (m != {Z} && signbit_{S}(b) != signbit_{S}(m)) { d = d - {O}; }
  if (d == {Z}) { return copysign_{S}({Z}, a / b); }
  var f = floor_{S}(d);
  if (d - f > {T}(0.5)) { f = f + {O}; }
  return f;""",
        "i": "return floordiv_{T}(a, b);",
        "u": "return select(a / b, {Z}, b == {Z});",
    },
)
_op(
    "remainder",
    2,
    "iuf",
    {
        "f": """
  if (isnan_{S}(a) || isnan_{S}(b) || isinf_{S}(a) || b == {Z}) { return nan_{S}(); }
  if (isinf_{S}(b)) {
    if (a == {Z}) { return copysign_{S}({Z}, b); }  // (a zero takes the divisor's sign, as for finite ones)
    if (signbit_{S}(a) == signbit_{S}(b)) { return a; }
    return b;
  }
  var m = fmod_scaled_{S}(a, b);  // (scaled for b, so that a sum below 2^-126 is not flushed)
  if (m == {Z}) { return copysign_{S}({Z}, b); }
  if (signbit_{S}(b) != signbit_{S}(m)) { m = m + scaled_for_{S}(b, b); }
  return unscaled_for_{S}(m, b);""",
        "i": "return remainder_{T}(a, b);",
        "u": "return select(a - (a / b) * b, {Z}, b == {Z});",
    },
)
_op(
    "pow",
    2,
    "iufc",
    {
        "f": "return pow_{S}(a, b);",
        "c": "return pow_{C}(a, b);",
        "i": """
  var r = {O}; var x = a; var e = b;
  if (e < {Z}) { return select(select({Z}, select({O}, -{O}, (e & {O}) != {Z}), x == -{O}), {O}, x == {O}); }
  for (var i = 0; i < {BITS} && e > {Z}; i = i + 1) {
    if ((e & {O}) != {Z}) { r = r * x; }
    x = x * x; e = e >> 1u;
  }
  return r;""",
        "u": """
  var r = {O}; var x = a; var e = b;
  for (var i = 0; i < {BITS} && e > {Z}; i = i + 1) {
    if ((e & {O}) != {Z}) { r = r * x; }
    x = x * x; e = e >> 1u;
  }
  return r;""",
    },
)
for _name, _fn in (("maximum", "max"), ("minimum", "min")):
    _nan_first = "if (isnan_{S}(a)) { return a; } if (isnan_{S}(b)) { return b; } "
    _op(_name, 2, "iuf", {"f": f"{_nan_first}return {_fn}(a, b);", "iu": f"return {_fn}(a, b);"})
for _name in ("atan2", "hypot", "copysign", "nextafter", "logaddexp"):
    _op(_name, 2, "f", {"f": f"return {_name}_{{S}}(a, b);"})
_OPS["nextafter"].bodies["float16"] = "return nextafter_f16(a, b);"
for _name, _sym in (
    ("equal", "=="),
    ("not_equal", "!="),
    ("less", "<"),
    ("less_equal", "<="),
    ("greater", ">"),
    ("greater_equal", ">="),
):
    _kinds = "biuf" if _name in ("equal", "not_equal") else "iuf"
    _body = f"return select(0u, 1u, a {_sym} b);"
    if _name == "not_equal":
        _body = "return select(1u, 0u, a == b);"  # '!=' on floats is folded wrongly by some drivers for NaN
    _bodies = {_kinds: _body}
    if _name in ("equal", "not_equal"):  # complex: both parts equal (NaN in either: not equal)
        _bodies["c"] = (
            "return select(0u, 1u, all(a == b));"
            if _name == "equal"
            else "return select(1u, 0u, all(a == b));"
        )
        _kinds += "c"
    _op(_name, 2, _kinds, _bodies, BOOL)
_op("logical_and", 2, "b", {"b": "return a & b;"})
_op("logical_or", 2, "b", {"b": "return a | b;"})
_op("logical_xor", 2, "b", {"b": "return a ^ b;"})
_op("bitwise_and", 2, "biu", {"biu": "return a & b;"})
_op("bitwise_or", 2, "biu", {"biu": "return a | b;"})
_op("bitwise_xor", 2, "biu", {"biu": "return a ^ b;"})

# Shifts by a negative count or by the width or more give 0 (or -1), as NumPy's; the count is masked
# explicitly because the value of an over-wide shift is left to the driver.
_op(
    "bitwise_left_shift",
    2,
    "iu",
    {"iu": "return select({Z}, a << (u32(b) & ({BITS}u - 1u)), b >= {Z} && b < {T}({BITS}));"},
)
_op(
    "bitwise_right_shift",
    2,
    "iu",
    {
        "i": "return select(select({Z}, -{O}, a < {Z}), a >> (u32(b) & ({BITS}u - 1u)), "
        "b >= {Z} && b < {T}({BITS}));",
        "u": "return select({Z}, a >> (u32(b) & ({BITS}u - 1u)), b < {T}({BITS}));",
    },
)

_KIND_WORDS = {
    "b": "boolean",
    "i": "signed integer",
    "u": "unsigned integer",
    "f": "real floating",
    "c": "complex floating",
}


def _result_dtype(op: Op, dt: np.dtype[Any]) -> np.dtype[Any]:
    if op.result == BOOL:
        return _dtypes.bool_
    if op.result == REAL and dt.kind == "c":
        return _dtypes.REAL_OF[dt]
    return dt


def apply(name: str, *args: Any) -> Array:
    """Run elementwise operation ``name`` with broadcasting and Array API type promotion."""
    if len(args) == 2:
        return binary(name, args[0], args[1])
    if len(args) == 1 and type(args[0]) is Array:
        return unary(name, args[0])
    return _promoted(name, args)


def unary(name: str, x: Array) -> Array:
    """Run elementwise operation ``name`` of one operand, the ruda_wgpu array ``x``."""
    try:
        operation = _function(name, x._dtype)
    except TypeError:  # (an integer array where floats are wanted; else raised again)
        operation = _function(name, computed_dtype(name, x._dtype, x._device))
    return record(x._device, operation, (x,), x._shape)


def binary(name: str, a: Any, b: Any) -> Array:
    """Run elementwise operation ``name`` of two operands (arrays or Python scalars).

    Every operator and binary function comes here, so the common cases take few steps (the
    record of a pending operation costs a microsecond or two): two arrays of one dtype and
    device whose shapes broadcast, and a real floating array with a Python float or int on either
    side, which keeps the array's dtype and needs no kind or range check. Through
    :func:`_promoted`'s dtype and shape rules, ``m - mu`` of float32 arrays of shapes (1000, 16)
    and (1, 16) had recorded in 4.5-4.6 us, against 3.2-3.3 so (lavapipe host, GPU code paths,
    three rounds in turns).
    """
    ta, tb = type(a), type(b)
    if ta is Array and tb is Array:
        same, sa, sb = a._dtype, a._shape, b._shape
        if b._dtype is same and a._device is b._device:
            # (shapes that do not broadcast raise here the error _promoted would raise)
            shape = sa if sa == sb else broadcast_for(name, sa, sb)
            try:
                operation = _function(name, same)
            except TypeError:  # (integers where floats are wanted, or a dtype it refuses)
                return _promoted(name, (a, b))
            return record(a._device, operation, (a, b), shape)
    elif ta is Array:
        if (tb is float or tb is int) and a._dtype.kind == "f":
            return record(a._device, _function(name, a._dtype), (a, Scalar(b, a._dtype)), a._shape)
    elif tb is Array and (ta is float or ta is int) and b._dtype.kind == "f":
        return record(b._device, _function(name, b._dtype), (Scalar(a, b._dtype), b), b._shape)
    return _promoted(name, (a, b))


def _promoted(name: str, args: tuple[Any, ...]) -> Array:
    """:func:`apply` for any operands: checks devices, promotes dtypes, broadcasts shapes and
    checks Python scalars against the promoted dtype."""
    first: Array | None = None
    dt: Any = None
    shape: tuple[int, ...] = ()
    values: list[Any] = []
    for a in args:
        if type(a) is Array:
            if first is None:
                first, dt, shape = a, a._dtype, a._shape
            else:
                if a._device is not first._device:
                    raise ValueError(
                        f"{name}() got arrays on two devices, {first._device} and {a._device}: "
                        "move one with to_device() first"
                    )
                if a._dtype is not dt:
                    dt = _dtypes.promote(dt, a._dtype)
                if a._shape != shape:
                    shape = broadcast_for(name, shape, a._shape)
        else:
            a = _scalar_operand(a, name)
        values.append(a)
    if first is None:
        raise TypeError(
            f"{name}() needs at least one ruda_wgpu array, got {[type(a).__name__ for a in args]}"
        )
    for a in values:
        if type(a) is not Array:
            dt = _dtypes.with_scalar(a, dt, first._device)  # (may make dt floating, or complex)
    computed = computed_dtype(name, dt, first._device)
    operation = _function(name, computed)  # (raises for one it refuses)
    if name == "pow" and dt.kind in "iu" and type(values[1]) is int and values[1] < 0:
        raise ValueError(f"pow(): integers to a negative integer power ({values[1]}) are not allowed")
    for k, a in enumerate(values):
        if type(a) is not Array:
            if name in _COMPARISONS and not int_fits(a, dt):
                return _decided(name, values, k, dt, shape, first._device)
            # (an integer operation computed in floats takes the scalar as a float: int8 / 300)
            check_scalar_range(a, computed)
            values[k] = Scalar(a, computed)
        elif a._dtype.kind != "c" and dt.kind == "c":
            # a real operand of a complex operation is made complex by a kernel of its own:
            # converted inline, its imaginary part is a constant 0 that drivers fold (0 * inf
            # as 0), and x * (inf+1j) gave inf+1j where (x+0j) * (inf+1j) is inf+nanj
            values[k] = record(a._device, _conversion(a._dtype, dt), [a], a._shape)
    return record(first._device, operation, values, shape)


#: the comparisons, as Python's operators
_COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "less": operator.lt,
    "less_equal": operator.le,
    "greater": operator.gt,
    "greater_equal": operator.ge,
    "equal": operator.eq,
    "not_equal": operator.ne,
}


def _decided(
    name: str, values: list[Any], k: int, dt: np.dtype[Any], shape: tuple[int, ...], device: Any
) -> Array:
    """A comparison of integers of ``dt`` with ``values[k]``, a Python int beyond their range:
    one answer for every element (``uint8 < 300`` is all true), as NumPy's, rather than the
    OverflowError of arithmetic with such an int."""
    from ruda_wgpu._creation import full

    low, high = int_range(dt)
    scalar = values[k]
    element = high if scalar > high else low  # (any element compares with it as these do)
    pair = (element, scalar) if k == 1 else (scalar, element)
    return full(shape, _COMPARISONS[name](*pair), dtype=_dtypes.bool_, device=device)


def computed_dtype(name: str, dt: np.dtype[Any], device: Any) -> np.dtype[Any]:
    """The dtype operation ``name`` computes operands of promoted dtype ``dt`` in: ``dt``, or the
    default real floating dtype of ``device`` for integers given to an operation defined on
    floating dtypes only (``sqrt``, ``exp``, ``divide``, ``atan2``, ...). The standard leaves
    these to the library; this is PyTorch's rule (``int64 / int64`` gives float32, or float64
    with ``RUDA_WGPU_DEFAULT_FLOAT=float64``), where NumPy's gives float64."""
    op = _OPS[name]
    if dt.kind in "iu" and "i" not in op.kinds and "f" in op.kinds:
        from ruda_wgpu._info import default_dtypes_of

        return default_dtypes_of(device)["real floating"]
    return dt


@functools.cache
def _function(name: str, dt: np.dtype[Any]) -> Operation:
    """Operation ``name`` on operands of promoted dtype ``dt``: the WGSL function computing it
    (its helpers are linked from the library when a kernel is compiled) and its result's dtype.
    Raises TypeError when the operation is not defined for ``dt``'s kind."""
    op = _OPS[name]
    if _dtypes.kind_of(dt) not in op.kinds:
        allowed = ", ".join(_KIND_WORDS[k] for k in op.kinds)
        raise TypeError(f"{name}() is not defined for {dt.name}: it takes {allowed} dtypes")
    result = _result_dtype(op, dt)
    t, tr = wgsl_type(dt), wgsl_type(result)
    params = ", ".join(f"{v}: {t}" for v in "abc"[: op.nargs])
    fn = f"{name}_{dt.name}"
    source = f"fn {fn}({params}) -> {tr} {{ {_fmt(op.body_for(dt), t)} }}"
    return Operation(name, fn, source, (dt,) * op.nargs, result)


#: every operation of the table, each a function of :mod:`ruda_wgpu._elementwise`
NAMES = tuple(_OPS)


def where(
    condition: Array, x1: Array | bool | int | float | complex, x2: Array | bool | int | float | complex, /
) -> Array:
    """``x1`` where ``condition`` is true, else ``x2``, broadcast together."""
    if not isinstance(condition, Array):
        if is_foreign_array(condition):
            raise mixing_error("ruda_wgpu", "where", condition)
        raise TypeError(
            f"where() needs a boolean ruda_wgpu array as its condition, not {type(condition).__name__}"
        )
    if condition.dtype != _dtypes.bool_:
        raise TypeError(
            f"where() needs a boolean condition, not {condition.dtype.name}: compare it first (x != 0)"
        )
    x1, x2 = (v if isinstance(v, Array) else _scalar_operand(v, "where") for v in (x1, x2))
    arrays = [a for a in (condition, x1, x2) if isinstance(a, Array)]
    dev = condition.device
    for a in arrays:
        if a.device is not dev:
            raise ValueError(
                f"where() got arrays on two devices, {dev} and {a.device}: move one with to_device()"
            )
    if not isinstance(x1, Array) and not isinstance(x2, Array):
        raise TypeError("where() needs x1 or x2 to be an array (two Python scalars have no dtype)")
    dt = _dtypes.result_type(x1, x2)
    shape = broadcast_for("where", *(a.shape for a in arrays))
    values: list[Array | Scalar] = [condition]
    for v in (x1, x2):
        if isinstance(v, Array):
            values.append(v)
        else:
            check_scalar_range(v, dt)
            values.append(Scalar(v, dt))
    return record(dev, _selection(dt), values, shape)


def _scalar_operand(value: Any, fn: str) -> bool | int | float | complex:
    """``value``, an operand of ``fn`` that is not a ruda_wgpu array, as a Python scalar; another
    library's array or anything else is refused, naming what it is."""
    value = python_scalar(value)
    if isinstance(value, bool | int | float | complex):
        return value
    if is_foreign_array(value):
        raise mixing_error("ruda_wgpu", fn, value)
    raise TypeError(f"{fn}() takes ruda_wgpu arrays or Python scalars, not {type(value).__name__}")


@functools.cache
def _selection(dt: np.dtype[Any]) -> Operation:
    """The operation of :func:`where` choosing between values of dtype ``dt``."""
    t = wgsl_type(dt)
    fn = f"where_{dt.name}"
    source = f"fn {fn}(c: u32, a: {t}, b: {t}) -> {t} {{ return select(b, a, c != 0u); }}"
    return Operation("where", fn, source, (_dtypes.bool_, dt, dt), dt)


def clip(x: Array, /, min: Any = None, max: Any = None) -> Array:
    """Clamp ``x`` to [min, max]; bounds are arrays or scalars, NaN bounds propagate."""
    if not isinstance(x, Array):
        raise TypeError(f"clip() takes a ruda_wgpu array, not {type(x).__name__}")
    if _dtypes.kind_of(x.dtype) not in "iuf":
        raise TypeError(f"clip() is not defined for {x.dtype.name}")
    out = x
    for bound, fn_name in ((min, "maximum"), (max, "minimum")):
        if bound is None:
            continue
        if isinstance(bound, int | float) and not isinstance(bound, bool) and x.dtype.kind in "iu":
            if isinstance(bound, float):
                raise TypeError("clip() of an integer array takes integer bounds")
            info = np.iinfo(x.dtype)
            if not info.min <= bound <= info.max:  # (as x + 300 of int8, and NumPy's clip)
                raise OverflowError(f"clip(): Python int {bound} is out of bounds for {x.dtype.name}")
        if isinstance(bound, Array) and bound.dtype != x.dtype:
            raise TypeError(
                f"clip() bounds must have the dtype of x ({x.dtype.name}), not {bound.dtype.name}"
            )
        out = apply(fn_name, out, bound)
    if out is x:
        from ruda_wgpu._array import copy_of

        out = copy_of(x)
    return out  # the shape is the broadcast of x and array bounds, as the standard says


def astype(x: Array, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Array:
    """``x`` converted to ``dtype`` (C-cast semantics: floats truncate, integers wrap)."""
    from ruda_wgpu._array import copy_of
    from ruda_wgpu._engine import resolve_device

    if not isinstance(x, Array):
        raise TypeError(f"astype() takes a ruda_wgpu array, not {type(x).__name__}")
    dtype = _dtypes.check_dtype(dtype)
    if device is not None and resolve_device(device) is not x.device:
        x = x.to_device(device)
    if dtype == x.dtype:
        return copy_of(x) if copy else x
    x.device.check_dtype(dtype)
    return record(x.device, _conversion(x.dtype, dtype), [x], x.shape)


@functools.cache
def _conversion(src: np.dtype[Any], dst: np.dtype[Any]) -> Operation:
    """The operation converting ``src`` values to ``dst``."""
    fn = f"astype_{src.name}_{dst.name}"
    source = f"fn {fn}(a: {wgsl_type(src)}) -> {wgsl_type(dst)} {{ return {convert('a', src, dst)}; }}"
    return Operation("astype", fn, source, (src,), dst)


__all__ = [*NAMES, "apply", "astype", "clip", "where"]
