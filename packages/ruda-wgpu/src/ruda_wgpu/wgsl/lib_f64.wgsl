// float64 helpers, linked on use. Drivers offer f64 arithmetic but their f64 built-ins cannot be
// trusted (the H200's exp is accurate to float precision only and its log loses the device;
// lavapipe's return garbage), so every function here uses f64 + - * / and bit operations only,
// following the algorithms and coefficients of fdlibm (Sun Microsystems, freely distributable):
// argument reduction, then a minimax polynomial. Accuracy is checked against NumPy by sweeps in
// the tests (a few ulp at most). Words: hi_d/lo_d are the high and low 32 bits of the pattern.

fn hi_d(x: f64) -> u32 { return u32(bitcast<u64>(x) >> 32u); }
fn lo_d(x: f64) -> u32 { return u32(bitcast<u64>(x) & 0xfffffffflu); }
fn words_d(h: u32, l: u32) -> f64 { return bitcast<f64>((u64(h) << 32u) | u64(l)); }
fn with_hi_d(x: f64, h: u32) -> f64 { return words_d(h, lo_d(x)); }
fn with_lo_d(x: f64, l: u32) -> f64 { return words_d(hi_d(x), l); }
fn nan_d() -> f64 { return bitcast<f64>(0x7ff8000000000000lu); }
fn inf_d() -> f64 { return bitcast<f64>(0x7ff0000000000000lu); }
fn isnan_d(x: f64) -> bool { return (bitcast<u64>(x) & 0x7ffffffffffffffflu) > 0x7ff0000000000000lu; }
// A NaN of a payload no computation makes: a mark for "no value yet" that is moved, never computed with.
fn marker_d() -> f64 { return bitcast<f64>(0x7ffa5a5a5a5a5a5alu); }
fn is_marker_d(x: f64) -> bool { return bitcast<u64>(x) == 0x7ffa5a5a5a5a5a5alu; }
fn isinf_d(x: f64) -> bool { return (bitcast<u64>(x) & 0x7ffffffffffffffflu) == 0x7ff0000000000000lu; }
fn signbit_d(x: f64) -> bool { return (bitcast<u64>(x) >> 63u) != 0lu; }
fn abs_d(x: f64) -> f64 { return bitcast<f64>(bitcast<u64>(x) & 0x7ffffffffffffffflu); }
fn copysign_d(x: f64, y: f64) -> f64 {
  return bitcast<f64>((bitcast<u64>(x) & 0x7ffffffffffffffflu) | (bitcast<u64>(y) & 0x8000000000000000lu));
}
// 2^k for -1022 <= k <= 1023, exactly.
fn pow2_d(k: i32) -> f64 { return bitcast<f64>(u64(u32(k + 1023)) << 52u); }
// x * 2^n, rounded once even when the result is subnormal (as fdlibm's scalbn).
fn scalbn_d(x: f64, n: i32) -> f64 {
  var y = x;
  var k = n;
  if (k > 1023) { y = y * pow2_d(1023); k = k - 1023; if (k > 1023) { y = y * pow2_d(1023); k = min(k - 1023, 1023); } }
  else if (k < -1022) { y = y * pow2_d(-969); k = k + 969; if (k < -1022) { y = y * pow2_d(-969); k = max(k + 969, -1022); } }
  return y * pow2_d(k);
}
fn clz64_d(v: u64) -> u32 {
  let h = u32(v >> 32u);
  if (h != 0u) { return countLeadingZeros(h); }
  return 32u + countLeadingZeros(u32(v & 0xfffffffflu));
}
fn less_d(a: f64, b: f64) -> bool { return !isnan_d(a) && (isnan_d(b) || a < b); }

// -- rounding and conversions --------------------------------------------------------------------
// |x| >= 2^52 is integral; otherwise the fraction bits are cleared from the pattern.
fn trunc_d(x: f64) -> f64 {
  let b = bitcast<u64>(x);
  let e = i32((b >> 52u) & 0x7fflu) - 1023;
  if (e >= 52) { return x; }
  if (e < 0) { return bitcast<f64>(b & 0x8000000000000000lu); }
  return bitcast<f64>(b & ~((1lu << u32(52 - e)) - 1lu));
}
fn floor_d(x: f64) -> f64 {
  let t = trunc_d(x);
  return select(t, t - 1.0lf, t > x);
}
fn ceil_d(x: f64) -> f64 {
  let t = trunc_d(x);
  return select(t, t + 1.0lf, t < x);
}
// Round half to even, as NumPy's round.
fn round_d(x: f64) -> f64 {
  if (isnan_d(x) || abs_d(x) >= 4503599627370496.0lf) { return x; }
  let t = trunc_d(x);
  let r = abs_d(x - t);
  var y = t;
  if (r > 0.5lf || (r == 0.5lf && floor_d(t * 0.5lf) * 2.0lf != t)) { y = t + copysign_d(1.0lf, x); }
  return copysign_d(y, x);
}
// x rounded to the nearest float32, ties to even, overflowing to inf (the driver's own f64 -> f32
// conversion rounds as it likes).
fn to_f32_d(x: f64) -> f32 {
  let b = bitcast<u64>(x);
  let s = u32(b >> 32u) & 0x80000000u;
  let a = b & 0x7ffffffffffffffflu;
  if (a > 0x7ff0000000000000lu) { return bitcast<f32>(s | 0x7fc00000u); }
  let e = i32(a >> 52u) - 1023;
  if (e > 127) { return bitcast<f32>(s | 0x7f800000u); }
  if (e >= -126) {
    let m = a & 0xffffffffffffflu;
    var r = (u64(u32(e + 127)) << 23u) | (m >> 29u);      // exponent and 23 fraction bits
    let rest = m & 0x1ffffffflu;
    if (rest > 0x10000000lu || (rest == 0x10000000lu && (r & 1lu) == 1lu)) { r = r + 1lu; }
    return bitcast<f32>(s | u32(min(r, 0x7f800000lu)));
  }
  if (e < -150) { return bitcast<f32>(s); }
  let m = (a & 0xffffffffffffflu) | 0x10000000000000lu;      // subnormal float32: units of 2^-149
  let sh = u32(-e - 126 + 29);
  var q = m >> sh;
  let rem = m & ((1lu << sh) - 1lu);
  let half = 1lu << (sh - 1u);
  if (rem > half || (rem == half && (q & 1lu) == 1lu)) { q = q + 1lu; }
  return bitcast<f32>(s | u32(q));
}
fn c128_to_c64(z: vec2<f64>) -> vec2<f32> { return vec2<f32>(to_f32_d(z.x), to_f32_d(z.y)); }
// x rounded to float32 by truncation with the last bit set when anything was dropped ("round to
// odd"): rounding that to float16 then equals rounding x to float16 directly.
fn to_f32_odd_d(x: f64) -> f32 {
  let b = bitcast<u64>(x);
  let a = b & 0x7ffffffffffffffflu;
  if (a > 0x7ff0000000000000lu || a < 0x3810000000000000lu || a >= 0x47f0000000000000lu) { return to_f32_d(x); }
  let s = u32(b >> 32u) & 0x80000000u;
  var r = u32((a - 0x3800000000000000lu) >> 29u);   // float32 exponent and 23 fraction bits, truncated
  if ((a & 0x1ffffffflu) != 0lu) { r = r | 1u; }
  return bitcast<f32>(s | r);
}
fn f64_to_i32(x: f64) -> i32 {
  if (isnan_d(x)) { return 0i; }
  return i32(clamp(trunc_d(x), -2147483648.0lf, 2147483647.0lf));
}
fn f64_to_u32(x: f64) -> u32 {
  if (x >= 2147483648.0lf) { return u32(min(trunc_d(x), 4294967295.0lf)); }
  return bitcast<u32>(f64_to_i32(x));
}
fn f64_to_i64(x: f64) -> i64 {
  if (isnan_d(x)) { return 0li; }
  if (x >= 9.2233720368547758e18lf) { return 9223372036854775807li; }
  return i64(clamp(trunc_d(x), -9.2233720368547758e18lf, 9.2233720368547748e18lf));
}
fn f64_to_u64(x: f64) -> u64 {
  if (x >= 1.8446744073709552e19lf) { return 18446744073709551615lu; }
  if (x >= 9.2233720368547758e18lf) { return u64(min(trunc_d(x), 1.8446744073709550e19lf)); }
  return bitcast<u64>(f64_to_i64(x));
}
// Unsigned keys in the order of the values (see sort_key_f).
fn sort_key_d(x: f64) -> vec2<u32> {
  let b = select(bitcast<u64>(x), 0x7ff8000000000000lu, isnan_d(x));
  let k = select(b | 0x8000000000000000lu, ~b, (b >> 63u) != 0lu);
  return vec2<u32>(u32(k & 0xfffffffflu), u32(k >> 32u));
}
fn from_sort_key_d(k: vec2<u32>) -> f64 {
  let u = (u64(k.y) << 32u) | u64(k.x);
  return bitcast<f64>(select(~u, u & 0x7ffffffffffffffflu, (u >> 63u) != 0lu));
}
fn order_key_d(x: f64) -> vec2<u32> { return sort_key_d(select(x, 0.0lf, x == 0.0lf)); }

