// float32 helpers, linked into a kernel when it calls them (see _wgsl.link).
// NaN and infinity tests look at bit patterns: Vulkan drivers may compile float comparisons
// with fast-math assumptions (lavapipe folds x != x to false).

fn nan_f() -> f32 { return bitcast<f32>(0x7fc00000u); }
fn inf_f() -> f32 { return bitcast<f32>(0x7f800000u); }
fn isnan_f(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
// A NaN of a payload no computation makes: a mark for "no value yet" that is moved, never computed with.
fn marker_f() -> f32 { return bitcast<f32>(0x7fd5a5a5u); }
fn is_marker_f(x: f32) -> bool { return bitcast<u32>(x) == 0x7fd5a5a5u; }
fn isinf_f(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }
fn abs_f(x: f32) -> f32 { return abs(x); }
// Subnormals: WGSL lets a driver flush them to zero in arithmetic (NVIDIA's does), so tests on
// them look at the bits, and the functions below build and take them apart with integers.
fn magnitude_bits_f(x: f32) -> u32 { return bitcast<u32>(x) & 0x7fffffffu; }
// |x| < 2^-24: f(x) rounds to x for expm1, log1p and the odd functions of order x
fn tiny_f(x: f32) -> bool { return magnitude_bits_f(x) < 0x33800000u; }
fn subnormal_f(x: f32) -> bool { let b = magnitude_bits_f(x); return b != 0u && b < 0x00800000u; }
// v 2^k for -126 <= k <= 126; exact for a subnormal v when k >= 23 (from its bits, v = bits 2^-149)
fn scale_up_f(v: f32, k: i32) -> f32 {
  if (!subnormal_f(v) || k < 23) { return v * bitcast<f32>(u32(k + 127) << 23u); }
  return copysign_f(f32(magnitude_bits_f(v)) * bitcast<f32>(u32(k - 149 + 127) << 23u), v);
}
// a / b where the driver divides through a reciprocal and flushes subnormals (NVIDIA): a huge
// divisor (>= 2^126) and subnormal operands are first scaled by 2^-64 or 2^64, which leaves the
// quotient alone (an operand pushed out of range means the quotient is out of range too), and
// a subnormal quotient is built from the bits of the quotient times 2^64
fn div_f(a: f32, b: f32) -> f32 {
  let bb = magnitude_bits_f(b);
  let huge = bb >= 0x7e800000u && bb < 0x7f800000u;
  var q: f32;
  if (huge) { q = (a * 5.421010862427522e-20f) / (b * 5.421010862427522e-20f); }
  else if (subnormal_f(a) || subnormal_f(b)) { q = scale_up_f(a, 64) / scale_up_f(b, 64); }
  else { q = a / b; }
  if (magnitude_bits_f(q) < 0x00800000u && magnitude_bits_f(a) != 0u && bb < 0x7f800000u) {
    var big: f32;  // q 2^64
    if (huge) { big = a / (b * 5.421010862427522e-20f); } else { big = scale_up_f(a, 64) / b; }
    return copysign_f(bitcast<f32>(u32(round(abs(big) * 3.8685626227668134e+25f))), big);  // 2^85
  }
  return q;
}
// x / y correctly rounded: a driver's division may be an ulp or two off (Vulkan allows 2.5 ulp;
// NVIDIA's is), which floor_divide's large whole quotients show. The significands are divided
// bit by bit with integers, as arithmetic on floats cannot be trusted for it (lavapipe's fma
// is not fused, and a compiler may fold q + (x - q y) / y). Operands or a quotient outside the
// normal range take the driver's division.
fn div_rounded_f(x: f32, y: f32) -> f32 {
  let ux = magnitude_bits_f(x); let uy = magnitude_bits_f(y);
  if (ux < 0x00800000u || ux >= 0x7f800000u || uy < 0x00800000u || uy >= 0x7f800000u) { return x / y; }
  var n = (ux & 0x007fffffu) | 0x00800000u;
  let d = (uy & 0x007fffffu) | 0x00800000u;
  var e = i32(ux >> 23u) - i32(uy >> 23u);
  if (n < d) { n = n << 1u; e = e - 1; }
  var q = 0u;
  for (var i = 0; i < 24; i = i + 1) {  // n / d in [1, 2): 24 bits of it, the remainder in n
    q = q << 1u;
    if (n >= d) { n = n - d; q = q | 1u; }
    n = n << 1u;
  }
  if (n > d || (n == d && (q & 1u) == 1u)) { q = q + 1u; }  // (twice the remainder against d)
  if (q == 0x01000000u) { q = 0x00800000u; e = e + 1; }
  if (e < -126 || e > 127) { return x / y; }
  let sign = (bitcast<u32>(x) ^ bitcast<u32>(y)) & 0x80000000u;
  return bitcast<f32>(sign | (u32(e + 127) << 23u) | (q & 0x007fffffu));
}
fn signbit_f(x: f32) -> bool { return (bitcast<u32>(x) & 0x80000000u) != 0u; }
fn copysign_f(x: f32, y: f32) -> f32 {
  return bitcast<f32>((bitcast<u32>(x) & 0x7fffffffu) | (bitcast<u32>(y) & 0x80000000u));
}
// Unsigned keys in the order of the values. sort_key_f is invertible (from_sort_key_f): -0 sorts
// before +0 and every NaN becomes the quiet NaN, after +inf. order_key_f makes -0 equal to +0,
// so that a stable argsort keeps them in their order, as NumPy's does.
fn sort_key_f(x: f32) -> u32 {
  let b = select(bitcast<u32>(x), 0x7fc00000u, isnan_f(x));
  return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}
fn from_sort_key_f(k: u32) -> f32 {
  return bitcast<f32>(select(~k, k & 0x7fffffffu, (k & 0x80000000u) != 0u));
}
fn order_key_f(x: f32) -> u32 { return sort_key_f(select(x, 0.0f, x == 0.0f)); }
// Total order used by sorting and searching: NaN is the largest value.
fn less_f(a: f32, b: f32) -> bool { return !isnan_f(a) && (isnan_f(b) || a < b); }
// float32 -> integers with C-cast semantics where defined (truncation, negative values wrap
// into unsigned types as NumPy's casts do); NaN gives 0 and values beyond the range saturate
// at the type's limits, as float64's do, where WGSL leaves the driver free. (The largest
// float32 below a limit converts exactly: the clamps hold the conversion to it.)
fn f32_to_i32(x: f32) -> i32 {
  if (isnan_f(x)) { return 0i; }
  if (x >= 2147483648.0f) { return 2147483647i; }
  return i32(clamp(x, -2147483648.0f, 2147483520.0f));
}
fn f32_to_u32(x: f32) -> u32 {
  if (x >= 4294967296.0f) { return 4294967295u; }
  if (x >= 2147483648.0f) { return u32(min(x, 4294967040.0f)); }
  return bitcast<u32>(f32_to_i32(x));
}
fn f32_to_i64(x: f32) -> i64 {
  if (isnan_f(x)) { return 0li; }
  if (x >= 9.2233720368547758e18f) { return 9223372036854775807li; }
  return i64(clamp(x, -9.2233720368547758e18f, 9.2233714827e18f));
}
fn f32_to_u64(x: f32) -> u64 {
  if (x >= 1.8446744073709552e19f) { return 18446744073709551615lu; }
  if (x >= 9.2233720368547758e18f) { return u64(min(x, 1.8446742974e19f)); }
  return bitcast<u64>(f32_to_i64(x));
}
// -- exp and log -------------------------------------------------------------------------------
// Our own, from f32 arithmetic: Vulkan lets a driver's exp be 3 + 2|x| ulp off (lavapipe's is 64
// ulp off near 88) and its log have an absolute error near 1, which ruins log2, log10, log1p,
// tanh and atanh of small arguments. Argument reduction and polynomials as in fdlibm.

// 2^n * p for n in [-150, 128], in two steps so that neither power of two overflows.
fn scale2_f(p: f32, n: i32) -> f32 {
  if (n < -125 && n >= -150) {  // a subnormal (or zero) result: its bits from an integer
    return bitcast<f32>(u32(round(p * bitcast<f32>(u32(n + 149 + 127) << 23u))));
  }
  let n1 = n / 2; let n2 = n - n1;
  return p * bitcast<f32>(u32(n1 + 127) << 23u) * bitcast<f32>(u32(n2 + 127) << 23u);
}
// exp(r) for |r| <= 0.35: Taylor to r^7 (the next term is below 2^-28 of the result).
fn exp_poly_f(r: f32) -> f32 {
  var p = 1.0f / 5040.0f;
  p = fma(p, r, 1.0f / 720.0f); p = fma(p, r, 1.0f / 120.0f); p = fma(p, r, 1.0f / 24.0f);
  p = fma(p, r, 1.0f / 6.0f); p = fma(p, r, 0.5f);
  return 1.0f + fma(p * r, r, r);
}
fn exp_f(x: f32) -> f32 {
  if (isnan_f(x)) { return x; }
  if (x > 88.72283935546875f) { return inf_f(); }
  if (x < -103.97208f) { return 0.0f; }
  let n = round(x * 1.4426950408889634f);
  // n * ln2 in two parts; the first has 12 trailing zero bits, so n * it and x minus that are
  // exact. Plain products, not fma: Mesa's OpenGL compiler got r wrong in the 12th bit from
  // fma(-n, c2, fma(-n, c1, x)) (57 ulp in exp(79.66)); a driver may still contract these.
  let r = (x - n * 0.693115234375f) - n * 3.194618329871446e-05f;
  return scale2_f(exp_poly_f(r), i32(n));
}
// log(1 + f) = hi + lo for f in [sqrt(1/2) - 1, sqrt(2) - 1], lo carrying about 8 bits beyond float.
fn log1p_kernel_f(f: f32) -> vec2<f32> {
  let s = f / (2.0f + f);
  let z = s * s; let w = z * z;
  let r = z * (0.66666662693f + w * 0.28498786688f) + w * (0.40000972152f + w * 0.24279078841f);
  // log(1 + f) = f - f^2/2 + s (f^2/2 + r); the leading difference is kept with its rounding error
  let hfsq = 0.5f * f * f;
  let hfsq_err = fma(0.5f * f, f, -hfsq);
  let hi = f - hfsq;
  return vec2<f32>(hi, ((f - hi) - hfsq) - hfsq_err + s * (hfsq + r));
}
// log(x) = k ln2 + hi + lo for finite x > 0.
struct LogParts_f { k: f32, hi: f32, lo: f32 }
fn log_parts_f(x: f32) -> LogParts_f {
  var ix = bitcast<u32>(x);
  var k = 0i;
  if (ix < 0x00800000u) {  // subnormal: normalised with integer shifts
    let shift = countLeadingZeros(ix) - 8u;
    ix = ((ix << shift) & 0x007fffffu) | 0x00800000u;
    k = -i32(shift);
  }
  k += i32(ix >> 23u) - 127i;
  var m = bitcast<f32>((ix & 0x007fffffu) | 0x3f800000u);
  if (m > 1.41421356f) { m = m * 0.5f; k += 1i; }
  let p = log1p_kernel_f(m - 1.0f);  // m - 1 is exact
  return LogParts_f(f32(k), p.x, p.y);
}
// The standard's special cases of every log: nan below 0, -inf at 0, inf at inf.
fn log_special_f(x: f32) -> bool {
  return isnan_f(x) || signbit_f(x) || magnitude_bits_f(x) == 0u || isinf_f(x);
}
fn log_special_value_f(x: f32) -> f32 {
  if (magnitude_bits_f(x) == 0u) { return -inf_f(); }
  return select(x, nan_f(), signbit_f(x) && !isnan_f(x));
}
fn log_f(x: f32) -> f32 {
  if (log_special_f(x)) { return log_special_value_f(x); }
  let p = log_parts_f(x);
  return fma(p.k, 0.693115234375f, p.hi) + fma(p.k, 3.194618329871446e-05f, p.lo);
}
fn log2_f(x: f32) -> f32 {
  if (log_special_f(x)) { return log_special_value_f(x); }
  let p = log_parts_f(x);
  return p.k + (p.hi + p.lo) * 1.4426950408889634f;
}
fn log10_f(x: f32) -> f32 {
  if (log_special_f(x)) { return log_special_value_f(x); }
  let p = log_parts_f(x);
  return fma(p.k, 0.301025390625f, fma(p.k, 4.605039066518657e-06f, (p.hi + p.lo) * 0.4342944819032518f));
}
fn log1p_f(x: f32) -> f32 {
  if (isnan_f(x) || isinf_f(x)) { return select(x, nan_f(), signbit_f(x)); }
  if (tiny_f(x)) { return x; }
  if (x < -1.0f) { return nan_f(); }
  if (x == -1.0f) { return -inf_f(); }
  // near 0 the kernel takes x itself (1 + x would round); further out log(1 + x) loses nothing
  if (x > -0.29289321f && x < 0.41421356f) { let p = log1p_kernel_f(x); return p.x + p.y; }
  return log_f(1.0f + x);
}
fn sqrt_f(x: f32) -> f32 {
  let bits = magnitude_bits_f(x);
  if (bits != 0u && bits < 0x00800000u) {  // subnormal: x = 2 bits 2^-150, so sqrt(2 bits) 2^-75
    return select(sqrt(2.0f * f32(bits)) * bitcast<f32>(52u << 23u), nan_f(), signbit_f(x));
  }
  return select(sqrt(x), nan_f(), x < 0.0f);
}
fn expm1_f(x: f32) -> f32 {
  if (isnan_f(x) || tiny_f(x)) { return x; }
  if (abs(x) < 0.5f) {  // Taylor to x^11: float-exact, where exp(x) - 1 would cancel
    var p = 1.0f / 39916800.0f;
    p = fma(p, x, 1.0f / 3628800.0f); p = fma(p, x, 1.0f / 362880.0f); p = fma(p, x, 1.0f / 40320.0f);
    p = fma(p, x, 1.0f / 5040.0f); p = fma(p, x, 1.0f / 720.0f); p = fma(p, x, 1.0f / 120.0f);
    p = fma(p, x, 1.0f / 24.0f); p = fma(p, x, 1.0f / 6.0f); p = fma(p, x, 0.5f);
    return fma(p * x, x, x);
  }
  if (x < -18.0f) { return -1.0f; }
  let u = exp_f(x);
  if (x > 20.0f) { return u; }  // exp(x) - 1 rounds to exp(x)
  return (u - 1.0f) * (x / log_f(u));  // Kahan's: the rounding of u cancels
}
fn sinh_f(x: f32) -> f32 {
  if (tiny_f(x)) { return x; }
  let a = abs(x);
  if (a < 0.125f) { let x2 = x * x; return x + x * x2 * (1.0f / 6.0f + x2 * (1.0f / 120.0f)); }
  if (a > 20.0f) { let h = exp_f(0.5f * a); return copysign_f((0.5f * h) * h, x); }
  let e = expm1_f(a);
  return copysign_f(0.5f * (e + e / (e + 1.0f)), x);
}
fn cosh_f(x: f32) -> f32 {
  let a = abs(x);
  if (a > 20.0f) { let h = exp_f(0.5f * a); return (0.5f * h) * h; }
  let e = exp_f(a);
  return 0.5f * (e + 1.0f / e);
}
fn tanh_f(x: f32) -> f32 {
  let a = abs(x);
  if (isnan_f(x) || a < 1e-6f) { return x; }
  if (a > 9.1f) { return copysign_f(1.0f, x); }
  let e = expm1_f(2.0f * a);
  return copysign_f(e / (e + 2.0f), x);
}
fn asinh_f(a: f32) -> f32 {
  if (isnan_f(a) || isinf_f(a) || tiny_f(a)) { return a; }
  let x = abs(a);
  var r: f32;
  if (x > 1e18f) { r = log_f(x) + 0.69314718055994531f; }
  else { r = log1p_f(x + x * x / (1.0f + sqrt(1.0f + x * x))); }
  return copysign_f(r, a);
}
fn acosh_f(a: f32) -> f32 {
  if (isnan_f(a) || a < 1.0f) { return nan_f(); }
  if (a > 1e18f) { return log_f(a) + 0.69314718055994531f; }
  let t = a - 1.0f;
  return log1p_f(t + sqrt(2.0f * t + t * t));
}
fn atanh_f(a: f32) -> f32 {
  if (isnan_f(a) || abs(a) > 1.0f) { return nan_f(); }
  if (abs(a) == 1.0f) { return copysign_f(inf_f(), a); }
  if (tiny_f(a)) { return a; }
  let x = abs(a);
  let t = select(2.0f * x / (1.0f - x), 2.0f * x + 2.0f * x * x / (1.0f - x), x < 0.5f);
  return copysign_f(0.5f * log1p_f(t), a);
}
fn asin_f(a: f32) -> f32 {
  if (tiny_f(a)) { return a; }
  return select(atan2_f(a, sqrt((1.0f - a) * (1.0f + a))), nan_f(), abs(a) > 1.0f);
}
fn acos_f(a: f32) -> f32 { return select(atan2_f(sqrt((1.0f - a) * (1.0f + a)), a), nan_f(), abs(a) > 1.0f); }
fn hypot_f(a: f32, b: f32) -> f32 {
  if (isinf_f(a) || isinf_f(b)) { return inf_f(); }
  if (isnan_f(a) || isnan_f(b)) { return nan_f(); }
  let mb = max(magnitude_bits_f(a), magnitude_bits_f(b));
  if (mb == 0u) { return 0.0f; }
  if (mb < 0x00800000u) {  // both subnormal: on their bits, the result's bits come out
    let x = f32(magnitude_bits_f(a)); let y = f32(magnitude_bits_f(b));
    return bitcast<f32>(u32(round(sqrt(x * x + y * y))));
  }
  // Scaled by a power of two near 1 / max, not divided by it: NVIDIA divides by way of a
  // reciprocal, which is flushed to 0 for divisors >= 2^126.
  let e = clamp(i32(mb >> 23u) - 127, -126, 126);
  let x = scale_up_f(a, -e); let y = scale_up_f(b, -e);
  return sqrt(x * x + y * y) * bitcast<f32>(u32(127 + e) << 23u);
}
fn logaddexp_f(a: f32, b: f32) -> f32 {
  if (isnan_f(a) || isnan_f(b)) { return nan_f(); }
  if (a == b) { return a + 0.69314718055994531f; }
  let m = max(a, b);
  if (isinf_f(m)) { return m; }
  return m + log1p_f(exp_f(-abs(a - b)));
}
fn nextafter_f(a: f32, b: f32) -> f32 {
  if (isnan_f(a) || isnan_f(b)) { return nan_f(); }
  if (a == b) { return b; }
  if (a == 0.0f) { return bitcast<f32>(1u | (bitcast<u32>(b) & 0x80000000u)); }
  let u = bitcast<u32>(a);
  return bitcast<f32>(select(u - 1u, u + 1u, (a < b) == (a > 0.0f)));
}
fn pow_f(a: f32, b: f32) -> f32 {
  if (b == 0.0f) { return 1.0f; }
  if (a == 1.0f) { return 1.0f; }
  if (isnan_f(a) || isnan_f(b)) { return nan_f(); }
  if (isinf_f(b)) {
    if (abs(a) == 1.0f) { return 1.0f; }
    return select(0.0f, inf_f(), (abs(a) > 1.0f) == (b > 0.0f));
  }
  // exact, as fdlibm's: its 2^(b log2(a)) overflows within an ulp of the largest float
  // (3.4028235e38 ** 1, 1.8446743e19 ** 2)
  if (b == 1.0f) { return a; }
  if (b == 2.0f) { return a * a; }
  let bint = trunc(b) == b;
  let odd = bint && abs(b) < 16777216.0f && (u32(abs(b)) & 1u) == 1u;
  let zero = magnitude_bits_f(a) == 0u;
  if (zero || isinf_f(a)) {
    let big = zero == (b < 0.0f);
    let mag = select(0.0f, inf_f(), big);
    return select(mag, copysign_f(mag, a), odd);
  }
  if (signbit_f(a)) {
    if (!bint) { return nan_f(); }
    let r = pow_pos_f(bitcast<f32>(magnitude_bits_f(a)), b);
    return select(r, -r, odd);
  }
  return pow_pos_f(a, b);
}
// x with the low 12 fraction bits cleared: a split that no compiler can fold away (Vulkan drivers
// reassociate float arithmetic, which cancels compensated sums and fma error terms).
fn split_f(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) & 0xfffff000u); }
// a^b for finite a > 0, a != 1 and finite b != 0: fdlibm's powf (Sun Microsystems, freely
// distributable). log2(a) is computed as t1 + t2 and b as y1 + y2 with bit-mask splits, so that
// b log2(a) keeps ~8 bits beyond float; 2^(that) is then within 1 ulp.
fn pow_pos_f(a: f32, y: f32) -> f32 {
  var ix = bitcast<u32>(a);
  let iy = bitcast<u32>(y) & 0x7fffffffu;
  var t1: f32; var t2: f32;
  if (iy > 0x4d000000u) {  // |y| > 2^27: over/underflow unless a is within 2^-20 of 1
    if (ix < 0x3f7ffff6u) { return select(0.0f, inf_f(), y < 0.0f); }
    if (ix > 0x3f800007u) { return select(inf_f(), 0.0f, y < 0.0f); }
    let t = a - 1.0f;
    let w = (t * t) * (0.5f - t * (0.333333343f - t * 0.25f));
    let u = 1.4426879883f * t;
    let v = t * 7.0526075433e-06f - w * 1.4426950216f;
    t1 = split_f(u + v);
    t2 = v - (t1 - u);
  } else {
    var n = 0i;
    if (ix < 0x00800000u) {  // subnormal: normalised with integer shifts
      let shift = countLeadingZeros(ix) - 8u;
      ix = ((ix << shift) & 0x007fffffu) | 0x00800000u;
      n = -i32(shift);
    }
    n += i32(ix >> 23u) - 127i;
    let j = ix & 0x007fffffu;
    var k = 0u;
    ix = j | 0x3f800000u;
    if (j <= 0x1cc471u) { k = 0u; } else if (j < 0x5db3d7u) { k = 1u; } else { n += 1i; ix -= 0x00800000u; }
    let ax = bitcast<f32>(ix);
    let bp = select(1.0f, 1.5f, k == 1u);
    let dp_h = select(0.0f, 5.84960938e-01f, k == 1u);
    let dp_l = select(0.0f, 1.56322085e-06f, k == 1u);
    // s = s_h + s_l = (ax - bp) / (ax + bp)
    let u0 = ax - bp;
    let v0 = 1.0f / (ax + bp);
    let s = u0 * v0;
    let s_h = split_f(s);
    var t_h = bitcast<f32>((((ix >> 1u) & 0xfffff000u) | 0x20000000u) + 0x00400000u + (k << 21u));
    var t_l = ax - (t_h - bp);
    let s_l = v0 * ((u0 - s_h * t_h) - s_h * t_l);
    var s2 = s * s;
    var r = s2 * s2 * (6.0000002384e-01f + s2 * (4.2857143283e-01f + s2 * (3.3333334327e-01f
          + s2 * (2.7272811532e-01f + s2 * (2.3066075146e-01f + s2 * 2.0697501302e-01f)))));
    r += s_l * (s_h + s);
    s2 = s_h * s_h;
    t_h = split_f(3.0f + s2 + r);
    t_l = r - ((t_h - 3.0f) - s2);
    let u = s_h * t_h;
    let v = s_l * t_h + t_l * s;
    let p_h = split_f(u + v);
    let p_l = v - (p_h - u);
    let z_h = 9.6191406250e-01f * p_h;
    let z_l = -1.1736857402e-04f * p_h + p_l * 9.6179670095e-01f + dp_l;
    let t = f32(n);
    t1 = split_f(((z_h + z_l) + dp_h) + t);
    t2 = z_l - (((t1 - t) - dp_h) - z_h);
  }
  // y log2(a) = p_h + p_l
  let y1 = split_f(y);
  var p_l = (y - y1) * t1 + y * t2;
  var p_h = y1 * t1;
  let z = p_l + p_h;
  if (z > 128.0f || (z == 128.0f && p_l + 4.2995665694e-08f > z - p_h)) { return inf_f(); }
  if (z < -150.0f || (z == -150.0f && p_l <= z - p_h)) { return 0.0f; }
  // 2^(p_h + p_l) = 2^n 2^(t), |t| <= 1/2
  let n = round(z);
  p_h -= n;
  let t = bitcast<f32>(bitcast<u32>(p_l + p_h) & 0xffff8000u);
  let u = t * 6.93145752e-01f;
  let v = (p_l - (t - p_h)) * 6.9314718246e-01f + t * 1.42860654e-06f;
  let zz = u + v;
  let w = v - (zz - u);
  let tt = zz * zz;
  let q = zz - tt * (1.6666667163e-01f + tt * (-2.7777778450e-03f + tt * (6.6137559770e-05f
        + tt * (-1.6533901999e-06f + tt * 4.1381369442e-08f))));
  let rr = (zz * q) / (q - 2.0f) - (w + zz * w);
  return scale2_f(1.0f - (rr - zz), i32(n));
}
fn mulwide(a: u32, b: u32) -> vec2<u32> {
  // 32 x 32 -> 64-bit product (lo, hi) from 16-bit halves: WGSL has no portable 64-bit integers.
  let a0 = a & 0xffffu; let a1 = a >> 16u; let b0 = b & 0xffffu; let b1 = b >> 16u;
  let p00 = a0 * b0; let p01 = a0 * b1; let p10 = a1 * b0;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2<u32>((p00 & 0xffffu) | (mid << 16u), a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}
// Word w of the 256-bit number whose words are lo (0-3) and hi (4-7), by selects: a GPU keeps
// them in registers, where an array indexed at run time goes to slow memory (on lavapipe its
// mere presence in a kernel made the common path 2.5 times slower).
fn word_of(lo: vec4<u32>, hi: vec4<u32>, w: u32) -> u32 {
  let v = select(lo, hi, w >= 4u); let k = w & 3u;
  return select(select(v.x, v.y, k == 1u), select(v.z, v.w, k == 3u), k >= 2u);
}
fn bits_at(lo: vec4<u32>, hi: vec4<u32>, off: u32) -> u32 {
  let w = off >> 5u; let s = off & 31u;
  let a = word_of(lo, hi, w);
  return select((a >> s) | (word_of(lo, hi, w + 1u) << (32u - s)), a, s == 0u);
}
// (low word, carry) of m * t + carry
fn mul_add_wide(m: u32, t: u32, carry: u32) -> vec2<u32> {
  let w = mulwide(m, t);
  let lo = w.x + carry;
  return vec2<u32>(lo, w.y + select(0u, 1u, lo < w.x));
}
struct Reduced { r: f32, q: u32 }
fn reduce_pio2(x: f32) -> Reduced {
  // x = r + q * pi/2 with |r| <= pi/4. Large |x|: Payne-Hanek with 192 bits of 2/pi, so
  // sin(1e30) is right; GPU sin/cos reduce large arguments with a few bits of pi only.
  let ax = abs(x);
  if (ax < 64.0f) {
    let k = round(ax * 0.63661977236758134f);
    // pi/2 in five parts, all but the last short enough that k times them is exact (k < 2^6)
    var r = (ax - k * 1.5703125f) - k * 4.837512969970703e-4f;
    r = ((r - k * 7.549533620476723e-8f) - k * 2.5632829192545614e-12f) - k * 6.123234262925839e-17f;
    let q = u32(k) & 3u;
    return Reduced(select(r, -r, signbit_f(x)), select(q, (4u - q) & 3u, signbit_f(x)));
  }
  let bits = bitcast<u32>(ax);
  let e = bits >> 23u;
  let m = (bits << 8u) | 0x80000000u;
  // p = m * (192 bits of 2/pi, least significant word first), as 8 words in two vectors
  let p0 = mul_add_wide(m, 0x3c439041u, 0u); let p1 = mul_add_wide(m, 0xdb629599u, p0.y);
  let p2 = mul_add_wide(m, 0xf534ddc0u, p1.y); let p3 = mul_add_wide(m, 0xfc2757d1u, p2.y);
  let p4 = mul_add_wide(m, 0x4e441529u, p3.y); let p5 = mul_add_wide(m, 0xa2f9836eu, p4.y);
  let plo = vec4<u32>(p0.x, p1.x, p2.x, p3.x);
  let phi = vec4<u32>(p4.x, p5.x, p5.y, 0u);
  let unit = 350u - e;                       // bit of p worth 2^0 in x * 2/pi
  var hi = bits_at(plo, phi, unit - 30u);    // 2 integer bits, 30 fraction bits
  var lo = bits_at(plo, phi, unit - 62u);
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
// sin and cos of a reduced argument |r| <= pi/4 by their Taylor series (the first terms left
// out are below 2^-27 of the result): the drivers' sin and cos have an absolute error bound
// (NVIDIA's ~2^-21), which is millions of ulp for results near zero.
fn sin_kernel_f(r: f32) -> f32 {
  let z = r * r;
  let p = -1.0f / 6.0f + z * (1.0f / 120.0f + z * (-1.0f / 5040.0f + z * (1.0f / 362880.0f)));
  return fma(r * z, p, r);
}
fn cos_kernel_f(r: f32) -> f32 {
  let z = r * r;
  let p = 1.0f / 24.0f + z * (-1.0f / 720.0f + z * (1.0f / 40320.0f + z * (-1.0f / 3628800.0f)));
  return fma(z * z, p, fma(-0.5f, z, 1.0f));
}
fn sin_f(x: f32) -> f32 {
  if (isinf_f(x) || isnan_f(x)) { return nan_f(); }
  if (x == 0.0f) { return x; }
  let t = reduce_pio2(x);
  let s = select(sin_kernel_f(t.r), cos_kernel_f(t.r), (t.q & 1u) == 1u);
  return select(s, -s, t.q >= 2u);
}
fn cos_f(x: f32) -> f32 {
  if (isinf_f(x) || isnan_f(x)) { return nan_f(); }
  let t = reduce_pio2(x);
  let c = select(cos_kernel_f(t.r), sin_kernel_f(t.r), (t.q & 1u) == 1u);
  return select(c, -c, t.q == 1u || t.q == 2u);
}
// (cos x, sin x) from one argument reduction
fn cis_f(x: f32) -> vec2<f32> {
  if (isinf_f(x) || isnan_f(x)) { return vec2<f32>(nan_f(), nan_f()); }
  if (x == 0.0f) { return vec2<f32>(1.0f, x); }
  let t = reduce_pio2(x);
  let c = cos_kernel_f(t.r); let s = sin_kernel_f(t.r);
  switch (t.q) {
    case 0u: { return vec2<f32>(c, s); }
    case 1u: { return vec2<f32>(-s, c); }
    case 2u: { return vec2<f32>(-c, -s); }
    default: { return vec2<f32>(s, -c); }
  }
}
fn tan_f(x: f32) -> f32 {
  if (isinf_f(x) || isnan_f(x)) { return nan_f(); }
  if (tiny_f(x)) { return x; }
  let t = reduce_pio2(x);
  let v = sin_kernel_f(t.r) / cos_kernel_f(t.r);
  return select(v, -1.0f / v, (t.q & 1u) == 1u);
}
fn atan_f(v: f32) -> f32 {
  if (tiny_f(v)) { return v; }
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
  // zeros and signs by their bits: a driver may flush a subnormal x or y to zero in comparisons
  if (magnitude_bits_f(y) == 0u) { return select(copysign_f(pi, y), y, !signbit_f(x)); }
  if (isinf_f(x)) {
    if (isinf_f(y)) { return copysign_f(select(0.75f * pi, 0.25f * pi, !signbit_f(x)), y); }
    return copysign_f(select(pi, 0.0f, !signbit_f(x)), y);
  }
  if (magnitude_bits_f(x) == 0u || isinf_f(y)) { return copysign_f(0.5f * pi, y); }
  var r = atan_f(div_f(bitcast<f32>(magnitude_bits_f(y)), bitcast<f32>(magnitude_bits_f(x))));
  if (signbit_f(x)) { r = pi - r; }
  return copysign_f(r, y);
}
// |x| >= 2^23 is already integral; lavapipe's floor/ceil/trunc/round go through a 32-bit
// integer and break above 2^31, so those values pass through unchanged.
fn integral_f(x: f32) -> bool { return isnan_f(x) || abs(x) >= 8388608.0f; }
fn floor_f(x: f32) -> f32 { return select(floor(x), x, integral_f(x)); }
fn ceil_f(x: f32) -> f32 { return select(ceil(x), x, integral_f(x)); }
fn trunc_f(x: f32) -> f32 { return select(trunc(x), x, integral_f(x)); }
fn round_f(x: f32) -> f32 { return select(round(x), x, integral_f(x)); }
// r mod bx for a normal bx > 0, exactly, by binary long division: each step subtracts bx 2^k
// with r/2 < bx 2^k <= r
fn fmod_normal_f(x: f32, bx: f32) -> f32 {
  var r = x;
  for (var i = 0; i < 300 && r >= bx; i = i + 1) {
    let e = frexp(r).exp - frexp(bx).exp;
    var t = ldexp(bx, e);
    if (t > r) { t = ldexp(bx, e - 1); }
    r = r - t;
  }
  return r;
}
// A divisor below 2^-100, subnormal or not, is small: the long division's steps, and remainder's
// sum with the divisor, may then fall below 2^-126, which a driver may flush to zero (NVIDIA's
// does; lavapipe's frexp of a subnormal is wrong besides). For a small divisor the remainder
// functions work with values times 2^64: every step's value is then a whole number of 2^-85, and
// so normal. fmod_scaled_f, scaled_for_f and unscaled_for_f pass such values; for any other
// divisor they are the values themselves.
fn small_divisor_f(b: f32) -> bool { return magnitude_bits_f(b) < 0x0d800000u; }
// v times the scale that divisor b takes (v may be subnormal; a huge v may overflow to inf)
fn scaled_for_f(v: f32, b: f32) -> f32 { return select(v, scale_up_f(v, 64), small_divisor_f(b)); }
// v, a scaled value for divisor b, scaled back (a subnormal result is built from its bits)
fn unscaled_for_f(v: f32, b: f32) -> f32 {
  if (!small_divisor_f(b)) { return v; }
  if (abs(v) >= 2.168404344971009e-19f) { return v * 5.421010862427522e-20f; }  // (2^-62, 2^-64)
  return copysign_f(bitcast<f32>(u32(round(abs(v) * 3.8685626227668134e+25f))), v);  // (2^85)
}
// The remainder of a / b with a's sign (C's fmod), scaled for b. A small b is taken as
// c = |b| 2^64 (a multiple of b): |a| mod c, then that times 2^64 mod c, which is |a| mod |b|
// times 2^64.
fn fmod_scaled_f(a: f32, b: f32) -> f32 {
  if (isnan_f(a) || isnan_f(b) || isinf_f(a) || magnitude_bits_f(b) == 0u) { return nan_f(); }
  let bx = abs(b);
  let r = abs(a);
  if (isinf_f(b) || magnitude_bits_f(r) < magnitude_bits_f(bx)) { return scaled_for_f(a, b); }
  if (!small_divisor_f(b)) { return copysign_f(fmod_normal_f(r, bx), a); }
  let c = scale_up_f(bx, 64);
  return copysign_f(fmod_normal_f(scale_up_f(fmod_normal_f(r, c), 64), c), a);
}
