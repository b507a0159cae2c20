// float16 helpers, linked on use. float16 values are stored widened in f32 words, and every
// rounding to float16 is done here with integer operations: WGSL and SPIR-V leave the rounding
// of f32 -> f16 conversions to the driver (NVIDIA's Vulkan driver does not round to nearest even
// as NumPy does), and drivers may flush float16 subnormals.

// x rounded to the nearest float16 (ties to even), overflowing to infinity, as an f32.
fn round_f16(x: f32) -> f32 {
  let b = bitcast<u32>(x);
  let s = b & 0x80000000u;
  let a = b & 0x7fffffffu;
  if (a >= 0x7f800000u) { return x; }
  if (a >= 0x477ff000u) { return bitcast<f32>(s | 0x7f800000u); }  // >= 65520 rounds to inf
  if (a >= 0x38800000u) {                                           // normal: keep 10 fraction bits
    return bitcast<f32>(s | ((a + 0xfffu + ((a >> 13u) & 1u)) & 0xffffe000u));
  }
  if (a <= 0x33000000u) { return bitcast<f32>(s); }                 // <= 2^-25 rounds to zero
  let sh = 126u - (a >> 23u);                                       // subnormal: units of 2^-24
  let m = (a & 0x7fffffu) | 0x800000u;
  var q = m >> sh;
  let rem = m & ((1u << sh) - 1u);
  let half = 1u << (sh - 1u);
  if (rem > half || (rem == half && (q & 1u) == 1u)) { q = q + 1u; }
  return bitcast<f32>(s | bitcast<u32>(f32(q) * 5.9604644775390625e-8f));
}
// The 16-bit pattern of a float16 value held in an f32 (exact for every float16 value).
fn f16_bits(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  let s = (b >> 16u) & 0x8000u;
  let a = b & 0x7fffffffu;
  if (a > 0x7f800000u) { return s | 0x7e00u; }
  if (a >= 0x7f800000u) { return s | 0x7c00u; }
  if (a >= 0x38800000u) { return s | ((a - 0x38000000u) >> 13u); }
  return s | u32(bitcast<f32>(a) * 16777216.0f);
}
// The float16 value of a 16-bit pattern, as an f32.
fn f16_value(h: u32) -> f32 {
  let s = (h & 0x8000u) << 16u;
  let a = h & 0x7fffu;
  if (a >= 0x7c00u) { return bitcast<f32>(s | 0x7f800000u | ((a & 0x3ffu) << 13u)); }
  if (a >= 0x0400u) { return bitcast<f32>(s | ((a << 13u) + 0x38000000u)); }
  return bitcast<f32>(s | bitcast<u32>(f32(a) * 5.9604644775390625e-8f));
}
// Whether the float16 q is the rounding of an exact value v, given only the sign of v - m for
// the midpoints m below and above q: ties go to the even pattern.
fn f16_step(q: f32, above_hi: bool, at_hi: bool, below_lo: bool, at_lo: bool) -> f32 {
  let h = f16_bits(q);
  let odd = (h & 1u) == 1u;
  if (above_hi || (at_hi && odd)) { return f16_value(h + 1u); }
  if (below_lo || (at_lo && odd)) { return f16_value(h - 1u); }
  return q;
}
// |a| / |b| rounded to float16, for finite non-zero float16 a and b. The f32 quotient is within
// 2.5 f32 ulp (Vulkan's bound), so the answer is its float16 rounding or a neighbour; the
// midpoints m (12 significant bits) times b (11 bits) are exact in f32 and decide.
fn div_mag_f16(a: f32, b: f32) -> f32 {
  let x = abs(a); let y = abs(b);
  let q = round_f16(x / y);
  if (isinf_f(q)) { return select(q, 65504.0f, x < 65520.0f * y); }
  let h = f16_bits(q);
  let hi = select(f16_value(h + 1u), 65536.0f, h == 0x7bffu);
  let m_hi = q + (hi - q) * 0.5f;
  var m_lo = -1.0f;
  if (h != 0u) { m_lo = q - (q - f16_value(h - 1u)) * 0.5f; }
  return f16_step(q, x > m_hi * y, x == m_hi * y, x < m_lo * y, x == m_lo * y);
}
fn div_f16(a: f32, b: f32) -> f32 {
  if (isnan_f(a) || isnan_f(b) || (isinf_f(a) && isinf_f(b)) || (a == 0.0f && b == 0.0f)) { return nan_f(); }
  let s = (bitcast<u32>(a) ^ bitcast<u32>(b)) & 0x80000000u;
  if (isinf_f(a) || b == 0.0f) { return bitcast<f32>(s | 0x7f800000u); }
  if (isinf_f(b) || a == 0.0f) { return bitcast<f32>(s); }
  return bitcast<f32>(s | bitcast<u32>(div_mag_f16(a, b)));
}
// sqrt rounded to float16: as div_mag_f16, with m * m (24 bits) exact in f32.
fn sqrt_f16(a: f32) -> f32 {
  if (isnan_f(a) || a < 0.0f) { return nan_f(); }
  if (a == 0.0f || isinf_f(a)) { return a; }
  let q = round_f16(sqrt(a));
  let h = f16_bits(q);
  let m_hi = q + (f16_value(h + 1u) - q) * 0.5f;
  var m_lo = -1.0f;
  if (h != 0u) { m_lo = q - (q - f16_value(h - 1u)) * 0.5f; }
  let lo_ok = m_lo >= 0.0f;
  return f16_step(q, a > m_hi * m_hi, a == m_hi * m_hi, lo_ok && a < m_lo * m_lo, lo_ok && a == m_lo * m_lo);
}
// The next float16 after a in the direction of b.
fn nextafter_f16(a: f32, b: f32) -> f32 {
  if (isnan_f(a) || isnan_f(b)) { return nan_f(); }
  if (a == b) { return b; }
  if (a == 0.0f) { return copysign_f(5.9604644775390625e-8f, b); }
  let h = f16_bits(a);
  return f16_value(select(h - 1u, h + 1u, (a < b) == (a > 0.0f)));
}