// -- exact products (Dekker), for corrections that need them ------------------------------------
fn split_d(a: f64) -> vec2<f64> {
  let c = 134217729.0lf * a;    // 2^27 + 1
  let h = c - (c - a);
  return vec2<f64>(h, a - h);
}
// (p, e) with p = fl(a * b) and p + e = a * b exactly (no overflow, no underflow).
fn two_prod_d(a: f64, b: f64) -> vec2<f64> {
  let p = a * b;
  let x = split_d(a); let y = split_d(b);
  return vec2<f64>(p, ((x.x * y.x - p) + x.x * y.y + x.y * y.x) + x.y * y.y);
}

// sqrt: the driver's estimate, then a Newton step whose residual x - y*y is exact.
fn sqrt_d(x: f64) -> f64 {
  if (isnan_d(x) || x < 0.0lf) { return nan_d(); }
  if (x == 0.0lf || isinf_d(x)) { return x; }
  var v = x; var scale = 1.0lf;
  if (v < 1e-280lf) { v = v * pow2_d(600); scale = pow2_d(-300); }
  else if (v > 1e280lf) { v = v * pow2_d(-600); scale = pow2_d(300); }
  var y = sqrt(v);
  let p = two_prod_d(y, y);
  y = y + ((v - p.x) - p.y) / (2.0lf * y);
  return y * scale;
}

// -- exp, expm1 ----------------------------------------------------------------------------------
const LN2_HI_D = 6.93147180369123816490e-01lf;      // 0x3fe62e42 fee00000
const LN2_LO_D = 1.90821492927058770002e-10lf;      // 0x3dea39ef 35793c76
const INVLN2_D = 1.44269504088896338700e+00lf;

fn exp_d(xin: f64) -> f64 {
  var x = xin;
  let hx = hi_d(x) & 0x7fffffffu;
  let neg = signbit_d(x);
  if (hx >= 0x40862E42u) {
    if (isnan_d(x)) { return x; }
    if (isinf_d(x)) { return select(x, 0.0lf, neg); }
    if (x > 7.09782712893383973096e+02lf) { return inf_d(); }
    if (x < -7.45133219101941108420e+02lf) { return 0.0lf; }
  }
  if (x == 1.0lf) { return 2.718281828459045235360lf; }
  var hi = 0.0lf; var lo = 0.0lf; var k = 0i;
  if (hx > 0x3fd62e42u) {
    if (hx < 0x3FF0A2B2u) {
      hi = x - select(LN2_HI_D, -LN2_HI_D, neg); lo = select(LN2_LO_D, -LN2_LO_D, neg); k = select(1i, -1i, neg);
    } else {
      k = i32(trunc_d(INVLN2_D * x + select(0.5lf, -0.5lf, neg)));
      let t = f64(k);
      hi = x - t * LN2_HI_D;
      lo = t * LN2_LO_D;
    }
    x = hi - lo;
  } else if (hx < 0x3e300000u) {
    return 1.0lf + x;
  }
  let t = x * x;
  let c = x - t * (1.66666666666666019037e-01lf + t * (-2.77777777770155933842e-03lf + t * (6.61375632143793436117e-05lf
          + t * (-1.65339022054652515390e-06lf + t * 4.13813679705723846039e-08lf))));
  if (k == 0) { return 1.0lf - ((x * c) / (c - 2.0lf) - x); }
  let y = 1.0lf - ((lo - (x * c) / (2.0lf - c)) - hi);
  return scalbn_d(y, k);
}

fn expm1_d(xin: f64) -> f64 {
  var x = xin;
  let hx = hi_d(x) & 0x7fffffffu;
  let neg = signbit_d(x);
  if (hx >= 0x4043687Au) {
    if (hx >= 0x40862E42u) {
      if (isnan_d(x)) { return x; }
      if (isinf_d(x)) { return select(x, -1.0lf, neg); }
      if (x > 7.09782712893383973096e+02lf) { return inf_d(); }
    }
    if (neg) { return -1.0lf; }
  }
  var hi = 0.0lf; var lo = 0.0lf; var c = 0.0lf; var k = 0i;
  if (hx > 0x3fd62e42u) {
    if (hx < 0x3FF0A2B2u) {
      if (!neg) { hi = x - LN2_HI_D; lo = LN2_LO_D; k = 1; } else { hi = x + LN2_HI_D; lo = -LN2_LO_D; k = -1; }
    } else {
      k = i32(trunc_d(INVLN2_D * x + select(0.5lf, -0.5lf, neg)));
      let t = f64(k);
      hi = x - t * LN2_HI_D;
      lo = t * LN2_LO_D;
    }
    x = hi - lo;
    c = (hi - x) - lo;
  } else if (hx < 0x3c900000u) {
    return x;
  }
  let hfx = 0.5lf * x;
  let hxs = x * hfx;
  let r1 = 1.0lf + hxs * (-3.33333333333331316428e-02lf + hxs * (1.58730158725481460165e-03lf + hxs * (-7.93650757867487942473e-05lf
           + hxs * (4.00821782732936239552e-06lf + hxs * -2.01099218183624371326e-07lf))));
  var t = 3.0lf - r1 * hfx;
  var e = hxs * ((r1 - t) / (6.0lf - x * t));
  if (k == 0) { return x - (x * e - hxs); }
  e = (x * (e - c) - c);
  e = e - hxs;
  if (k == -1) { return 0.5lf * (x - e) - 0.5lf; }
  if (k == 1) {
    if (x < -0.25lf) { return -2.0lf * (e - (x + 0.5lf)); }
    return 1.0lf + 2.0lf * (x - e);
  }
  if (k <= -2 || k > 56) {
    let y = 1.0lf - (e - x);
    return scalbn_d(y, k) - 1.0lf;
  }
  var y: f64;
  if (k < 20) {
    t = words_d(0x3ff00000u - (0x200000u >> u32(k)), 0u);   // 1 - 2^-k
    y = t - (e - x);
  } else {
    t = words_d(u32(0x3ff - k) << 20u, 0u);                   // 2^-k
    y = x - (e + t);
    y = y + 1.0lf;
  }
  return y * pow2_d(k);
}

