// float32 helpers, linked into a kernel when it calls them (see _wgsl.link).
// NaN and infinity tests look at bit patterns: Vulkan drivers may compile float comparisons
// with fast-math assumptions (lavapipe folds x != x to false).

fn nan_f() -> f32 { return bitcast<f32>(0x7fc00000u); }
fn inf_f() -> f32 { return bitcast<f32>(0x7f800000u); }
fn isnan_f(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn isinf_f(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }
fn abs_f(x: f32) -> f32 { return abs(x); }
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
// into unsigned types as NumPy's casts do); NaN gives 0 and values beyond the range saturate,
// where WGSL leaves the driver free.
fn f32_to_i32(x: f32) -> i32 {
  if (isnan_f(x)) { return 0i; }
  return i32(clamp(x, -2147483648.0f, 2147483520.0f));
}
fn f32_to_u32(x: f32) -> u32 {
  if (x >= 2147483648.0f) { return u32(min(x, 4294967040.0f)); }
  return bitcast<u32>(f32_to_i32(x));
}
fn f32_to_i64(x: f32) -> i64 {
  if (isnan_f(x)) { return 0li; }
  return i64(clamp(x, -9.2233720368547758e18f, 9.2233714827e18f));
}
fn f32_to_u64(x: f32) -> u64 {
  if (x >= 9.2233720368547758e18f) { return u64(min(x, 1.8446742974e19f)); }
  return bitcast<u64>(f32_to_i64(x));
}
// log and log2 with the standard's special cases; subnormal inputs are scaled into the normal
// range first, as GPU log and log2 mishandle them.
fn log2_f(x: f32) -> f32 {
  if (x < 0.0f) { return nan_f(); }
  if (x > 0.0f && x < 1.17549435e-38f) { return log2(x * 16777216.0f) - 24.0f; }
  return log2(x);
}
fn log_f(x: f32) -> f32 {
  if (x < 0.0f) { return nan_f(); }
  if (x > 0.0f && x < 1.17549435e-38f) { return log(x * 16777216.0f) - 16.635532333438687f; }
  return log(x);
}
fn log10_f(x: f32) -> f32 { return log2_f(x) * 0.30102999566398120f; }
fn sqrt_f(x: f32) -> f32 { return select(sqrt(x), nan_f(), x < 0.0f); }
fn exp_f(x: f32) -> f32 { return exp(x); }
fn expm1_f(x: f32) -> f32 {
  if (isnan_f(x)) { return x; }
  if (x > 88.8f) { return inf_f(); }
  let u = exp(x);
  if (u == 1.0f) { return x; }
  if (u - 1.0f == -1.0f) { return -1.0f; }
  return (u - 1.0f) * x / log(u);
}
fn sinh_f(x: f32) -> f32 {
  if (abs(x) < 0.125f) { let x2 = x * x; return x + x * x2 * (1.0f / 6.0f + x2 / 120.0f); }
  return sinh(x);
}
fn cosh_f(x: f32) -> f32 { return cosh(x); }
fn tanh_f(x: f32) -> f32 { return select(tanh(x), copysign_f(1.0f, x), abs(x) > 20.0f); }
fn asinh_f(a: f32) -> f32 {
  if (isnan_f(a) || isinf_f(a) || a == 0.0f) { return a; }
  let x = abs(a);
  var r: f32;
  if (x > 1e18f) { r = log(x) + 0.69314718055994531f; }
  else { r = log1p_f(x + x * x / (1.0f + sqrt(1.0f + x * x))); }
  return copysign_f(r, a);
}
fn acosh_f(a: f32) -> f32 {
  if (isnan_f(a) || a < 1.0f) { return nan_f(); }
  if (a > 1e18f) { return log(a) + 0.69314718055994531f; }
  let t = a - 1.0f;
  return log1p_f(t + sqrt(2.0f * t + t * t));
}
fn atanh_f(a: f32) -> f32 {
  if (isnan_f(a) || abs(a) > 1.0f) { return nan_f(); }
  if (abs(a) == 1.0f) { return copysign_f(inf_f(), a); }
  if (a == 0.0f) { return a; }
  return 0.5f * log1p_f(2.0f * a / (1.0f - a));
}
fn asin_f(a: f32) -> f32 { return select(atan2_f(a, sqrt((1.0f - a) * (1.0f + a))), nan_f(), abs(a) > 1.0f); }
fn acos_f(a: f32) -> f32 { return select(atan2_f(sqrt((1.0f - a) * (1.0f + a)), a), nan_f(), abs(a) > 1.0f); }
fn hypot_f(a: f32, b: f32) -> f32 {
  if (isinf_f(a) || isinf_f(b)) { return inf_f(); }
  if (isnan_f(a) || isnan_f(b)) { return nan_f(); }
  let m = max(abs(a), abs(b));
  if (m == 0.0f) { return 0.0f; }
  let x = a / m; let y = b / m;
  return m * sqrt(x * x + y * y);
}
fn logaddexp_f(a: f32, b: f32) -> f32 {
  if (isnan_f(a) || isnan_f(b)) { return nan_f(); }
  if (a == b) { return a + 0.69314718055994531f; }
  let m = max(a, b);
  if (isinf_f(m)) { return m; }
  return m + log1p_f(exp(-abs(a - b)));
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
  return exp2(b * log2(a));
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
