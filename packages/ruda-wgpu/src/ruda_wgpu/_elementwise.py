"""Elementwise functions: each one is a small WGSL function body, specialised per dtype.

An operation is ``fn f(a: T, b: T) -> R { ... }`` where ``T`` is the compute type
of the promoted dtype (``f32``, ``i32``, ``u32``, ``i64``, ``u64``; bool is
``u32`` 0/1). The generic strided kernel of :mod:`ruda_wgpu._kernels` calls it
once per output element and wraps narrow integer results. NaN tests use the bit
pattern, not ``x != x``: Vulkan drivers may compile float comparisons with
fast-math assumptions (lavapipe folds ``x != x`` to false).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ruda_wgpu import _dtypes
from ruda_wgpu._array import Array, check_scalar_range, empty, python_scalar
from ruda_wgpu._kernels import ONE, ZERO, Operand, Scalar, convert, launch_elementwise, wgsl_type

F32_HELPERS = """
fn nan_f() -> f32 { return bitcast<f32>(0x7fc00000u); }
fn inf_f() -> f32 { return bitcast<f32>(0x7f800000u); }
fn isnan_f(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn isinf_f(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }
fn signbit_f(x: f32) -> bool { return (bitcast<u32>(x) & 0x80000000u) != 0u; }
fn copysign_f(x: f32, y: f32) -> f32 {
  return bitcast<f32>((bitcast<u32>(x) & 0x7fffffffu) | (bitcast<u32>(y) & 0x80000000u));
}
fn log2_f(x: f32) -> f32 {
  // Subnormal inputs are scaled into the normal range first: GPU log2 mishandles them.
  if (x > 0.0f && x < 1.17549435e-38f) { return log2(x * 16777216.0f) - 24.0f; }
  return log2(x);
}
fn log_f(x: f32) -> f32 {
  if (x > 0.0f && x < 1.17549435e-38f) { return log(x * 16777216.0f) - 16.635532333438687f; }
  return log(x);
}
fn log1p_f(x: f32) -> f32 {
  let u = 1.0f + x;
  if (isnan_f(x) || isinf_f(x)) { return select(x, nan_f(), signbit_f(x)); }
  if (x < -1.0f) { return nan_f(); }
  if (u == 0.0f) { return -inf_f(); }
  if (u == 1.0f) { return x; }
  return log(u) * x / (u - 1.0f);
}
fn mulwide(a: u32, b: u32) -> vec2<u32> {
  // 32 x 32 -> 64-bit product (lo, hi) from 16-bit halves: WGSL has no portable 64-bit integers.
  let a0 = a & 0xffffu; let a1 = a >> 16u; let b0 = b & 0xffffu; let b1 = b >> 16u;
  let p00 = a0 * b0; let p01 = a0 * b1; let p10 = a1 * b0;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2<u32>((p00 & 0xffffu) | (mid << 16u), a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}
fn bits_at(p: array<u32, 8>, off: u32) -> u32 {
  let w = off >> 5u; let s = off & 31u;
  if (s == 0u) { return p[w]; }
  return (p[w] >> s) | (p[w + 1u] << (32u - s));
}
struct Reduced { r: f32, q: u32 }
fn reduce_pio2(x: f32) -> Reduced {
  // x = r + q * pi/2 with |r| <= pi/4. Large |x|: Payne-Hanek with 192 bits of 2/pi, so
  // sin(1e30) is right; GPU sin/cos reduce large arguments with a few bits of pi only.
  let ax = abs(x);
  if (ax < 64.0f) {
    let k = round(ax * 0.63661977236758134f);
    let r = ((ax - k * 1.5703125f) - k * 4.8375129699707031e-4f) - k * 7.5497899548918821e-8f;
    let q = u32(k) & 3u;
    return Reduced(select(r, -r, signbit_f(x)), select(q, (4u - q) & 3u, signbit_f(x)));
  }
  let two_over_pi = array<u32, 6>(0x3c439041u, 0xdb629599u, 0xf534ddc0u,
                                  0xfc2757d1u, 0x4e441529u, 0xa2f9836eu);
  let bits = bitcast<u32>(ax);
  let e = bits >> 23u;
  let m = (bits << 8u) | 0x80000000u;
  var p: array<u32, 8>;
  var carry = 0u;
  for (var i = 0u; i < 6u; i = i + 1u) {
    let w = mulwide(m, two_over_pi[i]);
    let lo = w.x + carry;
    carry = w.y + select(0u, 1u, lo < w.x);
    p[i] = lo;
  }
  p[6] = carry; p[7] = 0u;
  let unit = 350u - e;             // bit of p worth 2^0 in x * 2/pi
  var hi = bits_at(p, unit - 30u); // 2 integer bits, 30 fraction bits
  var lo = bits_at(p, unit - 62u);
  var q = hi >> 30u;
  hi = (hi << 2u) | (lo >> 30u); lo = lo << 2u;
  var neg = false;
  if (hi >= 0x80000000u) {         // fraction >= 1/2: round the quadrant up, negate the fraction
    q = q + 1u; neg = true;
    hi = ~hi; lo = ~lo + 1u;
    if (lo == 0u) { hi = hi + 1u; }
  }
  let f = f32(hi) * 2.3283064365386963e-10f + f32(lo) * 5.421010862427522e-20f;
  var r = f * 1.5707963267948966f;
  if (neg) { r = -r; }
  q = q & 3u;
  if (signbit_f(x)) { r = -r; q = (4u - q) & 3u; }
  return Reduced(r, q);
}
fn sin_f(x: f32) -> f32 {
  if (isinf_f(x) || isnan_f(x)) { return nan_f(); }
  if (x == 0.0f) { return x; }
  let t = reduce_pio2(x);
  let s = select(sin(t.r), cos(t.r), (t.q & 1u) == 1u);
  return select(s, -s, t.q >= 2u);
}
fn cos_f(x: f32) -> f32 {
  if (isinf_f(x) || isnan_f(x)) { return nan_f(); }
  let t = reduce_pio2(x);
  let c = select(cos(t.r), sin(t.r), (t.q & 1u) == 1u);
  return select(c, -c, t.q == 1u || t.q == 2u);
}
fn tan_f(x: f32) -> f32 {
  if (isinf_f(x) || isnan_f(x)) { return nan_f(); }
  if (x == 0.0f) { return x; }
  let t = reduce_pio2(x);
  let v = sin(t.r) / cos(t.r);
  return select(v, -1.0f / v, (t.q & 1u) == 1u);
}
fn atan_f(v: f32) -> f32 {
  // Cephes atanf: a few ulp, where GPU atan() may be off by thousands (Vulkan allows 4096 ulp).
  var x = abs(v); var y0 = 0.0f;
  if (x > 2.414213562373095f) { y0 = 1.5707963267948966f; x = -1.0f / x; }
  else if (x > 0.4142135623730950f) { y0 = 0.7853981633974483f; x = (x - 1.0f) / (x + 1.0f); }
  let z = x * x;
  let p = ((8.05374449538e-2f * z - 1.38776856032e-1f) * z + 1.99777106478e-1f) * z - 3.33329491539e-1f;
  let y = p * z * x + x;
  return copysign_f(y0 + y, v);
}
fn atan2_f(y: f32, x: f32) -> f32 {
  let pi = 3.141592653589793f;
  if (isnan_f(x) || isnan_f(y)) { return nan_f(); }
  if (y == 0.0f) { return select(copysign_f(pi, y), y, x > 0.0f || (x == 0.0f && !signbit_f(x))); }
  if (isinf_f(x)) {
    if (isinf_f(y)) { return copysign_f(select(0.75f * pi, 0.25f * pi, x > 0.0f), y); }
    return copysign_f(select(pi, 0.0f, x > 0.0f), y);
  }
  if (x == 0.0f || isinf_f(y)) { return copysign_f(0.5f * pi, y); }
  var r = atan_f(abs(y) / abs(x));
  if (x < 0.0f) { r = pi - r; }
  return copysign_f(r, y);
}
// |x| >= 2^23 is already integral; lavapipe's floor/ceil/trunc/round go through a 32-bit
// integer and break above 2^31, so those values pass through unchanged.
fn integral_f(x: f32) -> bool { return isnan_f(x) || abs(x) >= 8388608.0f; }
fn floor_f(x: f32) -> f32 { return select(floor(x), x, integral_f(x)); }
fn ceil_f(x: f32) -> f32 { return select(ceil(x), x, integral_f(x)); }
fn trunc_f(x: f32) -> f32 { return select(trunc(x), x, integral_f(x)); }
fn round_f(x: f32) -> f32 { return select(round(x), x, integral_f(x)); }
fn fmod_f(a: f32, b: f32) -> f32 {
  // Exact remainder by binary long division: each step subtracts b * 2^k with r/2 < b * 2^k <= r.
  if (isnan_f(a) || isnan_f(b) || isinf_f(a) || b == 0.0f) { return nan_f(); }
  let bx = abs(b);
  var r = abs(a);
  if (isinf_f(b) || r < bx) { return a; }
  for (var i = 0; i < 300 && r >= bx; i = i + 1) {
    let e = frexp(r).exp - frexp(bx).exp;
    var t = ldexp(bx, e);
    if (t > r) { t = ldexp(bx, e - 1); }
    r = r - t;
  }
  return copysign_f(r, a);
}
"""

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
_op("sqrt", 1, "f", _float_unary("select(sqrt(a), nan_f(), a < 0.0f)"))
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
_op("divide", 2, "f", {"f": "return a / b;"})
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
        "i": """
  if (b == {Z}) { return {Z}; }
  let q = a / b;
  return select(q, q - {O}, (a % b != {Z}) && ((a < {Z}) != (b < {Z})));""",
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
        "i": """
  if (b == {Z}) { return {Z}; }
  let r = a % b;
  return select(r, r + b, r != {Z} && ((r < {Z}) != (b < {Z})));""",
        "u": "return select(a % b, {Z}, b == {Z});",
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
  let odd = bint && abs(b) < 16777216.0f && (i32(abs(b)) % 2) == 1;
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
        # float16 is stored as f32: step the 16-bit pattern that pack2x16float gives exactly
        "float16": """
  if (isnan_f(a) || isnan_f(b)) { return nan_f(); }
  if (a == b) { return b; }
  if (a == 0.0f) { return copysign_f(5.9604644775390625e-8f, b); }
  let u = pack2x16float(vec2<f32>(a, 0.0f));
  return unpack2x16float(select(u - 1u, u + 1u, (a < b) == (a > 0.0f))).x;""",
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
_op("bitwise_left_shift", 2, "iu", {"iu": "return select({Z}, a << u32(b), b < {T}({BITS}));"})
_op(
    "bitwise_right_shift",
    2,
    "iu",
    {
        "i": "return select(select({Z}, -{O}, a < {Z}), a >> u32(b), b < {T}({BITS}));",
        "u": "return select({Z}, a >> u32(b), b < {T}({BITS}));",
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
    return (F32_HELPERS if t == "f32" else "") + f"fn f({params}) -> {tr} {{ {_fmt(op.body_for(dt), t)} }}"


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
    if _dtypes.kind_of(x.dtype) == "f" and _dtypes.kind_of(dtype) in "iu":
        body = _float_to_int(dtype)
    else:
        body = convert("x0", x.dtype, dtype)
    out = empty(x.shape, dtype, x.device)
    prelude = F32_HELPERS if _dtypes.kind_of(x.dtype) == "f" else ""
    launch_elementwise(x.device, ("astype", body), body, prelude, out._operand(), [x._operand()], x.shape)
    return out


def _float_to_int(dtype: np.dtype[Any]) -> str:
    """float32 -> integer: truncate; NaN gives 0 (NumPy's result is undefined there)."""
    if dtype.name in ("int64", "uint64"):
        t = wgsl_type(dtype)
        inner = f"{t}(x0)" if t == "i64" else "u64(i64(x0))"
        if t == "u64":
            inner = f"select({inner}, u64(x0), x0 >= 9.2233720368547758e18f)"
        return f"select({inner}, {ZERO[t]}, isnan_f(x0))"
    return convert("select(x0, 0.0f, isnan_f(x0))", _dtypes.float32, dtype)


__all__ = [*NAMES, "apply", "astype", "clip", "where"]