// -- log, log1p, log2, log10 ----------------------------------------------------------------------
const LG1_D = 6.666666666666735130e-01lf;
const LG2_D = 3.999999999940941908e-01lf;
const LG3_D = 2.857142874366239149e-01lf;
const LG4_D = 2.222219843214978396e-01lf;
const LG5_D = 1.818357216161805012e-01lf;
const LG6_D = 1.531383769920937332e-01lf;
const LG7_D = 1.479819860511658591e-01lf;

// For x > 0 finite: x = 2^k * m with m in [sqrt(2)/2, sqrt(2)); returns (k, f = m - 1, log(m) - f
// without the leading f term) so that callers can add k*ln2 in extra precision.
struct LogParts { k: f64, f: f64, r: f64 }
fn log_parts_d(xin: f64) -> LogParts {
  var x = xin;
  var k = 0i;
  var hx = hi_d(x);
  if (hx < 0x00100000u) { k = -54; x = x * 18014398509481984.0lf; hx = hi_d(x); }
  k = k + i32(hx >> 20u) - 1023;
  hx = hx & 0x000fffffu;
  let i = (hx + 0x95f64u) & 0x100000u;
  x = with_hi_d(x, hx | (i ^ 0x3ff00000u));
  k = k + i32(i >> 20u);
  let f = x - 1.0lf;
  if ((0x000fffffu & (2u + hx)) < 3u) {
    return LogParts(f64(k), f, -(f * f * (0.5lf - 0.33333333333333333lf * f)));
  }
  let s = f / (2.0lf + f);
  let z = s * s;
  let w = z * z;
  let t1 = w * (LG2_D + w * (LG4_D + w * LG6_D));
  let t2 = z * (LG1_D + w * (LG3_D + w * (LG5_D + w * LG7_D)));
  let r = t2 + t1;
  let idx = i32(hx) - 0x6147a;
  let jdx = 0x6b851 - i32(hx);
  if ((idx | jdx) > 0) {
    let hfsq = 0.5lf * f * f;
    return LogParts(f64(k), f, -(hfsq - s * (hfsq + r)));
  }
  return LogParts(f64(k), f, -(s * (f - r)));
}
// The standard's special cases of every log: nan below 0, -inf at 0, inf at inf.
fn log_special_d(x: f64) -> bool { return isnan_d(x) || x <= 0.0lf || isinf_d(x); }
fn log_special_value_d(x: f64) -> f64 {
  if (x == 0.0lf) { return -inf_d(); }
  return select(x, nan_d(), x < 0.0lf);
}
fn log_d(x: f64) -> f64 {
  if (log_special_d(x)) { return log_special_value_d(x); }
  let p = log_parts_d(x);
  // k*ln2_hi is exact; the low part joins the small terms first
  return p.k * LN2_HI_D + ((p.k * LN2_LO_D + p.r) + p.f);
}
fn log1p_d(x: f64) -> f64 {
  let hx = hi_d(x);
  let ax = hx & 0x7fffffffu;
  if (isnan_d(x)) { return x; }
  if (x == -1.0lf) { return -inf_d(); }
  if (x < -1.0lf) { return nan_d(); }
  if (isinf_d(x)) { return x; }
  var k = 1i; var f = 0.0lf; var c = 0.0lf; var hu = 0u;
  if (hx < 0x3FDA827Au || (hx & 0x80000000u) != 0u) {
    if (ax < 0x3e200000u) {
      if (ax < 0x3c900000u) { return x; }
      return x - x * x * 0.5lf;
    }
    if ((hx & 0x80000000u) == 0u || hx <= 0xbfd2bec4u) { k = 0; f = x; hu = 1u; }
  }
  if (k != 0) {
    var u: f64;
    if ((hx & 0x80000000u) != 0u || hx < 0x43400000u) {
      u = 1.0lf + x;
      hu = hi_d(u);
      k = i32(hu >> 20u) - 1023;
      c = select(x - (u - 1.0lf), 1.0lf - (u - x), k > 0);
      c = c / u;
    } else {
      u = x;
      hu = hi_d(u);
      k = i32(hu >> 20u) - 1023;
      c = 0.0lf;
    }
    hu = hu & 0x000fffffu;
    if (hu < 0x6a09eu) {
      u = with_hi_d(u, hu | 0x3ff00000u);
    } else {
      k = k + 1;
      u = with_hi_d(u, hu | 0x3fe00000u);
      hu = (0x00100000u - hu) >> 2u;
    }
    f = u - 1.0lf;
  }
  let hfsq = 0.5lf * f * f;
  let dk = f64(k);
  if (hu == 0u) {
    if (f == 0.0lf) {
      if (k == 0) { return 0.0lf; }
      return dk * LN2_HI_D + (c + dk * LN2_LO_D);
    }
    let r = hfsq * (1.0lf - 0.66666666666666666lf * f);
    if (k == 0) { return f - r; }
    return dk * LN2_HI_D - ((r - (dk * LN2_LO_D + c)) - f);
  }
  let s = f / (2.0lf + f);
  let z = s * s;
  let r = z * (LG1_D + z * (LG2_D + z * (LG3_D + z * (LG4_D + z * (LG5_D + z * (LG6_D + z * LG7_D))))));
  if (k == 0) { return f - (hfsq - s * (hfsq + r)); }
  return dk * LN2_HI_D - ((hfsq - (s * (hfsq + r) + (dk * LN2_LO_D + c))) - f);
}
fn log2_d(x: f64) -> f64 {
  if (log_special_d(x)) { return log_special_value_d(x); }
  let p = log_parts_d(x);
  // log(m) = f + r, times 1/ln2 split in a 32-bit head and a tail, so the head product is exact
  let f_hi = with_lo_d(p.f, 0u);
  let f_lo = (p.f - f_hi) + p.r;
  let ivln2_hi = 1.44269504072144627571e+00lf;   // 0x3ff71547 65200000
  let ivln2_lo = 1.67517131648865118353e-10lf;   // 0x3de705fc 2eefa200
  let hi = f_hi * ivln2_hi;
  let lo = (f_lo + f_hi) * ivln2_lo + f_lo * ivln2_hi;
  let w = p.k + hi;
  return w + ((p.k - w) + hi + lo);
}
fn log10_d(x: f64) -> f64 {
  if (log_special_d(x)) { return log_special_value_d(x); }
  let p = log_parts_d(x);
  let f_hi = with_lo_d(p.f, 0u);
  let f_lo = (p.f - f_hi) + p.r;
  let ivln10_hi = 4.34294481878168880939e-01lf;  // 0x3fdbcb7b 15200000
  let ivln10_lo = 2.50829467116452752298e-11lf;  // 0x3dbb9438 ca9aadd5
  let log10_2hi = 3.01029995663611771306e-01lf;  // 0x3FD34413 509F6000
  let log10_2lo = 3.69423907715893078616e-13lf;  // 0x3D59FEF3 11F12B36
  let hi = f_hi * ivln10_hi;
  let lo = (f_lo + f_hi) * ivln10_lo + f_lo * ivln10_hi;
  let y = p.k * log10_2hi;
  let w = y + hi;
  return w + ((y - w) + hi + (lo + p.k * log10_2lo));
}
fn logaddexp_d(a: f64, b: f64) -> f64 {
  if (isnan_d(a) || isnan_d(b)) { return nan_d(); }
  if (a == b) { return a + 6.93147180559945286227e-01lf; }
  let m = max(a, b);
  if (isinf_d(m)) { return m; }
  return m + log1p_d(exp_d(-abs_d(a - b)));
}

