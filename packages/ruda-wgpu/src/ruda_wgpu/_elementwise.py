"""Elementwise functions: each one is a small WGSL function body, specialised per dtype.

An operation is ``fn f(a: T, b: T) -> R { ... }`` where ``T`` is the compute type
of the promoted dtype (``f32``, ``i32``, ``u32``, ``i64``, ``u64``; bool is
``u32`` 0/1). The generic strided kernel of :mod:`ruda_wgpu._kernels` calls it
once per output element and wraps narrow integer results. Bodies call helpers of
the WGSL library (``isnan_f``, ``floordiv_i32``, ``div_f16``...), linked into the
kernel on use; the library's comments say which driver behaviour each one avoids.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ruda_wgpu import _dtypes
from ruda_wgpu._array import Array, check_scalar_range, empty, python_scalar
from ruda_wgpu._kernels import ONE, ZERO, Operand, Scalar, convert, launch_elementwise, wgsl_type

#: result rules: the dtype of the result from the promoted dtype of the inputs
SAME, BOOL = "same", "bool"


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
    bits = "64" if t in ("i64", "u64") else "32"
    return template.replace("{T}", t).replace("{Z}", ZERO[t]).replace("{O}", ONE[t]).replace("{BITS}", bits)


def _float_unary(expr: str) -> dict[str, str]:
    return {"f": f"return {expr};"}


_OPS: dict[str, Op] = {}


def _op(name: str, nargs: int, kinds: str, bodies: dict[str, str], result: str = SAME) -> None:
    _OPS[name] = Op(name, nargs, kinds, bodies, result)


# -- unary ------------------------------------------------------------------------------------------
_op("abs", 1, "iuf", {"f": "return abs(a);", "i": "return select(a, -a, a < {Z});", "u": "return a;"})
_op("negative", 1, "iuf", {"fi": "return -a;", "u": "return {Z} - a;"})
_op("positive", 1, "iuf", {"iuf": "return a;"})
_op("square", 1, "iuf", {"iuf": "return a * a;"})
_op(
    "sign",
    1,
    "iuf",
    {
        "f": "if (isnan_f(a)) { return a; } return select(select(0.0f, 1.0f, a > 0.0f), -1.0f, a < 0.0f);",
        "i": "return select(select({Z}, {O}, a > {Z}), -{O}, a < {Z});",
        "u": "return select({Z}, {O}, a > {Z});",
    },
)
_op("bitwise_invert", 1, "biu", {"b": "return 1u - a;", "iu": "return ~a;"})
_op("logical_not", 1, "b", {"b": "return 1u - a;"})
_op("isnan", 1, "biuf", {"f": "return select(0u, 1u, isnan_f(a));", "biu": "return 0u;"}, BOOL)
_op("isinf", 1, "biuf", {"f": "return select(0u, 1u, isinf_f(a));", "biu": "return 0u;"}, BOOL)
_op(
    "isfinite",
    1,
    "biuf",
    {"f": "return select(1u, 0u, isnan_f(a) || isinf_f(a));", "biu": "return 1u;"},
    BOOL,
)
_op("signbit", 1, "f", {"f": "return select(0u, 1u, signbit_f(a));"}, BOOL)
for _name in ("floor", "ceil", "trunc", "round"):
    _op(_name, 1, "iuf", {"f": f"return {_name}_f(a);", "iu": "return a;"})
_op("real", 1, "iuf", {"iuf": "return a;"})
_op("conj", 1, "iuf", {"iuf": "return a;"})
_op("imag", 1, "iuf", {"iuf": "return {Z};"})
_op("reciprocal", 1, "f", _float_unary("1.0f / a"))
_op("sqrt", 1, "f", {"f": "return select(sqrt(a), nan_f(), a < 0.0f);", "float16": "return sqrt_f16(a);"})
_op("exp", 1, "f", _float_unary("exp(a)"))
_op(
    "expm1",
    1,
    "f",
    {
        "f": """
  if (isnan_f(a)) { return a; }
  if (a > 88.8f) { return inf_f(); }
  let u = exp(a);
  if (u == 1.0f) { return a; }
  if (u - 1.0f == -1.0f) { return -1.0f; }
  return (u - 1.0f) * a / log(u);"""
    },
)
_op("log", 1, "f", _float_unary("select(log_f(a), nan_f(), a < 0.0f)"))
_op("log2", 1, "f", _float_unary("select(log2_f(a), nan_f(), a < 0.0f)"))
_op("log10", 1, "f", _float_unary("select(log2_f(a) * 0.30102999566398120f, nan_f(), a < 0.0f)"))
_op("log1p", 1, "f", _float_unary("log1p_f(a)"))
_op("sin", 1, "f", _float_unary("sin_f(a)"))
_op("cos", 1, "f", _float_unary("cos_f(a)"))
_op("tan", 1, "f", _float_unary("tan_f(a)"))
_op("asin", 1, "f", _float_unary("select(atan2_f(a, sqrt((1.0f - a) * (1.0f + a))), nan_f(), abs(a) > 1.0f)"))
_op("acos", 1, "f", _float_unary("select(atan2_f(sqrt((1.0f - a) * (1.0f + a)), a), nan_f(), abs(a) > 1.0f)"))
_op("atan", 1, "f", _float_unary("select(atan_f(a), a, isnan_f(a))"))
_op(
    "sinh",
    1,
    "f",
    {
        "f": """
  if (abs(a) < 0.125f) { let a2 = a * a; return a + a * a2 * (1.0f / 6.0f + a2 / 120.0f); }
  return sinh(a);"""
    },
)
_op("cosh", 1, "f", _float_unary("cosh(a)"))
_op("tanh", 1, "f", _float_unary("select(tanh(a), copysign_f(1.0f, a), abs(a) > 20.0f)"))
_op(
    "asinh",
    1,
    "f",
    {
        "f": """
  if (isnan_f(a) || isinf_f(a) || a == 0.0f) { return a; }
  let x = abs(a);
  var r: f32;
  if (x > 1e18f) { r = log(x) + 0.69314718055994531f; }
  else { r = log1p_f(x + x * x / (1.0f + sqrt(1.0f + x * x))); }
  return copysign_f(r, a);"""
    },
)
_op(
    "acosh",
    1,
    "f",
    {
        "f": """
  if (isnan_f(a) || a < 1.0f) { return nan_f(); }
  if (a > 1e18f) { return log(a) + 0.69314718055994531f; }
  let t = a - 1.0f;
  return log1p_f(t + sqrt(2.0f * t + t * t));"""
    },
)
_op(
    "atanh",
    1,
    "f",
    {
        "f": """
  if (isnan_f(a) || abs(a) > 1.0f) { return nan_f(); }
  if (abs(a) == 1.0f) { return copysign_f(inf_f(), a); }
  if (a == 0.0f) { return a; }
  return 0.5f * log1p_f(2.0f * a / (1.0f - a));"""
    },
)

# -- binary -----------------------------------------------------------------------------------------
_op("add", 2, "iuf", {"iuf": "return a + b;"})
_op("subtract", 2, "iuf", {"iuf": "return a - b;"})
_op("multiply", 2, "iuf", {"iuf": "return a * b;"})
# Vulkan lets f32 division be off by 2.5 ulp, which can cross a float16 rounding boundary.
_op("divide", 2, "f", {"f": "return a / b;", "float16": "return div_f16(a, b);"})
_op(
    "floor_divide",
    2,
    "iuf",
    {
        "f": """
  // The standard's special cases: an infinite operand gives a / b (inf // 1 is inf, 1 // -inf
  // is -0), where NumPy's divmod gives nan and -1.
  if (isnan_f(a) || isnan_f(b) || (isinf_f(a) && isinf_f(b))) { return nan_f(); }
  if (isinf_f(a) || isinf_f(b) || b == 0.0f) { return a / b; }
  let m = fmod_f(a, b);
  var d = (a - m) / b;
  if (m != 0.0f && ((b < 0.0f) != (m < 0.0f))) { d = d - 1.0f; }
  if (d == 0.0f) { return copysign_f(0.0f, a / b); }
  var f = floor_f(d);
  if (d - f > 0.5f) { f = f + 1.0f; }
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
  if (isnan_f(a) || isnan_f(b) || isinf_f(a) || b == 0.0f) { return nan_f(); }
  if (isinf_f(b)) { if (a == 0.0f || signbit_f(a) == signbit_f(b)) { return a; } return b; }
  var m = fmod_f(a, b);
  if (m != 0.0f) { if ((b < 0.0f) != (m < 0.0f)) { m = m + b; } } else { m = copysign_f(0.0f, b); }
  return m;""",
        "i": "return remainder_{T}(a, b);",
        "u": "return select(a - (a / b) * b, {Z}, b == {Z});",
    },
)
_op(
    "pow",
    2,
    "iuf",
    {
        "f": """
  if (b == 0.0f) { return 1.0f; }
  if (a == 1.0f) { return 1.0f; }
  if (isnan_f(a) || isnan_f(b)) { return nan_f(); }
  if (isinf_f(b)) {
    if (abs(a) == 1.0f) { return 1.0f; }
    return select(0.0f, inf_f(), (abs(a) > 1.0f) == (b > 0.0f));
  }
  let bint = trunc(b) == b;
  let odd = bint && abs(b) < 16777216.0f && (u32(abs(b)) & 1u) == 1u;
  if (a == 0.0f || isinf_f(a)) {
    let big = (a == 0.0f) == (b < 0.0f);
    let mag = select(0.0f, inf_f(), big);
    return select(mag, copysign_f(mag, a), odd);
  }
  if (a < 0.0f) {
    if (!bint) { return nan_f(); }
    let r = exp2(b * log2(-a));
    return select(r, -r, odd);
  }
  return exp2(b * log2(a));""",
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
_op(
    "maximum",
    2,
    "iuf",
    {
        "f": "if (isnan_f(a)) { return a; } if (isnan_f(b)) { return b; } return max(a, b);",
        "iu": "return max(a, b);",
    },
)
_op(
    "minimum",
    2,
    "iuf",
    {
        "f": "if (isnan_f(a)) { return a; } if (isnan_f(b)) { return b; } return min(a, b);",
        "iu": "return min(a, b);",
    },
)
_op("atan2", 2, "f", _float_unary("atan2_f(a, b)"))
_op(
    "hypot",
    2,
    "f",
    {
        "f": """
  if (isinf_f(a) || isinf_f(b)) { return inf_f(); }
  if (isnan_f(a) || isnan_f(b)) { return nan_f(); }
  let m = max(abs(a), abs(b));
  if (m == 0.0f) { return 0.0f; }
  let x = a / m; let y = b / m;
  return m * sqrt(x * x + y * y);"""
    },
)
_op("copysign", 2, "f", _float_unary("copysign_f(a, b)"))
_op(
    "nextafter",
    2,
    "f",
    {
        "f": """
  if (isnan_f(a) || isnan_f(b)) { return nan_f(); }
  if (a == b) { return b; }
  if (a == 0.0f) { return bitcast<f32>(1u | (bitcast<u32>(b) & 0x80000000u)); }
  let u = bitcast<u32>(a);
  return bitcast<f32>(select(u - 1u, u + 1u, (a < b) == (a > 0.0f)));""",
        "float16": "return nextafter_f16(a, b);",
    },
)
_op(
    "logaddexp",
    2,
    "f",
    {
        "f": """
  if (isnan_f(a) || isnan_f(b)) { return nan_f(); }
  if (a == b) { return a + 0.69314718055994531f; }
  let m = max(a, b);
  if (isinf_f(m)) { return m; }
  return m + log1p_f(exp(-abs(a - b)));"""
    },
)
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
    _op(_name, 2, _kinds, {_kinds: _body}, BOOL)
_op("logical_and", 2, "b", {"b": "return a & b;"})
_op("logical_or", 2, "b", {"b": "return a | b;"})
_op("logical_xor", 2, "b", {"b": "return a ^ b;"})
_op("bitwise_and", 2, "biu", {"biu": "return a & b;"})
_op("bitwise_or", 2, "biu", {"biu": "return a | b;"})
_op("bitwise_xor", 2, "biu", {"biu": "return a ^ b;"})
# Shifts by the width or more give 0 (or -1), as NumPy's; the shift count is masked explicitly
# because the value of an over-wide shift is left to the driver.
_op(
    "bitwise_left_shift",
    2,
    "iu",
    {"iu": "return select({Z}, a << (u32(b) & ({BITS}u - 1u)), b < {T}({BITS}));"},
)
_op(
    "bitwise_right_shift",
    2,
    "iu",
    {
        "i": "return select(select({Z}, -{O}, a < {Z}), a >> (u32(b) & ({BITS}u - 1u)), b < {T}({BITS}));",
        "u": "return select({Z}, a >> (u32(b) & ({BITS}u - 1u)), b < {T}({BITS}));",
    },
)

# float64: every function from the library of wgsl/lib_f64.wgsl, which uses f64 arithmetic only
# (the drivers' f64 built-ins are wrong or crash).
_F64_CALLS = {
    "sqrt": "sqrt", "exp": "exp", "expm1": "expm1", "log": "log", "log2": "log2", "log10": "log10",
    "log1p": "log1p", "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos",
    "atan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "asinh", "acosh": "acosh",
    "atanh": "atanh", "floor": "floor", "ceil": "ceil", "trunc": "trunc", "round": "round", "abs": "abs",
}  # fmt: skip
_F64_BINARY_CALLS = {
    "pow": "pow", "atan2": "atan2", "hypot": "hypot", "copysign": "copysign", "nextafter": "nextafter",
    "logaddexp": "logaddexp",
}  # fmt: skip
for _name, _fn in _F64_CALLS.items():
    _OPS[_name].bodies["float64"] = f"return {_fn}_d(a);"
for _name, _fn in _F64_BINARY_CALLS.items():
    _OPS[_name].bodies["float64"] = f"return {_fn}_d(a, b);"
_OPS["reciprocal"].bodies["float64"] = "return 1.0lf / a;"
_OPS["sign"].bodies["float64"] = (
    "if (isnan_d(a)) { return a; } return select(select(0.0lf, 1.0lf, a > 0.0lf), -1.0lf, a < 0.0lf);"
)
_OPS["isnan"].bodies["float64"] = "return select(0u, 1u, isnan_d(a));"
_OPS["isinf"].bodies["float64"] = "return select(0u, 1u, isinf_d(a));"
_OPS["isfinite"].bodies["float64"] = "return select(1u, 0u, isnan_d(a) || isinf_d(a));"
_OPS["signbit"].bodies["float64"] = "return select(0u, 1u, signbit_d(a));"
_OPS["maximum"].bodies["float64"] = (
    "if (isnan_d(a)) { return a; } if (isnan_d(b)) { return b; } return max(a, b);"
)
_OPS["minimum"].bodies["float64"] = (
    "if (isnan_d(a)) { return a; } if (isnan_d(b)) { return b; } return min(a, b);"
)
_OPS["floor_divide"].bodies["float64"] = """
  if (isnan_d(a) || isnan_d(b) || (isinf_d(a) && isinf_d(b))) { return nan_d(); }
  if (isinf_d(a) || isinf_d(b) || b == 0.0lf) { return a / b; }
  let m = fmod_d(a, b);
  var d = (a - m) / b;
  if (m != 0.0lf && ((b < 0.0lf) != (m < 0.0lf))) { d = d - 1.0lf; }
  if (d == 0.0lf) { return copysign_d(0.0lf, a / b); }
  var f = floor_d(d);
  if (d - f > 0.5lf) { f = f + 1.0lf; }
  return f;"""
_OPS["remainder"].bodies["float64"] = """
  if (isnan_d(a) || isnan_d(b) || isinf_d(a) || b == 0.0lf) { return nan_d(); }
  if (isinf_d(b)) { if (a == 0.0lf || signbit_d(a) == signbit_d(b)) { return a; } return b; }
  var m = fmod_d(a, b);
  if (m != 0.0lf) { if ((b < 0.0lf) != (m < 0.0lf)) { m = m + b; } } else { m = copysign_d(0.0lf, b); }
  return m;"""

_KIND_WORDS = {
    "b": "boolean",
    "i": "signed integer",
    "u": "unsigned integer",
    "f": "real floating",
    "c": "complex floating",
}


def _result_dtype(op: Op, dt: np.dtype[Any]) -> np.dtype[Any]:
    return _dtypes.bool_ if op.result == BOOL else dt


def apply(name: str, *args: Any) -> Array:
    """Run elementwise operation ``name`` with broadcasting and Array API type promotion."""
    from ruda_wgpu._manipulation import broadcast_shapes, broadcast_to

    op = _OPS[name]
    args = tuple(python_scalar(a) for a in args)
    arrays = [a for a in args if isinstance(a, Array)]
    if not arrays:
        raise TypeError(
            f"{name}() needs at least one ruda_wgpu array, got {[type(a).__name__ for a in args]}"
        )
    for a in args:
        if not isinstance(a, Array | bool | int | float | complex):
            raise TypeError(f"{name}() takes ruda_wgpu arrays or Python scalars, not {type(a).__name__}")
    dev = arrays[0].device
    for a in arrays[1:]:
        if a.device is not dev:
            raise ValueError(
                f"{name}() got arrays on two devices, {dev} and {a.device}: move one with to_device() first"
            )
    dt = _dtypes.result_type(*arrays)
    kind = _dtypes.kind_of(dt)
    if kind not in op.kinds:
        allowed = ", ".join(_KIND_WORDS[k] for k in op.kinds)
        raise TypeError(f"{name}() is not defined for {dt.name}: it takes {allowed} dtypes")
    shape = broadcast_shapes(*(a.shape for a in arrays))
    operands: list[Operand | Scalar] = []
    loads = []
    for k, a in enumerate(args):
        if isinstance(a, Array):
            operands.append(broadcast_to(a, shape)._operand())
            loads.append(convert(f"x{k}", a.dtype, dt))
        else:
            _dtypes.check_scalar_kind(a, dt)
            check_scalar_range(a, dt)
            operands.append(Scalar(a, dt))
            loads.append(f"x{k}")
    out_dt = _result_dtype(op, dt)
    out = empty(shape, out_dt, dev)
    launch_elementwise(
        dev, name, f"f({', '.join(loads)})", _prelude(name, dt), out._operand(), operands, shape
    )
    return out


@functools.cache
def _prelude(name: str, dt: np.dtype[Any]) -> str:
    """The WGSL function ``f`` of operation ``name`` for promoted dtype ``dt`` (and its helpers)."""
    op = _OPS[name]
    t, tr = wgsl_type(dt), wgsl_type(_result_dtype(op, dt))
    params = ", ".join(f"{v}: {t}" for v in "abc"[: op.nargs])
    return f"fn f({params}) -> {tr} {{ {_fmt(op.body_for(dt), t)} }}"


def _make(name: str) -> Callable[..., Array]:
    op = _OPS[name]
    fn: Callable[..., Array]
    if op.nargs == 1:

        def unary(x: Array, /) -> Array:
            if not isinstance(x, Array):
                raise TypeError(f"{name}() takes a ruda_wgpu array, not {type(x).__name__}")
            return apply(name, x)

        fn = unary
    else:

        def binary(x1: Array | int | float | bool, x2: Array | int | float | bool, /) -> Array:
            return apply(name, x1, x2)

        fn = binary
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` on the GPU, with broadcasting and Array API type promotion."
    return fn


for _name in _OPS:
    globals()[_name] = _make(_name)

NAMES = tuple(_OPS)


def where(condition: Array, x1: Array | int | float | bool, x2: Array | int | float | bool, /) -> Array:
    """``x1`` where ``condition`` is true, else ``x2``, broadcast together."""
    from ruda_wgpu._manipulation import broadcast_shapes, broadcast_to

    if not isinstance(condition, Array) or condition.dtype != _dtypes.bool_:
        raise TypeError("where() needs a boolean ruda_wgpu array as its condition")
    arrays = [a for a in (condition, x1, x2) if isinstance(a, Array)]
    dev = condition.device
    for a in arrays:
        if a.device is not dev:
            raise ValueError(
                f"where() got arrays on two devices, {dev} and {a.device}: move one with to_device()"
            )
    values = [a for a in (x1, x2) if isinstance(a, Array)]
    if values:
        dt = _dtypes.result_type(*values, *[v for v in (x1, x2) if not isinstance(v, Array)])
    else:
        raise TypeError("where() needs x1 or x2 to be an array (two Python scalars have no dtype)")
    shape = broadcast_shapes(*(a.shape for a in arrays))
    operands: list[Operand | Scalar] = [broadcast_to(condition, shape)._operand()]
    loads = ["x0"]
    for k, v in enumerate((x1, x2), start=1):
        if isinstance(v, Array):
            operands.append(broadcast_to(v, shape)._operand())
            loads.append(convert(f"x{k}", v.dtype, dt))
        else:
            check_scalar_range(v, dt)
            operands.append(Scalar(v, dt))
            loads.append(f"x{k}")
    out = empty(shape, dt, dev)
    body = f"select({loads[2]}, {loads[1]}, {loads[0]} != 0u)"
    launch_elementwise(dev, "where", body, "", out._operand(), operands, shape)
    return out


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
            bound = int(min_(max_(bound, info.min), info.max))
        if isinstance(bound, Array) and bound.dtype != x.dtype:
            raise TypeError(
                f"clip() bounds must have the dtype of x ({x.dtype.name}), not {bound.dtype.name}"
            )
        out = apply(fn_name, out, bound)
    if out is x:
        from ruda_wgpu._array import copy_of

        out = copy_of(x)
    return out  # the shape is the broadcast of x and array bounds, as the standard says


min_, max_ = min, max  # the builtins, before clip's arguments shadow them


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
    body = convert("x0", x.dtype, dtype)
    out = empty(x.shape, dtype, x.device)
    launch_elementwise(x.device, ("astype", body), body, "", out._operand(), [x._operand()], x.shape)
    return out


__all__ = [*NAMES, "apply", "astype", "clip", "where"]