// -- trigonometry ---------------------------------------------------------------------------------
fn kernel_sin_d(x: f64, y: f64, iy: bool) -> f64 {
  let z = x * x;
  let w = z * z;
  let r = 8.33333333332248946124e-03lf + z * (-1.98412698298579493134e-04lf + z * 2.75573137070700676789e-06lf)
          + z * w * (-2.50507602534068634195e-08lf + z * 1.58969099521155010221e-10lf);
  let v = z * x;
  if (!iy) { return x + v * (-1.66666666666666324348e-01lf + z * r); }
  return x - ((z * (0.5lf * y - v * r) - y) - v * -1.66666666666666324348e-01lf);
}
fn kernel_cos_d(x: f64, y: f64) -> f64 {
  let z = x * x;
  var w = z * z;
  let r = z * (4.16666666666666019037e-02lf + z * (-1.38888888888741095749e-03lf + z * 2.48015872894767294178e-05lf))
          + w * w * (-2.75573143513906633035e-07lf + z * (2.08757232129817482790e-09lf + z * -1.13596475577881948265e-11lf));
  let hz = 0.5lf * z;
  w = 1.0lf - hz;
  return w + (((1.0lf - w) - hz) + (z * r - x * y));
}
// tan (odd == false) or -1/tan (odd == true) of x + y, |x + y| <= pi/4.
fn kernel_tan_d(xin: f64, yin: f64, odd: bool) -> f64 {
  var x = xin; var y = yin;
  let hx = hi_d(x);
  let ix = hx & 0x7fffffffu;
  let big = ix >= 0x3FE59428u;
  if (big) {
    if ((hx & 0x80000000u) != 0u) { x = -x; y = -y; }
    let z = 7.85398163397448278999e-01lf - x;
    let w = 3.06161699786838301793e-17lf - y;
    x = z + w; y = 0.0lf;
  }
  let z = x * x;
  var w = z * z;
  var r = 1.33333333333201242699e-01lf + w * (2.18694882948595424599e-02lf + w * (3.59207910759131235356e-03lf
          + w * (5.88041240820264096874e-04lf + w * (7.81794442939557092300e-05lf + w * -1.85586374855275456654e-05lf))));
  var v = z * (5.39682539762260521377e-02lf + w * (8.86323982359930005737e-03lf + w * (1.45620945432529025516e-03lf
          + w * (2.46463134818469906812e-04lf + w * (7.14072491382608190305e-05lf + w * 2.59073051863633712884e-05lf)))));
  var s = z * x;
  r = y + z * (s * (r + v) + y);
  r = r + 3.33333333333334091986e-01lf * s;
  w = x + r;
  if (big) {
    v = select(1.0lf, -1.0lf, odd);
    let t = v - 2.0lf * (x - (w * w / (w + v) - r));
    return select(t, -t, (hx & 0x80000000u) != 0u);
  }
  if (!odd) { return w; }
  let zz = with_lo_d(w, 0u);
  v = r - (zz - x);
  let a = -1.0lf / w;
  let t = with_lo_d(a, 0u);
  s = 1.0lf + t * zz;
  return t + a * (s + t * v);
}
const TWO_OVER_PI_BITS = array<u32, 40>(
  0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu, 0xdebbc561u,
  0xb7246e3au, 0x424dd2e0u, 0x06492eeau, 0x09d1921cu, 0xfe1deb1cu, 0xb129a73eu, 0xe88235f5u, 0x2ebb4484u,
  0xe99c7026u, 0xb45f7e41u, 0x3991d639u, 0x835339f4u, 0x9c845f8bu, 0xbdf9283bu, 0x1ff897ffu, 0xde05980fu,
  0xef2f118bu, 0x5a0a6d1fu, 0x6d367ecfu, 0x27cb09b7u, 0x4f463f66u, 0x9e5fea2du, 0x7527bac7u, 0xebe5f17bu,
  0x3d0739f7u, 0x8a5292eau, 0x6bfb5fb1u, 0x1f8d5d08u, 0x56033046u, 0xfc7b6babu, 0xf0cfbc20u, 0x9af4361du);
// x = n * pi/2 + (hi + lo), |hi + lo| <= pi/4, as (hi, lo, n mod 4).
struct Reduced64 { hi: f64, lo: f64, n: u32 }
fn words_at_d(p: array<u32, 10>, off: u32) -> u32 {
  let w = off >> 5u; let s = off & 31u;
  if (s == 0u) { return p[w]; }
  return (p[w] >> s) | (p[w + 1u] << (32u - s));
}
fn rem_pio2_d(x: f64) -> Reduced64 {
  let ix = hi_d(x) & 0x7fffffffu;
  if (ix < 0x413921fbu) {   // |x| < 2^20 * pi/2: Cody-Waite with pi/2 in three parts
    // the nearest integer by bit operations: (y + 1.5 * 2^52) - 1.5 * 2^52 may be folded to y
    let fn_ = floor_d(x * 6.36619772367581382433e-01lf + 0.5lf);
    var r = x - fn_ * 1.57079632673412561417e+00lf;
    var w = fn_ * 6.07710050650619224932e-11lf;
    var y0 = r - w;
    let j = ix >> 20u;
    if (i32(j) - i32((hi_d(y0) >> 20u) & 0x7ffu) > 16) {
      let t = r;
      w = fn_ * 6.07710050630396597660e-11lf;
      r = t - w;
      w = fn_ * 2.02226624879595063154e-21lf - ((t - r) - w);
      y0 = r - w;
      if (i32(j) - i32((hi_d(y0) >> 20u) & 0x7ffu) > 49) {
        let t2 = r;
        w = fn_ * 2.02226624871116645580e-21lf;
        r = t2 - w;
        w = fn_ * 8.47842766036889956997e-32lf - ((t2 - r) - w);
        y0 = r - w;
      }
    }
    return Reduced64(y0, (r - y0) - w, u32(i32(fn_)) & 3u);
  }
  // Payne-Hanek: |x| = m * 2^e; the bits of 2/pi that matter times m, in 32-bit limbs.
  let b = bitcast<u64>(x) & 0x7ffffffffffffffflu;
  let e = i32(b >> 52u) - 1075;
  let m = (b & 0xffffffffffffflu) | 0x10000000000000lu;
  let w0 = u32(max(e - 2, 0)) >> 5u;         // 2/pi bits before this word give multiples of 4
  var win: array<u32, 7>;                   // little-endian: win[6] is the most significant
  for (var i = 0u; i < 7u; i = i + 1u) { win[i] = TWO_OVER_PI_BITS[w0 + 6u - i]; }
  var p: array<u32, 10>;
  let ml = m & 0xfffffffflu; let mh = m >> 32u;
  var carry = 0lu;
  for (var i = 0u; i < 7u; i = i + 1u) {
    let t = ml * u64(win[i]) + carry;
    p[i] = u32(t & 0xfffffffflu); carry = t >> 32u;
  }
  p[7] = u32(carry); p[8] = 0u; p[9] = 0u;
  carry = 0lu;
  for (var i = 0u; i < 7u; i = i + 1u) {
    let t = mh * u64(win[i]) + u64(p[i + 1u]) + carry;
    p[i + 1u] = u32(t & 0xfffffffflu); carry = t >> 32u;
  }
  p[8] = p[8] + u32(carry);
  let s = u32(32 * i32(w0 + 7u) - e);       // bits of p below the units place
  var n = words_at_d(p, s) & 3u;
  // 128 fraction bits: f3 (most significant) .. f0
  var f3 = words_at_d(p, s - 32u); var f2 = words_at_d(p, s - 64u);
  var f1 = words_at_d(p, s - 96u); var f0 = words_at_d(p, s - 128u);
  var neg = false;
  if (f3 >= 0x80000000u) {                  // fraction >= 1/2: the next quadrant, negative remainder
    n = (n + 1u) & 3u; neg = true;
    f3 = ~f3; f2 = ~f2; f1 = ~f1; f0 = ~f0;
    f0 = f0 + 1u;
    if (f0 == 0u) { f1 = f1 + 1u; if (f1 == 0u) { f2 = f2 + 1u; if (f2 == 0u) { f3 = f3 + 1u; } } }
  }
  var hi64 = (u64(f3) << 32u) | u64(f2);
  var lo64 = (u64(f1) << 32u) | u64(f0);
  var lz = 0u;                              // normalise: the leading 1 to the top of hi64
  if (hi64 == 0lu) { hi64 = lo64; lo64 = 0lu; lz = 64u; }
  let z = clz64_d(hi64);
  if (z > 0u) { hi64 = (hi64 << z) | (lo64 >> (64u - z)); lo64 = lo64 << z; }
  lz = lz + z;
  let top = hi64 >> 11u;                                    // 53 bits
  let next = ((hi64 & 0x7fflu) << 42u) | (lo64 >> 22u);     // the next 53
  let d_hi = f64(top) * pow2_d(-53 - i32(lz));
  let d_lo = f64(next) * pow2_d(-106 - i32(lz));
  // times pi/2 in double-double
  let pio2_hi = 1.57079632679489655800e+00lf;   // 0x3FF921FB 54442D18
  let pio2_lo = 6.12323399573676603587e-17lf;   // 0x3C91A626 33145C07
  let pr = two_prod_d(d_hi, pio2_hi);
  let tail = pr.y + (d_hi * pio2_lo + d_lo * pio2_hi);
  var rh = pr.x + tail;
  var rl = tail - (rh - pr.x);
  if (neg != signbit_d(x)) { rh = -rh; rl = -rl; }
  if (signbit_d(x)) { n = (4u - n) & 3u; }
  return Reduced64(rh, rl, n);
}
fn sin_d(x: f64) -> f64 {
  if (isnan_d(x) || isinf_d(x)) { return nan_d(); }
  if ((hi_d(x) & 0x7fffffffu) <= 0x3fe921fbu) {
    if ((hi_d(x) & 0x7fffffffu) < 0x3e500000u) { return x; }
    return kernel_sin_d(x, 0.0lf, false);
  }
  let r = rem_pio2_d(x);
  switch (r.n) {
    case 0u: { return kernel_sin_d(r.hi, r.lo, true); }
    case 1u: { return kernel_cos_d(r.hi, r.lo); }
    case 2u: { return -kernel_sin_d(r.hi, r.lo, true); }
    default: { return -kernel_cos_d(r.hi, r.lo); }
  }
}
fn cos_d(x: f64) -> f64 {
  if (isnan_d(x) || isinf_d(x)) { return nan_d(); }
  if ((hi_d(x) & 0x7fffffffu) <= 0x3fe921fbu) {
    if ((hi_d(x) & 0x7fffffffu) < 0x3e46a09eu) { return 1.0lf; }
    return kernel_cos_d(x, 0.0lf);
  }
  let r = rem_pio2_d(x);
  switch (r.n) {
    case 0u: { return kernel_cos_d(r.hi, r.lo); }
    case 1u: { return -kernel_sin_d(r.hi, r.lo, true); }
    case 2u: { return -kernel_cos_d(r.hi, r.lo); }
    default: { return kernel_sin_d(r.hi, r.lo, true); }
  }
}
// (cos x, sin x) from one argument reduction
fn cis_d(x: f64) -> vec2<f64> {
  if (isnan_d(x) || isinf_d(x)) { return vec2<f64>(nan_d(), nan_d()); }
  if ((hi_d(x) & 0x7fffffffu) <= 0x3fe921fbu) { return vec2<f64>(cos_d(x), sin_d(x)); }
  let r = rem_pio2_d(x);
  let s = kernel_sin_d(r.hi, r.lo, true);
  let c = kernel_cos_d(r.hi, r.lo);
  switch (r.n) {
    case 0u: { return vec2<f64>(c, s); }
    case 1u: { return vec2<f64>(-s, c); }
    case 2u: { return vec2<f64>(-c, -s); }
    default: { return vec2<f64>(s, -c); }
  }
}
fn tan_d(x: f64) -> f64 {
  if (isnan_d(x) || isinf_d(x)) { return nan_d(); }
  if ((hi_d(x) & 0x7fffffffu) <= 0x3fe921fbu) {
    if ((hi_d(x) & 0x7fffffffu) < 0x3e400000u) { return x; }
    return kernel_tan_d(x, 0.0lf, false);
  }
  let r = rem_pio2_d(x);
  return kernel_tan_d(r.hi, r.lo, (r.n & 1u) == 1u);
}

// -- inverse trigonometry ---------------------------------------------------------------------------
fn atan_d(xin: f64) -> f64 {
  var x = xin;
  let hx = hi_d(x);
  let ix = hx & 0x7fffffffu;
  let neg = (hx & 0x80000000u) != 0u;
  if (ix >= 0x44100000u) {
    if (isnan_d(x)) { return x; }
    return copysign_d(1.57079632679489655800e+00lf + 6.12323399573676603587e-17lf, xin);
  }
  var id = -1i;
  if (ix < 0x3fdc0000u) {
    if (ix < 0x3e400000u) { return x; }
  } else {
    x = abs_d(x);
    if (ix < 0x3ff30000u) {
      if (ix < 0x3fe60000u) { id = 0; x = (2.0lf * x - 1.0lf) / (2.0lf + x); }
      else { id = 1; x = (x - 1.0lf) / (x + 1.0lf); }
    } else {
      if (ix < 0x40038000u) { id = 2; x = (x - 1.5lf) / (1.0lf + 1.5lf * x); }
      else { id = 3; x = -1.0lf / x; }
    }
  }
  let z = x * x;
  let w = z * z;
  let s1 = z * (3.33333333333329318027e-01lf + w * (1.42857142725034663711e-01lf + w * (9.09088713343650656196e-02lf
           + w * (6.66107313738753120669e-02lf + w * (4.97687799461593236017e-02lf + w * 1.62858201153657823623e-02lf)))));
  let s2 = w * (-1.99999999998764832476e-01lf + w * (-1.11111104054623557880e-01lf + w * (-7.69187620504482999495e-02lf
           + w * (-5.83357013379057348645e-02lf + w * -3.65315727442169155270e-02lf))));
  if (id < 0) { return x - x * (s1 + s2); }
  var hi = 4.63647609000806093515e-01lf; var lo = 2.26987774529616870924e-17lf;
  if (id == 1) { hi = 7.85398163397448278999e-01lf; lo = 3.06161699786838301793e-17lf; }
  if (id == 2) { hi = 9.82793723247329054082e-01lf; lo = 1.39033110312309984516e-17lf; }
  if (id == 3) { hi = 1.57079632679489655800e+00lf; lo = 6.12323399573676603587e-17lf; }
  let r = hi - ((x * (s1 + s2) - lo) - x);
  return select(r, -r, neg);
}
fn atan2_d(y: f64, x: f64) -> f64 {
  let pi = 3.1415926535897931160E+00lf;
  let pi_lo = 1.2246467991473531772E-16lf;
  let pi_o_2 = 1.5707963267948965580E+00lf;
  let pi_o_4 = 7.8539816339744827900E-01lf;
  if (isnan_d(x) || isnan_d(y)) { return nan_d(); }
  if (x == 1.0lf) { return atan_d(y); }
  let m = select(0u, 1u, signbit_d(y)) | select(0u, 2u, signbit_d(x));
  if (y == 0.0lf) {
    if (m < 2u) { return y; }
    return select(pi, -pi, m == 3u);
  }
  if (x == 0.0lf) { return copysign_d(pi_o_2, y); }
  if (isinf_d(x)) {
    if (isinf_d(y)) {
      switch (m) { case 0u: { return pi_o_4; } case 1u: { return -pi_o_4; } case 2u: { return 3.0lf * pi_o_4; } default: { return -3.0lf * pi_o_4; } }
    }
    switch (m) { case 0u: { return 0.0lf; } case 1u: { return -0.0lf; } case 2u: { return pi; } default: { return -pi; } }
  }
  if (isinf_d(y)) { return copysign_d(pi_o_2, y); }
  let k = (i32(hi_d(y) & 0x7fffffffu) - i32(hi_d(x) & 0x7fffffffu)) >> 20u;
  var z: f64;
  var mm = m;
  if (k > 60) { z = pi_o_2 + 0.5lf * pi_lo; mm = m & 1u; }
  else if (signbit_d(x) && k < -60) { z = 0.0lf; }
  else { z = atan_d(abs_d(y / x)); }
  switch (mm) {
    case 0u: { return z; }
    case 1u: { return -z; }
    case 2u: { return pi - (z - pi_lo); }
    default: { return (z - pi_lo) - pi; }
  }
}
fn asin_acos_rational_d(t: f64) -> f64 {
  let p = t * (1.66666666666666657415e-01lf + t * (-3.25565818622400915405e-01lf + t * (2.01212532134862925881e-01lf
          + t * (-4.00555345006794114027e-02lf + t * (7.91534994289814532176e-04lf + t * 3.47933107596021167570e-05lf)))));
  let q = 1.0lf + t * (-2.40339491173441421878e+00lf + t * (2.02094576023350569471e+00lf + t * (-6.88283971605453293030e-01lf
          + t * 7.70381505559019352791e-02lf)));
  return p / q;
}
fn asin_d(x: f64) -> f64 {
  let pio2_hi = 1.57079632679489655800e+00lf;
  let pio2_lo = 6.12323399573676603587e-17lf;
  let pio4_hi = 7.85398163397448278999e-01lf;
  let ix = hi_d(x) & 0x7fffffffu;
  if (isnan_d(x)) { return x; }
  if (ix >= 0x3ff00000u) {
    if (abs_d(x) == 1.0lf) { return x * pio2_hi + x * pio2_lo; }
    return nan_d();
  }
  if (ix < 0x3fe00000u) {
    if (ix < 0x3e500000u) { return x; }
    return x + x * asin_acos_rational_d(x * x);
  }
  let w = 1.0lf - abs_d(x);
  let t = w * 0.5lf;
  let r = asin_acos_rational_d(t);
  let s = sqrt_d(t);
  var res: f64;
  if (ix >= 0x3FEF3333u) {
    res = pio2_hi - (2.0lf * (s + s * r) - pio2_lo);
  } else {
    let ww = with_lo_d(s, 0u);
    let c = (t - ww * ww) / (s + ww);
    let p = 2.0lf * s * r - (pio2_lo - 2.0lf * c);
    let q = pio4_hi - 2.0lf * ww;
    res = pio4_hi - (p - q);
  }
  return select(res, -res, signbit_d(x));
}
fn acos_d(x: f64) -> f64 {
  let pi = 3.14159265358979311600e+00lf;
  let pio2_hi = 1.57079632679489655800e+00lf;
  let pio2_lo = 6.12323399573676603587e-17lf;
  let ix = hi_d(x) & 0x7fffffffu;
  if (isnan_d(x)) { return x; }
  if (ix >= 0x3ff00000u) {
    if (x == 1.0lf) { return 0.0lf; }
    if (x == -1.0lf) { return pi + 2.0lf * pio2_lo; }
    return nan_d();
  }
  if (ix < 0x3fe00000u) {
    if (ix <= 0x3c600000u) { return pio2_hi + pio2_lo; }
    return pio2_hi - (x - (pio2_lo - x * asin_acos_rational_d(x * x)));
  }
  if (signbit_d(x)) {
    let z = (1.0lf + x) * 0.5lf;
    let s = sqrt_d(z);
    let w = asin_acos_rational_d(z) * s - pio2_lo;
    return pi - 2.0lf * (s + w);
  }
  let z = (1.0lf - x) * 0.5lf;
  let s = sqrt_d(z);
  let df = with_lo_d(s, 0u);
  let c = (z - df * df) / (s + df);
  let w = asin_acos_rational_d(z) * s + c;
  return 2.0lf * (df + w);
}

// -- hyperbolic functions ---------------------------------------------------------------------------
// exp(|x|) / 2 for |x| up to the overflow threshold of sinh and cosh (exp(|x|) itself may overflow).
fn half_exp_d(ax: f64) -> f64 {
  if (ax < 7.09782712893383973096e+02lf) { return 0.5lf * exp_d(ax); }
  let w = exp_d(0.5lf * ax);
  // w/2 by its exponent bits: (0.5 w) w written as products would be reassociated into
  // 0.5 (w w) by NVIDIA's compiler, and w w overflows
  return bitcast<f64>(bitcast<u64>(w) - 0x10000000000000lu) * w;
}
fn sinh_d(x: f64) -> f64 {
  let ix = hi_d(x) & 0x7fffffffu;
  if (ix >= 0x7ff00000u) { return x + x; }
  let h = select(0.5lf, -0.5lf, signbit_d(x));
  let ax = abs_d(x);
  if (ix < 0x40360000u) {
    if (ix < 0x3e300000u) { return x; }
    let t = expm1_d(ax);
    if (ix < 0x3ff00000u) { return h * (2.0lf * t - t * t / (t + 1.0lf)); }
    return h * (t + t / (t + 1.0lf));
  }
  if (ix <= 0x408633CEu) { return copysign_d(half_exp_d(ax), x); }
  return copysign_d(inf_d(), x);
}
fn cosh_d(x: f64) -> f64 {
  let ix = hi_d(x) & 0x7fffffffu;
  if (ix >= 0x7ff00000u) { return x * x; }
  let ax = abs_d(x);
  if (ix < 0x3fd62e43u) {
    let t = expm1_d(ax);
    let w = 1.0lf + t;
    if (ix < 0x3c800000u) { return w; }
    return 1.0lf + (t * t) / (w + w);
  }
  if (ix < 0x40360000u) {
    let t = exp_d(ax);
    return 0.5lf * t + 0.5lf / t;
  }
  if (ix <= 0x408633CEu) { return half_exp_d(ax); }
  return inf_d();
}
fn tanh_d(x: f64) -> f64 {
  let ix = hi_d(x) & 0x7fffffffu;
  if (isnan_d(x)) { return x; }
  if (ix >= 0x40360000u) { return copysign_d(1.0lf, x); }
  if (ix < 0x3e300000u) { return x; }
  var z: f64;
  if (ix >= 0x3ff00000u) {
    let t = expm1_d(2.0lf * abs_d(x));
    z = 1.0lf - 2.0lf / (t + 2.0lf);
  } else {
    let t = expm1_d(-2.0lf * abs_d(x));
    z = -t / (t + 2.0lf);
  }
  return copysign_d(z, x);
}
fn asinh_d(x: f64) -> f64 {
  let ix = hi_d(x) & 0x7fffffffu;
  if (ix >= 0x7ff00000u) { return x + x; }
  if (ix < 0x3e300000u) { return x; }
  let t = abs_d(x);
  var w: f64;
  if (ix > 0x41b00000u) { w = log_d(t) + 6.93147180559945286227e-01lf; }
  else if (ix > 0x40000000u) { w = log_d(2.0lf * t + 1.0lf / (sqrt_d(x * x + 1.0lf) + t)); }
  else { let t2 = x * x; w = log1p_d(t + t2 / (1.0lf + sqrt_d(1.0lf + t2))); }
  return copysign_d(w, x);
}
fn acosh_d(x: f64) -> f64 {
  let hx = hi_d(x);
  if (isnan_d(x)) { return x; }
  if (x < 1.0lf) { return nan_d(); }
  if (hx >= 0x41b00000u) {
    if (isinf_d(x)) { return x; }
    return log_d(x) + 6.93147180559945286227e-01lf;
  }
  if (x == 1.0lf) { return 0.0lf; }
  if (hx > 0x40000000u) { return log_d(2.0lf * x - 1.0lf / (x + sqrt_d(x * x - 1.0lf))); }
  let t = x - 1.0lf;
  return log1p_d(t + sqrt_d(2.0lf * t + t * t));
}
fn atanh_d(x: f64) -> f64 {
  let ax = abs_d(x);
  if (isnan_d(x)) { return x; }
  if (ax > 1.0lf) { return nan_d(); }
  if (ax == 1.0lf) { return copysign_d(inf_d(), x); }
  if ((hi_d(x) & 0x7fffffffu) < 0x3e300000u) { return x; }
  var t: f64;
  if (ax < 0.5lf) { t = ax + ax; t = 0.5lf * log1p_d(t + t * ax / (1.0lf - ax)); }
  else { t = 0.5lf * log1p_d((ax + ax) / (1.0lf - ax)); }
  return copysign_d(t, x);
}

// -- pow ----------------------------------------------------------------------------------------------
// 0: y is not an integer, 1: an odd integer, 2: an even integer.
fn int_kind_d(y: f64) -> u32 {
  if (isinf_d(y) || isnan_d(y) || trunc_d(y) != y) { return 0u; }
  if (abs_d(y) >= 9007199254740992.0lf) { return 2u; }
  return select(2u, 1u, floor_d(y * 0.5lf) * 2.0lf != y);
}
fn pow_d(x: f64, y: f64) -> f64 {
  if (y == 0.0lf || x == 1.0lf) { return 1.0lf; }
  if (isnan_d(x) || isnan_d(y)) { return nan_d(); }
  let yisint = int_kind_d(y);
  let ax = abs_d(x);
  if (isinf_d(y)) {
    if (ax == 1.0lf) { return 1.0lf; }
    return select(0.0lf, inf_d(), (ax > 1.0lf) == (y > 0.0lf));
  }
  if (ax == 1.0lf && yisint != 0u) { return select(1.0lf, x, yisint == 1u); }  // (-1) ** 1e200
  if (y == 1.0lf) { return x; }
  if (y == -1.0lf) { return 1.0lf / x; }
  if (y == 2.0lf) { return x * x; }
  if (y == 0.5lf && !signbit_d(x) && !isinf_d(x)) { return sqrt_d(x); }
  if (ax == 0.0lf || isinf_d(ax)) {
    var z = ax;
    if (y < 0.0lf) { z = select(0.0lf, inf_d(), ax == 0.0lf); }
    return select(z, -z, signbit_d(x) && yisint == 1u);
  }
  if (signbit_d(x) && yisint == 0u) { return nan_d(); }
  let s = select(1.0lf, -1.0lf, signbit_d(x) && yisint == 1u);
  // Results far beyond the range are decided from the exponent of x alone (lo_l <= log2|x| <
  // hi_l). Signed infinities and zeros are made by copysign: NVIDIA's compiler turns s * inf
  // into garbage (a subnormal).
  let e = f64(i32(hi_d(ax) >> 20u) - 1023);
  let lo_l = select(e, -1075.0lf, hi_d(ax) < 0x00100000u);
  let hi_l = e + 1.0lf;
  let lowest = select(y * hi_l, y * lo_l, y > 0.0lf);
  let highest = select(y * lo_l, y * hi_l, y > 0.0lf);
  if (lowest > 1100.0lf) { return copysign_d(inf_d(), s); }
  if (highest < -1200.0lf) { return copysign_d(0.0lf, s); }
  let iy = hi_d(y) & 0x7fffffffu;
  let hy_neg = signbit_d(y);
  var ix = hi_d(ax);
  var t1: f64; var t2: f64;
  if (iy > 0x41e00000u) {            // |y| > 2^31
    if (iy > 0x43f00000u) {          // |y| > 2^64: over- or underflow
      if (ix <= 0x3fefffffu) { return select(0.0lf, inf_d(), hy_neg); }
      if (ix >= 0x3ff00000u) { return select(inf_d(), 0.0lf, hy_neg); }
    }
    if (ix < 0x3fefffffu) { return copysign_d(select(0.0lf, inf_d(), hy_neg), s); }
    if (ix > 0x3ff00000u) { return copysign_d(select(inf_d(), 0.0lf, hy_neg), s); }
    let t = ax - 1.0lf;
    let w = (t * t) * (0.5lf - t * (0.3333333333333333333333lf - t * 0.25lf));
    let u = 1.44269502162933349609e+00lf * t;
    let v = t * 1.92596299112661746887e-08lf - w * 1.44269504088896338700e+00lf;
    t1 = with_lo_d(u + v, 0u);
    t2 = v - (t1 - u);
  } else {
    var axx = ax;
    var n = 0i;
    if (ix < 0x00100000u) { axx = axx * 9007199254740992.0lf; n = n - 53; ix = hi_d(axx); }
    n = n + i32(ix >> 20u) - 0x3ff;
    let j = ix & 0x000fffffu;
    ix = j | 0x3ff00000u;
    var k = 0u;
    if (j <= 0x3988Eu) { k = 0u; }
    else if (j < 0xBB67Au) { k = 1u; }
    else { k = 0u; n = n + 1; ix = ix - 0x00100000u; }
    axx = with_hi_d(axx, ix);
    let bp = select(1.0lf, 1.5lf, k == 1u);
    let dp_h = select(0.0lf, 5.84962487220764160156e-01lf, k == 1u);
    let dp_l = select(0.0lf, 1.35003920212974897128e-08lf, k == 1u);
    var u = axx - bp;
    var v = 1.0lf / (axx + bp);
    let ss = u * v;
    let s_h = with_lo_d(ss, 0u);
    var t_h = words_d(((ix >> 1u) | 0x20000000u) + 0x00080000u + (k << 18u), 0u);
    var t_l = axx - (t_h - bp);
    // fma written out: NVIDIA's compiler evaluates the expression otherwise less exactly
    let s_l = v * fma(-s_h, t_l, fma(-s_h, t_h, u));
    var s2 = ss * ss;
    var r = s2 * s2 * (5.99999999999994648725e-01lf + s2 * (4.28571428578550184252e-01lf + s2 * (3.33333329818377432918e-01lf
            + s2 * (2.72728123808534006489e-01lf + s2 * (2.30660745775561754067e-01lf + s2 * 2.06975017800338417784e-01lf)))));
    r = r + s_l * (s_h + ss);
    s2 = s_h * s_h;
    t_h = with_lo_d(3.0lf + s2 + r, 0u);
    t_l = r - ((t_h - 3.0lf) - s2);
    u = s_h * t_h;
    v = s_l * t_h + t_l * ss;
    let p_h = with_lo_d(u + v, 0u);
    let p_l = v - (p_h - u);
    let cp_h = 9.61796700954437255859e-01lf;
    let cp_l = -7.02846165095275826516e-09lf;
    let z_h = cp_h * p_h;
    let z_l = cp_l * p_h + p_l * 9.61796693925975554329e-01lf + dp_l;
    let t = f64(n);
    t1 = with_lo_d(((z_h + z_l) + dp_h) + t, 0u);
    t2 = z_l - (((t1 - t) - dp_h) - z_h);
  }
  // (y1 + y2) * (t1 + t2)
  let y1 = with_lo_d(y, 0u);
  let p_l = (y - y1) * t1 + y * t2;
  var p_h = y1 * t1;
  var z = p_l + p_h;
  let j = hi_d(z);
  let i = lo_d(z);
  let zneg = (j & 0x80000000u) != 0u;
  if (!zneg && j >= 0x40900000u) {
    if (((j - 0x40900000u) | i) != 0u) { return copysign_d(inf_d(), s); }
    if (p_l + 8.0085662595372944372e-17lf > z - p_h) { return copysign_d(inf_d(), s); }
  } else if (zneg && (j & 0x7fffffffu) >= 0x4090cc00u) {
    if (((j - 0xc090cc00u) | i) != 0u) { return copysign_d(0.0lf, s); }
    if (p_l <= z - p_h) { return copysign_d(0.0lf, s); }
  }
  let ii = j & 0x7fffffffu;
  var kk = i32(ii >> 20u) - 0x3ff;
  var n = 0i;
  if (ii > 0x3fe00000u) {
    let nn = j + (0x00100000u >> u32(kk + 1));
    kk = i32((nn & 0x7fffffffu) >> 20u) - 0x3ff;
    let t = words_d(nn & ~(0x000fffffu >> u32(kk)), 0u);
    n = i32(((nn & 0x000fffffu) | 0x00100000u) >> u32(20 - kk));
    if (zneg) { n = -n; }
    p_h = p_h - t;
  }
  let t = with_lo_d(p_l + p_h, 0u);
  let u = t * 6.93147182464599609375e-01lf;
  let v = (p_l - (t - p_h)) * 6.93147180559945286227e-01lf + t * -1.90465429995776804525e-09lf;
  z = u + v;
  let w = v - (z - u);
  let tt = z * z;
  let tt1 = z - tt * (1.66666666666666019037e-01lf + tt * (-2.77777777770155933842e-03lf + tt * (6.61375632143793436117e-05lf
            + tt * (-1.65339022054652515390e-06lf + tt * 4.13813679705723846039e-08lf))));
  let r = (z * tt1) / (tt1 - 2.0lf) - (w + z * w);
  z = 1.0lf - (r - z);
  return s * scalbn_d(z, n);
}

// -- other elementwise functions ----------------------------------------------------------------
fn hypot_d(a: f64, b: f64) -> f64 {
  if (isinf_d(a) || isinf_d(b)) { return inf_d(); }
  if (isnan_d(a) || isnan_d(b)) { return nan_d(); }
  let m = max(abs_d(a), abs_d(b));
  if (m == 0.0lf) { return 0.0lf; }
  let x = a / m; let y = b / m;
  return m * sqrt_d(x * x + y * y);
}
// Exact remainder with the sign of a, by long division of the significands (as fdlibm's fmod).
fn fmod_d(a: f64, b: f64) -> f64 {
  if (isnan_d(a) || isnan_d(b) || isinf_d(a) || b == 0.0lf) { return nan_d(); }
  let ua = bitcast<u64>(a) & 0x7ffffffffffffffflu;
  let ub = bitcast<u64>(b) & 0x7ffffffffffffffflu;
  if (isinf_d(b) || ua < ub) { return a; }
  if (ua == ub) { return copysign_d(0.0lf, a); }
  var ea = i32(ua >> 52u); var eb = i32(ub >> 52u);
  var ma = ua & 0xffffffffffffflu; var mb = ub & 0xffffffffffffflu;
  if (ea == 0) { let z = i32(clz64_d(ma)) - 11; ma = ma << u32(z); ea = 1 - z; } else { ma = ma | 0x10000000000000lu; }
  if (eb == 0) { let z = i32(clz64_d(mb)) - 11; mb = mb << u32(z); eb = 1 - z; } else { mb = mb | 0x10000000000000lu; }
  for (var i = ea - eb; i > 0; i = i - 1) {
    if (ma >= mb) { ma = ma - mb; }
    ma = ma << 1u;
  }
  if (ma >= mb) { ma = ma - mb; }
  if (ma == 0lu) { return copysign_d(0.0lf, a); }
  let z = i32(clz64_d(ma)) - 11;
  ma = ma << u32(z);
  var e = eb - z;
  var r: u64;
  if (e > 0) { r = (ma & 0xffffffffffffflu) | (u64(u32(e)) << 52u); }
  else { r = ma >> u32(1 - e); }
  return copysign_d(bitcast<f64>(r), a);
}
// float64 arithmetic keeps subnormals, so the remainder functions need no scaling (lib_f32's
// fmod_scaled_f says why float32 scales)
fn fmod_scaled_d(a: f64, b: f64) -> f64 { return fmod_d(a, b); }
fn scaled_for_d(v: f64, b: f64) -> f64 { return v; }
fn unscaled_for_d(v: f64, b: f64) -> f64 { return v; }
// x / y, as floor_divide takes it: the driver's float64 division (lavapipe's is correctly
// rounded; lib_f32's div_rounded_f corrects float32's, which on NVIDIA is not)
fn div_rounded_d(x: f64, y: f64) -> f64 { return x / y; }
fn nextafter_d(a: f64, b: f64) -> f64 {
  if (isnan_d(a) || isnan_d(b)) { return nan_d(); }
  if (a == b) { return b; }
  if (a == 0.0lf) { return copysign_d(bitcast<f64>(1lu), b); }
  let u = bitcast<u64>(a);
  return bitcast<f64>(select(u - 1lu, u + 1lu, (a < b) == (a > 0.0lf)));
}
